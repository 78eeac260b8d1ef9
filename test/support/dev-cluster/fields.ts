/**
 * TEST FIXTURE (dev cluster): field ownership for server-side apply.
 *
 * A field set is a set of leaf paths. Maps are walked key by key (`f:key`);
 * lists are atomic leaves, except `metadata.finalizers`, a set whose items
 * (`v:"item"`) are owned one by one — the model of CRD lists without
 * `x-kubernetes-list-type` and of the finalizers list on a real server.
 * Sets are written to and read from `managedFields[].fieldsV1` in the real
 * format (`{"f:spec":{"f:replicas":{}}}`).
 */
import { clone, deepEqual, isObject, type Json, type JsonObject } from './patch.js';

/** One path: segments like `f:spec`, `v:"finalizer"`. */
export type FieldPath = readonly string[];

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

const SET_LISTS = new Set(['metadata.finalizers']);
/** Identity and system fields: nobody owns them. */
const UNOWNED_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
]);

export const pathKey = (path: FieldPath): string => JSON.stringify(path);

/**
 * The leaf paths of an object's fields: for the main resource of a type with
 * a status subresource (everything but `status`), for that subresource, or
 * for all of a type without one.
 */
export type FieldPart = 'main' | 'status' | 'all';

export function fieldSetOf(object: JsonObject, part: FieldPart): Map<string, FieldPath> {
  const set = new Map<string, FieldPath>();
  const walk = (value: Json, path: string[], dotted: string): void => {
    if (Array.isArray(value) && SET_LISTS.has(dotted)) {
      for (const item of value) {
        const p = [...path, `v:${JSON.stringify(item)}`];
        set.set(pathKey(p), p);
      }
      return;
    }
    if (isObject(value) && Object.keys(value).length > 0) {
      for (const [key, child] of Object.entries(value)) {
        if (dotted === 'metadata' && UNOWNED_METADATA.has(key)) continue;
        walk(child, [...path, `f:${key}`], dotted ? `${dotted}.${key}` : key);
      }
      return;
    }
    set.set(pathKey(path), path);
  };
  for (const [key, value] of Object.entries(object)) {
    if (key === 'apiVersion' || key === 'kind') continue;
    if (part !== 'all' && (key === 'status') !== (part === 'status')) continue;
    walk(value, [`f:${key}`], key);
  }
  return set;
}

export function toFieldsV1(paths: Iterable<FieldPath>): JsonObject {
  const root: JsonObject = {};
  for (const path of paths) {
    let node = root;
    for (const segment of path) {
      if (!isObject(node[segment])) node[segment] = {};
      node = node[segment] as JsonObject;
    }
  }
  return root;
}

export function fromFieldsV1(fields: unknown): Map<string, FieldPath> {
  const set = new Map<string, FieldPath>();
  const walk = (node: unknown, path: string[]): void => {
    const children = isObject(node) ? Object.entries(node).filter(([k]) => k !== '.') : [];
    if (children.length === 0) {
      if (path.length > 0) set.set(pathKey(path), path);
      return;
    }
    // A `.` marks the node itself as owned as well as its children.
    if (isObject(node) && '.' in node && path.length > 0) set.set(pathKey(path), path);
    for (const [key, child] of children) walk(child, [...path, key]);
  };
  walk(fields, []);
  return set;
}

/** The value at a path; for a set item, `true` when the set holds it. */
export function valueAt(object: Json | undefined, path: FieldPath): Json | undefined {
  let node: Json | undefined = object;
  for (const segment of path) {
    if (segment.startsWith('v:')) {
      return Array.isArray(node) && node.some((item) => deepEqual(item, JSON.parse(segment.slice(2)))) ? true : undefined;
    }
    if (!isObject(node)) return undefined;
    node = node[segment.slice(2)];
  }
  return node;
}

/** Removes the value at a path, and maps left empty on the way (not top-level ones). */
export function removeAt(object: JsonObject, path: FieldPath): void {
  const parents: Array<[JsonObject, string]> = [];
  let node: Json | undefined = object;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    if (segment.startsWith('v:')) {
      const [parent, key] = parents[parents.length - 1] ?? [];
      if (parent && key && Array.isArray(parent[key])) {
        const item = JSON.parse(segment.slice(2)) as Json;
        parent[key] = (parent[key] as Json[]).filter((v) => !deepEqual(v, item));
        if ((parent[key] as Json[]).length === 0) delete parent[key];
      }
      break;
    }
    if (!isObject(node)) return;
    const key = segment.slice(2);
    if (i === path.length - 1) {
      delete node[key];
      break;
    }
    parents.push([node, key]);
    node = node[key];
  }
  for (let i = parents.length - 1; i >= 1; i--) {
    const [parent, key] = parents[i]!;
    const child = parent[key];
    if (isObject(child) && Object.keys(child).length === 0) delete parent[key];
    else break;
  }
}

/** Apply's merge: maps merge, lists replace, set lists take the union. */
export function applyMerge(live: Json | undefined, applied: Json, dotted = ''): Json {
  if (Array.isArray(applied) && SET_LISTS.has(dotted)) {
    const current = Array.isArray(live) ? live : [];
    return [...current, ...applied.filter((item) => !current.some((c) => deepEqual(c, item)))];
  }
  if (!isObject(applied) || !isObject(live)) return clone(applied);
  const result: JsonObject = { ...live };
  for (const [key, value] of Object.entries(applied)) {
    result[key] = applyMerge(result[key], value, dotted ? `${dotted}.${key}` : key);
  }
  return result;
}

/** `.spec.replicas`, `.metadata.finalizers[="x"]`: how a conflict names a field. */
export function describePath(path: FieldPath): string {
  return path.map((s) => (s.startsWith('v:') ? `[=${s.slice(2)}]` : `.${s.slice(2)}`)).join('');
}

const isPrefix = (a: FieldPath, b: FieldPath): boolean => a.length <= b.length && a.every((s, i) => s === b[i]);

/** Paths of `set` that overlap `path` (equal, or one inside the other). */
export function overlapping(set: Map<string, FieldPath>, path: FieldPath): FieldPath[] {
  const exact = set.get(pathKey(path));
  if (exact) return [exact];
  return [...set.values()].filter((q) => isPrefix(q, path) || isPrefix(path, q));
}

/** Leaf paths whose value differs between two versions of an object. */
export function changedPaths(before: JsonObject | undefined, after: JsonObject, part: FieldPart): { set: FieldPath[]; removed: FieldPath[] } {
  const old = before ? fieldSetOf(before, part) : new Map<string, FieldPath>();
  const now = fieldSetOf(after, part);
  const set = [...now.entries()].filter(([key, path]) => !old.has(key) || !deepEqual(valueAt(before, path), valueAt(after, path))).map(([, p]) => p);
  const removed = [...old.entries()].filter(([key]) => !now.has(key)).map(([, p]) => p);
  return { set, removed };
}
