import { dump, DUMP_SCHEMA } from 'js-yaml';

/**
 * YAML text for a plain value, the one way flotilla writes YAML it generates
 * (manifests, overrides): no anchors, and strings that YAML 1.1 readers such
 * as Helm would take for booleans or numbers ('yes', '0755') are quoted.
 *
 * The text is js-yaml's `dump` byte for byte. What flotilla writes is mostly
 * maps of names, versions and flags: {@link plainYaml} writes those itself,
 * as js-yaml would, at a fraction of its cost (a build writes a HelmRelease
 * and a kustomization per release, and js-yaml's writer is slow until its
 * code warms up); everything else goes to js-yaml. test/yaml/dump.test.ts
 * holds the two to the same text.
 */
export function dumpYaml(value: unknown): string {
  return plainYaml(value) ?? dump(value, { noRefs: true });
}

/** Two spaces per level, as js-yaml indents. */
const INDENT = '  ';

/** Deeper than this, js-yaml decides (and refuses a cycle as it does). */
const MAX_DEPTH = 100;

/**
 * Strings js-yaml writes plain, unless the schema reads them as something
 * else (`yes`, `0755`, `1:20`): ASCII names, versions, paths and URLs,
 * single words or words apart by spaces; no indicator first, no `: ` or
 * ` #`, no space at either end. Others (quoted, folded, multi-line) are
 * js-yaml's.
 */
const PLAIN = /^[A-Za-z0-9_./](?:[A-Za-z0-9_./+=-]| +(?=[A-Za-z0-9_./+=-])|:(?=[A-Za-z0-9_./+=-]))*$/;

/** js-yaml folds a line with a space once it passes the width left of 80 columns, never under 40. */
const NEVER_FOLDED = 40;

/** YAML caps an implicit key at 1024 characters: js-yaml writes a longer key as an explicit `? key` (and the line scanner, scan.ts, leaves one to js-yaml). */
export const MAX_SIMPLE_KEY = 1024;

const STRING_TAG = DUMP_SCHEMA.defaultScalarTag;

function plainString(text: string, isKey: boolean): string | undefined {
  // js-yaml's choice for the empty string: single quotes.
  if (text === '') return "''";
  if (text.length > (isKey ? MAX_SIMPLE_KEY : NEVER_FOLDED) && (isKey || text.includes(' '))) return undefined;
  // `...` first is a document end marker.
  if (!PLAIN.test(text) || text.startsWith('...')) return undefined;
  return DUMP_SCHEMA.resolveImplicitScalarTag(text).tag === STRING_TAG ? text : undefined;
}

function scalar(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return plainString(value, false);
    case 'number':
      // Integers as written; floats, -0 and unsafe integers are js-yaml's.
      return Number.isSafeInteger(value) && !Object.is(value, -0) ? String(value) : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      return value === null ? 'null' : undefined;
  }
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * A node as js-yaml's presenter writes it at `level` (block collections,
 * two-space indents, `{}` and `[]` when empty); `compact`: the first line
 * continues the line it starts on (`- ` or the document's start).
 */
function node(value: unknown, level: number, compact: boolean): string | undefined {
  if (typeof value !== 'object' || value === null) return scalar(value);
  if (level > MAX_DEPTH) return undefined;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    let text = '';
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return undefined;
      const item = node(value[i], level + 1, true);
      if (item === undefined) return undefined;
      if (!compact || text !== '') text += `\n${INDENT.repeat(level)}`;
      text += item.charCodeAt(0) === 10 ? `-${item}` : `- ${item}`;
    }
    return text;
  }
  if (!isPlainObject(value)) return undefined;
  let text = '';
  for (const key of Object.keys(value)) {
    const keyText = plainString(key, true);
    const item = keyText === undefined ? undefined : node(value[key], level + 1, false);
    if (item === undefined) return undefined;
    if (!compact || text !== '') text += `\n${INDENT.repeat(level)}`;
    text += item.charCodeAt(0) === 10 ? `${keyText}:${item}` : `${keyText}: ${item}`;
  }
  return text === '' ? '{}' : text;
}

/**
 * What js-yaml's `dump(value, { noRefs: true })` gives, written without it,
 * or undefined where it takes js-yaml: a string it would quote, fold or
 * write on several lines, a number that is not a safe integer, anything
 * but plain objects, arrays, strings, numbers, booleans and null.
 */
export function plainYaml(value: unknown): string | undefined {
  const text = node(value, 0, true);
  return text === undefined ? undefined : `${text}\n`;
}
