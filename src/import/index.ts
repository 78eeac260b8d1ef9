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
import { findDependencyCycle, readMetadata } from '../app/index.js';
import type { SourceLocation } from '../diagnostics/index.js';
import { chartOutputFiles, findCharts, unusedCharts, type ChartNeed, type ChartPlace } from './charts.js';
import { ImportRejectedError, ImportTargetError, Problems } from './errors.js';
import { BUILD_TOKEN, harvestImages } from './images.js';
import { readManifests } from './manifests.js';
import { mapHelmRelease } from './releases.js';
import { buildYaml, deploymentYaml, imagesYaml, releasesYaml, tableDefaults, versionYaml } from './render.js';
import { openSource } from './source.js';
import type { ImportedRelease, ImportOptions, ImportReport } from './types.js';
import { verifyImport } from './verify.js';
import { checkTarget, commitStaged, discardStaged, stageTree, type Staged } from './write.js';
import { parseSourceYaml } from './yaml-read.js';

export { ImportRejectedError, ImportTargetError, ImportVerificationError } from './errors.js';
export { MANIFESTS_DIR } from './manifests.js';
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


const byNameOf = (releases: readonly ImportedRelease[], name: string) => releases.find((r) => r.name === name);

/** Release names wave by wave (a release after everything it depends on), table order within a wave. */
function wavesInOrder(releases: readonly ImportedRelease[]): string[] {
  const byName = new Map(releases.map((r) => [r.name, r]));
  const depth = new Map<string, number>();
  const depthOf = (name: string): number => {
    const known = depth.get(name);
    if (known !== undefined) return known;
    const deps = (byName.get(name)?.dependsOn ?? []).filter((d) => byName.has(d));
    const d = deps.length === 0 ? 0 : Math.max(...deps.map(depthOf)) + 1;
    depth.set(name, d);
    return d;
  };
  return releases
    .map((r, i) => ({ name: r.name, wave: depthOf(r.name), i }))
    .sort((a, b) => a.wave - b.wave || a.i - b.i)
    .map((r) => r.name);
}

/**
 * Imports the StarlingX application at `source` (a folder, or the
 * application .tgz) into a new flotilla app source tree at `target`.
 * Throws ImportRejectedError listing every problem when the app cannot be
 * represented faithfully, ImportTargetError when `target` is refused.
 */
export async function importStarlingxApp(source: string, target: string, opts: ImportOptions = {}): Promise<ImportReport> {
  const catalogRelease = opts.catalogRelease ?? 'imported';
  if (!CATALOG_RELEASE.test(catalogRelease) || catalogRelease === 'images') {
    throw new ImportTargetError(`catalog release ${JSON.stringify(catalogRelease)} cannot name a file overrides/versions/<release>.yaml (letters, digits, . _ -; not "images")`);
  }
  const src = await openSource(source);
  const chartDirs = (opts.charts ?? []).map((d) => resolve(d));
  const places: ChartPlace[] =
    chartDirs.length > 0
      ? chartDirs.map((dir) => ({ kind: 'disk', dir, explicit: true }))
      : src.kind === 'directory'
        ? [{ kind: 'disk', dir: join(src.path, 'charts'), explicit: false }]
        : [{ kind: 'tarball', source: src, dir: 'charts' }];
  const targetInfo = await checkTarget(target, [src.path, ...chartDirs], opts.force ?? false);
  const problems = new Problems();

  // metadata.yaml: copied as written; checked as flotilla will check it.
  const metadataBytes = await src.read('metadata.yaml');
  let metadata: ReturnType<typeof readMetadata>['metadata'];
  if (metadataBytes === undefined) problems.error('metadata.yaml is missing', { file: 'metadata.yaml', line: 0, column: 0 });
  else {
    const doc = parseSourceYaml(metadataBytes.toString('utf8'), 'metadata.yaml', problems, 'metadata');
    if (doc) {
      const result = readMetadata(doc.root, doc.file);
      problems.add(result.diagnostics);
      metadata = result.metadata;
    }
  }

  const manifests = await readManifests(src, problems);
  const releases: ImportedRelease[] = [];
  if (manifests) {
    const namespaces = new Map(manifests.releases.map((r) => [r.folder, r.namespace ?? manifests.namespace]));
    const ctx = { namespace: manifests.namespace, repository: manifests.repository.name, releaseNames: new Set(manifests.listed), namespaces };
    for (const folder of manifests.releases) {
      const release = mapHelmRelease(folder, ctx, problems);
      if (release) releases.push(release);
    }
    if (metadata?.helmRepo !== undefined && metadata.helmRepo !== manifests.repository.name) {
      problems.warn(`metadata helm_repo "${metadata.helmRepo}" differs from the HelmRepository "${manifests.repository.name}" of base/; fluxcd/build.yaml names the latter`, manifests.repository.location);
    }
  }
  const cycle = findDependencyCycle(releases);
  if (cycle) {
    const first = releases.find((r) => r.name === cycle[0])!;
    problems.error(`dependency cycle between releases: ${cycle.join(' → ')}`, { file: first.source.helmRelease.file, line: 1, column: 1 });
  } else {
    const applyOrder = wavesInOrder(releases);
    if (applyOrder.join() !== releases.map((r) => r.name).join()) {
      problems.warn(
        `flotilla build lists the release folders in apply order (${applyOrder.join(', ')}); the release table keeps this file's order (kustomize output order only, Flux follows dependsOn)`,
        releases[0]?.source.listedAt,
      );
    }
  }

  // Build tokens (@IMAGE_PREFIX@ …) in files that ship: the build needs their values.
  const tokens = new Set<string>();
  const noteTokens = (data: Buffer, file: string): void => {
    const found = [...new Set([...data.toString('utf8').matchAll(new RegExp(BUILD_TOKEN.source, 'g'))].map((m) => m[0]))];
    if (found.length === 0) return;
    for (const t of found) tokens.add(t.slice(1, -1));
    problems.warn(
      `uses build token${found.length > 1 ? 's' : ''} ${found.join(', ')}: give ${found.length > 1 ? 'their values' : 'its value'} in fluxcd/build.yaml tokens (or --token) before building`,
      { file, line: 1, column: 1 },
    );
  };
  if (metadataBytes) noteTokens(metadataBytes, 'metadata.yaml');

  // Static overrides are kept per chart (overrides/static/<chart>.yaml); a release of a shared chart whose
  // static overrides differ from the first one's keeps its own, overrides/static/<release>.yaml.
  const staticByChart = new Map<string, ImportedRelease>();
  const ownStatic = new Map<string, ImportedRelease>();
  for (const r of releases) {
    const previous = staticByChart.get(r.chart);
    const data = r.source.staticOverrides.data;
    if (!previous) {
      staticByChart.set(r.chart, r);
      noteTokens(data, r.source.staticOverrides.file);
    } else if (!previous.source.staticOverrides.data.equals(data)) {
      ownStatic.set(r.name, r);
      noteTokens(data, r.source.staticOverrides.file);
    }
  }
  const staticFileOf = (r: ImportedRelease) => (ownStatic.has(r.name) ? `overrides/static/${r.name}.yaml` : `overrides/static/${r.chart}.yaml`);
  for (const name of ownStatic.keys()) {
    if (staticByChart.has(name)) problems.error(`release ${name} needs static overrides of its own, but overrides/static/${name}.yaml is the static overrides of chart ${name}`, byNameOf(releases, name)?.source.listedAt);
  }
  // The catalog sets images per chart: a chart whose releases carry different static overrides keeps its images there.
  const sharedDiffering = new Set([...ownStatic.values()].map((r) => r.chart));
  for (const chart of sharedDiffering) {
    problems.warn(`releases of chart ${chart} have static overrides of their own: its images stay in them (not harvested into the catalog, which is per chart)`, staticByChart.get(chart)?.source.listedAt);
  }

  // Which releases the spec turns on: all but those StarlingX would not deploy either.
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

  // Charts.
  const needs = new Map<string, { release: string; version?: string; at: SourceLocation }[]>();
  for (const r of releases) {
    const list = needs.get(r.chart) ?? [];
    list.push({ release: r.name, ...(r.requestedVersion !== undefined ? { version: r.requestedVersion } : {}), at: r.requestedVersionAt });
    needs.set(r.chart, list);
  }
  const chartNeeds: ChartNeed[] = [...needs].map(([chart, requests]) => ({ chart, requests }));
  const charts = problems.failed ? new Map() : await findCharts(chartNeeds, places, problems);
  if (!problems.failed) {
    for (const path of await unusedCharts(places, charts.values())) {
      problems.warn(`chart ${path} is not used by any release (nor as a dependency): not imported`);
    }
  }

  if (problems.failed || !manifests || !metadata || metadataBytes === undefined) {
    throw new ImportRejectedError(src.path, problems.items);
  }

  // The tree.
  const from = `${basename(src.path)}/${manifests.dir}`;
  const images = harvestImages([...staticByChart.values()].filter((r) => !sharedDiffering.has(r.chart)).map((r) => ({ chart: r.chart, root: r.source.staticOverrides.root })));
  const files = new Map<string, Buffer | string>();
  files.set('fluxcd/metadata.yaml', metadataBytes);
  files.set('fluxcd/releases.yaml', releasesYaml(releases, tableDefaults(releases, manifests.namespace), from, staticFileOf));
  files.set('fluxcd/build.yaml', buildYaml(manifests, `${from}/base`, [...tokens].sort()));
  const services = releases.filter((r) => !excluded.has(r.name)).map((r) => r.service);
  files.set('overrides/deployment.yaml', deploymentYaml(catalogRelease, services, [...excluded].map(([service, why]) => ({ service, why })), basename(src.path)));
  files.set(`overrides/versions/${catalogRelease}.yaml`, versionYaml(catalogRelease, images.harvested, basename(src.path)));
  files.set('overrides/versions/images.yaml', imagesYaml(images.harvested, images.skipped));
  for (const r of [...staticByChart.values(), ...ownStatic.values()]) files.set(staticFileOf(r), r.source.staticOverrides.data);
  const chartList = [...charts.values()];
  const chartFiles = chartOutputFiles(chartList);
  for (const [path, data] of chartFiles.files) files.set(path, data);

  let staged: Staged | undefined;
  try {
    staged = await stageTree(targetInfo, files);
    const expectEnabled = new Set(releases.filter((r) => !excluded.has(r.name)).map((r) => r.name));
    await verifyImport(staged.dir, releases, charts, manifests, expectEnabled);
    const replaced = await commitStaged(targetInfo, staged);
    return {
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
      warnings: problems.warnings,
    };
  } catch (error) {
    await discardStaged(targetInfo, staged);
    throw error;
  }
}
