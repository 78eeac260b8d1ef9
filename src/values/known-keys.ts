/**
 * Typo protection: whether a path a user writes is one the file's reader
 * knows (a chart's values.yaml or values.schema.json, flotilla's own
 * schemas), and the nearest known key when it is not. The one owner of this
 * rule: `overrides set`, `override set` and the values layers' key check
 * (`unknownKeys`) all ask it.
 */
import { formatPath, type DocPath, type SourceLocation } from '../diagnostics/index.js';
import { parseJson, parseYaml, toPlain, type ValueNode, type YamlParser } from '../yaml/index.js';
import { nearest } from '../names/index.js';

/** A JSON Schema object (values.schema.json, flotilla's own schemas). */
export type JsonSchema = Record<string, unknown>;
type PathSegment = string | number;
type ValuePath = DocPath;

/**
 * `loose`: known only as a key of an open map (a schema's `additionalProperties`),
 * so a key close to one spelled out elsewhere is still taken for a typo.
 */
export type KnownCheck =
  { readonly known: true; readonly loose?: boolean } | { readonly known: false; readonly depth: number; readonly candidates: readonly string[] };

/** Something that knows which paths a file may hold. */
export interface KeyReference {
  /** What it is, for messages (`charts/glance/values.yaml`). */
  readonly label: string;
  check(path: ValuePath): KnownCheck;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Maps a chart leaves open by their key's name, whatever the defaults spell
 * out: Kubernetes fields copied into objects as they are (annotations,
 * labels, selectors, security contexts, affinity, resources), free-form
 * configuration (openstack-helm's `conf`, `config`), extra objects rendered
 * as written, and `global` (shared with every subchart).
 */
const OPEN_KEY = /(?:annotations|labels|selector|securitycontext|affinity|resources)$|^(?:conf|config|extraobjects|extradeploy|global)$/i;

/** Whether a key of a chart's values holds a map the chart leaves open (see OPEN_KEY). */
export function isOpenKey(key: string): boolean {
  return OPEN_KEY.test(key);
}

/**
 * Paths present in a values tree. Open below: an empty map, an empty list or
 * a null in the defaults (a slot meant to be filled: `labels: {}`,
 * `annotations:`), a key named as OPEN_KEY says, and `openKeys` at the top
 * (the chart's dependencies: their own values.yaml knows what is below). A
 * list item is checked against the list's items (any of them knowing the key
 * is enough).
 */
export function valuesReference(label: string, values: unknown, openKeys: ReadonlySet<string> = new Set()): KeyReference {
  const check = (current: unknown, path: ValuePath, depth: number): KnownCheck => {
    if (depth === path.length) return { known: true };
    const segment = path[depth] as PathSegment;
    if (current === null || (isPlainObject(current) && Object.keys(current).length === 0)) return { known: true };
    if (depth > 0 && typeof path[depth - 1] === 'string' && isOpenKey(path[depth - 1] as string) && !Array.isArray(current)) return { known: true };
    if (depth === 1 && openKeys.has(path[0] as string)) return { known: true };
    if (Array.isArray(current)) {
      if (typeof segment !== 'number') return { known: false, depth, candidates: [] };
      if (current.length === 0) return { known: true };
      let deepest: KnownCheck | undefined;
      for (const item of current) {
        const result = check(item, path, depth + 1);
        if (result.known) return result;
        if (!deepest || (!deepest.known && result.depth > deepest.depth)) deepest = result;
      }
      return deepest as KnownCheck;
    }
    if (!isPlainObject(current) || typeof segment !== 'string') return { known: false, depth, candidates: [] };
    if (!(segment in current)) return { known: false, depth, candidates: Object.keys(current) };
    return check(current[segment], path, depth + 1);
  };
  return { label, check: (path) => check(values, path, 0) };
}

/** One step down a JSON Schema along a values path, through local `$ref`s and `allOf`/`anyOf`/`oneOf`: the one walk both the key check and the secrecy check take. */
function schemaWalker(schema: JsonSchema) {
  const resolve = (s: JsonSchema, seen: ReadonlySet<string> = new Set()): JsonSchema => {
    const ref = s.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#/') || seen.has(ref)) return s;
    let target: unknown = schema;
    for (const part of ref.slice(2).split('/')) target = isPlainObject(target) ? target[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    return isPlainObject(target) ? resolve(target, new Set([...seen, ref])) : s;
  };
  const branches = (s: JsonSchema, depth = 0): JsonSchema[] => {
    const r = resolve(s);
    if (depth > 32) return [r]; // a schema nesting allOf in itself through $refs
    const nested = ['allOf', 'anyOf', 'oneOf'].flatMap((k) => (Array.isArray(r[k]) ? (r[k] as unknown[]).filter(isPlainObject) : []));
    return [r, ...nested.flatMap((n) => branches(n, depth + 1))];
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
      if (isPlainObject(properties[segment])) next.push(properties[segment]);
      for (const [pattern, sub] of Object.entries(isPlainObject(b.patternProperties) ? (b.patternProperties as Record<string, JsonSchema>) : {})) {
        if (isPlainObject(sub) && new RegExp(pattern, 'u').test(segment)) next.push(sub);
      }
      if (isPlainObject(b.additionalProperties) && !properties[segment]) {
        next.push(b.additionalProperties);
        loose = true;
      }
    }
    return { next, keys, loose };
  };
  return { resolve, branches, step };
}

/**
 * Paths a JSON Schema names. Only what it spells out counts: `properties`,
 * `patternProperties`, an `additionalProperties` schema (a typed map), list
 * `items`, through local `$ref`s and `allOf`/`anyOf`/`oneOf`. A schema that
 * merely leaves additional properties open knows nothing below it.
 */
export function schemaReference(label: string, schema: JsonSchema): KeyReference {
  const { resolve, step } = schemaWalker(schema);
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
 * The secrecy rule of a chart's values.schema.json as text (undefined: no
 * schema, or one that is not a JSON object: a broken schema is refused
 * where it is read for rendering, by the build and by helm; key names alone
 * decide then).
 */
export function schemaFileSecrecy(schema: { readonly text: string; readonly file: string } | undefined): ((path: ValuePath) => boolean) | undefined {
  let parsed: unknown;
  try {
    parsed = schema ? parseJson(schema.text, schema.file) : undefined;
  } catch {
    return undefined;
  }
  return isPlainObject(parsed) ? schemaSecrecy(parsed) : undefined;
}

/**
 * Whether a chart's schema marks the value at a path secret: the schema of
 * the path, or of a map or list above it, says `format: password` (OpenAPI's
 * mark) or `writeOnly: true` (JSON Schema's), in any of its branches.
 */
export function schemaSecrecy(schema: JsonSchema): (path: ValuePath) => boolean {
  const { branches, step } = schemaWalker(schema);
  const marked = (s: JsonSchema) => branches(s).some((b) => b.format === 'password' || b.writeOnly === true);
  return (path) => {
    let current: JsonSchema[] = [schema];
    for (let depth = 0; ; depth++) {
      if (current.some(marked)) return true;
      if (depth === path.length) return false;
      current = current.flatMap((s) => step(s, path[depth] as PathSegment).next);
      if (current.length === 0) return false;
    }
  };
}

/**
 * Known by a reference (and, when only loosely, not a near miss of a key
 * another reference spells out); else the nearest key where it fails deepest.
 */
export function checkKnownPath(
  references: readonly KeyReference[],
  path: ValuePath,
): { known: true } | { known: false; suggestion?: DocPath; knownBy: string; /** How many segments the references know. */ depth: number } {
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
  return {
    known: false,
    knownBy,
    depth: deepest?.depth ?? 0,
    suggestion: guess === undefined || !deepest ? undefined : [...path.slice(0, deepest.depth), guess],
  };
}

/** A key a layer sets that the chart does not know, where it is written, and the nearest known key. */
export interface UnknownKey {
  readonly path: DocPath;
  readonly location: SourceLocation;
  readonly layer: string;
  readonly knownBy: string;
  readonly suggestion?: DocPath;
}

/**
 * The keys of a layer's tree that no reference knows: the first unknown key
 * of each branch (nothing below it is reported again).
 */
export function unknownKeys(references: readonly KeyReference[], root: ValueNode | undefined): UnknownKey[] {
  const found: UnknownKey[] = [];
  if (!root || references.length === 0) return found;
  const visit = (node: ValueNode, path: DocPath) => {
    const children: [PathSegment, ValueNode][] = node.kind === 'map' ? [...node.entries] : node.kind === 'seq' ? node.items.map((item, i) => [i, item]) : [];
    for (const [segment, child] of children) {
      const at = [...path, segment];
      const check = checkKnownPath(references, at);
      if (check.known) visit(child, at);
      else
        found.push({
          path: at,
          location: child.origin.location,
          layer: child.origin.layer,
          knownBy: check.knownBy,
          ...(check.suggestion ? { suggestion: check.suggestion } : {}),
        });
    }
  };
  visit(root, []);
  return found;
}

export function describeUnknownKey(unknown: UnknownKey): string {
  const hint = unknown.suggestion ? `; did you mean ${formatPath(unknown.suggestion)}?` : '';
  return `${unknown.layer} sets ${formatPath(unknown.path)}, a key unknown to ${unknown.knownBy}${hint}`;
}

/** A chart's files the key check reads: values.yaml, values.schema.json, Chart.yaml (its dependencies), each as text with its name. */
export interface ChartKeyFiles {
  /** values.yaml as text, or as the tree the values layers already parsed. */
  readonly values?: { readonly text: string; readonly file: string } | { readonly root: ValueNode | undefined; readonly file: string };
  readonly schema?: { readonly text: string; readonly file: string };
  readonly chartYaml?: { readonly text: string; readonly file: string };
}

/**
 * What knows the keys of a chart's values: its values.yaml (the keys of its
 * dependencies, by name or alias, left open: their own charts know them)
 * and its values.schema.json.
 */
export function chartKeyReferences(files: ChartKeyFiles, parse: YamlParser = parseYaml): KeyReference[] {
  const references: KeyReference[] = [];
  const dependencies = new Set<string>();
  if (files.chartYaml) {
    const chart = parse(files.chartYaml.text, files.chartYaml.file, { layer: 'chart' }).root;
    const listed = chart ? toPlain(chart) : undefined;
    const entries = isPlainObject(listed) && Array.isArray(listed.dependencies) ? listed.dependencies : [];
    for (const entry of entries) {
      if (!isPlainObject(entry)) continue;
      const name = typeof entry.alias === 'string' ? entry.alias : entry.name;
      if (typeof name === 'string') dependencies.add(name);
    }
  }
  if (files.values) {
    const root = 'root' in files.values ? files.values.root : parse(files.values.text, files.values.file, { layer: 'chart' }).root;
    references.push(valuesReference(files.values.file, root ? toPlain(root) : {}, dependencies));
  }
  if (files.schema) {
    const schema = parseJson(files.schema.text, files.schema.file);
    if (isPlainObject(schema)) references.push(schemaReference(files.schema.file, schema));
  }
  return references;
}
