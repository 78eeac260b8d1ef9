/**
 * Chart version discipline: a chart whose content changed must get a new
 * version. The previous release is a built tarball (its charts are compared
 * file by file) or a Helm repository index.yaml (archives compared by digest).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { bundleMetadata, chartArchives, CHARTS_DIR, isBundleFileName, readTarGzSafely } from '../tarball/index.js';
import { chartContentDigest, chartTree, packageChart, parseVersion, readChartArchive, type ChartSource } from '../charts/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import { parseYamlValue } from '../yaml/index.js';

export interface PreviousChart {
  readonly name: string;
  readonly version: string;
  /** sha256 of the archive. */
  readonly archiveDigest?: string;
  /** Content digest and files, when the archive itself is at hand. */
  readonly contentDigest?: string;
  readonly files?: ReadonlyMap<string, Buffer>;
}

export interface PreviousCharts {
  readonly source: string;
  readonly charts: readonly PreviousChart[];
}

export class PreviousReleaseError extends FlotillaError {}

export async function readPreviousCharts(path: string): Promise<PreviousCharts> {
  if (/\.ya?ml$/.test(path)) return readRepoIndex(path);
  const files = await readTarGzSafely(path, { label: basename(path) });
  const charts: PreviousChart[] = [];
  for (const [name, bytes] of chartArchives(files)) {
    const archive = await readChartArchive(bytes, { label: `${basename(path)}#${name}` });
    charts.push({
      name: archive.name,
      version: archive.version,
      contentDigest: chartContentDigest(archive.chart),
      files: new Map(chartTree(archive.chart).map((f) => [f.path, f.data])),
    });
  }
  if (charts.length === 0) throw new PreviousReleaseError(`${path} holds no ${CHARTS_DIR}/*.tgz: is it a flotilla or StarlingX application tarball?`);
  return { source: basename(path), charts };
}

async function readRepoIndex(path: string): Promise<PreviousCharts> {
  const index = parseYamlValue(await readFile(path, 'utf8'), basename(path)) as {
    apiVersion?: string;
    entries?: Record<string, { version?: string; digest?: string }[]>;
  } | null;
  if (!index || index.apiVersion !== 'v1' || typeof index.entries !== 'object') {
    throw new PreviousReleaseError(`${path} is not a Helm repository index (apiVersion v1 with entries)`);
  }
  const charts: PreviousChart[] = [];
  for (const [name, versions] of Object.entries(index.entries)) {
    for (const entry of versions ?? []) if (entry.version) charts.push({ name, version: String(entry.version), archiveDigest: entry.digest });
  }
  return { source: basename(path), charts };
}

export interface VersionProblem {
  readonly chart: string;
  readonly version: string;
  /** Files added, removed or changed since the previous release; empty when only the archive digest is known. */
  readonly changedFiles: readonly string[];
}

/** A chart whose version exists in the previous release with other content. */
export function unbumpedChange(chart: ChartSource, archiveSha256: string | undefined, previous: PreviousCharts): VersionProblem | undefined {
  const before = previous.charts.find((c) => c.name === chart.name && c.version === chart.version);
  if (!before) return undefined;
  if (before.contentDigest !== undefined) {
    if (before.contentDigest === chartContentDigest(chart)) return undefined;
    const now = new Map(chartTree(chart).map((f) => [f.path, f.data]));
    const paths = new Set([...now.keys(), ...(before.files?.keys() ?? [])]);
    const changed = [...paths].filter((p) => !now.get(p)?.equals(before.files?.get(p) ?? Buffer.alloc(0)) || !before.files?.has(p) || !now.has(p)).sort();
    return { chart: chart.name, version: chart.version, changedFiles: changed };
  }
  if (before.archiveDigest && archiveSha256 && before.archiveDigest !== archiveSha256) return { chart: chart.name, version: chart.version, changedFiles: [] };
  return undefined;
}

/**
 * `unbumpedChange` without a packaged archive at hand: against a repository
 * index (archive digests only) the chart is packaged to compare, as the
 * build would.
 */
export async function unbumpedChangeOf(chart: ChartSource, previous: PreviousCharts): Promise<VersionProblem | undefined> {
  const byContent = unbumpedChange(chart, undefined, previous);
  if (byContent) return byContent;
  const before = previous.charts.find((c) => c.name === chart.name && c.version === chart.version);
  if (!before?.archiveDigest || before.contentDigest !== undefined) return undefined;
  return unbumpedChange(chart, (await packageChart(chart)).sha256, previous);
}

/** The patch version after both this one and any of the same major.minor in the previous release. */
export function nextPatchVersion(version: string, name: string, previous: PreviousCharts): string {
  const v = parseVersion(version);
  if (!v) throw new FlotillaError(`chart ${name}: cannot bump version "${version}" (not semver)`);
  const patches = previous.charts
    .filter((c) => c.name === name)
    .map((c) => parseVersion(c.version))
    .filter((p) => p !== undefined && p.major === v.major && p.minor === v.minor)
    .map((p) => p!.patch);
  return `${v.major}.${v.minor}.${Math.max(v.patch, ...patches) + 1}`;
}

/**
 * The tarball of another version of the same app in the output folder (the
 * newest written), which a build without `--against` compares its charts
 * with: a chart changed since the last release of the app but kept its
 * version is a warning there (an error with `--against`).
 */
export async function earlierTarball(outDir: string, appName: string, file: string): Promise<string | undefined> {
  const names = await readdir(outDir).catch(() => [] as string[]);
  const candidates = names
    .filter((name) => name.startsWith(`${appName}-`) && isBundleFileName(name) && join(outDir, name) !== file)
    .map((name) => join(outDir, name));
  const written = await Promise.all(
    candidates.map(async (path) => ({
      path,
      at: await stat(path).then(
        (s) => (s.isFile() ? s.mtimeMs : -1),
        () => -1,
      ),
    })),
  );
  for (const { path } of written.filter((w) => w.at >= 0).sort((a, b) => b.at - a.at)) {
    // `shop-web-1.0.tgz` starts like a tarball of `shop`: the metadata says whose it is.
    const metadata = bundleMetadata(await readTarGzSafely(path, { label: basename(path) }).catch(() => new Map<string, Buffer>()));
    const parsed = metadata ? (parseYamlValue(metadata.toString('utf8'), `${basename(path)}#metadata.yaml`) as { app_name?: unknown } | null) : undefined;
    if (parsed?.app_name === appName) return path;
  }
  return undefined;
}
