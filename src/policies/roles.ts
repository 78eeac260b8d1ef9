/** Roles of a policy set: personas, other known roles, Keystone implied roles. */
import type { PolicySet } from './types.js';

/** The roles a set is written for, in declaration order. */
export function personaRoles(set: PolicySet): string[] {
  return [...set.roles.keys()];
}

/**
 * The roles a token carries when the user is assigned `roles`: Keystone adds
 * every role they imply, transitively. Order: the given roles, then implied
 * ones as found; compared case-insensitively, as Keystone names are.
 */
export function expandRoles(roles: readonly string[], implied: ReadonlyMap<string, readonly string[]> | undefined): string[] {
  if (!implied || implied.size === 0) return [...roles];
  const byLower = new Map([...implied].map(([k, v]) => [k.toLowerCase(), v]));
  const out: string[] = [];
  const seen = new Set<string>();
  const queue = [...roles];
  while (queue.length > 0) {
    const role = queue.shift();
    if (role === undefined || seen.has(role.toLowerCase())) continue;
    seen.add(role.toLowerCase());
    out.push(role);
    queue.push(...(byLower.get(role.toLowerCase()) ?? []));
  }
  return out;
}
