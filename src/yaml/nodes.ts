import type { DocPath, SourceLocation } from '../diagnostics/index.js';

/** Who set a value: the layer's label (e.g. `static`, `services.image.glance`) and the exact place. */
export interface Origin {
  readonly layer: string;
  readonly location: SourceLocation;
}

export type Scalar = string | number | boolean | null;

/** A list operation written with a YAML tag (`!append`, `!prepend`, `!remove`). */
export type ListOp = 'append' | 'prepend' | 'remove';

export interface ListEdit {
  readonly op: ListOp;
  readonly items: readonly ValueNode[];
  readonly origin: Origin;
}

export interface MapNode {
  readonly kind: 'map';
  readonly entries: ReadonlyMap<string, ValueNode>;
  readonly origin: Origin;
}

export interface SeqNode {
  readonly kind: 'seq';
  readonly items: readonly ValueNode[];
  readonly origin: Origin;
}

export interface ScalarNode {
  readonly kind: 'scalar';
  readonly value: Scalar;
  readonly origin: Origin;
}

/**
 * Edits to the list below it that could not be applied yet because nothing was
 * below (e.g. a spec layer that will later sit on top of chart values). Edits
 * are kept in order and applied when a list appears underneath.
 */
export interface EditsNode {
  readonly kind: 'edits';
  readonly edits: readonly ListEdit[];
  readonly origin: Origin;
}

export type ValueNode = MapNode | SeqNode | ScalarNode | EditsNode;

export type PlainValue = Scalar | PlainValue[] | { [key: string]: PlainValue };

export function mapNode(entries: ReadonlyMap<string, ValueNode>, origin: Origin): MapNode {
  return { kind: 'map', entries, origin };
}

export function seqNode(items: readonly ValueNode[], origin: Origin): SeqNode {
  return { kind: 'seq', items, origin };
}

export function scalarNode(value: Scalar, origin: Origin): ScalarNode {
  return { kind: 'scalar', value, origin };
}

/**
 * Builds a node tree from a plain value, every node with the same origin.
 * Used for values computed in code (image references, plugin output).
 */
export function fromPlain(value: unknown, origin: Origin): ValueNode {
  if (Array.isArray(value))
    return seqNode(
      value.map((v) => fromPlain(v, origin)),
      origin,
    );
  if (value !== null && typeof value === 'object') {
    const entries = new Map<string, ValueNode>();
    for (const [k, v] of Object.entries(value)) if (v !== undefined) entries.set(k, fromPlain(v, origin));
    return mapNode(entries, origin);
  }
  if (value === undefined) return scalarNode(null, origin);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null) {
    return scalarNode(value, origin);
  }
  return scalarNode(String(value), origin);
}

/** The plain JSON-like value of a tree. Unapplied edits resolve against an empty list; a lone `!remove` drops its key. */
export function toPlain(node: ValueNode): PlainValue {
  switch (node.kind) {
    case 'scalar':
      return node.value;
    case 'seq':
      return node.items.map(toPlain);
    case 'edits':
      return applyEditsToItems([], node.edits).map(toPlain);
    case 'map': {
      const out: { [key: string]: PlainValue } = {};
      for (const [key, child] of node.entries) {
        if (child.kind === 'edits' && child.edits.every((e) => e.op === 'remove')) continue;
        out[key] = toPlain(child);
      }
      return out;
    }
  }
}

/** Applies list edits in order. `!remove` drops items equal to, or (for maps) matching every field of, an edit item. */
export function applyEditsToItems(items: readonly ValueNode[], edits: readonly ListEdit[]): ValueNode[] {
  let result = [...items];
  for (const edit of edits) {
    if (edit.op === 'append') result = [...result, ...edit.items];
    else if (edit.op === 'prepend') result = [...edit.items, ...result];
    else {
      const patterns = edit.items.map(toPlain);
      result = result.filter((item) => {
        const plain = toPlain(item);
        return !patterns.some((p) => matchesPattern(plain, p));
      });
    }
  }
  return result;
}

function matchesPattern(value: PlainValue, pattern: PlainValue): boolean {
  if (isPlainMap(pattern) && isPlainMap(value)) {
    return Object.entries(pattern).every(([k, v]) => k in value && matchesPattern(value[k] as PlainValue, v));
  }
  return deepEqual(value, pattern);
}

function isPlainMap(v: PlainValue): v is { [key: string]: PlainValue } {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function deepEqual(a: PlainValue, b: PlainValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i] as PlainValue));
  if (isPlainMap(a) && isPlainMap(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k] as PlainValue, b[k] as PlainValue));
  }
  return false;
}

/** The node at `path`, or undefined. */
export function getNode(node: ValueNode | undefined, path: DocPath): ValueNode | undefined {
  let current = node;
  for (const part of path) {
    if (!current) return undefined;
    if (current.kind === 'map' && typeof part === 'string') current = current.entries.get(part);
    else if (current.kind === 'seq' && typeof part === 'number') current = current.items[part];
    else return undefined;
  }
  return current;
}

/** The deepest existing node along `path`, and the part of `path` that reached it (to point at the closest line when a key is missing). */
export function closestNode(node: ValueNode, path: DocPath): { readonly node: ValueNode; readonly path: DocPath } {
  let current = node;
  let depth = 0;
  for (const part of path) {
    const next = getNode(current, [part]);
    if (!next) break;
    current = next;
    depth++;
  }
  return { node: current, path: path.slice(0, depth) };
}

export interface Leaf {
  readonly path: readonly (string | number)[];
  readonly value: PlainValue;
  readonly origin: Origin;
}

/** Every leaf: scalars, empty maps and lists, and unapplied edits. */
export function leaves(node: ValueNode, path: readonly (string | number)[] = []): Leaf[] {
  switch (node.kind) {
    case 'scalar':
    case 'edits':
      return [{ path, value: toPlain(node), origin: node.origin }];
    case 'seq':
      if (node.items.length === 0) return [{ path, value: [], origin: node.origin }];
      return node.items.flatMap((item, i) => leaves(item, [...path, i]));
    case 'map':
      if (node.entries.size === 0) return [{ path, value: {}, origin: node.origin }];
      return [...node.entries].flatMap(([key, child]) => leaves(child, [...path, key]));
  }
}

/** A copy of the tree with every origin relabelled to `layer` (file:line kept). */
export function relabel(node: ValueNode, layer: string): ValueNode {
  const origin = { layer, location: node.origin.location };
  switch (node.kind) {
    case 'scalar':
      return scalarNode(node.value, origin);
    case 'seq':
      return seqNode(
        node.items.map((i) => relabel(i, layer)),
        origin,
      );
    case 'edits':
      return {
        kind: 'edits',
        origin,
        edits: node.edits.map((e) => ({ op: e.op, origin: { layer, location: e.origin.location }, items: e.items.map((i) => relabel(i, layer)) })),
      };
    case 'map': {
      const entries = new Map<string, ValueNode>();
      for (const [k, v] of node.entries) entries.set(k, relabel(v, layer));
      return mapNode(entries, origin);
    }
  }
}

/**
 * Keeps the parts of a tree some of whose leaves satisfy `keep`. Lists are
 * atomic (Helm replaces lists), so a list is kept whole when any part is kept.
 */
export function prune(node: ValueNode, keep: (origin: Origin) => boolean): ValueNode | undefined {
  switch (node.kind) {
    case 'scalar':
    case 'edits':
      return keep(node.origin) ? node : undefined;
    case 'seq':
      return keep(node.origin) || node.items.some((i) => prune(i, keep) !== undefined) ? node : undefined;
    case 'map': {
      if (node.entries.size === 0) return keep(node.origin) ? node : undefined;
      const entries = new Map<string, ValueNode>();
      for (const [k, v] of node.entries) {
        const kept = prune(v, keep);
        if (kept) entries.set(k, kept);
      }
      return entries.size > 0 ? mapNode(entries, node.origin) : undefined;
    }
  }
}

export function describeKind(node: ValueNode): string {
  switch (node.kind) {
    case 'map':
      return 'a map';
    case 'seq':
      return 'a list';
    case 'edits':
      return `list edits (${node.edits.map((e) => `!${e.op}`).join(', ')})`;
    case 'scalar':
      // The kind only: a message must not echo what was read (a secret, or a file read by mistake).
      return node.value === null ? 'null' : `a ${typeof node.value}`;
  }
}
