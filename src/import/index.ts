/**
 * `flotilla import`: converts a StarlingX FluxCD application (metadata.yaml,
 * fluxcd-manifests/, charts) into a flotilla app source tree (docs/import.md).
 *
 * Read everything → map to the release table → collect every problem → stage
 * the tree inside APP_DIR → load it back with flotilla's loader and check the
 * generator reproduces every HelmRelease and chart → move it into place.
 * Nothing lands in APP_DIR unless all of that passed.
 */
import { basename, join, resolve } from 'node:path';
import { APP_FILES, dependencyWaves, readMetadata, type AppMetadata } from '../app/index.js';
import { CHARTS_DIR, METADATA_FILE } from '../tarball/index.js';
import type { SourceLocation } from '../diagnostics/index.js';
import type { ExternalLink, FileSource } from '../files/index.js';
import { checkSourceTree } from '../files/index.js';
import { chartOutputFiles, findCharts, unusedCharts, type ChartNeed, type ChartPlace } from './charts.js';
import { ImportRejectedError, ImportTargetError, Problems } from './errors.js';
import { BUILD_TOKEN, harvestImages } from './images.js';
import { readManifests } from './manifests.js';
import { mapHelmRelease } from './releases.js';
import { buildYaml, deploymentYaml, imagesYaml, releasesYaml, tableDefaults, versionYaml } from './render.js';
import { openSource } from './source.js';
import type { ImportedChart, ImportedRelease, ImportOptions, ImportReport, StxManifests } from './types.js';
import { verifyImport } from './verify.js';
import { checkTarget, commitStaged, discardStaged, stageTree, type Staged } from './write.js';
import { parseSourceYaml } from './yaml-read.js';

export { ImportRejectedError, ImportTargetError, ImportVerificationError } from './errors.js';
export type {
  HarvestedImage,
  ImportedChart,
  ImportedRelease,
  ImportOptions,
  ImportReport,
  SkippedImage,
  StxHelmRepository,
  StxManifests,
  StxReleaseFolder,
} from './types.js';
export { VERSION_PLACEHOLDER } from './types.js';

const CATALOG_RELEASE = /^[A-Za-z0-9._-]+$/;

/**
 * Imports the StarlingX application at `source` (a folder, or the
 * application .tgz) into a new flotilla app source tree at `target`.
 * Throws ImportRejectedError listing every problem when the app cannot be
 * represented faithfully, ImportTargetError when `target` is refused.
 */
export async function importStarlingxApp(source: string, target: string, opts: ImportOptions = {}): Promise<ImportReport> {
  const catalogRelease = opts.catalogRelease ?? 'imported';
  refuseCatalogRelease(catalogRelease);
  const src = await openSource(source);
  const chartDirs = (opts.charts ?? []).map((d) => resolve(d));
  const externalLinks = checkLinks(src, chartDirs, opts);
  const places = chartPlaces(src, chartDirs);
  const targetInfo = await checkTarget(target, [src.path, ...chartDirs], opts.force ?? false);
  const read = await readAndMap(src, places);
  // The tree: staged, loaded back and compared, then moved into place.
  // The catalog sets images per chart: a chart whose releases carry static overrides of their own keeps its images there.
  const { statics, releases, excluded, charts, manifests, metadata, problems } = read;
  const images = harvestImages(
    [...statics.byChart.values()].filter((r) => !statics.ownedCharts.has(r.chart)).map((r) => ({ chart: r.chart, root: r.source.staticOverrides.root })),
  );
  const chartList = [...charts.values()];
  const chartFiles = chartOutputFiles(chartList);
  const files = appTree({
    src,
    manifests,
    metadataBytes: read.metadataBytes,
    releases,
    excluded,
    statics,
    images,
    tokens: read.tokens.names(),
    catalogRelease,
    chartFiles: chartFiles.files,
  });
  let staged: Staged | undefined;
  try {
    staged = await stageTree(targetInfo, files);
    const expectEnabled = new Set(releases.filter((r) => !excluded.has(r.name)).map((r) => r.name));
    const loadedWarnings = await verifyImport(staged.dir, releases, charts, manifests, expectEnabled);
    const replaced = await commitStaged(targetInfo, staged);
    return {
      externalLinks,
      source: src.path,
      target: targetInfo.dir,
      app: { name: metadata.appName, version: metadata.appVersion },
      releases: releases.map((r) => ({
        name: r.name,
        chart: r.chart,
        chartVersion: charts.get(r.chart)!.version,
        service: r.service,
        enabled: !excluded.has(r.name),
      })),
      charts: chartList.map((c) => ({ name: c.name, version: c.version, from: c.from, kind: c.kind })),
      libraries: chartFiles.libraries,
      images,
      files: staged.files,
      replaced,
      warnings: [...problems.warnings, ...loadedWarnings],
    };
  } catch (error) {
    await discardStaged(targetInfo, staged);
    throw error;
  }
}

function refuseCatalogRelease(catalogRelease: string): void {
  if (!CATALOG_RELEASE.test(catalogRelease) || catalogRelease === 'images') {
    throw new ImportTargetError(
      `catalog release ${JSON.stringify(catalogRelease)} cannot name a file overrides/versions/<release>.yaml (letters, digits, . _ -; not "images")`,
    );
  }
}

/** Nothing is read through a link out of the source or a charts folder unless asked for; returns the links followed. */
function checkLinks(src: FileSource, chartDirs: readonly string[], opts: ImportOptions): ExternalLink[] {
  const tree = { followExternal: opts.followExternalSymlinks };
  return [
    ...(src.kind === 'directory' ? checkSourceTree(src.path, src.path, { ...tree, rootName: 'the import source' }) : []),
    ...chartDirs.flatMap((dir) => checkSourceTree(dir, dir, { ...tree, rootName: 'the charts folder' })),
  ];
}

/** Where the charts are looked for: the folders given, else the source's charts/ (in its folder, or its tarball). */
function chartPlaces(src: FileSource, chartDirs: readonly string[]): ChartPlace[] {
  if (chartDirs.length > 0) return chartDirs.map((dir) => ({ kind: 'disk', dir, explicit: true }));
  return src.kind === 'directory' ? [{ kind: 'disk', dir: join(src.path, CHARTS_DIR), explicit: false }] : [{ kind: 'tarball', source: src, dir: CHARTS_DIR }];
}

/** Everything read and mapped, every problem collected: refused (ImportRejectedError) when there is one. */
async function readAndMap(src: FileSource, places: readonly ChartPlace[]) {
  const problems = new Problems();
  const { bytes: metadataBytes, metadata } = readStarlingxMetadata(src, problems);
  const manifests = readManifests(src, problems);
  const releases = manifests ? mapReleases(manifests, metadata, problems) : [];
  checkApplyOrder(releases, problems);
  const tokens = new BuildTokens(problems);
  if (metadataBytes) tokens.note(metadataBytes, METADATA_FILE);
  const statics = staticOverrides(releases, problems, tokens);
  const excluded = excludedReleases(releases, metadata, problems);
  const charts = problems.failed ? new Map<string, ImportedChart>() : await findCharts(chartNeeds(releases), places, problems);
  if (!problems.failed) {
    for (const path of await unusedCharts(places, charts.values())) {
      problems.warn(`chart ${path} is not used by any release (nor as a dependency): not imported`);
    }
  }
  if (problems.failed || !manifests || !metadata || metadataBytes === undefined) {
    throw new ImportRejectedError(src.path, problems.items);
  }
  return { problems, metadataBytes, metadata, manifests, releases, tokens, statics, excluded, charts };
}

/** metadata.yaml: copied as written; checked as flotilla will check it. */
function readStarlingxMetadata(src: FileSource, problems: Problems): { bytes?: Buffer; metadata?: AppMetadata } {
  const bytes = src.read(METADATA_FILE);
  if (bytes === undefined) {
    problems.error(`${METADATA_FILE} is missing`, { file: METADATA_FILE, line: 0, column: 0 });
    return {};
  }
  const doc = parseSourceYaml(bytes.toString('utf8'), METADATA_FILE, problems, 'metadata');
  if (!doc) return { bytes };
  const result = readMetadata(doc.root, doc.file);
  // Its warnings are the loaded app's (named as the new tree names the file); errors stop the import here.
  problems.add(result.diagnostics.filter((d) => d.severity === 'error'));
  return { bytes, ...(result.metadata ? { metadata: result.metadata } : {}) };
}

/** Every listed release folder mapped to a release entry. */
function mapReleases(manifests: StxManifests, metadata: AppMetadata | undefined, problems: Problems): ImportedRelease[] {
  const namespaces = new Map(manifests.releases.map((r) => [r.folder, r.namespace ?? manifests.namespace]));
  const ctx = { namespace: manifests.namespace, repository: manifests.repository.name, releaseNames: new Set(manifests.listed), namespaces };
  const releases: ImportedRelease[] = [];
  for (const folder of manifests.releases) {
    const release = mapHelmRelease(folder, ctx, problems);
    if (release) releases.push(release);
  }
  if (metadata?.helmRepo !== undefined && metadata.helmRepo !== manifests.repository.name) {
    problems.warn(
      `metadata helm_repo "${metadata.helmRepo}" differs from the HelmRepository "${manifests.repository.name}" of base/; fluxcd/build.yaml names the latter`,
      manifests.repository.location,
    );
  }
  return releases;
}

/** No dependency cycle; a note when the table's order is not the apply order flotilla build writes. */
function checkApplyOrder(releases: readonly ImportedRelease[], problems: Problems): void {
  const { waves, cycle } = dependencyWaves(releases);
  if (cycle) {
    const first = releases.find((r) => r.name === cycle[0])!;
    problems.error(`dependency cycle between releases: ${cycle.join(' → ')}`, { file: first.source.helmRelease.file, line: 1, column: 1 });
    return;
  }
  const applyOrder = waves.flat().map((r) => r.name);
  if (applyOrder.join() !== releases.map((r) => r.name).join()) {
    problems.warn(
      `flotilla build lists the release folders in apply order (${applyOrder.join(', ')}); the release table keeps this file's order (kustomize output order only, Flux follows dependsOn)`,
      releases[0]?.source.listedAt,
    );
  }
}

/** Build tokens (@IMAGE_PREFIX@ …) in files that ship: the build needs their values. */
class BuildTokens {
  private readonly found = new Set<string>();
  constructor(private readonly problems: Problems) {}

  note(data: Buffer, file: string): void {
    const found = [...new Set([...data.toString('utf8').matchAll(new RegExp(BUILD_TOKEN.source, 'g'))].map((m) => m[0]))];
    if (found.length === 0) return;
    for (const t of found) this.found.add(t.slice(1, -1));
    this.problems.warn(
      `uses build token${found.length > 1 ? 's' : ''} ${found.join(', ')}: give ${found.length > 1 ? 'their values' : 'its value'} in fluxcd/build.yaml tokens (or --token) before building`,
      { file, line: 1, column: 1 },
    );
  }

  names(): string[] {
    return [...this.found].sort();
  }
}

/** Where each release's static overrides go: one file per chart, and one per release whose overrides differ from its chart's first release's. */
interface StaticOverrides {
  /** The first release of each chart: its overrides are overrides/static/<chart>.yaml. */
  readonly byChart: ReadonlyMap<string, ImportedRelease>;
  /** Releases with static overrides of their own, overrides/static/<release>.yaml. */
  readonly byRelease: ReadonlyMap<string, ImportedRelease>;
  /** Charts some release of which has its own. */
  readonly ownedCharts: ReadonlySet<string>;
  /** The file of a release's static overrides, relative to the app root. */
  fileOf(release: ImportedRelease): string;
}

/** Static overrides are kept per chart; a release of a shared chart whose overrides differ keeps its own. */
function staticOverrides(releases: readonly ImportedRelease[], problems: Problems, tokens: BuildTokens): StaticOverrides {
  const byChart = new Map<string, ImportedRelease>();
  const byRelease = new Map<string, ImportedRelease>();
  for (const r of releases) {
    const previous = byChart.get(r.chart);
    const data = r.source.staticOverrides.data;
    if (!previous) byChart.set(r.chart, r);
    else if (!previous.source.staticOverrides.data.equals(data)) byRelease.set(r.name, r);
    else continue;
    tokens.note(data, r.source.staticOverrides.file);
  }
  for (const [name, r] of byRelease) {
    if (byChart.has(name))
      problems.error(
        `release ${name} needs static overrides of its own, but ${APP_FILES.static}/${name}.yaml is the static overrides of chart ${name}`,
        r.source.listedAt,
      );
  }
  const ownedCharts = new Set([...byRelease.values()].map((r) => r.chart));
  for (const chart of ownedCharts) {
    problems.warn(
      `releases of chart ${chart} have static overrides of their own: its images stay in them (not harvested into the catalog, which is per chart)`,
      byChart.get(chart)?.source.listedAt,
    );
  }
  return { byChart, byRelease, ownedCharts, fileOf: (r) => `${APP_FILES.static}/${byRelease.has(r.name) ? r.name : r.chart}.yaml` };
}

/** Releases the imported spec leaves off, and why: those StarlingX would not deploy either (disabled charts and what depends on them). */
function excludedReleases(releases: readonly ImportedRelease[], metadata: AppMetadata | undefined, problems: Problems): Map<string, string> {
  const disabled = new Set(metadata?.disabledCharts ?? []);
  const excluded = new Map<string, string>();
  const byName = new Map(releases.map((r) => [r.name, r]));
  const dependsOnDisabled = (r: ImportedRelease, seen = new Set<string>()): string | undefined => {
    for (const dep of r.dependsOn) {
      if (seen.has(dep)) continue;
      seen.add(dep);
      const d = byName.get(dep);
      if (!d) continue;
      if (disabled.has(d.chart)) return d.name;
      const deeper = dependsOnDisabled(d, seen);
      if (deeper) return deeper;
    }
    return undefined;
  };
  for (const r of releases) {
    if (disabled.has(r.chart)) excluded.set(r.name, `chart ${r.chart} is in metadata disabled_charts`);
    else {
      const via = dependsOnDisabled(r);
      if (via) excluded.set(r.name, `depends on ${via}, whose chart is in metadata disabled_charts`);
    }
  }
  for (const [name, why] of excluded) {
    problems.warn(`release ${name} is not turned on by the imported deployment spec: ${why}`, byName.get(name)!.source.listedAt);
  }
  return excluded;
}

/** The charts the releases need, each with the versions its releases ask for. */
function chartNeeds(releases: readonly ImportedRelease[]): ChartNeed[] {
  const needs = new Map<string, { release: string; version?: string; at: SourceLocation }[]>();
  for (const r of releases) {
    const list = needs.get(r.chart) ?? [];
    list.push({ release: r.name, ...(r.requestedVersion !== undefined ? { version: r.requestedVersion } : {}), at: r.requestedVersionAt });
    needs.set(r.chart, list);
  }
  return [...needs].map(([chart, requests]) => ({ chart, requests }));
}

interface AppTreeInput {
  readonly src: FileSource;
  readonly manifests: StxManifests;
  readonly metadataBytes: Buffer;
  readonly releases: readonly ImportedRelease[];
  readonly excluded: ReadonlyMap<string, string>;
  readonly statics: StaticOverrides;
  readonly images: ReturnType<typeof harvestImages>;
  readonly tokens: readonly string[];
  readonly catalogRelease: string;
  readonly chartFiles: ReadonlyMap<string, Buffer | string>;
}

/** The files of the new app source tree, by path relative to its root. */
function appTree(input: AppTreeInput): Map<string, Buffer | string> {
  const { src, manifests, releases, excluded, catalogRelease, images } = input;
  const from = `${basename(src.path)}/${manifests.dir}`;
  const files = new Map<string, Buffer | string>();
  files.set(APP_FILES.metadata, input.metadataBytes);
  files.set(APP_FILES.releases, releasesYaml(releases, tableDefaults(releases, manifests.namespace), from, input.statics.fileOf));
  files.set('fluxcd/build.yaml', buildYaml(manifests, `${from}/base`, [...input.tokens]));
  const services = releases.filter((r) => !excluded.has(r.name)).map((r) => r.service);
  files.set(
    APP_FILES.deployment,
    deploymentYaml(
      catalogRelease,
      services,
      [...excluded].map(([service, why]) => ({ service, why })),
      basename(src.path),
    ),
  );
  files.set(`${APP_FILES.versions}/${catalogRelease}.yaml`, versionYaml(catalogRelease, images.harvested, basename(src.path)));
  files.set(APP_FILES.imageTargets, imagesYaml(images.harvested, images.skipped));
  for (const r of [...input.statics.byChart.values(), ...input.statics.byRelease.values()]) files.set(input.statics.fileOf(r), r.source.staticOverrides.data);
  for (const [path, data] of manifests.extraFiles) files.set(`${APP_FILES.manifests}/${path}`, data);
  for (const [path, data] of input.chartFiles) files.set(path, data);
  return files;
}
