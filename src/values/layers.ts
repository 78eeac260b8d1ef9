/**
 * The values layers of one release, lowest first (docs/architecture.md, "Values layering"):
 *   0 chart values.yaml          5 plugin system overrides (extension point)
 *   1 static overrides           6 common.charts.values, then common.groups.<group>.values
 *   2 rendered template          7 services.<service>.<chart>.values
 *   3 release images, custom     8 user overrides (extension point)
 *   4 policy set                 9 command line: -f FILE, --set, --set-string (preflight, template, overrides)
 * Layer 1 ships as `<chart>-static-overrides`; 2–8 merge into `<chart>-system-overrides`.
 */
import type { SourceLocation } from '../diagnostics/index.js';
import { fromPlain, getNode, mapNode, parseYaml, relabel, type ValueNode, type YamlParser } from '../yaml/index.js';
import { imageLandings, type ImageLanding } from './images.js';
import { mergeNodes } from './merge.js';
import { renderValuesTemplate } from './templates.js';

export type LayerKind =
  'chart' | 'static' | 'template' | 'images' | 'custom-images' | 'policy' | 'plugin' | 'common' | 'group' | 'service' | 'user' | 'command-line';

/** Layer kinds in merge order; the index is the layer's rank. */
export const LAYER_ORDER: readonly LayerKind[] = [
  'chart',
  'static',
  'template',
  'images',
  'custom-images',
  'policy',
  'plugin',
  'common',
  'group',
  'service',
  'user',
  'command-line',
];

/** Kinds that end up in `<chart>-system-overrides`. */
export const SYSTEM_LAYER_KINDS: ReadonlySet<LayerKind> = new Set(LAYER_ORDER.slice(LAYER_ORDER.indexOf('template')));

export interface Layer {
  readonly kind: LayerKind;
  /** Label recorded in the origin of every value of this layer. */
  readonly label: string;
  /** The file the layer comes from, when it is one file. */
  readonly file?: string;
  readonly root: ValueNode | undefined;
}

/** What the values engine needs to know about a release. */
export interface ReleaseInfo {
  readonly name: string;
  readonly chart: string;
  readonly chartPath: string;
  readonly namespace: string;
  readonly releaseName: string;
  readonly service?: string;
  readonly group?: string;
  /** The release's static overrides file relative to the app root; default overrides/static/<chart>.yaml. */
  readonly staticOverrides?: string;
}

/** What the values engine needs to know about the app (an `App` from src/app fits). */
export interface ValuesSource {
  /** The text of an app file (path relative to the app root), or undefined when there is none. */
  readText(relativePath: string): string | undefined;
  /** A file of the chart a release uses, with its name for messages, or undefined. */
  chartFile(release: ReleaseInfo, file: string): { readonly text: string; readonly file: string } | undefined;
  /** How layer files are parsed, when not with `parseYaml` itself (an App's memo of it). */
  readonly parseYaml?: YamlParser;
  readonly metadata: { readonly appName: string; readonly appVersion: string };
  readonly spec: { readonly main: { readonly customImages?: Readonly<Record<string, string>> }; readonly features: Readonly<Record<string, unknown>> };
  /** The policy set whose policies/<set>/<chart>.yaml is layer 4, if any. */
  readonly policySet?: string;
  readonly specNode: ValueNode | undefined;
  readonly target: {
    readonly release: string;
    readonly file: string;
    readonly images: ReadonlyMap<string, { readonly reference: string; readonly location: SourceLocation }>;
    readonly serviceDefaults: Readonly<Record<string, unknown>>;
  };
  readonly catalog: { readonly targets: ReadonlyMap<string, readonly (ImageLanding & { readonly chart: string })[]> };
  /** Resolved images: the target release's, custom ones on top (src/catalog resolveImages). */
  readonly images: ReadonlyMap<string, { readonly reference: string; readonly source: 'release' | 'custom'; readonly location: SourceLocation }>;
}

/** A source of a values layer computed elsewhere (chart plugins, user overrides stored in the cluster). */
export type LayerProvider = (release: ReleaseInfo) => Promise<ValueNode | undefined>;

export interface LayerProviders {
  readonly plugin?: LayerProvider;
  readonly user?: LayerProvider;
  /** Values given with -f/--set/--set-string: above every other layer, as Helm puts them. */
  readonly commandLine?: LayerProvider;
}

/**
 * The files of a release's own layers (chart values, static overrides,
 * values template, policy), relative to the app root, or to the chart folder
 * for `chart`. Everything else a release's values come from is app-wide (the
 * spec, the version catalog, the plugin bundle, the release table), so a
 * change to one of these files changes this release's values only.
 */
export interface ReleaseLayerFiles {
  readonly chart: 'values.yaml';
  readonly static: string;
  readonly template: string;
  readonly policy?: string;
}

export function releaseLayerFiles(release: ReleaseInfo, policySet: string | undefined): ReleaseLayerFiles {
  return {
    chart: 'values.yaml',
    static: release.staticOverrides ?? `overrides/static/${release.chart}.yaml`,
    template: `overrides/templates/${release.chart}.yaml.hbs`,
    ...(policySet ? { policy: `policies/${policySet}/${release.chart}.yaml` } : {}),
  };
}

function parseLayer(source: ValuesSource, text: string, file: string, label: string, allowListEdits: boolean): ValueNode | undefined {
  return (source.parseYaml ?? parseYaml)(text, file, { layer: label, allowListEdits }).root;
}

function readLayerFile(source: ValuesSource, relativePath: string, label: string, allowListEdits: boolean): ValueNode | undefined {
  const text = source.readText(relativePath);
  return text === undefined ? undefined : parseLayer(source, text, relativePath, label, allowListEdits);
}

/** Sets `value` at a dotted path, building the maps on the way. */
function nested(path: readonly string[], leaf: ValueNode): ValueNode {
  return path.reduceRight<ValueNode>((child, key) => mapNode(new Map([[key, child]]), leaf.origin), leaf);
}

/** An image to write into a chart's values: where, and the image (the order is the layer's merge order). */
interface ChartImage {
  readonly target: ImageLanding;
  readonly image: { readonly reference: string; readonly location: SourceLocation };
}

/**
 * Each chart's images by where they come from, indexed once per source: a
 * release's layer reads its own chart's, so computing every release's values
 * stays linear in releases plus images (it looked at every image for every
 * release). The order is the images' and then their targets', as before.
 */
const imagesByChart = new WeakMap<ValuesSource, Map<string, Record<'release' | 'custom', ChartImage[]>>>();

function chartImages(source: ValuesSource, chart: string, kind: 'release' | 'custom'): readonly ChartImage[] {
  let index = imagesByChart.get(source);
  if (!index) {
    index = new Map();
    for (const [field, image] of source.images) {
      for (const target of source.catalog.targets.get(field) ?? []) {
        let ofChart = index.get(target.chart);
        if (!ofChart) index.set(target.chart, (ofChart = { release: [], custom: [] }));
        ofChart[image.source].push({ target, image });
      }
    }
    imagesByChart.set(source, index);
  }
  return index.get(chart)?.[kind] ?? [];
}

function imagesLayer(source: ValuesSource, release: ReleaseInfo, kind: 'release' | 'custom', label: string): ValueNode | undefined {
  let root: ValueNode | undefined;
  for (const { target, image } of chartImages(source, release.chart, kind)) {
    for (const { path, value } of imageLandings(image.reference, target))
      root = mergeNodes(root, nested(path, fromPlain(value, { layer: label, location: image.location })));
  }
  return root;
}

/** The image references the charts get (template context `images`). */
function imageRefs(source: ValuesSource): Record<string, string> {
  return Object.fromEntries([...source.images].map(([field, image]) => [field, image.reference]));
}

export function templateContext(source: ValuesSource, release: ReleaseInfo): Record<string, unknown> {
  const spec = source.spec as unknown as Record<string, unknown>;
  return {
    spec,
    main: spec.main,
    features: spec.features,
    common: spec.common,
    services: spec.services,
    version: {
      release: source.target.release,
      images: Object.fromEntries([...source.target.images].map(([f, i]) => [f, i.reference])),
      serviceDefaults: source.target.serviceDefaults,
    },
    images: imageRefs(source),
    app: { name: source.metadata.appName, version: source.metadata.appVersion },
    release: { ...release },
  };
}

/** Builds every layer of a release, lowest first. Layers with nothing for this chart have `root: undefined`. */
export async function buildLayers(source: ValuesSource, release: ReleaseInfo, providers: LayerProviders = {}): Promise<Layer[]> {
  const layers: Layer[] = [];
  const add = (kind: LayerKind, label: string, root: ValueNode | undefined, file?: string) => layers.push({ kind, label, root, file });

  const files = releaseLayerFiles(release, source.policySet);
  const chartValues = source.chartFile(release, files.chart);
  const chartLabel = `chart ${release.chart}`;
  add('chart', chartLabel, chartValues && parseLayer(source, chartValues.text, chartValues.file, chartLabel, false), chartValues?.file);

  add('static', 'static', readLayerFile(source, files.static, 'static', false), files.static);

  const template = source.readText(files.template);
  if (template !== undefined) {
    add('template', 'template', renderValuesTemplate(template, files.template, templateContext(source, release), 'template'), files.template);
  } else add('template', 'template', undefined);

  add('images', `images ${source.target.release}`, imagesLayer(source, release, 'release', `images ${source.target.release}`), source.target.file);
  add('custom-images', 'main.customImages', imagesLayer(source, release, 'custom', 'main.customImages'));

  if (files.policy) {
    add('policy', `policy ${source.policySet}`, readLayerFile(source, files.policy, `policy ${source.policySet}`, true), files.policy);
  } else add('policy', 'policy', undefined);

  add('plugin', `plugin ${release.chart}`, providers.plugin ? await providers.plugin(release) : undefined);

  const specValues = (path: string[], label: string) => {
    const node = getNode(source.specNode, path);
    return node ? relabel(node, label) : undefined;
  };
  add('common', 'common.charts', specValues(['common', 'charts', 'values'], 'common.charts'));
  if (release.group)
    add('group', `common.groups.${release.group}`, specValues(['common', 'groups', release.group, 'values'], `common.groups.${release.group}`));
  if (release.service) {
    const label = `services.${release.service}.${release.chart}`;
    add('service', label, specValues(['services', release.service, release.chart, 'values'], label));
  }
  add('user', 'user', providers.user ? await providers.user(release) : undefined);
  add('command-line', 'command line', providers.commandLine ? await providers.commandLine(release) : undefined);
  return layers;
}
