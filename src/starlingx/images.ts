/**
 * The values a StarlingX platform takes for image references. At upload,
 * sysinv finds them in each chart's values.yaml and in the release's static
 * overrides, puts its local registry in front of each (`registry.local:9001/…`)
 * and writes them back into the static overrides; values stored with
 * `system helm-override-update` reach Flux as they are. So an image the
 * platform must pull through its registry has to be in the static overrides,
 * at a place sysinv looks.
 *
 * Where sysinv looks (its image parser, read from starlingx/config
 * sysinv/conductor/kube_app.py), keys compared lower-cased, lists never
 * entered:
 * - `images:` a map: its `tags` map when it has one, else the whole map;
 * - `image:` a string (or null), or a map's `repository` (with `registry`
 *   when both are there) and `tag`; a map without them is not entered;
 * - `tag:` / `imageTag:` a string (or null);
 * - any other map: entered.
 */
import type { PlainValue } from '../yaml/index.js';

/** One value sysinv reads as (part of) an image reference, at its path in the values. */
export interface PlatformImageValue {
  readonly path: readonly string[];
  readonly value: PlainValue;
}

const TAG_KEYS: ReadonlySet<string> = new Set(['tag', 'imagetag']);

type PlainMap = { readonly [key: string]: PlainValue };

function isMap(value: PlainValue | undefined): value is PlainMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isTextOrNull(value: PlainValue): boolean {
  return typeof value === 'string' || value === null;
}

/** Every leaf below `value` (the value itself when it is not a map), at its full path. */
function leavesBelow(path: readonly string[], value: PlainValue): PlatformImageValue[] {
  if (!isMap(value)) return [{ path, value }];
  return Object.entries(value).flatMap(([key, child]) => leavesBelow([...path, key], child));
}

/** The values of `values` sysinv takes for image references, in document order. */
export function platformImageValues(values: PlainValue, path: readonly string[] = []): PlatformImageValue[] {
  if (!isMap(values)) return [];
  const found: PlatformImageValue[] = [];
  for (const [key, value] of Object.entries(values)) {
    const at = [...path, key];
    const name = key.toLowerCase();
    if (name === 'images') {
      if (isMap(value) && 'tags' in value) found.push(...leavesBelow([...at, 'tags'], value.tags as PlainValue));
      else if (isMap(value)) found.push(...leavesBelow(at, value));
    } else if (name === 'image') {
      if (isMap(value)) {
        if ('repository' in value) {
          found.push({ path: [...at, 'repository'], value: value.repository as PlainValue });
          if ('registry' in value) found.push({ path: [...at, 'registry'], value: value.registry as PlainValue });
        }
        if ('tag' in value) found.push({ path: [...at, 'tag'], value: value.tag as PlainValue });
      } else if (isTextOrNull(value)) {
        found.push({ path: at, value });
      }
    } else if (TAG_KEYS.has(name)) {
      if (isTextOrNull(value)) found.push({ path: at, value });
    } else if (isMap(value)) {
      found.push(...platformImageValues(value, at));
    }
  }
  return found;
}

/** A copy of `values` without the values at `paths`; maps left empty by it are dropped too. */
export function withoutPaths(values: PlainValue, paths: readonly (readonly string[])[]): PlainValue {
  if (!isMap(values) || paths.length === 0) return values;
  const copy: Record<string, PlainValue> = {};
  for (const [key, child] of Object.entries(values)) {
    const here = paths.filter((p) => p[0] === key);
    if (here.some((p) => p.length === 1)) continue;
    const rest = withoutPaths(
      child,
      here.map((p) => p.slice(1)),
    );
    if (here.length > 0 && isMap(rest) && Object.keys(rest).length === 0) continue;
    copy[key] = rest;
  }
  return copy;
}
