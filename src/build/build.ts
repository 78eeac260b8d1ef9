/**
 * `flotilla build`: an app source tree → `<app_name>-<app_version>.tgz` in
 * StarlingX's layout (docs/architecture.md, "Tarball layout"), byte-reproducible:
 * every entry sorted, fixed times and owners, chart archives from the
 * deterministic packager, nothing taken from the clock or the machine.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { APP_FILES, type App, type Release } from '../app/index.js';
import { bundleEntries, bundleFileName, writeTarGzFile } from '../bundle/index.js';
import { createChartLoader, packageChart, rewriteChartVersion } from '../charts/index.js';
import { ChartCache, type CachedChart } from './chart-cache.js';
import { mapConcurrently } from '../concurrency/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import { fluxManifestTree } from '../flux/index.js';
import { bundlePlugins, pluginBundleKey, PluginTypeError, typecheckPlugins } from '../plugins/index.js';
import { nextPatchVersion, readPreviousCharts, unbumpedChange, type PreviousCharts, type VersionProblem } from './against.js';
import { BUILD_CONFIG_FILE, readBuildConfig } from './config.js';
import { substituteTokens } from './tokens.js';
import { Session } from '../session/index.js';

export interface BuildOptions {
  /** Folder the tarball is written to; default: the current folder. */
  readonly outDir?: string;
  /** `--token NAME=VALUE`, winning over fluxcd/build.yaml. */
  readonly tokens?: ReadonlyMap<string, string>;
  /** A previous tarball or repository index.yaml: a chart whose content changed must have a new version. */
  readonly against?: string;
  /** With `against`: bump the patch version of changed charts (in their Chart.yaml) instead of failing. */
  readonly bumpChanged?: boolean;
  /** Folder of packaged charts kept between builds (see chart-cache.ts); default `<outDir>/.flotilla-cache`. `false` disables it. */
  readonly cacheDir?: string | false;
  /** Type-check plugins/ (default true); the result is cached by input digest, so unchanged plugins cost nothing. */
  readonly typecheck?: boolean;
}

export interface BuiltChart {
  readonly name: string;
  readonly version: string;
  readonly fileName: string;
  readonly sha256: string;
  readonly size: number;
  /** Taken from the cache: its content did not change since it was last packaged. */
  readonly reused: boolean;
  readonly releases: readonly string[];
}

export interface BuildResult {
  readonly app: App;
  readonly file: string;
  readonly sha256: string;
  readonly size: number;
  readonly charts: readonly BuiltChart[];
  /** Charts whose version `--bump-changed` raised: name → [old, new]. */
  readonly bumped: ReadonlyMap<string, readonly [string, string]>;
}

export class ChartVersionError extends FlotillaError {
  readonly problems: readonly VersionProblem[];
  constructor(problems: readonly VersionProblem[], previous: string) {
    super(
      `charts changed without a new version (against ${previous}); bump them or build with --bump-changed:\n` +
        problems
          .map((p) => `  ${p.chart} ${p.version}: ${p.changedFiles.length > 0 ? `changed ${p.changedFiles.join(', ')}` : 'archive digest differs from the index'}`)
          .join('\n'),
    );
    this.problems = problems;
  }
}

/** Source files and folders shipped in the tarball's app/ for apply time. */
const APP_PAYLOAD = [APP_FILES.releases, 'overrides', APP_FILES.policies];

export async function buildApp(appDir: string, options: BuildOptions = {}): Promise<BuildResult> {
  const root = resolve(appDir);
  const config = await readBuildConfig(join(root, BUILD_CONFIG_FILE), BUILD_CONFIG_FILE);
  const tokens = new Map([...config.tokens, ...(options.tokens ?? [])]);
  const substitute = (file: string, text: string) => substituteTokens(text, tokens, file);
  const session = await Session.fromDirectory(appDir, { transformText: substitute });
  const { app } = session;
  // What any other command refuses must not ship: every release's values computed, plugins loaded and bound.
  await session.checkAll();

  const typecheck = options.typecheck === false ? undefined : typecheckPlugins(root, { cacheDir: cacheDirOf(options) });
  typecheck?.catch(() => undefined); // awaited below
  const previous = options.against ? await readPreviousCharts(options.against) : undefined;
  // Packaging waits on gzip in the thread pool; the reading below fills those waits.
  const packaging = packageCharts(app, previous, options);
  packaging.catch(() => undefined); // awaited below; a failure must not count as unhandled meanwhile

  // Many small files: read synchronously (no thread-pool round trips), each once.
  const shipped = new Map<string, Buffer>();
  const readShipped = (rel: string): Buffer => {
    let data = shipped.get(rel);
    if (!data) {
      data = Buffer.from(substitute(rel, readFileSync(app.path(rel), 'utf8')), 'utf8');
      shipped.set(rel, data);
    }
    return data;
  };
  const staticOverrides = new Map<string, string>();
  for (const release of app.releases) {
    const rel = `${APP_FILES.static}/${release.chart}.yaml`;
    staticOverrides.set(release.name, existsSync(app.path(rel)) ? readShipped(rel).toString('utf8') : '');
  }
  const payload = new Map<string, Buffer>();
  for (const rel of await payloadFiles(app)) payload.set(rel, readShipped(rel));
  const plugins = await pluginFiles(app.root, cacheDirOf(options));

  const typeProblems = (await typecheck)?.problems ?? [];
  if (typeProblems.length > 0) throw new PluginTypeError(typeProblems);
  const { charts, bumped } = await packaging;
  const chartVersions = new Map(charts.map((c) => [c.archive.name, c.archive.version]));
  const repository = {
    name: config.helmRepository.name ?? app.metadata.helmRepo ?? app.metadata.appName,
    // StarlingX serves app charts from the active controller's chart server.
    url: config.helmRepository.url ?? `http://controller:8080/helm_charts/${config.helmRepository.name ?? app.metadata.helmRepo ?? app.metadata.appName}`,
    interval: config.helmRepository.interval ?? '1m',
    namespace: defaultNamespace(app.releases),
  };
  const entries = bundleEntries({
    metadata: readShipped(APP_FILES.metadata),
    charts: charts.map(({ archive }) => ({ name: archive.name, version: archive.version, bytes: archive.bytes })),
    manifests: fluxManifestTree({ releases: orderForApply(app), chartVersions, repository, staticOverrides, namespace: repository.namespace }),
    plugins,
    app: payload,
  });

  const outDir = options.outDir ?? '.';
  await mkdir(outDir, { recursive: true });
  const file = join(outDir, bundleFileName(app.metadata.appName, app.metadata.appVersion));
  // The entries are mostly gzipped chart archives already: a light level costs little size and much time.
  const written = await writeTarGzFile(file, entries, { label: file, level: 1 });
  return {
    app,
    file,
    sha256: written.sha256,
    size: written.size,
    bumped,
    charts: charts.map(({ archive, reused }) => ({
      name: archive.name,
      version: archive.version,
      fileName: archive.fileName,
      sha256: archive.sha256,
      size: archive.bytes.length,
      reused,
      releases: app.releases.filter((r) => r.chart === archive.name).map((r) => r.name),
    })),
  };
}

/** The namespace most releases use: the top kustomization's. */
function defaultNamespace(releases: readonly Release[]): string {
  const counts = new Map<string, number>();
  for (const r of releases) counts.set(r.namespace, (counts.get(r.namespace) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? 'default';
}

/** Release folders in apply order: wave by wave, table order within a wave. */
function orderForApply(app: App): Release[] {
  return app.graph.waves.flat();
}

async function payloadFiles(app: App): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const abs = app.path(rel);
    if (!existsSync(abs)) return;
    const entries = await readdir(abs, { withFileTypes: true }).catch(() => undefined);
    if (!entries) {
      out.push(rel);
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (entry.name.startsWith('.')) continue;
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile()) out.push(child);
    }
  };
  for (const rel of APP_PAYLOAD) await walk(rel);
  return out;
}

async function packageCharts(app: App, previous: PreviousCharts | undefined, options: BuildOptions): Promise<{ charts: CachedChart[]; bumped: Map<string, [string, string]> }> {
  const byChart = new Map<string, Release>();
  for (const release of app.releases) {
    const seen = byChart.get(release.chart);
    if (seen && app.path(seen.chartPath) !== app.path(release.chartPath)) {
      throw new FlotillaError(`chart "${release.chart}" comes from two places (${seen.chartPath} for ${seen.name}, ${release.chartPath} for ${release.name}); a tarball holds one archive per chart name`, {
        location: release.location,
      });
    }
    byChart.set(release.chart, release);
  }
  const cacheDir = cacheDirOf(options);
  const cache = cacheDir ? await ChartCache.open(cacheDir) : undefined;
  const problems: VersionProblem[] = [];
  const bumped = new Map<string, [string, string]>();
  const loader = createChartLoader();
  const entries = [...byChart].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const charts = await mapConcurrently(entries, 4, async ([name, release]): Promise<CachedChart | undefined> => {
    const dir = app.path(release.chartPath);
    // Against a previous release every chart is compared by content, so none may be skipped unread.
    const unchanged = previous ? undefined : await cache?.unchanged(dir);
    if (unchanged?.name === name) return { archive: unchanged, reused: true };
    let chart = await loader.load(dir);
    if (chart.name !== name) {
      throw new FlotillaError(`release "${release.name}" names chart "${name}", but ${release.chartPath}/Chart.yaml says "${chart.name}"`, { location: release.location });
    }
    const problem = previous && unbumpedChange(chart, undefined, previous);
    if (problem && options.bumpChanged) {
      const version = nextPatchVersion(chart.version, name, previous);
      const chartFile = join(dir, 'Chart.yaml');
      await writeFile(chartFile, rewriteChartVersion(await readFile(chartFile, 'utf8'), version, chartFile));
      bumped.set(name, [chart.version, version]);
      chart = await createChartLoader().load(dir);
    } else if (problem) {
      problems.push(problem);
      return undefined;
    }
    const built = cache ? await cache.packaged(dir, chart) : { archive: await packageChart(chart), reused: false };
    const archiveProblem = previous && unbumpedChange(chart, built.archive.sha256, previous);
    if (archiveProblem && !options.bumpChanged) problems.push(archiveProblem);
    return built;
  });
  await cache?.save();
  if (problems.length > 0 && previous) throw new ChartVersionError(problems.sort((a, b) => (a.chart < b.chart ? -1 : 1)), previous.source);
  return { charts: charts.filter((c): c is CachedChart => c !== undefined), bumped: new Map([...bumped].sort()) };
}

function cacheDirOf(options: BuildOptions): string | undefined {
  return options.cacheDir === false ? undefined : (options.cacheDir ?? join(options.outDir ?? '.', '.flotilla-cache'));
}

/** The plugins/ files: bundled now, or taken from the cache when nothing they are made from changed. */
async function pluginFiles(appRoot: string, cacheDir: string | undefined): Promise<Map<string, Buffer>> {
  const cached = cacheDir && join(cacheDir, `plugins-${await pluginBundleKey(appRoot)}.json`);
  if (cached && existsSync(cached)) {
    const stored = JSON.parse(await readFile(cached, 'utf8')) as Record<string, string>;
    return new Map(Object.entries(stored).map(([name, base64]) => [name, Buffer.from(base64, 'base64')]));
  }
  const bundle = await bundlePlugins(appRoot);
  const files = new Map([...bundle.files].map(([name, bytes]) => [name, Buffer.from(bytes)]));
  if (cached) {
    await mkdir(dirname(cached), { recursive: true });
    await writeFile(cached, JSON.stringify(Object.fromEntries([...files].map(([name, data]) => [name, data.toString('base64')]))));
  }
  return files;
}
