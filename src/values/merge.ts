/**
 * The merge rules (docs/architecture.md, "Values layering"), on origin-carrying trees.
 * One merge serves every layered tree flotilla reads (values layers, the
 * release table's `defaults`, user overrides, the spec):
 * - maps merge deeply; anything else from the higher layer replaces what is below, whatever its kind;
 * - `null` is kept (Helm then deletes the chart default);
 * - `!append` / `!prepend` / `!remove` edit the list below instead of replacing it;
 * - a map meeting a non-map (a kind clash) is reported to the caller, who
 *   makes it a warning (the higher layer wins, as Helm's coalesce lets it) or,
 *   without a sink, an error;
 * - inputs are never mutated: merged trees share untouched subtrees, which are immutable.
 *
 * `coalesceWithChart` is Helm's coalesce (pkg/chart/common/util/coalesce.go)
 * of the merged overrides with the chart's values.yaml, with its warnings.
 */
import { FlotillaError, formatLocation, formatPath, type DocPath } from '../diagnostics/index.js';
import {
  applyEditsToItems,
  describeKind,
  fromPlain,
  mapNode,
  seqNode,
  toPlain,
  type MapNode,
  type Origin,
  type PlainValue,
  type ValueNode,
} from '../yaml/index.js';

export function describeOrigin(origin: Origin): string {
  return `${origin.layer} (${formatLocation(origin.location)})`;
}

/** A node's kind in words, without its value (messages never print values). */
export function kindOf(node: ValueNode): string {
  if (node.kind === 'map') return 'a map';
  if (node.kind === 'seq' || node.kind === 'edits') return 'a list';
  return node.value === null ? 'null' : `a ${typeof node.value}`;
}

/**
 * The warning Helm prints for the same clash, when it prints one (coalesce
 * with the chart's defaults only: Helm merges values files silently):
 * - `skipped`: a map over a chart's top-level non-map ("skipped value for <chart>.<key>: Not a table.");
 * - `overwrite`: a non-map over a chart's nested map ("cannot overwrite table with non table for <chart>.<path>");
 * - `destination`: a map over a chart's nested non-map ("destination for <chart>.<path> is a table. Ignoring non-table value").
 */
export type HelmWarning = 'skipped' | 'overwrite' | 'destination';

/** Two layers set a value of different kinds (a map and a non-map) at one path; the upper one wins. */
export interface KindClash {
  readonly path: DocPath;
  readonly lower: Origin;
  readonly lowerKind: string;
  readonly upper: Origin;
  readonly upperKind: string;
  readonly helm?: HelmWarning;
}

export type ClashSink = (clash: KindClash) => void;

export function describeClash(clash: KindClash, outcome = 'the higher layer wins, as in Helm'): string {
  return `type clash at ${formatPath(clash.path)}: ${describeOrigin(clash.lower)} sets ${clash.lowerKind}, but ${describeOrigin(clash.upper)} sets ${clash.upperKind}; ${outcome}`;
}

/** A kind clash where the caller wants none (the spec, one layer's own pieces, and any layer under `--strict`). */
export class ValueClashError extends FlotillaError {
  readonly path: DocPath;
  readonly lower: Origin;
  readonly upper: Origin;

  constructor(clash: KindClash) {
    super(describeClash(clash, 'a map can only be merged with a map (use null to delete the value below first)'));
    this.path = clash.path;
    this.lower = clash.lower;
    this.upper = clash.upper;
  }
}

function clash(path: DocPath, lower: ValueNode, upper: ValueNode, helm?: HelmWarning): KindClash {
  return { path, lower: lower.origin, lowerKind: kindOf(lower), upper: upper.origin, upperKind: kindOf(upper), ...(helm ? { helm } : {}) };
}

function report(sink: ClashSink | undefined, found: KindClash): void {
  if (!sink) throw new ValueClashError(found);
  sink(found);
}

const isNull = (node: ValueNode) => node.kind === 'scalar' && node.value === null;

/** `upper` over `lower`. Kind clashes go to `onClash` (the upper value wins); without it they throw ValueClashError. */
export function mergeNodes(lower: ValueNode | undefined, upper: ValueNode, onClash?: ClashSink, path: DocPath = []): ValueNode {
  if (lower === undefined) return upper;
  switch (upper.kind) {
    case 'scalar':
    case 'seq':
      if (lower.kind === 'map' && !isNull(upper)) report(onClash, clash(path, lower, upper));
      return upper;
    case 'map': {
      if (lower.kind !== 'map') {
        if (!isNull(lower)) report(onClash, clash(path, lower, upper));
        return upper;
      }
      const entries = new Map(lower.entries);
      for (const [key, value] of upper.entries) entries.set(key, mergeNodes(lower.entries.get(key), value, onClash, [...path, key]));
      return mapNode(entries, upper.origin);
    }
    case 'edits':
      return editList(lower, upper, path);
  }
}

/** List edits over what is below: kept for later over more edits, applied over a list (or null, an empty one). */
function editList(lower: ValueNode, upper: ValueNode & { kind: 'edits' }, path: DocPath): ValueNode {
  if (lower.kind === 'edits') return { kind: 'edits', edits: [...lower.edits, ...upper.edits], origin: upper.origin };
  if (lower.kind === 'seq') return seqNode(applyEditsToItems(lower.items, upper.edits), upper.origin);
  if (isNull(lower)) return seqNode(applyEditsToItems([], upper.edits), upper.origin);
  throw new FlotillaError(
    `cannot edit a list at ${formatPath(path)}: ${describeOrigin(upper.origin)} uses ${describeKind(upper)}, but ${describeOrigin(lower.origin)} sets ${kindOf(lower)}`,
    { location: upper.origin.location },
  );
}

/** A named tree to merge; `root` is undefined when the layer has nothing for this chart. */
export interface MergeInput {
  readonly root: ValueNode | undefined;
}

/** Merges layers lowest first (see mergeNodes for `onClash`). */
export function mergeAll(layers: readonly MergeInput[], onClash?: ClashSink): ValueNode | undefined {
  let result: ValueNode | undefined;
  for (const layer of layers) if (layer.root) result = mergeNodes(result, layer.root, onClash);
  return result;
}

/**
 * The merge on plain values (user overrides stored in the cluster, read
 * back without places): `upper` over `lower`, kind clashes resolved silently
 * for the higher value (the places to report them are gone).
 */
export function mergePlain(lower: PlainValue, upper: PlainValue): PlainValue {
  const origin: Origin = { layer: 'plain', location: { file: '', line: 0, column: 0 } };
  return toPlain(mergeNodes(fromPlain(lower, origin), fromPlain(upper, origin), () => undefined));
}

export interface CoalesceOptions {
  /**
   * Keep the overrides' nulls (Helm's MergeValues) instead of deleting them
   * with the chart default they null (CoalesceValues, what templates see):
   * the overrides as shipped must keep them for Helm to do that.
   */
  readonly keepNulls?: boolean;
  readonly onClash?: ClashSink;
}

/**
 * Helm's coalesce of the chart's values (`chart`) with the merged overrides
 * (`overrides`, every layer above it merged first, as helm-controller and
 * `helm -f a -f b` merge them before coalescing): the overrides win every
 * clash, maps merge, a null from the overrides deletes the chart's value
 * (at the top level any value, below it a non-null one), list edits left
 * over apply to the chart's list. Clashes carry the warning Helm prints.
 */
export function coalesceWithChart(chart: ValueNode | undefined, overrides: ValueNode | undefined, options: CoalesceOptions = {}): ValueNode | undefined {
  if (!overrides) return chart;
  if (!chart || chart.kind !== 'map' || overrides.kind !== 'map') return overrides;
  return coalesceTable(chart, overrides, [], options);
}

function coalesceTable(chart: MapNode, overrides: MapNode, path: DocPath, options: CoalesceOptions): MapNode {
  const topLevel = path.length === 0;
  // The chart's keys first, in its order, then those only the overrides have (as mergeNodes orders them).
  const entries = new Map<string, ValueNode>();
  for (const [key, below] of chart.entries) {
    const above = overrides.entries.get(key);
    const at = [...path, key];
    if (above === undefined) {
      entries.set(key, below);
    } else if (isNull(above)) {
      // Helm deletes the key: at the top level whatever the chart had; below it only a non-null default.
      if (options.keepNulls || !(topLevel || !isNull(below))) entries.set(key, above);
    } else if (above.kind === 'edits') {
      entries.set(key, editList(below, above, at));
    } else if (above.kind === 'map' && below.kind === 'map') {
      entries.set(key, coalesceTable(below, above, at, options));
    } else {
      if ((above.kind === 'map' || below.kind === 'map') && !isNull(below)) options.onClash?.(clash(at, below, above, helmWarning(topLevel, above)));
      entries.set(key, above);
    }
  }
  for (const [key, above] of overrides.entries) if (!chart.entries.has(key)) entries.set(key, above);
  return mapNode(entries, overrides.origin);
}

function helmWarning(topLevel: boolean, above: ValueNode): HelmWarning | undefined {
  if (above.kind === 'map') return topLevel ? 'skipped' : 'destination';
  return topLevel ? undefined : 'overwrite';
}
