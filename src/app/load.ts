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
import { buildReleaseGraph, readReleases, type Release, type ReleaseGraph, type ReleasesResult } from './releases.js';
import { checkReferences } from './references.js';
import { checkUpdatePhases, type UpdatePhase } from './update-phases.js';
import { unknownName } from '../names/index.js';
import type { FluxTarget } from '../flux/index.js';
import { checkSchema, rememberedSchemaCheck, type JsonSchema, type SchemaChecker } from './schema-check.js';
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
 * deployment spec, version catalog. All problems found in one step are
 * reported together, each with file:line.
 */
export function assembleApp(source: AppSource, options: AssembleOptions = {}): App {
  const reading = appReading(source, options);
  const problems = new Problems();
  const { metadata, metadataRoot, table, chartYamls } = readMetadataAndReleases(reading, source, problems);
  const graph = buildReleaseGraph(table.releases);
  const { spec, specNode, specLayers, deploymentFile } = readSpec(reading, problems, options, table.strictValues);
  const policySet = checkSpec(reading, problems, spec, specNode, deploymentFile, table.releases);
  const catalog = readCatalog(reading, problems);
  checkNames(reading, problems, table, specNode, metadataRoot, catalog);
  const { target, serviceDefaults, images } = resolveTarget(catalog, spec, specNode, options.versions, problems);
  const { files, root, parseFile, path } = reading;
  return {
    root,
    source,
    metadata,
    releases: table.releases,
    fluxTarget: table.fluxTarget,
    strictValues: table.strictValues,
    namespace: metadata.namespace ?? mostUsedNamespace(table.releases),
    chartRepositories: table.chartRepositories,
    updatePhases: table.updatePhases,
    graph,
    spec,
    specNode,
    specLayers,
    catalog,
    target,
    serviceDefaults,
    images,
    ...(options.versions ? { versions: options.versions } : {}),
    serviceDefaultAnnotations: (chart) => serviceDefaultAnnotations(catalog.defaults, serviceDefaults, chart),
    policySet,
    enabled: enabledReleases(table.releases, graph, spec, metadata),
    warnings: problems.warnings,
    parseYaml: parseFile,
    path,
    readText: (rel) => files.read(rel)?.toString('utf8'),
    chartFile: (release, file) => source.chartFile(release, file),
    chartYaml: (release) => chartYamls.get(release.chartPath),
  };
}

/** How assembly reads the app's files: YAML parsed through the memo when there is one (tokens filled in first), schemas checked likewise. */
interface AppReading {
  readonly files: AppSource['files'];
  readonly root: string;
  readonly parseFile: YamlParser;
  readonly check: SchemaChecker;
  /** Absolute path of a file given relative to the app root. */
  path(relativePath: string): string;
  parseText(file: string, text: string, layer: string, allowListEdits: boolean): ParsedText;
  /** An app file parsed; it must be there. */
  read(rel: string, layer: string, allowListEdits?: boolean): ParsedYaml;
  /** The names of the .yaml files in a folder of the app. */
  yamlNames(folder: string): string[];
}

function appReading(source: AppSource, options: AssembleOptions): AppReading {
  const { files } = source;
  const root = files.path;
  const parseFile: YamlParser = options.parseMemo?.parse ?? parseYaml;
  const parseText = (file: string, text: string, layer: string, allowListEdits: boolean): ParsedText => {
    const parsedText = options.transformText ? options.transformText(file, text) : text;
    return { text: parsedText, parsed: parseFile(parsedText, file, { layer, allowListEdits }) };
  };
  return {
    files,
    root,
    parseFile,
    check: options.parseMemo ? rememberedSchemaCheck(options.parseMemo) : checkSchema,
    path: (p) => (isAbsolute(p) ? p : join(root, p)),
    parseText,
    read: (rel, layer, allowListEdits = false) => {
      const data = files.read(rel);
      if (data === undefined) throw new FlotillaError(`${root}: ${rel} is missing`);
      return parseText(rel, data.toString('utf8'), layer, allowListEdits).parsed;
    },
    yamlNames: (folder) =>
      files
        .list(folder)
        .filter((e) => e.kind === 'file' && e.name.endsWith('.yaml'))
        .map((e) => e.name),
  };
}

/** What assembly found wrong: the errors of a step are reported together before the next step runs; the warnings go with the App. */
class Problems {
  readonly errors: Diagnostic[] = [];
  readonly warnings: Diagnostic[] = [];

  readonly collect = (found: readonly Diagnostic[]): void => {
    for (const d of found) (d.severity === 'error' ? this.errors : this.warnings).push(d);
  };

  /** Throws every error found so far, under `summary`, if there is one. */
  stopIfAny(summary: string): void {
    if (this.errors.length > 0) throw new AppLoadError(summary, this.errors);
  }
}

/** The metadata and the release table, each release's static overrides and chart found, and the Chart.yaml of each chart as parsed. */
function readMetadataAndReleases(
  reading: AppReading,
  source: AppSource,
  problems: Problems,
): { metadata: AppMetadata; metadataRoot: ValueNode | undefined; table: ReleasesResult; chartYamls: Map<string, ParsedText> } {
  if (reading.files.kindOf(APP_FILES.metadata) !== 'file') {
    throw new FlotillaError(`${reading.root} is not a flotilla app: ${APP_FILES.metadata} is missing (see docs/app-format.md)`);
  }
  const metadataDoc = reading.read(APP_FILES.metadata, 'metadata');
  const metadataResult = readMetadata(metadataDoc.root, metadataDoc.file, reading.check);
  problems.collect(metadataResult.diagnostics);
  const releasesDoc = reading.read(APP_FILES.releases, 'releases');
  const table = readReleases(releasesDoc.root, releasesDoc.file, reading.check);
  problems.collect(table.diagnostics);
  const chartYamls = readReleaseCharts(reading, source, table.releases, releasesDoc.root, problems);
  const { metadata } = metadataResult;
  problems.stopIfAny('the app metadata or release table is invalid:');
  if (!metadata) throw new AppLoadError('the app metadata or release table is invalid:', problems.errors);
  return { metadata, metadataRoot: metadataDoc.root, table, chartYamls };
}

/** Each release's static overrides file and chart checked to be there, the chart's Chart.yaml parsed once per chart (by its path) and its name checked. */
function readReleaseCharts(
  reading: AppReading,
  source: AppSource,
  releases: readonly Release[],
  releasesRoot: ValueNode | undefined,
  problems: Problems,
): Map<string, ParsedText> {
  const chartYamls = new Map<string, ParsedText>();
  releases.forEach((release, index) => {
    if (release.staticOverrides !== `${APP_FILES.static}/${release.chart}.yaml` && reading.files.kindOf(release.staticOverrides) !== 'file') {
      problems.errors.push({
        severity: 'error',
        message: `release "${release.name}": staticOverrides ${release.staticOverrides} not found`,
        location: release.location,
      });
    }
    const chartYaml = source.chartFile(release, 'Chart.yaml');
    if (!chartYaml) {
      problems.errors.push({
        severity: 'error',
        message: `release "${release.name}": no chart at ${release.chartPath} (Chart.yaml not found)`,
        location: release.location,
      });
      return;
    }
    // Helm and the tarball know a chart by the name in its Chart.yaml: a release naming it otherwise would ship another chart.
    const parsedChart = chartYamls.get(release.chartPath) ?? reading.parseText(chartYaml.file, chartYaml.text, 'chart', false);
    chartYamls.set(release.chartPath, parsedChart);
    const named = getNode(parsedChart.parsed.root, ['name']);
    if (named?.kind === 'scalar' && named.value !== release.chart) {
      problems.errors.push({
        severity: 'error',
        message: `release "${release.name}" names chart "${release.chart}", but ${release.chartPath}/Chart.yaml says "${String(named.value)}"`,
        location: getNode(releasesRoot, ['releases', index, 'chart'])?.origin.location ?? release.location,
      });
    }
  });
  return chartYamls;
}

/** The spec: the deployment file names the preset and size; the three layers merged, lowest first (a kind clash warns, or fails under strictValues). */
function readSpec(
  reading: AppReading,
  problems: Problems,
  options: AssembleOptions,
  strictValues: boolean,
): { spec: DeploymentSpec; specNode: ValueNode | undefined; specLayers: SpecLayer[]; deploymentFile: string } {
  const deployment = readDeploymentLayer(reading, problems, options);
  const main = getNode(deployment.root, ['main']);
  const preset = namedSpecLayer(reading, problems, main, 'preset', APP_FILES.presets);
  const size = namedSpecLayer(reading, problems, main, 'size', APP_FILES.sizes);
  problems.stopIfAny('the deployment spec is invalid:');
  const specLayers = [preset, size, deployment].filter((l): l is SpecLayer => l !== undefined);
  const { node: specNode, spec } = mergeSpec(specLayers, (clash) =>
    problems.collect([{ severity: strictValues ? 'error' : 'warning', message: describeClash(clash), location: clash.upper.location }]),
  );
  return { spec, specNode, specLayers, deploymentFile: deployment.file };
}

/** The deployment file: the one the options give, else the app's overrides/deployment.yaml; checked against its schema. */
function readDeploymentLayer(reading: AppReading, problems: Problems, options: AssembleOptions): SpecLayer {
  let doc: ParsedYaml;
  if (options.deployment) doc = reading.parseText(options.deployment.file, options.deployment.text, 'deployment', true).parsed;
  else if (reading.files.kindOf(APP_FILES.deployment) === 'file') doc = reading.read(APP_FILES.deployment, 'deployment', true);
  else throw new FlotillaError(`deployment spec ${reading.path(APP_FILES.deployment)} not found`);
  const layer: SpecLayer = { label: 'deployment', file: doc.file, root: doc.root };
  problems.collect(checkSpecLayer(layer, true, reading.check));
  problems.stopIfAny('the deployment spec is invalid:');
  return layer;
}

/** The preset or size the deployment file names (`main.preset`, `main.size`), read from its folder and checked; none when not named or not found (an error). */
function namedSpecLayer(reading: AppReading, problems: Problems, main: ValueNode | undefined, kind: 'preset' | 'size', folder: string): SpecLayer | undefined {
  const nameNode = getNode(main, [kind]);
  if (nameNode?.kind !== 'scalar' || typeof nameNode.value !== 'string') return undefined;
  const file = `${folder}/${nameNode.value}.yaml`;
  if (reading.files.kindOf(file) !== 'file') {
    const available = reading.yamlNames(folder).map((f) => basename(f, '.yaml'));
    problems.errors.push({
      severity: 'error',
      message: `${kind} "${nameNode.value}" not found (${folder}/${nameNode.value}.yaml); available: ${available.sort().join(', ') || 'none'}`,
      location: nameNode.origin.location,
      path: ['main', kind],
    });
    return undefined;
  }
  const layer: SpecLayer = { label: `${kind} ${nameNode.value}`, file, root: reading.read(file, `${kind} ${nameNode.value}`, true).root };
  problems.collect(checkSpecLayer(layer, false, reading.check));
  return layer;
}

/** The merged spec against the app: its features against the app's features schema, its services against the releases, its policy set present; returns the policy set. */
function checkSpec(
  reading: AppReading,
  problems: Problems,
  spec: DeploymentSpec,
  specNode: ValueNode | undefined,
  deploymentFile: string,
  releases: readonly Release[],
): string | undefined {
  const featuresSchema = reading.files.read(APP_FILES.featuresSchema);
  if (featuresSchema) {
    const schema = parseJson(featuresSchema.toString('utf8'), APP_FILES.featuresSchema);
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema))
      throw new FlotillaError(`${APP_FILES.featuresSchema}: a JSON Schema must be an object`);
    const features = getNode(specNode, ['features']);
    problems.collect(checkSchema(schema as JsonSchema, features, deploymentFile, ['features'], APP_FILES.featuresSchema));
  }
  problems.collect(checkServicesSection(specNode, releases));
  const policySet = selectedPolicySet(spec);
  if (policySet !== undefined && reading.files.kindOf(`${APP_FILES.policies}/${policySet}`) !== 'directory') {
    const available = reading.files
      .list(APP_FILES.policies)
      .filter((e) => e.kind === 'directory')
      .map((e) => e.name);
    problems.errors.push({
      severity: 'error',
      message: `policy set "${policySet}" not found: ${APP_FILES.policies}/${policySet}/ does not exist; available: ${available.sort().join(', ') || 'none'}`,
      location: getNode(specNode, ['features', 'policies'])?.origin.location,
      path: ['features', 'policies'],
    });
  }
  problems.stopIfAny('the deployment spec is invalid:');
  return policySet;
}

/** The version catalog: the files of the versions folder (images.yaml and one per release), and the declared service defaults. */
function readCatalog(reading: AppReading, problems: Problems): VersionCatalog {
  const catalog = readCatalogFiles(
    reading.yamlNames(APP_FILES.versions).sort(),
    (file, layer) => reading.read(`${APP_FILES.versions}/${file}`, layer),
    reading.files.kindOf(APP_FILES.serviceDefaults) === 'file' ? reading.read(APP_FILES.serviceDefaults, 'service defaults').root : undefined,
    problems.collect,
  );
  problems.stopIfAny('the version catalog is invalid:');
  return catalog;
}

/** Every name the app refers to (releases, charts, image targets, files) exists, and the update phases name releases and image fields that do. */
function checkNames(
  reading: AppReading,
  problems: Problems,
  table: ReleasesResult,
  specNode: ValueNode | undefined,
  metadataRoot: ValueNode | undefined,
  catalog: VersionCatalog,
): void {
  problems.collect(checkReferences({ releases: table.releases, specNode, metadataRoot, imageTargets: catalog.targets, files: reading.files }));
  problems.collect(
    checkUpdatePhases(
      table.updatePhases,
      table.releases.map((r) => r.name),
      [...catalog.targets.keys()],
    ),
  );
  problems.stopIfAny('the app refers to names that do not exist:');
}

/**
 * The target release (the cluster's, else the spec's `main.release`) with
 * its effective service defaults, and the images the charts get: the
 * target's, `main.customImages` on top, then the cluster's custom images.
 */
function resolveTarget(
  catalog: VersionCatalog,
  spec: DeploymentSpec,
  specNode: ValueNode | undefined,
  versions: AppVersions | undefined,
  problems: Problems,
): { target: OpenStackReleaseEntry; serviceDefaults: ReadonlyMap<string, EffectiveServiceDefault>; images: ReadonlyMap<string, ResolvedImage> } {
  const catalogTarget =
    versions && versions.target !== ''
      ? targetEntry(catalog, versions)
      : targetVersion(catalog, spec.main.release, getNode(specNode, ['main', 'release'])?.origin.location);
  const serviceDefaults = effectiveServiceDefaults(catalog.defaults, catalogTarget.serviceDefaults);
  const target: OpenStackReleaseEntry = { ...catalogTarget, serviceDefaults: Object.fromEntries([...serviceDefaults].map(([name, d]) => [name, d.value])) };
  const custom = customImages(specNode);
  if (versions) for (const [field, image] of clusterCustomImages(versions, catalog)) custom.set(field, image);
  const resolved = resolveImages(catalog, target, custom);
  problems.collect(resolved.diagnostics);
  problems.stopIfAny('the deployment spec is invalid:');
  return { target, serviceDefaults, images: resolved.images };
}

function readCatalogFiles(
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
