/**
 * The merge rules (docs/architecture.md, "Values layering"), on origin-carrying trees:
 * - maps merge deeply; scalars and lists from the higher layer replace;
 * - `null` is kept (Helm then deletes the chart default);
 * - `!append` / `!prepend` / `!remove` edit the list below instead of replacing it;
 * - a map meeting a non-map is an error naming the path and both places;
 * - inputs are never mutated: merged trees share untouched subtrees, which are immutable.
 */
import { FlotillaError, formatLocation, formatPath, type DocPath } from '../diagnostics/index.js';
import { applyEditsToItems, describeKind, mapNode, seqNode, type Origin, type ValueNode } from '../document/index.js';

export function describeOrigin(origin: Origin): string {
  return `${origin.layer} (${formatLocation(origin.location)})`;
}

/** Two layers disagree about the shape of a value: one has a map where the other has something else. */
export class ValueClashError extends FlotillaError {
  readonly path: DocPath;
  readonly lower: Origin;
  readonly upper: Origin;

  constructor(path: DocPath, lower: ValueNode, upper: ValueNode) {
    super(
      `type clash at ${formatPath(path)}: ${describeOrigin(lower.origin)} sets ${describeKind(lower)}, ` +
        `but ${describeOrigin(upper.origin)} sets ${describeKind(upper)}; ` +
        `a map can only be merged with a map (use null to delete the value below first)`,
    );
    this.path = path;
    this.lower = lower.origin;
    this.upper = upper.origin;
  }
}

export function mergeNodes(lower: ValueNode | undefined, upper: ValueNode, path: DocPath = []): ValueNode {
  if (lower === undefined) return upper;
  const lowerIsNull = lower.kind === 'scalar' && lower.value === null;
  switch (upper.kind) {
    case 'scalar':
      if (lower.kind === 'map' && upper.value !== null) throw new ValueClashError(path, lower, upper);
      return upper;
    case 'seq':
      if (lower.kind === 'map') throw new ValueClashError(path, lower, upper);
      return upper;
    case 'map': {
      if (lowerIsNull) return upper;
      if (lower.kind !== 'map') throw new ValueClashError(path, lower, upper);
      const entries = new Map(lower.entries);
      for (const [key, value] of upper.entries) entries.set(key, mergeNodes(lower.entries.get(key), value, [...path, key]));
      return mapNode(entries, upper.origin);
    }
    case 'edits': {
      if (lower.kind === 'edits') return { kind: 'edits', edits: [...lower.edits, ...upper.edits], origin: upper.origin };
      if (lower.kind === 'seq' || lowerIsNull) {
        const below = lower.kind === 'seq' ? lower.items : [];
        return seqNode(applyEditsToItems(below, upper.edits), upper.origin);
      }
      if (lower.kind === 'map') throw new ValueClashError(path, lower, upper);
      throw new FlotillaError(
        `cannot edit a list at ${formatPath(path)}: ${describeOrigin(upper.origin)} uses ${describeKind(upper)}, ` +
          `but ${describeOrigin(lower.origin)} sets ${describeKind(lower)}`,
      );
    }
  }
}

/** A named tree to merge; `root` is undefined when the layer has nothing for this chart. */
export interface MergeInput {
  readonly root: ValueNode | undefined;
}

/** Merges layers lowest first. */
export function mergeAll(layers: readonly MergeInput[]): ValueNode | undefined {
  let result: ValueNode | undefined;
  for (const layer of layers) if (layer.root) result = mergeNodes(result, layer.root);
  return result;
}
