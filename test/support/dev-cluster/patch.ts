/**
 * TEST FIXTURE (dev cluster): the patch formats of the Kubernetes API —
 * JSON merge patch (RFC 7386), JSON patch (RFC 6902) and, for built-in
 * types, strategic merge patch with the merge keys of the common lists.
 */
import { badRequest } from './status.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

export const clone = <T>(value: T): T => structuredClone(value);

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

/** RFC 7386: objects merge, `null` deletes, anything else replaces. */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

const decodePointer = (pointer: string): string[] => {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw badRequest(`the server rejected our request due to an error in our request: invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
};

function parentOf(doc: Json, path: string[], op: string): { parent: JsonObject | Json[]; key: string } {
  let node: Json = doc;
  for (const segment of path.slice(0, -1)) {
    const next: Json | undefined = Array.isArray(node) ? node[Number(segment)] : isObject(node) ? node[segment] : undefined;
    if (next === undefined || next === null || typeof next !== 'object') {
      throw badRequest(
        `the server rejected our request due to an error in our request: ${op} operation does not apply: doc is missing path: "/${path.join('/')}": missing value`,
      );
    }
    node = next;
  }
  return { parent: node as JsonObject | Json[], key: path[path.length - 1]! };
}

function getAt(doc: Json, path: string[]): Json | undefined {
  let node: Json | undefined = doc;
  for (const segment of path) {
    if (Array.isArray(node)) node = node[Number(segment)];
    else if (isObject(node)) node = node[segment];
    else return undefined;
  }
  return node;
}

/** RFC 6902 on a copy of `doc`. */
export function jsonPatch(doc: Json, operations: unknown): Json {
  if (!Array.isArray(operations)) throw badRequest('the server rejected our request due to an error in our request: a JSON patch must be a list of operations');
  let result = clone(doc);
  for (const raw of operations) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string')
      throw badRequest('the server rejected our request due to an error in our request: invalid JSON patch operation');
    const op = raw.op;
    const path = decodePointer(raw.path);
    const missing = () =>
      badRequest(
        `the server rejected our request due to an error in our request: ${op} operation does not apply: doc is missing path: "${raw.path as string}": missing value`,
      );
    const remove = (at: string[]): Json => {
      const { parent, key } = parentOf(result, at, op);
      if (Array.isArray(parent)) {
        const index = Number(key);
        if (!(index >= 0 && index < parent.length)) throw missing();
        return parent.splice(index, 1)[0]!;
      }
      if (!(key in parent)) throw missing();
      const value = parent[key]!;
      delete parent[key];
      return value;
    };
    const add = (at: string[], value: Json, replace: boolean) => {
      if (at.length === 0) {
        result = clone(value);
        return;
      }
      const { parent, key } = parentOf(result, at, op);
      if (Array.isArray(parent)) {
        const index = key === '-' ? parent.length : Number(key);
        if (!(index >= 0 && index <= parent.length) || (replace && index >= parent.length)) throw missing();
        parent.splice(index, replace ? 1 : 0, clone(value));
      } else {
        if (replace && !(key in parent)) throw missing();
        parent[key] = clone(value);
      }
    };
    switch (op) {
      case 'add':
        add(path, raw.value as Json, false);
        break;
      case 'replace':
        add(path, raw.value as Json, true);
        break;
      case 'remove':
        remove(path);
        break;
      case 'move': {
        const value = remove(decodePointer(String(raw.from)));
        add(path, value, false);
        break;
      }
      case 'copy': {
        const value = getAt(result, decodePointer(String(raw.from)));
        if (value === undefined) throw missing();
        add(path, value, false);
        break;
      }
      case 'test':
        if (!deepEqual(getAt(result, path), raw.value)) {
          throw badRequest(`the server rejected our request due to an error in our request: testing value ${raw.path} failed`);
        }
        break;
      default:
        throw badRequest(`the server rejected our request due to an error in our request: Unexpected kind: ${op}`);
    }
  }
  return result;
}

/** Merge keys of the common lists of built-in types (their `patchMergeKey`). */
function mergeKeyFor(field: string, items: Json[]): string | undefined {
  const keys: Record<string, string> = {
    containers: 'name',
    initContainers: 'name',
    ephemeralContainers: 'name',
    env: 'name',
    volumes: 'name',
    volumeMounts: 'mountPath',
    imagePullSecrets: 'name',
    hostAliases: 'ip',
    conditions: 'type',
    ownerReferences: 'uid',
  };
  if (field === 'ports') return items.some((i) => isObject(i) && 'containerPort' in i) ? 'containerPort' : 'port';
  return keys[field];
}

/** Lists merged as sets of scalars. */
const SET_LISTS = new Set(['finalizers']);

/**
 * Strategic merge patch for built-in types: maps merge, `null` deletes,
 * keyed lists merge item by item (`$patch: delete` removes an item), other
 * lists replace, `$patch: replace` on a map replaces it.
 */
export function strategicMergePatch(target: Json | undefined, patch: Json, field = ''): Json {
  if (Array.isArray(patch)) {
    const current = Array.isArray(target) ? target : [];
    if (SET_LISTS.has(field)) return [...new Set([...current, ...patch].map((v) => JSON.stringify(v)))].map((v) => JSON.parse(v) as Json);
    const key = mergeKeyFor(field, [...current, ...patch]);
    if (!key || !patch.every(isObject)) return clone(patch);
    const result = current.map((item) => clone(item));
    for (const item of patch as JsonObject[]) {
      const index = result.findIndex((existing) => isObject(existing) && existing[key] === item[key]);
      if (item.$patch === 'delete') {
        if (index >= 0) result.splice(index, 1);
      } else if (index >= 0) result[index] = strategicMergePatch(result[index], item);
      else result.push(strategicMergePatch(undefined, item));
    }
    return result;
  }
  if (!isObject(patch)) return clone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return clone(rest);
  }
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    if (value === null) delete result[key];
    else result[key] = strategicMergePatch(result[key], value, key);
  }
  return result;
}
