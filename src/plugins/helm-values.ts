/**
 * What makes a plugin's return value Helm values: maps, lists, strings,
 * finite numbers, booleans and null. Checked in the plugin process on the
 * value the plugin made (where a Date or a class instance is still one), and
 * again by the host on what arrived, which it trusts no more than the plugin.
 * No imports: the plugin process's script carries it.
 */

/**
 * What is wrong with `value`, if anything. `inside`: the maps and lists
 * around this value, so that one containing itself is named rather than
 * walked forever; nesting is held to `maxDepth` (what a YAML file may hold).
 */
function helmValuesProblem(value: unknown, maxDepth: number, path: readonly string[] = [], inside: Set<object> = new Set()): string | undefined {
  const at = () => (path.length > 0 ? ` at ${path.join('.')}` : '');
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `returned ${value}${at()}, which YAML cannot carry`;
  if (value === undefined) return undefined;
  const plainMap = typeof value === 'object' && (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null);
  if (Array.isArray(value) || plainMap) {
    if (inside.has(value as object)) return `returned a map or list that contains itself${at()}; Helm values are a tree`;
    if (inside.size >= maxDepth) return `returned values nested more than ${maxDepth} levels deep${at()}`;
    inside.add(value as object);
    try {
      // Array.from, not map: a hole in a list is an undefined item here, refused below.
      const entries: [string, unknown][] = Array.isArray(value) ? Array.from(value, (item, i) => [String(i), item]) : Object.entries(value as object);
      for (const [key, item] of entries) {
        if (item === undefined && Array.isArray(value)) return `returned undefined in a list${at()}[${key}]`;
        const p = helmValuesProblem(item, maxDepth, [...path, key], inside);
        if (p) return p;
      }
      return undefined;
    } finally {
      inside.delete(value as object);
    }
  }
  return `returned ${typeof value === 'object' ? `a ${(value as object).constructor?.name ?? 'non-plain'} object` : `a ${typeof value}`}${at()}; Helm values are maps, lists, strings, numbers, booleans and null`;
}

/** The top of what getOverrides returns must be a map. */
export function helmValuesMapProblem(value: unknown, maxDepth: number): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `must return a map of Helm values, got ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value}`;
  }
  return helmValuesProblem(value, maxDepth);
}
