/**
 * JSON as Go's encoding/json writes it, for the bytes Helm hashes or stores
 * (a chart's OCI config blob, Chart.lock's digest): `<`, `>`, `&`, U+2028
 * and U+2029 escaped; map keys sorted, as Go sorts a map's keys (a struct's
 * fields keep the order the caller gives them).
 */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A copy of a value read from YAML whose maps have their keys sorted (Go marshals a map so). */
export function sortedMaps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedMaps);
  if (typeof value !== 'object' || value === null) return value;
  const keys = Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(keys.map((key) => [key, sortedMaps((value as Record<string, unknown>)[key])]));
}
