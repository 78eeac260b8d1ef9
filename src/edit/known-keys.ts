/**
 * Typo protection: whether a path a user adds is one the file's reader knows
 * (a chart's values.yaml or values.schema.json, flotilla's own schemas), and
 * the nearest known key when it is not.
 */
import { nearest, type JsonSchema } from '../app/index.js';
import { formatValuePath, type PathSegment, type ValuePath } from './path.js';

/**
 * `loose`: known only as a key of an open map (a schema's `additionalProperties`),
 * so a key close to one spelled out elsewhere is still taken for a typo.
 */
export type KnownCheck = { readonly known: true; readonly loose?: boolean } | { readonly known: false; readonly depth: number; readonly candidates: readonly string[] };

/** Something that knows which paths a file may hold. */
export interface KeyReference {
  /** What it is, for messages (`charts/glance/values.yaml`). */
  readonly label: string;
  check(path: ValuePath): KnownCheck;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Paths present in a values tree. An empty map or a null in the defaults is a
 * slot meant to be filled (`labels: {}`, `annotations:`), so anything below it
 * is known; a list item is checked against the list's first item.
 */
export function valuesReference(label: string, values: unknown): KeyReference {
  return {
    label,
    check(path) {
      let current: unknown = values;
      for (let depth = 0; depth < path.length; depth++) {
        const segment = path[depth] as PathSegment;
        if (current === null || (isPlainObject(current) && Object.keys(current).length === 0)) return { known: true };
        if (Array.isArray(current)) {
          if (typeof segment !== 'number') return { known: false, depth, candidates: [] };
          if (current.length === 0) return { known: true };
          current = current[Math.min(segment, current.length - 1)];
          continue;
        }
        if (!isPlainObject(current) || typeof segment !== 'string') return { known: false, depth, candidates: [] };
        if (!(segment in current)) return { known: false, depth, candidates: Object.keys(current) };
        current = current[segment];
      }
      return { known: true };
    },
  };
}

/**
 * Paths a JSON Schema names. Only what it spells out counts: `properties`,
 * `patternProperties`, an `additionalProperties` schema (a typed map), list
 * `items`, through local `$ref`s and `allOf`/`anyOf`/`oneOf`. A schema that
 * merely leaves additional properties open knows nothing below it.
 */
export function schemaReference(label: string, schema: JsonSchema): KeyReference {
  const resolve = (s: JsonSchema): JsonSchema => {
    const ref = s.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return s;
    let target: unknown = schema;
    for (const part of ref.slice(2).split('/')) target = isPlainObject(target) ? target[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    return isPlainObject(target) ? resolve(target) : s;
  };
  const branches = (s: JsonSchema): JsonSchema[] => {
    const r = resolve(s);
    const nested = ['allOf', 'anyOf', 'oneOf'].flatMap((k) => (Array.isArray(r[k]) ? (r[k] as JsonSchema[]) : []));
    return [r, ...nested.flatMap(branches)];
  };
  const step = (s: JsonSchema, segment: PathSegment): { next: JsonSchema[]; keys: string[]; loose: boolean } => {
    const next: JsonSchema[] = [];
    let loose = false;
    const keys: string[] = [];
    for (const b of branches(s)) {
      if (typeof segment === 'number') {
        if (isPlainObject(b.items)) next.push(b.items);
        continue;
      }
      const properties = isPlainObject(b.properties) ? (b.properties as Record<string, JsonSchema>) : {};
      keys.push(...Object.keys(properties));
      if (properties[segment]) next.push(properties[segment]);
      for (const [pattern, sub] of Object.entries(isPlainObject(b.patternProperties) ? (b.patternProperties as Record<string, JsonSchema>) : {})) {
        if (new RegExp(pattern, 'u').test(segment)) next.push(sub);
      }
      if (isPlainObject(b.additionalProperties) && !properties[segment]) {
        next.push(b.additionalProperties);
        loose = true;
      }
    }
    return { next, keys, loose };
  };
  // A map the schema leaves open without naming anything (`{type: object}`): any key below is fine.
  const freeForm = (s: JsonSchema): boolean => {
    const r = resolve(s);
    const structural = ['properties', 'patternProperties', 'items', 'allOf', 'anyOf', 'oneOf', '$ref'].some((k) => k in r);
    const scalarType = typeof r.type === 'string' && r.type !== 'object';
    return !structural && !scalarType && r.additionalProperties !== false && !isPlainObject(r.additionalProperties);
  };
  return {
    label,
    check(path) {
      let current: JsonSchema[] = [schema];
      let loose = false;
      for (let depth = 0; depth < path.length; depth++) {
        if (current.some(freeForm)) return { known: true, loose };
        const results = current.map((s) => step(s, path[depth] as PathSegment));
        const next = results.flatMap((r) => r.next);
        if (next.length === 0) return { known: false, depth, candidates: [...new Set(results.flatMap((r) => r.keys))] };
        loose ||= results.every((r) => r.loose);
        current = next;
      }
      return { known: true, loose };
    },
  };
}

/**
 * Known by a reference (and, when only loosely, not a near miss of a key
 * another reference spells out); else the nearest key where it fails deepest.
 */
export function checkKnownPath(
  references: readonly KeyReference[],
  path: ValuePath,
): { known: true } | { known: false; suggestion?: string; knownBy: string; /** How many segments the references know. */ depth: number } {
  let deepest: { depth: number; candidates: string[] } | undefined;
  let looselyKnown = false;
  for (const reference of references) {
    const result = reference.check(path);
    if (result.known && !result.loose) return { known: true };
    if (result.known) {
      looselyKnown = true;
      continue;
    }
    if (!deepest || result.depth > deepest.depth) deepest = { depth: result.depth, candidates: [...result.candidates] };
    else if (result.depth === deepest.depth) deepest.candidates.push(...result.candidates);
  }
  const knownBy = references.map((r) => r.label).join(' and ');
  const segment = deepest ? path[deepest.depth] : undefined;
  const guess = deepest && typeof segment === 'string' ? nearest(segment, [...new Set(deepest.candidates)]) : undefined;
  if (looselyKnown && guess === undefined) return { known: true };
  return { known: false, knownBy, depth: deepest?.depth ?? 0, suggestion: guess === undefined || !deepest ? undefined : formatValuePath([...path.slice(0, deepest.depth), guess]) };
}
