/**
 * Byte-reproducible Helm chart archives.
 *
 * Layout (as `helm package` writes it, helm chartutil.Save): every entry
 * under `<name>/`; Chart.yaml first, then values.yaml and values.schema.json,
 * then the chart's other files sorted; then each dependency UNPACKED under
 * `<name>/charts/<dep>/`, laid out the same way. Unpacked rather than as a
 * nested .tgz because that is what Helm's own packager emits (a .tgz under
 * charts/ exists only in source trees after `helm dependency build`), Helm's
 * archive loader reads both, and it keeps every file visible to the content
 * digest, to `helm lint` and to StarlingX's per-file checks. `.helmignore`
 * is kept, as Helm keeps it. Bytes come from the bundle module's
 * deterministic writer (fixed mtime, 0644, uid/gid 0, fixed gzip header):
 * one deflate stream at `helm package`'s level, so an archive is about as
 * large as Helm's.
 */
import { createHash } from 'node:crypto';
import { compareBytewise, readTarGzEntriesSync, writeTarGzAsync, type DecompressionBudget, type TarEntry } from '../tarball/index.js';
import { parseChartYaml, rewriteChartVersion } from './chart-file.js';
import { ChartFileError } from './errors.js';
import { checkHelmLimits } from './helm-limits.js';
import { chartFilePath, chartTree, dependencyFolder } from './layout.js';
import { loadChartArchiveWithListing } from './load.js';
import type { ChartMetadata, ChartSource } from './types.js';

export interface PackageOptions {
  /** Version to stamp into the archive's Chart.yaml (and file name) instead of the source's. */
  readonly version?: string;
}

export interface PackagedChart {
  readonly name: string;
  readonly version: string;
  /** `<name>-<version>.tgz` */
  readonly fileName: string;
  readonly bytes: Buffer;
  /** sha256 of `bytes`, hex (the repository index digest). */
  readonly sha256: string;
  /** md5 of `bytes`, hex (StarlingX's checksum.md5 lists it). */
  readonly md5: string;
  /** {@link chartContentDigest} of the source (independent of a version rewrite). */
  readonly contentDigest: string;
  /** Chart.yaml as packaged (version rewritten when asked). */
  readonly metadata: ChartMetadata;
}

/**
 * sha256 over the chart's content: its own files (relative paths sorted
 * byte-wise, each path with its bytes), then each dependency's name with
 * that dependency's digest. It ignores file times and the archive container,
 * so "the content changed but the version did not" can be detected between
 * builds; a library shared by many charts is hashed once (memoised per chart).
 */
export function chartContentDigest(chart: ChartSource): string {
  const known = digests.get(chart);
  if (known) return known;
  const hash = createHash('sha256');
  for (const file of [...chart.files].sort((a, b) => compareBytewise(a.path, b.path))) {
    hash.update(`${file.path}\0${file.data.length}\0`);
    hash.update(file.data);
  }
  for (const dep of chart.dependencies) hash.update(`${dependencyFolder(dep.name)}\0${chartContentDigest(dep.chart)}\0`);
  const digest = hash.digest('hex');
  digests.set(chart, digest);
  return digest;
}

const digests = new WeakMap<ChartSource, string>();

function checkSchemas(chart: ChartSource): void {
  // helm package refuses an invalid values.schema.json; say so before Helm does.
  const schema = chart.files.find((f) => f.path === 'values.schema.json');
  if (schema) {
    try {
      JSON.parse(schema.data.toString('utf8'));
    } catch (error) {
      const file = chartFilePath(chart, 'values.schema.json');
      throw new ChartFileError(`not valid JSON: ${(error as Error).message}`, { file, line: 0, column: 0 });
    }
  }
  for (const dep of chart.dependencies) checkSchemas(dep.chart);
}

/** Packs `chart` (dependencies vendored) into a reproducible `.tgz`. */
export async function packageChart(chart: ChartSource, options: PackageOptions = {}): Promise<PackagedChart> {
  checkSchemas(chart);
  checkHelmLimits(chart);
  const version = options.version ?? chart.version;
  let chartYaml: Buffer | undefined;
  let metadata = chart.metadata;
  if (version !== chart.version) {
    const source = chart.files.find((f) => f.path === 'Chart.yaml')!.data.toString('utf8');
    const text = rewriteChartVersion(source, version, chart.chartFile);
    chartYaml = Buffer.from(text, 'utf8');
    metadata = { ...parseChartYaml(text, chart.chartFile), dependencies: chart.metadata.dependencies };
  }
  const fileName = `${chart.name}-${version}.tgz`;
  const items: TarEntry[] = chartTree(chart, { chartYaml }).map((f) => ({ path: `${chart.name}/${f.path}`, data: f.data }));
  const bytes = await writeTarGzAsync(items, { order: 'given', label: fileName });
  return {
    name: chart.name,
    version,
    fileName,
    bytes,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    md5: createHash('md5').update(bytes).digest('hex'),
    contentDigest: chartContentDigest(chart),
    metadata,
  };
}

/** Paths of the regular files in a .tgz, in archive order (read with the safe reader). */
export function listArchiveFiles(bytes: Buffer): string[] {
  return readTarGzEntriesSync(bytes, { label: 'chart archive' })
    .filter((e) => e.type === 'file')
    .map((e) => e.path);
}

export interface ChartArchive {
  readonly name: string;
  readonly version: string;
  readonly metadata: ChartMetadata;
  /** The folder every entry sits in (normally the chart name). */
  readonly topDir: string;
  /** File paths as stored (with the top folder), in archive order. */
  readonly files: readonly string[];
  /** The chart itself, dependencies resolved from its charts/ folder; can be staged or repackaged. */
  readonly chart: ChartSource;
}

/**
 * Reads a chart .tgz safely (no traversal, links, devices, bombs): metadata,
 * file list and the loaded chart. `label` names it in errors.
 */
export async function readChartArchive(bytes: Buffer, options: { label?: string; budget?: DecompressionBudget } = {}): Promise<ChartArchive> {
  const label = options.label ?? 'chart archive';
  const { top, order, chart } = await loadChartArchiveWithListing(bytes, label, options.budget);
  return { name: chart.name, version: chart.version, metadata: chart.metadata, topDir: top, files: order, chart };
}
