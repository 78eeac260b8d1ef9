/**
 * JSON Schema checks (ajv, draft 2020-12) reported at the YAML line that holds
 * the offending value. Schemas may carry an `expected` annotation: a phrase
 * used instead of ajv's wording when a value fails a composite rule (anyOf).
 */
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { FlotillaError, type Diagnostic, type DocPath } from '../diagnostics/index.js';
import { closestNode, toPlain, type ParseMemo, type ValueNode } from '../yaml/index.js';
import { compiledValidators } from './schemas.compiled.js';
import { nearest } from '../names/index.js';

export type JsonSchema = Record<string, unknown>;

/** The one ajv configuration, shared with scripts/compile-schemas.mjs so precompiled validators behave alike. */
export function createSchemaAjv(code: { source?: boolean; esm?: boolean } = {}): Ajv2020 {
  // ajv itself loads only here: commands that meet only flotilla's precompiled schemas never need it.
  const { Ajv2020 } = createRequire(import.meta.url)('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  // Our documents are small: compiling fast (no code optimisation) matters more than validating fast.
  const instance = new Ajv2020({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true, code: { optimize: false, ...code } });
  instance.addVocabulary(['expected']);
  return instance;
}

const hashes = new WeakMap<JsonSchema, string>();

/** Identifies a schema's content, so a precompiled validator is used only for the schema it was made from (a schema is never changed once made). */
export function schemaHash(schema: JsonSchema): string {
  let hash = hashes.get(schema);
  if (hash === undefined) hashes.set(schema, (hash = createHash('sha256').update(JSON.stringify(schema)).digest('hex')));
  return hash;
}

/** Made on first use: flotilla's own schemas come precompiled, and an ajv instance costs ~15 ms to set up. */
let ajv: Ajv2020 | undefined;

const compiled = new WeakMap<JsonSchema, ValidateFunction>();

function validatorFor(schema: JsonSchema, schemaFile: string): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    const ahead = typeof schema.$id === 'string' ? compiledValidators[schema.$id] : undefined;
    try {
      validate = ahead && ahead.hash === schemaHash(schema) ? ahead.validate : (ajv ??= createSchemaAjv()).compile(schema);
    } catch (error) {
      // A schema the app brings can be wrong itself (an unknown keyword, a bad type name).
      throw new FlotillaError(`${schemaFile}: not a valid JSON Schema (draft 2020-12): ${(error as Error).message.split('\n')[0]}`);
    }
    compiled.set(schema, validate);
  }
  return validate;
}

/** Checks a tree against a schema; returns one diagnostic per problem, located in the YAML source. */
export function checkSchema(schema: JsonSchema, root: ValueNode | undefined, file: string, basePath: DocPath = [], schemaFile = 'the schema'): Diagnostic[] {
  const validate = validatorFor(schema, schemaFile);
  const value = root ? toPlain(root) : {};
  if (validate(value)) return [];
  return describeErrors(validate.errors ?? []).map(({ path, message }) => {
    const node = root ? closestNode(root, path).node : undefined;
    return {
      severity: 'error',
      message,
      path: [...basePath, ...path],
      location: node?.origin.location ?? { file, line: 0, column: 0 },
    } satisfies Diagnostic;
  });
}

/** A schema check of a tree: `checkSchema`, or one a memo keeps (`rememberedSchemaCheck`). */
export type SchemaChecker = (schema: JsonSchema, root: ValueNode | undefined, file: string) => Diagnostic[];

/**
 * `checkSchema` of trees `memo` parsed: a file whose text passed the same
 * schema (by content) before is not checked again — the first validation
 * with a large precompiled validator costs ~10 ms of compiling it.
 */
export function rememberedSchemaCheck(memo: ParseMemo): SchemaChecker {
  return (schema, root, file) => memo.checkOnce(root, `schema ${schemaHash(schema)}`, () => checkSchema(schema, root, file));
}

interface Problem {
  readonly path: DocPath;
  readonly message: string;
}

function pointerToPath(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

function describeErrors(errors: readonly ErrorObject[]): Problem[] {
  // A failed anyOf/oneOf explains itself with its `expected` phrase; the
  // branch errors below it only add noise.
  const composite = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  const insideComposite = (e: ErrorObject) =>
    composite.some((c) => c !== e && e.schemaPath.startsWith(c.schemaPath + '/') && e.instancePath.startsWith(c.instancePath));
  // A key refused by propertyNames: the error of its own schema (ajv marks it with the key) says why, with that
  // schema's `expected`; the propertyNames error above it would say it again.
  const refusedKeys = new Set(errors.filter((e) => e.propertyName !== undefined).map((e) => `${e.instancePath}\0${e.propertyName}`));
  const seen = new Set<string>();
  const problems: Problem[] = [];
  for (const error of errors) {
    if (insideComposite(error)) continue;
    if (error.keyword === 'propertyNames' && refusedKeys.has(`${error.instancePath}\0${String((error.params as { propertyName?: unknown }).propertyName)}`))
      continue;
    const problem = describe(error);
    const key = `${problem.path.join('\u0000')}|${problem.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  return problems;
}

function describe(error: ErrorObject): Problem {
  const path = pointerToPath(error.instancePath);
  const expected = (error.parentSchema as { expected?: string } | undefined)?.expected;
  const params = error.params as Record<string, unknown>;
  if (error.propertyName !== undefined) {
    return { path: [...path, error.propertyName], message: `key "${error.propertyName}" is not allowed here${expected ? `: expected ${expected}` : ''}` };
  }
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const known = Object.keys((error.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
      const suggestion = nearest(key, known);
      return { path: [...path, key], message: `unknown key "${key}"${suggestion ? `; did you mean "${suggestion}"?` : ''}` };
    }
    case 'const':
      return { path, message: `expected ${JSON.stringify(params.allowedValue)}, got ${JSON.stringify(error.data)}` };
    case 'not':
      return { path, message: expected ?? 'this value is not allowed here' };
    case 'propertyNames':
      return {
        path: [...path, String(params.propertyName)],
        message: `key "${String(params.propertyName)}" is not allowed here${expected ? `: expected ${expected}` : ''}`,
      };
    case 'required':
      return { path, message: `missing required key "${String(params.missingProperty)}"` };
    case 'type':
      return { path, message: `expected ${expected ?? String(params.type)}, got ${typeName(error.data)}` };
    case 'enum':
      return {
        path,
        message: `expected one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, got ${JSON.stringify(error.data)}`,
      };
    case 'anyOf':
    case 'oneOf':
      return { path, message: `expected ${expected ?? 'a value matching the schema'}, got ${JSON.stringify(error.data)}` };
    case 'pattern':
      return { path, message: `expected ${expected ?? `a string matching ${String(params.pattern)}`}, got ${JSON.stringify(error.data)}` };
    case 'format':
      return { path, message: `expected ${expected ?? `a valid ${String(params.format)}`}, got ${JSON.stringify(error.data)}` };
    default:
      return { path, message: expected ? `expected ${expected} (${error.message ?? error.keyword})` : (error.message ?? error.keyword) };
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return `${typeof value} ${JSON.stringify(value)}`;
}
