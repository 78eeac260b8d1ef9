/**
 * Values: the layering of one release's Helm values, with provenance.
 * `computeReleaseValues` builds the layers, merges them, and splits the result
 * into what ships as static overrides and what flotilla writes as system overrides.
 */
import { leaves, prune, toPlain, type Leaf, type PlainValue, type ValueNode } from '../document/index.js';
import { buildLayers, SYSTEM_LAYER_KINDS, type Layer, type LayerProviders, type ReleaseInfo, type ValuesSource } from './layers.js';
import { mergeAll } from './merge.js';

export * from './layers.js';
export { describeOrigin, mergeAll, mergeNodes, ValueClashError } from './merge.js';
export { renderTemplate, renderValuesTemplate, TemplateError } from './templates.js';
export { culpritsOf, pathsInHelmMessage } from './helm-errors.js';

export interface ReleaseValues {
  readonly release: ReleaseInfo;
  readonly layers: readonly Layer[];
  /** Every layer merged, chart defaults included: what Helm will see. */
  readonly merged: ValueNode | undefined;
  /** Layer 1, as shipped in `<chart>-static-overrides`. */
  readonly staticOverrides: PlainValue;
  /** The part of `merged` set by layers 2–8: `<chart>-system-overrides`. Lists are whole (Helm replaces lists). */
  readonly systemTree: ValueNode | undefined;
  readonly systemOverrides: PlainValue;
}

export async function computeReleaseValues(source: ValuesSource, release: ReleaseInfo, providers: LayerProviders = {}): Promise<ReleaseValues> {
  const layers = await buildLayers(source, release, providers);
  const merged = mergeAll(layers);
  const systemLabels = new Set(layers.filter((l) => SYSTEM_LAYER_KINDS.has(l.kind)).map((l) => l.label));
  const systemTree = merged && prune(merged, (origin) => systemLabels.has(origin.layer));
  const staticLayer = layers.find((l) => l.kind === 'static')?.root;
  return {
    release,
    layers,
    merged,
    staticOverrides: staticLayer ? toPlain(staticLayer) : {},
    systemTree,
    systemOverrides: systemTree ? toPlain(systemTree) : {},
  };
}

/** Leaves with their origin: of the system overrides, or with `all` of everything Helm will see. */
export function explain(values: ReleaseValues, options: { all?: boolean } = {}): Leaf[] {
  const tree = options.all ? values.merged : values.systemTree;
  return tree ? leaves(tree) : [];
}
