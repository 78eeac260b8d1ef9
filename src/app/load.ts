/**
 * Loading an app (see docs/app-format.md) in two steps, as Helm's loader
 * does: reading its source files (source.ts: a folder, or a tarball in
 * memory) and assembling the `App` from them (assembleApp), so every source
 * feeds the same checks.
 */
import { readFile } from 'node:fs/promises';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import { DiagnosticsError, FlotillaError, type Diagnostic, type SourceLocation } from '../diagnostics/index.js';
import type { ReadMemory } from '../files/index.js';
import { getNode, parseJson, parseYaml, type ParsedText, type ParsedYaml, type ParseMemo, type ValueNode, type YamlParser } from '../yaml/index.js';
import {
  checkCatalog,
  clusterCustomImages,
  effectiveServiceDefaults,
  readImageTargets,
  readServiceDefaults,
  readVersionFile,
  resolveImages,
  serviceDefaultAnnotations,
  targetEntry,
  targetVersion,
  type AppVersions,
  type EffectiveServiceDefault,
  type ResolvedImage,
  type VersionCatalog,
  type OpenStackReleaseEntry,
} from '../catalog/index.js';
import { readMetadata, type AppMetadata } from './metadata.js';
import { buildReleaseGraph, readReleases, type Release, type ReleaseGraph } from './releases.js';
import { checkReferences } from './references.js';
import { checkUpdatePhases, type UpdatePhase } from './update-phases.js';
import { unknownName } from '../names/index.js';
import type { FluxTarget } from '../flux/index.js';
import { checkSchema, rememberedSchemaCheck, type JsonSchema } from './schema-check.js';
import { APP_FILES } from './layout.js';
import { directoryAppSource, type AppSource, type ChartFile } from './source.js';
import { describeClash } from '../values/index.js';
import { checkSpecLayer, enabledServices, mergeSpec, selectedPolicySet, type DeploymentSpec, type SpecLayer } from './spec.js';

export interface App {
  /** Absolute path of the app root (a source tree), or of the tarball it was read from. */
  readonly root: string;
  /** Where the app's files are read from: its source tree, or a tarball in memory. */
  readonly source: AppSource;
  readonly metadata: AppMetadata;
  readonly releases: readonly Release[];
  /** The Flux version the release table declares (fluxVersion): the schema of its Flux fields and of the generated objects. */
  readonly fluxTarget: FluxTarget;
  /** The release table's `strictValues`: values warnings are errors for this app. */
  readonly strictValues: boolean;
  /**
   * The namespace of the app's own objects — the HelmRepository and top
   * kustomization, generated passwords, plugin records: metadata
   * `flotilla.namespace`, by default the namespace most releases use (ties:
   * the first by name). docs/app-format.md, "The app's namespace".
   */
  readonly namespace: string;
  /**
   * The release table's `chartRepositories`: chart repository URL → the app
   * folder (relative to its root) whose `<chart name>` sub-folder serves a
   * dependency on that repository (src/dependencies).
   */
  readonly chartRepositories: ReadonlyMap<string, string>;
  /** The release table's `updatePhases` (update-phases.ts): the order of an update that changes images; empty: none. */
  readonly updatePhases: readonly UpdatePhase[];
  readonly graph: ReleaseGraph;
  /** The merged spec, and its tree for provenance. */
  readonly spec: DeploymentSpec;
  readonly specNode: ValueNode | undefined;
  /** The spec layers, lowest first (preset, size, deployment file). */
  readonly specLayers: readonly SpecLayer[];
  readonly catalog: VersionCatalog;
  /** The target release's catalog entry, its serviceDefaults the effective ones (fallbacks filled in). */
  readonly target: OpenStackReleaseEntry;
  /** Each service default of the target and whether the release set it or the app's fallback applied. */
  readonly serviceDefaults: ReadonlyMap<string, EffectiveServiceDefault>;
  /** The images the charts get: the target release's, with `main.customImages` on top, then the cluster's custom images. */
  readonly images: ReadonlyMap<string, ResolvedImage>;
  /** The cluster's version state this app was assembled with (a version on a cluster), if any. */
  readonly versions?: AppVersions;
  /** The annotations the HelmRelease of a chart carries for the target's service defaults (always written for those that affect it). */
  serviceDefaultAnnotations(chart: string): Record<string, string>;
  /** The RBAC policy set the spec selects (policies/<set>/), if any. */
  readonly policySet?: string;
  /** Releases the spec turns on, in table order. */
  readonly enabled: readonly Release[];
  readonly warnings: readonly Diagnostic[];
  /** How the app's YAML files are parsed: `parseYaml`, or a memo of it the session keeps. */
  readonly parseYaml: YamlParser;
  /** Absolute path of a file given relative to the app root (on disk for an app read from a folder). */
  path(relativePath: string): string;
  /** The text of an app file (path relative to the root), or undefined when there is none. */
  readText(relativePath: string): string | undefined;
  /** A file of the chart a release uses, or undefined. */
  chartFile(release: Release, file: string): ChartFile | undefined;
  /**
   * The Chart.yaml of the chart a release uses as the app parsed it (the
   * text parsed, build-time tokens filled, and its tree), or undefined when
   * there is none: the chart loader reads its fields from it rather than
   * parsing the file again (src/charts chartMetadata).
   */
  chartYaml(release: Release): ParsedText | undefined;
}

export class AppLoadError extends DiagnosticsError {}

export interface LoadOptions {
  /** A deployment spec to use instead of overrides/deployment.yaml (path relative to the cwd). */
  readonly deployment?: string;
  /** Rewrites each file's text before it is parsed (the build substitutes build-time tokens). */
  readonly transformText?: (displayPath: string, text: string) => string;
  /** Trees parsed before, by input (the session keeps one in the build's cache): what is unchanged is neither parsed nor checked again. */
  readonly parseMemo?: ParseMemo;
  /** What a long-lived process read of the app's folder before and knows unchanged (see ReadMemory). */
  readonly readMemory?: ReadMemory;
}

export interface AssembleOptions {
  /** A deployment spec to use instead of the source's overrides/deployment.yaml: its text and its name in messages. */
  readonly deployment?: { readonly file: string; readonly text: string };
  /** Rewrites each file's text before it is parsed (the build substitutes build-time tokens). */
  readonly transformText?: (displayPath: string, text: string) => string;
  /** Trees parsed before, by input: what is unchanged is neither parsed nor checked again. */
  readonly parseMemo?: ParseMemo;
  /** The cluster's version state (the app record's): its target instead of main.release, its custom images on top of main.customImages. */
  readonly versions?: AppVersions;
}

/** Reads the app source tree in `appDir` and assembles it (see assembleApp). */
export async function loadApp(appDir: string, options: LoadOptions = {}): Promise<App> {
  const root = resolve(appDir);
  const source = directoryAppSource(root, options.readMemory);
  if (source.files.kindOf(APP_FILES.metadata) !== 'file') {
    throw new FlotillaError(`${root} is not a flotilla app: ${APP_FILES.metadata} is missing (see docs/app-format.md)`);
  }
  let deployment: AssembleOptions['deployment'];
  if (options.deployment) {
    const file = resolve(options.deployment);
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) throw new FlotillaError(`deployment spec ${file} not found`);
    deployment = { file: displayIn(root, file), text };
  }
  return assembleApp(source, { deployment, transformText: options.transformText, parseMemo: options.parseMemo });
}

/** How a file is named in messages: relative to `root` when below it. */
function displayIn(root: string, abs: string): string {
  const rel = relative(root, abs);
  return rel.startsWith('..') && !rel.startsWith('../') ? abs : rel || abs;
}

/**
 * Assembles an `App` from its source files, wherever they are kept (a
 * folder, or a tarball in memory): metadata, release table and graph, merged
 * deployment spec, version catalog. All problems found in one pass are
 * reported together, each with file:line.
 */
export function assembleApp(source: AppSource, options: AssembleOptions = {}): App {
  const { files } = source;
  const root = files.path;
  const path = (p: string) => (isAbsolute(p) ? p : join(root, p));
  const errors: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  const collect = (ds: readonly Diagnostic[]) => {
    for (const d of ds) (d.severity === 'error' ? errors : warnings).push(d);
  };
  const parseFile: YamlParser = options.parseMemo?.parse ?? parseYaml;
  const check = options.parseMemo ? rememberedSchemaCheck(options.parseMemo) : checkSchema;
  const parseText = (file: string, text: string, layer: string, allowListEdits: boolean): ParsedText => {
    const parsedText = options.transformText ? options.transformText(file, text) : text;
    return { text: parsedText, parsed: parseFile(parsedText, file, { layer, allowListEdits }) };
  };
  const parse = (file: string, text: string, layer: string, allowListEdits: boolean): ParsedYaml => parseText(file, text, layer, allowListEdits).parsed;
  const read = (rel: string, layer: string, allowListEdits = false): ParsedYaml => {
    const data = files.read(rel);
    if (data === undefined) throw new FlotillaError(`${root}: ${rel} is missing`);
    return parse(rel, data.toString('utf8'), layer, allowListEdits);
  };
  const yamlNames = (folder: string) =>
    files
      .list(folder)
      .filter((e) => e.kind === 'file' && e.name.endsWith('.yaml'))
      .map((e) => e.name);
  const failure = (summary: string) => new AppLoadError(summary, errors);

  if (files.kindOf(APP_FILES.metadata) !== 'file') {
    throw new FlotillaError(`${root} is not a flotilla app: ${APP_FILES.metadata} is missing (see docs/app-format.md)`);
  }
  const metadataDoc = read(APP_FILES.metadata, 'metadata');
  const metadataResult = readMetadata(metadataDoc.root, metadataDoc.file, check);
  collect(metadataResult.diagnostics);

  const releasesDoc = read(APP_FILES.releases, 'releases');
  const releasesResult = readReleases(releasesDoc.root, releasesDoc.file, check);
  collect(releasesResult.diagnostics);
  const chartYamls = new Map<string, ParsedText>();
  releasesResult.releases.forEach((release, index) => {
    if (release.staticOverrides !== `${APP_FILES.static}/${release.chart}.yaml` && files.kindOf(release.staticOverrides) !== 'file') {
      errors.push({
        severity: 'error',
        message: `release "${release.name}": staticOverrides ${release.staticOverrides} not found`,
        location: release.location,
      });
    }
    const chartYaml = source.chartFile(release, 'Chart.yaml');
    if (!chartYaml) {
      errors.push({
        severity: 'error',
        message: `release "${release.name}": no chart at ${release.chartPath} (Chart.yaml not found)`,
        location: release.location,
      });
      return;
    }
    // Helm and the tarball know a chart by the name in its Chart.yaml: a release naming it otherwise would ship another chart.
    const parsedChart = chartYamls.get(release.chartPath) ?? parseText(chartYaml.file, chartYaml.text, 'chart', false);
    chartYamls.set(release.chartPath, parsedChart);
    const named = getNode(parsedChart.parsed.root, ['name']);
    if (named?.kind === 'scalar' && named.value !== release.chart) {
      errors.push({
        severity: 'error',
        message: `release "${release.name}" names chart "${release.chart}", but ${release.chartPath}/Chart.yaml says "${String(named.value)}"`,
        location: getNode(releasesDoc.root, ['releases', index, 'chart'])?.origin.location ?? release.location,
      });
    }
  });
  const metadata = metadataResult.metadata;
  if (errors.length > 0 || !metadata) throw failure('the app metadata or release table is invalid:');
  const graph = buildReleaseGraph(releasesResult.releases);

  // Spec: the deployment file names the preset and size.
  let deploymentDoc: ParsedYaml;
  if (options.deployment) deploymentDoc = parse(options.deployment.file, options.deployment.text, 'deployment', true);
  else if (files.kindOf(APP_FILES.deployment) === 'file') deploymentDoc = read(APP_FILES.deployment, 'deployment', true);
  else throw new FlotillaError(`deployment spec ${path(APP_FILES.deployment)} not found`);
  const deploymentLayer: SpecLayer = { label: 'deployment', file: deploymentDoc.file, root: deploymentDoc.root };
  collect(checkSpecLayer(deploymentLayer, true, check));
  if (errors.length > 0) throw failure('the deployment spec is invalid:');
  const main = getNode(deploymentLayer.root, ['main']);
  const chooseLayer = (kind: 'preset' | 'size', folder: string): SpecLayer | undefined => {
    const nameNode = getNode(main, [kind]);
    if (nameNode?.kind !== 'scalar' || typeof nameNode.value !== 'string') return undefined;
    const file = `${folder}/${nameNode.value}.yaml`;
    if (files.kindOf(file) !== 'file') {
      const available = yamlNames(folder).map((f) => basename(f, '.yaml'));
      errors.push({
        severity: 'error',
        message: `${kind} "${nameNode.value}" not found (${folder}/${nameNode.value}.yaml); available: ${available.sort().join(', ') || 'none'}`,
        location: nameNode.origin.location,
        path: ['main', kind],
      });
      return undefined;
    }
    const layer: SpecLayer = { label: `${kind} ${nameNode.value}`, file, root: read(file, `${kind} ${nameNode.value}`, true).root };
    collect(checkSpecLayer(layer, false, check));
    return layer;
  };
  const preset = chooseLayer('preset', APP_FILES.presets);
  const size = chooseLayer('size', APP_FILES.sizes);
  if (errors.length > 0) throw failure('the deployment spec is invalid:');
  const specLayers = [preset, size, deploymentLayer].filter((l): l is SpecLayer => l !== undefined);
  const { node: specNode, spec } = mergeSpec(specLayers, (clash) =>
    collect([{ severity: releasesResult.strictValues ? 'error' : 'warning', message: describeClash(clash), location: clash.upper.location }]),
  );

  const featuresSchema = files.read(APP_FILES.featuresSchema);
  if (featuresSchema) {
    const schema = parseJson(featuresSchema.toString('utf8'), APP_FILES.featuresSchema);
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema))
      throw new FlotillaError(`${APP_FILES.featuresSchema}: a JSON Schema must be an object`);
    const features = getNode(specNode, ['features']);
    collect(checkSchema(schema as JsonSchema, features, deploymentLayer.file, ['features'], APP_FILES.featuresSchema));
  }
  collect(checkServicesSection(specNode, releasesResult.releases));
  const policySet = selectedPolicySet(spec);
  if (policySet !== undefined && files.kindOf(`${APP_FILES.policies}/${policySet}`) !== 'directory') {
    const available = files
      .list(APP_FILES.policies)
      .filter((e) => e.kind === 'directory')
      .map((e) => e.name);
    errors.push({
      severity: 'error',
      message: `policy set "${policySet}" not found: ${APP_FILES.policies}/${policySet}/ does not exist; available: ${available.sort().join(', ') || 'none'}`,
      location: getNode(specNode, ['features', 'policies'])?.origin.location,
      path: ['features', 'policies'],
    });
  }
  if (errors.length > 0) throw failure('the deployment spec is invalid:');

  const catalog = readCatalog(
    yamlNames(APP_FILES.versions).sort(),
    (file, layer) => read(`${APP_FILES.versions}/${file}`, layer),
    files.kindOf(APP_FILES.serviceDefaults) === 'file' ? read(APP_FILES.serviceDefaults, 'service defaults').root : undefined,
    collect,
  );
  if (errors.length > 0) throw failure('the version catalog is invalid:');
  collect(checkReferences({ releases: releasesResult.releases, specNode, metadataRoot: metadataDoc.root, imageTargets: catalog.targets, files }));
  collect(
    checkUpdatePhases(
      releasesResult.updatePhases,
      releasesResult.releases.map((r) => r.name),
      [...catalog.targets.keys()],
    ),
  );
  if (errors.length > 0) throw failure('the app refers to names that do not exist:');
  const versions = options.versions;
  const catalogTarget =
    versions && versions.target !== ''
      ? targetEntry(catalog, versions)
      : targetVersion(catalog, spec.main.release, getNode(specNode, ['main', 'release'])?.origin.location);
  const serviceDefaults = effectiveServiceDefaults(catalog.defaults, catalogTarget.serviceDefaults);
  const target: OpenStackReleaseEntry = { ...catalogTarget, serviceDefaults: Object.fromEntries([...serviceDefaults].map(([name, d]) => [name, d.value])) };
  const custom = customImages(specNode);
  if (versions) for (const [field, image] of clusterCustomImages(versions, catalog)) custom.set(field, image);
  const resolved = resolveImages(catalog, target, custom);
  collect(resolved.diagnostics);
  if (errors.length > 0) throw failure('the deployment spec is invalid:');

  const enabled = enabledReleases(releasesResult.releases, graph, spec, metadata);
  return {
    root,
    source,
    metadata,
    releases: releasesResult.releases,
    fluxTarget: releasesResult.fluxTarget,
    strictValues: releasesResult.strictValues,
    namespace: metadata.namespace ?? mostUsedNamespace(releasesResult.releases),
    chartRepositories: releasesResult.chartRepositories,
    updatePhases: releasesResult.updatePhases,
    graph,
    spec,
    specNode,
    specLayers,
    catalog,
    target,
    serviceDefaults,
    images: resolved.images,
    ...(versions ? { versions } : {}),
    serviceDefaultAnnotations: (chart) => serviceDefaultAnnotations(catalog.defaults, serviceDefaults, chart),
    policySet,
    enabled,
    warnings,
    parseYaml: parseFile,
    path,
    readText: (rel) => files.read(rel)?.toString('utf8'),
    chartFile: (release, file) => source.chartFile(release, file),
    chartYaml: (release) => chartYamls.get(release.chartPath),
  };
}

function readCatalog(
  fileNames: readonly string[],
  read: (file: string, layer: string) => ParsedYaml,
  serviceDefaultsRoot: ValueNode | undefined,
  collect: (ds: readonly Diagnostic[]) => void,
): VersionCatalog {
  const versions = new Map<string, OpenStackReleaseEntry>();
  let targets = new Map<string, never[]>() as VersionCatalog['targets'];
  let backendMaps: VersionCatalog['backendMaps'] = new Set();
  for (const file of fileNames) {
    const doc = read(file, file === 'images.yaml' ? 'images' : `release ${basename(file, '.yaml')}`);
    if (file === 'images.yaml') {
      const result = readImageTargets(doc.root);
      collect(result.diagnostics);
      targets = result.targets;
      backendMaps = result.backendMaps;
      continue;
    }
    const result = readVersionFile(doc.root, doc.file, basename(file, '.yaml'));
    collect(result.diagnostics);
    if (result.entry) versions.set(result.entry.release, result.entry);
  }
  const declared = readServiceDefaults(serviceDefaultsRoot);
  collect(declared.diagnostics);
  const catalog = { versions, targets, backendMaps, defaults: declared.declarations };
  collect(checkCatalog(catalog));
  return catalog;
}

/** `main.customImages` with the place each is set. */
function customImages(specNode: ValueNode | undefined): Map<string, { reference: string; location: SourceLocation }> {
  const out = new Map<string, { reference: string; location: SourceLocation }>();
  const node = getNode(specNode, ['main', 'customImages']);
  if (node?.kind !== 'map') return out;
  for (const [field, value] of node.entries) {
    if (value.kind === 'scalar' && typeof value.value === 'string') out.set(field, { reference: value.value, location: value.origin.location });
  }
  return out;
}

/** services.<service>.<chart> must name a service and chart of some release: a typo would silently do nothing. */
function checkServicesSection(specNode: ValueNode | undefined, releases: readonly Release[]): Diagnostic[] {
  const services = getNode(specNode, ['services']);
  if (services?.kind !== 'map') return [];
  const out: Diagnostic[] = [];
  for (const [service, charts] of services.entries) {
    const ofService = releases.filter((r) => r.service === service);
    if (ofService.length === 0) {
      out.push({
        severity: 'error',
        message: `services: ${unknownName(
          'service',
          service,
          releases.flatMap((r) => (r.service ? [r.service] : [])),
        )}`,
        location: charts.origin.location,
        path: ['services', service],
      });
      continue;
    }
    if (charts.kind !== 'map') continue;
    for (const [chart, node] of charts.entries) {
      if (!ofService.some((r) => r.chart === chart)) {
        out.push({
          severity: 'error',
          message: `service "${service}": ${unknownName(
            'chart',
            chart,
            ofService.map((r) => r.chart),
          )}`,
          location: node.origin.location,
          path: ['services', service, chart],
        });
      }
    }
  }
  return out;
}

/** Releases whose service the spec lists, plus everything they depend on; disabled charts never. */
export function enabledReleases(releases: readonly Release[], graph: ReleaseGraph, spec: DeploymentSpec, metadata: AppMetadata): Release[] {
  const services = enabledServices(spec);
  const listed = releases.filter((r) => r.service && services.has(r.service)).map((r) => r.name);
  const wanted = new Set([...listed, ...graph.dependenciesOf(listed)]);
  const disabled = new Set(metadata.disabledCharts);
  for (const name of wanted) {
    const release = graph.byName.get(name) as Release;
    if (!disabled.has(release.chart)) continue;
    const dependents = graph.dependentsOf(name);
    const needers = releases.filter((r) => wanted.has(r.name) && !disabled.has(r.chart) && dependents.has(r.name));
    if (needers.length > 0) {
      throw new FlotillaError(
        `chart "${release.chart}" is in metadata disabled_charts, but enabled release(s) ${needers.map((r) => r.name).join(', ')} depend on release "${name}"`,
        { location: release.location },
      );
    }
  }
  return releases.filter((r) => wanted.has(r.name) && !disabled.has(r.chart));
}

/** The namespace most releases use (ties: the first by name); `default` for an app without releases. */
function mostUsedNamespace(releases: readonly { readonly namespace: string }[]): string {
  const counts = new Map<string, number>();
  for (const r of releases) counts.set(r.namespace, (counts.get(r.namespace) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? 'default';
}
