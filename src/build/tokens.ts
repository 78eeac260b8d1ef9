/**
 * Build-time tokens: StarlingX writes `@IMAGE_PREFIX@`, `@OS@`, `@BUILD_STREAM@`
 * … in files that the package build fills in. Values come from
 * fluxcd/build.yaml and `--token NAME=VALUE`; a token left without a value
 * is an error naming the file and line.
 */
import { FlotillaError } from '../diagnostics/index.js';

const TOKEN = /@([A-Z][A-Z0-9_]*)@/g;

/** Matches a build token anywhere in a text (not global: safe for `test`). */
export const BUILD_TOKEN = /@[A-Z][A-Z0-9_]*@/;

export class UnresolvedTokenError extends FlotillaError {}

export type Tokens = ReadonlyMap<string, string>;

/** Replaces every token in `text`; throws on the first token without a value. */
export function substituteTokens(text: string, tokens: Tokens, file: string): string {
  if (!text.includes('@')) return text;
  return text.replace(TOKEN, (match, name: string, offset: number) => {
    const value = tokens.get(name);
    if (value !== undefined) return value;
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - before.lastIndexOf('\n');
    const known = [...tokens.keys()].sort();
    throw new UnresolvedTokenError(
      `build token ${match} has no value; set it under "tokens:" in fluxcd/build.yaml or pass --token ${name}=VALUE` +
        (known.length > 0 ? ` (known tokens: ${known.join(', ')})` : ''),
      { location: { file, line, column } },
    );
  });
}

/** Parses `--token NAME=VALUE` arguments. */
export function parseTokenArguments(args: readonly string[]): Map<string, string> {
  const tokens = new Map<string, string>();
  for (const arg of args) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(arg);
    if (!match) throw new FlotillaError(`--token takes NAME=VALUE with an upper-case NAME (as in @NAME@), got "${arg}"`);
    tokens.set(match[1] as string, match[2] as string);
  }
  return tokens;
}
