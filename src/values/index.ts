/**
 * Values: the layering of one release's Helm values, with provenance.
 * `computeReleaseValues` builds the layers, merges them, and splits the result
 * into what ships as static overrides and what flotilla writes as system overrides.
 */
import { formatPath, type Diagnostic } from '../diagnostics/index.js';
import { leaves, prune, toPlain, type Leaf, type Origin, type PlainValue, type ValueNode } from '../yaml/index.js';
import { buildLayers, SYSTEM_LAYER_KINDS, type Layer, type LayerProviders, type ReleaseInfo, type ValuesSource } from './layers.js';
import { coalesceWithChart, describeClash, mergeAll, type KindClash } from './merge.js';
import { chartKeyReferences, describeUnknownKey, unknownKeys, type UnknownKey } from './known-keys.js';
import { describeImageProblem, imageProblems, type ImageProblem } from './images.js';
import type { LayerKind } from './layers.js';

export * from './layers.js';
export {
  coalesceWithChart,
  describeClash,
  describeOrigin,
  kindOf,
  mergeAll,
  mergeNodes,
  mergePlain,
  ValueClashError,
  type ClashSink,
  type HelmWarning,
  type KindClash,
} from './merge.js';
export { commandLineLabel, commandLineValues, SetExpressionError, setExpressionInto, type CommandLineValues } from './command-line.js';
export {
  chartKeyReferences,
  checkKnownPath,
  describeUnknownKey,
  isOpenKey,
  schemaFileSecrecy,
  schemaReference,
  schemaSecrecy,
  unknownKeys,
  valuesReference,
  type ChartKeyFiles,
  type JsonSchema,
  type KeyReference,
  type KnownCheck,
  type UnknownKey,
} from './known-keys.js';
export { describeImageProblem, imageLandings, imageProblems, imagesIn, type FoundImage, type ImageLanding, type ImageProblem } from './images.js';
export { renderTemplate, renderValuesTemplate, TemplateError } from './templates.js';
export { culpritsOf, pathsInHelmMessage, unsetPathsOf } from './helm-errors.js';

export interface ReleaseValues {
  readonly release: ReleaseInfo;
  readonly layers: readonly Layer[];
  /** Every layer merged, then coalesced with the chart defaults as Helm does it (overrides' nulls delete): what the chart's templates see. */
  readonly merged: ValueNode | undefined;
  /** Where two layers set a map and a non-map at one path (the higher won): warnings, errors under strict values. */
  readonly clashes: readonly KindClash[];
  /** Keys the static overrides, the values template's output and -f files set that the chart does not know: warnings, errors when strict. */
  readonly unknownKeys: readonly UnknownKey[];
  /** Malformed image references written above the chart: errors. */
  readonly imageProblems: readonly ImageProblem[];
  /** Layer 1, as shipped in `<chart>-static-overrides`. */
  readonly staticOverrides: PlainValue;
  /** The part of `merged` set by layers 2–8: `<chart>-system-overrides`. Lists are whole (Helm replaces lists). */
  readonly systemTree: ValueNode | undefined;
  readonly systemOverrides: PlainValue;
}

export async function computeReleaseValues(source: ValuesSource, release: ReleaseInfo, providers: LayerProviders = {}): Promise<ReleaseValues> {
  const layers = await buildLayers(source, release, providers);
  const clashes: KindClash[] = [];
  const onClash = (clash: KindClash) => clashes.push(clash);
  // As helm-controller (and `helm -f`) do: the layers above the chart merged first, then coalesced with its values.yaml.
  const chart = layers.find((l) => l.kind === 'chart')?.root;
  const overrides = mergeAll(
    layers.filter((l) => l.kind !== 'chart'),
    onClash,
  );
  const merged = coalesceWithChart(chart, overrides, { onClash });
  // By layer kind, not by label: a provider labels its values as it likes (the cluster's user overrides do).
  const systemOrigins = new Set<Origin>();
  for (const layer of layers) if (SYSTEM_LAYER_KINDS.has(layer.kind) && layer.root) collectOrigins(layer.root, systemOrigins);
  // What ships keeps the nulls, for Helm to delete the chart defaults they name; list edits are resolved against the chart's lists.
  const shipped = coalesceWithChart(chart, overrides, { keepNulls: true });
  const systemTree = shipped && prune(shipped, (origin) => systemOrigins.has(origin));
  const chartLayer = layers.find((l) => l.kind === 'chart');
  const file = (name: string) => source.chartFile(release, name);
  const schema = file('values.schema.json');
  const chartYaml = file('Chart.yaml');
  const references = chartKeyReferences(
    { ...(chartLayer?.file ? { values: { root: chart, file: chartLayer.file } } : {}), ...(schema ? { schema } : {}), ...(chartYaml ? { chartYaml } : {}) },
    source.parseYaml,
  );
  const chartOrigins = new Set<Origin>();
  if (chart) collectOrigins(chart, chartOrigins);
  const staticLayer = layers.find((l) => l.kind === 'static')?.root;
  return {
    release,
    layers,
    merged,
    clashes,
    unknownKeys: layers.filter((l) => KEY_CHECKED_LAYERS.has(l.kind)).flatMap((l) => unknownKeys(references, l.root)),
    imageProblems: layerImageProblems(layers, merged, chartOrigins),
    staticOverrides: staticLayer ? toPlain(staticLayer) : {},
    systemTree,
    systemOverrides: systemTree ? toPlain(systemTree) : {},
  };
}

/** The layers written by hand whose keys are checked against the chart's (the spec's values apply to many charts, plugins and the cluster's user overrides are checked where they are made). */
const KEY_CHECKED_LAYERS: ReadonlySet<LayerKind> = new Set(['static', 'template', 'command-line']);

/**
 * What a release's values warn about, each at its file:line: kind clashes
 * and unknown keys (errors when values are strict: `--strict`, or the
 * release table's `strictValues`); malformed image references are errors.
 */
export function valuesDiagnostics(values: ReleaseValues, strict: boolean): Diagnostic[] {
  const severity = strict ? 'error' : 'warning';
  return [
    ...values.clashes.map((clash): Diagnostic => ({
      severity,
      message: describeClash(clash, strict ? 'refused: values are strict' : undefined),
      location: clash.upper.location,
    })),
    ...values.unknownKeys.map((unknown): Diagnostic => ({ severity, message: describeUnknownKey(unknown), location: unknown.location })),
    ...values.imageProblems.map((problem): Diagnostic => ({
      severity: 'error',
      message: `${formatPath(problem.path)}: ${describeImageProblem(problem)}`,
      location: problem.location,
    })),
  ];
}

/**
 * Malformed image references each layer above the chart writes (a value a
 * higher layer replaces is still refused: it is in the app), and those the
 * merged values make of parts (an `image:` map's tag over the chart's
 * repository); once each.
 */
function layerImageProblems(layers: readonly Layer[], merged: ValueNode | undefined, chartOrigins: ReadonlySet<Origin>): ImageProblem[] {
  const all = [
    ...layers.filter((l) => l.kind !== 'chart').flatMap((l) => imageProblems(l.root, () => true)),
    ...imageProblems(merged, (origin) => !chartOrigins.has(origin)),
  ];
  const seen = new Set<string>();
  return all.filter((p) => {
    const key = `${p.location.file}:${p.location.line}:${p.location.column}:${p.path.join('.')}`;
    return !seen.has(key) && (seen.add(key), true);
  });
}

/** Every origin object of a tree. Merging keeps origins by identity, so they tell which layer set a merged value. */
function collectOrigins(node: ValueNode, into: Set<Origin>): void {
  into.add(node.origin);
  switch (node.kind) {
    case 'seq':
      for (const item of node.items) collectOrigins(item, into);
      break;
    case 'map':
      for (const child of node.entries.values()) collectOrigins(child, into);
      break;
    case 'edits':
      for (const edit of node.edits) {
        into.add(edit.origin);
        for (const item of edit.items) collectOrigins(item, into);
      }
      break;
    case 'scalar':
      break;
  }
}

/** Leaves with their origin: of the system overrides, or with `all` of everything Helm will see. */
export function explain(values: ReleaseValues, options: { all?: boolean } = {}): Leaf[] {
  const tree = options.all ? values.merged : values.systemTree;
  return tree ? leaves(tree) : [];
}

/** One value a layer set, and whether a higher layer replaced it. */
export interface HistoryEntry extends Leaf {
  readonly overridden: boolean;
}

/**
 * Every value each layer set, lowest layer first, so a user sees what was
 * overridden and by whom: the leaves of `explain` (the winners) with, before
 * each, the values lower layers gave the same path.
 */
export function history(values: ReleaseValues, options: { all?: boolean } = {}): HistoryEntry[] {
  const winners = explain(values, options);
  const key = (path: readonly (string | number)[]) => path.join('\u0000');
  const earlier = new Map<string, Leaf[]>();
  for (const layer of values.layers) {
    if (!layer.root || (!options.all && !SYSTEM_LAYER_KINDS.has(layer.kind))) continue;
    for (const leaf of leaves(layer.root)) earlier.set(key(leaf.path), [...(earlier.get(key(leaf.path)) ?? []), leaf]);
  }
  return winners.flatMap((winner) => {
    const set = (earlier.get(key(winner.path)) ?? []).filter((l) => l.origin !== winner.origin);
    return [...set.map((l) => ({ ...l, overridden: true })), { ...winner, overridden: false }];
  });
}
