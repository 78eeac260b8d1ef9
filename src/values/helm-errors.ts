/**
 * Reading Helm's errors against the values fed to it: which value paths a
 * message names, and which leaves (with their layer and place) those are.
 */
import { formatPath, type DocPath } from '../diagnostics/index.js';
import { closestNode, leaves, type Leaf, type ValueNode } from '../yaml/index.js';

/** Value paths a Helm error names: `.Values.a.b` in template errors, `/a/b` in schema errors. */
export function pathsInHelmMessage(message: string): DocPath[] {
  const paths: DocPath[] = [];
  for (const m of message.matchAll(/\.Values((?:\.[A-Za-z0-9_]+)+)/g)) paths.push((m[1] as string).slice(1).split('.'));
  for (const m of message.matchAll(/at '(\/[^']*)'/g)) {
    paths.push(
      (m[1] as string)
        .slice(1)
        .split('/')
        .filter(Boolean)
        .map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~'))),
    );
  }
  return paths;
}

/** The leaves of `merged` a Helm error names (the closest existing node of each path), each with the layer and place that set it. */
export function culpritsOf(message: string, merged: ValueNode | undefined): Leaf[] {
  if (!merged) return [];
  const found = new Map<string, Leaf>();
  for (const path of pathsInHelmMessage(message)) {
    const closest = closestNode(merged, path);
    for (const leaf of leaves(closest.node, [...closest.path])) found.set(leaf.path.join('\u0000'), leaf);
  }
  return [...found.values()];
}

/** The paths a Helm error names that no layer sets (a typo in a chart value, or a value someone must give). */
export function unsetPathsOf(message: string, merged: ValueNode | undefined): string[] {
  const unset = pathsInHelmMessage(message).filter((path) => !merged || closestNode(merged, path).path.length < path.length);
  return [...new Set(unset.map(formatPath))];
}
