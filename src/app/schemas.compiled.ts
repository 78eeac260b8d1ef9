/**
 * Validators of flotilla's own schemas, generated ahead of time.
 *
 * This source is a placeholder: `npm run build` replaces the compiled
 * dist/app/schemas.compiled.js with ajv standalone code for every built-in
 * schema (scripts/compile-schemas.mjs), so a command need not compile them
 * on each run. Each entry carries the hash of the schema it was made from;
 * schema-check.ts uses it only when the hash still matches.
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';

export interface CompiledValidator {
  readonly hash: string;
  readonly validate: ValidateFunction;
}

export const compiledValidators: Readonly<Record<string, CompiledValidator>> = {};
