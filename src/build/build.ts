/**
 * `flotilla build`: an app source tree → `<app_name>-<app_version>.tgz` in
 * StarlingX's layout (docs/architecture.md, "Tarball layout"), byte-reproducible:
 * every entry sorted, fixed times and owners, chart archives from the
 * deterministic packager, nothing taken from the clock or the machine.
 */
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join, normalize, relative, resolve, sep } from 'node:path';
import { APP_FILES, type App, type Release } from '../app/index.js';
import {
  BUNDLE_TAR_OPTIONS,
  bundleEntries,
  bundleFileName,
  tarGzInMemory,
  writeTarGzFile,
  type PieceSource,
  type TarEntry,
  type WrittenArchive,
} from '../tarball/index.js';
import { createChartLoader, packageChart, readChartArchive, rewriteChartVersion } from '../charts/index.js';
import { CacheFolder, type CacheNotes } from '../cache/index.js';
import { BundleReuse } from './bundle-reuse.js';
import { ChartCache, type CachedChart, type KeptPrints } from './chart-cache.js';
import { ManifestCache } from './manifest-cache.js';
import { mapConcurrently } from '../concurrency/index.js';
import { appRepositoryResolver } from '../dependencies/index.js';
import { FlotillaError, formatBytes, type Diagnostic } from '../diagnostics/index.js';
import {
  asFileAccessError,
  checkSourceTree,
  isWithin,
  makeFolder,
  realpathLoose,
  type ExternalLink,
  type FileSource,
  type ReadMemory,
} from '../files/index.js';
import { fluxManifestTree, overridesSecretName, type HelmRepositorySpec } from '../flux/index.js';
import { FILE_NAME_PART_RULE, isFileNamePart, KUBE_DATA_MAX_BYTES } from '../names/index.js';
import { bundlePlugins, pluginBundleKey, PluginTypeError, typecheckPlugins, type TypecheckResult } from '../plugins/index.js';
import { earlierTarball, nextPatchVersion, readPreviousCharts, unbumpedChange, type PreviousCharts, type VersionProblem } from './against.js';
import { BUILD_CONFIG_FILE, readBuildConfig, resolveHelmRepository, type BuildConfig } from './config.js';
import { substituteTokens } from './tokens.js';
import { checkValuesOnce, type PassedReleases } from './values-check.js';
import { Session } from '../session/index.js';

export interface BuildOptions {
  /** Folder the tarball is written to; default: the current folder. */
  readonly outDir?: string;
  /** `--strict`: values warnings are errors. */
  readonly strict?: boolean;
  /** `--token NAME=VALUE`, winning over fluxcd/build.yaml. */
  readonly tokens?: ReadonlyMap<string, string>;
  /** A previous tarball or repository index.yaml: a chart whose content changed must have a new version. */
  readonly against?: string;
  /** With `against`: bump the patch version of changed charts (in their Chart.yaml) instead of failing. */
  readonly bumpChanged?: boolean;
  /** Folder of packaged charts kept between builds (see chart-cache.ts); default `<outDir>/.flotilla-cache`. `false` disables it. */
  readonly cacheDir?: string | false;
  /** Told why a cache folder or entry was not used (`--debug` prints it). */
  readonly cacheNotes?: CacheNotes;
  /** Type-check plugins/ (default true); the result is cached by input digest, so unchanged plugins cost nothing. */
  readonly typecheck?: boolean;
  /**
   * What a long-lived process carries from one build to the next (see
   * WatchMemory); without it every folder is walked and the last tarball
   * read back.
   */
  readonly watched?: WatchMemory;
  /** Pack what symbolic links outside the app point at instead of refusing them (`--follow-external-symlinks`). */
  readonly followExternalSymlinks?: boolean;
  /** Fetch no chart dependency from a repository: the app's mapping and the dependency cache only (`--offline`). */
  readonly offline?: boolean;
  /** The cache of chart dependencies fetched from repositories; default `<user cache>/chart-dependencies`. */
  readonly dependencyCacheDir?: string;
  /**
   * Do all a build does but write the tarball: it is made in memory, for a
   * `watched` memory to start from (a build server preparing for the builds
   * to come); nothing appears in `outDir`, nothing in the app changes (so
   * not with `bumpChanged`).
   */
  readonly prepareOnly?: boolean;
  /**
   * Aborts the build (a build server's client gone before it ended): it
   * stops where it is and writes no tarball; it throws the signal's reason.
   */
  readonly cancelled?: AbortSignal;
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

/**
 * What a long-lived process (`--watch`, the build server) carries from one
 * build to the next. Facts about a source folder hold until its AppWatcher
 * hears a change below it and drops them: stat fingerprints of chart
 * folders, the links found in each source folder, the files read. The
 * tarball last written is kept as it was written, so the next build copies
 * its pieces without reading it back.
 */
export interface WatchMemory extends PassedReleases, KeptPrints {
  readonly linkChecks: Map<string, readonly ExternalLink[]>;
  /** The app folder's files as read before; none while the app holds a symbolic link (see ReadMemory). */
  files?: ReadMemory;
  /** The Flux manifests' YAML the last build used (see ManifestCache). */
  manifests?: ReadonlyMap<string, string>;
  lastTarball?: WrittenArchive;
  /**
   * The last build's cache files, not written yet: what is kept in memory
   * needs no file, so a process that keeps one writes them once it is idle
   * (AppWatcher.saveWhenIdle), for a later process to read.
   */
  unsavedCaches?: () => Promise<unknown>;
}

export interface BuildResult {
  readonly app: App;
  /** What the releases' values warn about (kind clashes, unknown keys), each at its file:line. */
  readonly valuesWarnings: readonly Diagnostic[];
  readonly file: string;
  readonly sha256: string;
  readonly size: number;
  readonly charts: readonly BuiltChart[];
  /** Charts whose version `--bump-changed` raised: name → [old, new]. */
  readonly bumped: ReadonlyMap<string, readonly [string, string]>;
  /** Symbolic links followed out of the app (only with `followExternalSymlinks`). */
  readonly externalLinks: readonly ExternalLink[];
  /** Without `against`: the tarball of another version of the app in the output folder, and the charts changed since it that kept their version. */
  readonly sinceEarlier?: { readonly file: string; readonly unbumped: readonly VersionProblem[] };
}

export class ChartVersionError extends FlotillaError {
  readonly problems: readonly VersionProblem[];
  constructor(problems: readonly VersionProblem[], previous: string) {
    super(
      `charts changed without a new version (against ${previous}); bump them or build with --bump-changed:\n` +
        problems
          .map(
            (p) => `  ${p.chart} ${p.version}: ${p.changedFiles.length > 0 ? `changed ${p.changedFiles.join(', ')}` : 'archive digest differs from the index'}`,
          )
          .join('\n'),
    );
    this.problems = problems;
  }
}

const NOTHING_TO_REUSE: PieceSource = { get: () => undefined };

/** Source files and folders shipped in the tarball's app/ for apply time. */
const APP_PAYLOAD = [APP_FILES.releases, 'overrides', APP_FILES.policies];

/** The app's source folders, read by the build (charts outside them are checked on their own). */
const SOURCE_FOLDERS = ['fluxcd', 'overrides', 'policies', 'plugins', 'charts'];

export async function buildApp(appDir: string, options: BuildOptions = {}): Promise<BuildResult> {
  const root = await appFolder(appDir, options);
  // Before anything is read: a link out of the app would pack a file of this machine into the tarball.
  const externalLinks = SOURCE_FOLDERS.flatMap((folder) => checkLinks(join(root, folder), root, 'the app', options));
  const config = await readBuildConfig(join(root, BUILD_CONFIG_FILE), BUILD_CONFIG_FILE);
  const substitute = tokenSubstitution(config, options);
  const cache = openBuildCache(options);
  const { session, plugins, savePlugins } = await openBuildSession(appDir, root, substitute, cache, options);
  const { app } = session;
  externalLinks.push(...checkBeforeWriting(root, app, options));
  // Checked before any work: StarlingX serves app charts from the controller's chart server, in a repository it supports.
  const repository = resolveHelmRepository(config, app.metadata, app.namespace);
  const early = await startEarlyWork(root, app, cache, options);
  const shipped = readShippedFiles(app, substitute);
  // What any other command refuses must not ship: every release's values computed, plugins loaded and bound.
  const values = await checkValuesOnce(session, valuesCheckInputs(shipped, plugins), cache, options.watched);
  const { charts, bumped, cacheWrite: chartsWrite } = await finishEarlyWork(early);
  const manifestCache = openManifestCache(cache, options);
  const manifests = fluxManifests(app, config, repository, charts, shipped, manifestCache);
  const entries = bundleEntries({ metadata: shipped.read(APP_FILES.metadata), charts: charts.map((c) => c.archive), manifests, plugins, app: shipped.payload });
  // The piece table describes a file on disk: not saved for a tarball made in memory only.
  const pieceTable = options.prepareOnly ? undefined : early.reuse;
  const saveCaches = (archive: WrittenArchive) =>
    Promise.all([values.write, chartsWrite, pieceTable?.save(archive), manifestCache?.save(), session.saveCache(), savePlugins?.()]);
  const { file, outDir, written } = await writeTarball(app, entries, early.reuse, saveCaches, options);
  keepForNextBuild(written, cache, saveCaches, options);
  const sinceEarlier =
    options.against === undefined && !options.prepareOnly ? await unbumpedSinceEarlier(outDir, app.metadata.appName, file, charts) : undefined;
  return {
    app,
    valuesWarnings: values.warnings,
    ...(sinceEarlier ? { sinceEarlier } : {}),
    file,
    sha256: written.sha256,
    size: written.size,
    bumped,
    externalLinks,
    charts: charts.map((chart) => builtChart(app, chart)),
  };
}

function builtChart(app: App, { archive, reused }: CachedChart): BuiltChart {
  return {
    name: archive.name,
    version: archive.version,
    fileName: archive.fileName,
    sha256: archive.sha256,
    size: archive.bytes.length,
    reused,
    releases: app.releases.filter((r) => r.chart === archive.name).map((r) => r.name),
  };
}

/** The app's folder, absolute: refused when it is not a folder, or when a build made in memory is asked to bump chart versions. */
async function appFolder(appDir: string, options: BuildOptions): Promise<string> {
  // A build made in memory writes nothing anyone sees; --bump-changed writes Chart.yaml files.
  if (options.prepareOnly && options.bumpChanged) throw new FlotillaError('a build made in memory only cannot bump chart versions (--bump-changed)');
  const root = resolve(appDir);
  const rootInfo = await stat(root).catch((error: unknown) => {
    throw asFileAccessError(error, appDir);
  });
  if (!rootInfo.isDirectory()) throw new FlotillaError(`${appDir}: not a folder (an app source tree is a folder)`);
  return root;
}

/** The links out of a folder the build reads (refused unless followed); a long-lived process checks a folder again only once it changed. */
function checkLinks(dir: string, treeRoot: string, rootName: string, options: BuildOptions): readonly ExternalLink[] {
  const known = options.watched?.linkChecks.get(dir);
  if (known) return known;
  const links = checkSourceTree(dir, treeRoot, { followExternal: options.followExternalSymlinks, rootName });
  options.watched?.linkChecks.set(dir, links);
  return links;
}

/** The build tokens' substitution: fluxcd/build.yaml's tokens, `--token` winning. */
function tokenSubstitution(config: BuildConfig, options: BuildOptions): (file: string, text: string) => string {
  const tokens = new Map([...config.tokens, ...(options.tokens ?? [])]);
  return (file, text) => substituteTokens(text, tokens, file);
}

/** The build's cache folder: held to the folder rule, every entry checked as it is read (src/cache); none when disabled or when the folder fails the rule. */
function openBuildCache(options: BuildOptions): CacheFolder | undefined {
  const cacheDir = cacheDirOf(options);
  return cacheDir === undefined ? undefined : CacheFolder.open(cacheDir, options.cacheNotes);
}

/** The plugins bundled (or taken from the cache), and the session over the app as the build reads it: tokens filled in, the cache's parse memo, what a long-lived process read before. */
async function openBuildSession(
  appDir: string,
  root: string,
  substitute: (file: string, text: string) => string,
  cache: CacheFolder | undefined,
  options: BuildOptions,
): Promise<{ session: Session; plugins: Map<string, Buffer>; savePlugins: (() => Promise<void>) | undefined }> {
  const followExternal = options.followExternalSymlinks === true;
  const { files: plugins, save: savePlugins } = await pluginFiles(root, followExternal ? undefined : cache, followExternal);
  const session = await Session.fromDirectory(appDir, {
    transformText: substitute,
    pluginBundle: plugins,
    cache,
    readMemory: options.watched?.files,
    strict: options.strict,
  });
  return { session, plugins, savePlugins };
}

/**
 * Before anything is written: the tarball's name, no output or cache folder
 * inside a folder the build reads (the app's source folders and its
 * charts, read from here on), and the links out of each chart kept outside
 * the app (a release's `path`: its own root), which it returns.
 */
function checkBeforeWriting(root: string, app: App, options: BuildOptions): ExternalLink[] {
  refuseUnsafeFileName(app);
  const chartDirs = [...new Set(app.releases.map((r) => app.path(r.chartPath)))];
  refuseOwnOutput(root, [...SOURCE_FOLDERS.map((folder) => join(root, folder)), ...chartDirs], options);
  return chartDirs.filter((dir) => !dir.startsWith(root + sep)).flatMap((dir) => checkLinks(dir, dir, 'the chart folder', options));
}

/** Work started before the app's files are read, which waits on other threads (the type-check; packaging, on gzip in the thread pool): the reading fills those waits. */
interface EarlyWork {
  readonly typecheck: Promise<TypecheckResult> | undefined;
  readonly packaging: ReturnType<typeof packageCharts>;
  /** The pieces of the last tarball, to copy while unchanged (with a cache). */
  readonly reuse: BundleReuse | undefined;
}

async function startEarlyWork(root: string, app: App, cache: CacheFolder | undefined, options: BuildOptions): Promise<EarlyWork> {
  const typecheck = options.typecheck === false ? undefined : typecheckPlugins(root, { cache });
  typecheck?.catch(() => undefined); // awaited by finishEarlyWork
  const previous = options.against ? await readPreviousCharts(options.against) : undefined;
  const reuse = cache ? BundleReuse.open(cache, BUNDLE_TAR_OPTIONS, options.watched?.lastTarball) : undefined;
  const mapping = JSON.stringify([...app.chartRepositories].sort(([a], [b]) => (a < b ? -1 : 1)));
  const packaging = packageCharts(app, previous, options, cache && reuse ? ChartCache.open(cache, reuse, options.watched, mapping) : undefined);
  packaging.catch(() => undefined); // awaited by finishEarlyWork; a failure must not count as unhandled meanwhile
  return { typecheck, packaging, reuse };
}

/** The plugins' type problems refused, then the packaged charts. */
async function finishEarlyWork(early: EarlyWork): ReturnType<typeof packageCharts> {
  const typeProblems = (await early.typecheck)?.problems ?? [];
  if (typeProblems.length > 0) throw new PluginTypeError(typeProblems);
  return early.packaging;
}

/** The app's files the tarball ships, each read once with its tokens filled in. */
interface ShippedFiles {
  read(rel: string): Buffer;
  /** Release name → its static overrides' text ('' when it has no file). */
  readonly staticOverrides: ReadonlyMap<string, string>;
  /** The tarball's app/: path → bytes. */
  readonly payload: ReadonlyMap<string, Buffer>;
}

/** Many small files: read synchronously (no thread-pool round trips), each once. */
function readShippedFiles(app: App, substitute: (file: string, text: string) => string): ShippedFiles {
  const shipped = new Map<string, Buffer>();
  const read = (rel: string): Buffer => {
    let data = shipped.get(rel);
    if (!data) {
      const text = app.source.files.read(rel);
      if (!text) throw new FlotillaError(`${app.path(rel)}: no such file (it was there when the app was loaded)`);
      data = Buffer.from(substitute(rel, text.toString('utf8')), 'utf8');
      shipped.set(rel, data);
    }
    return data;
  };
  const staticOverrides = new Map<string, string>();
  for (const release of app.releases) {
    const rel = release.staticOverrides;
    const text = app.source.files.kindOf(rel) === 'file' ? read(rel) : undefined;
    if (text !== undefined) refuseOversizedSecret(rel, release, text.length);
    staticOverrides.set(release.name, text?.toString('utf8') ?? '');
  }
  const payload = new Map<string, Buffer>();
  for (const rel of payloadFiles(app)) payload.set(rel, read(rel));
  return { read, staticOverrides, payload };
}

/** What the values check of the releases depends on beyond their charts: the metadata, the app payload and the plugins. */
function valuesCheckInputs(shipped: ShippedFiles, plugins: ReadonlyMap<string, Buffer>): Map<string, string | Uint8Array> {
  return new Map<string, string | Uint8Array>([
    [APP_FILES.metadata, shipped.read(APP_FILES.metadata)],
    ...shipped.payload,
    ...[...plugins].map(([f, d]) => [`plugins/${f}`, d] as const),
  ]);
}

/** The Flux manifests' YAML kept from the last build (see ManifestCache), and kept for the next one by a long-lived process. */
function openManifestCache(cache: CacheFolder | undefined, options: BuildOptions): ManifestCache | undefined {
  const manifestCache = cache ? ManifestCache.open(cache, options.watched?.manifests) : undefined;
  if (options.watched && manifestCache) options.watched.manifests = manifestCache.used;
  return manifestCache;
}

/** The tarball's fluxcd-manifests/: the generated tree, and the files the kustomizations name beyond it (extra resources, patch files) as they are. */
function fluxManifests(
  app: App,
  config: BuildConfig,
  repository: HelmRepositorySpec,
  charts: readonly CachedChart[],
  shipped: ShippedFiles,
  manifestCache: ManifestCache | undefined,
): Map<string, Buffer | string> {
  const manifests: Map<string, Buffer | string> = fluxManifestTree({
    releases: orderForApply(app),
    chartVersions: new Map(charts.map((c) => [c.archive.name, c.archive.version])),
    repository,
    staticOverrides: shipped.staticOverrides,
    namespace: repository.namespace,
    kustomization: config.kustomization,
    baseKustomization: config.baseKustomization,
    dump: manifestCache?.dump,
  });
  for (const rel of filesBelow(app.source.files, APP_FILES.manifests)) {
    const inTree = rel.slice(APP_FILES.manifests.length + 1);
    if (manifests.has(inTree)) throw new FlotillaError(`${rel} would replace the generated fluxcd-manifests/${inTree}; flotilla writes that file itself`);
    manifests.set(inTree, shipped.read(rel));
  }
  return manifests;
}

/**
 * The tarball written to the output folder (or made in memory only).
 * Pieces (an entry, or a group of small ones) are taken from the previous
 * tarball while unchanged; without a cache, the same pieces are all
 * compressed anew, so the bytes are the same either way.
 */
async function writeTarball(
  app: App,
  entries: readonly TarEntry[],
  reuse: BundleReuse | undefined,
  saveCaches: (archive: WrittenArchive) => Promise<unknown>,
  options: BuildOptions,
): Promise<{ file: string; outDir: string; written: WrittenArchive }> {
  // `..` read as text, as join reads it in the tarball's path and refuseOwnOutput checked it: the folder made is the one written to.
  const outDir = normalize(options.outDir ?? '.');
  const file = join(outDir, bundleFileName(app.metadata.appName, app.metadata.appVersion));
  const tarOptions = { ...BUNDLE_TAR_OPTIONS, label: file, reuse: reuse ?? NOTHING_TO_REUSE };
  // A one-shot build saves its caches while the tarball is written and
  // flushed: the piece table is trusted only for a file of the recorded size
  // and CRC-32, so one saved before (or without) its tarball landing is never
  // used for another. A build that keeps a memory leaves them for its
  // process to save when idle (WatchMemory.unsavedCaches).
  const saveNow = options.watched ? undefined : saveCaches;
  options.cancelled?.throwIfAborted();
  if (options.prepareOnly) {
    const written = await tarGzInMemory(file, entries, tarOptions);
    await saveNow?.(written);
    return { file, outDir, written };
  }
  await makeFolder(outDir);
  return { file, outDir, written: await writeTarGzFile(file, entries, tarOptions, saveNow) };
}

/** What a long-lived process keeps of this build: its cache files to save when idle, and (with a cache) the tarball, whose pieces the next build copies. */
function keepForNextBuild(
  written: WrittenArchive,
  cache: CacheFolder | undefined,
  saveCaches: (archive: WrittenArchive) => Promise<unknown>,
  options: BuildOptions,
): void {
  if (!options.watched) return;
  options.watched.unsavedCaches = () => saveCaches(written);
  if (cache) options.watched.lastTarball = written;
}

/**
 * The tarball is named `<app_name>-<app_version>.tgz`, its version as the
 * build tokens made it: one with a slash or a leading dot would write it
 * elsewhere than the output folder (a hidden file, or `..` out of it).
 */
function refuseUnsafeFileName(app: App): void {
  const version = app.metadata.appVersion;
  if (isFileNamePart(version)) return;
  throw new FlotillaError(
    `${APP_FILES.metadata}: app_version ${JSON.stringify(version)} cannot name the tarball ${bundleFileName(app.metadata.appName, '<app_version>')}: expected ${FILE_NAME_PART_RULE}`,
  );
}

/**
 * A release's static overrides go whole into its static-overrides Secret
 * (the kustomization's secretGenerator): one the API server would refuse is
 * refused here, at build, rather than halfway through an apply.
 */
function refuseOversizedSecret(file: string, release: Release, bytes: number): void {
  if (bytes <= KUBE_DATA_MAX_BYTES) return;
  throw new FlotillaError(
    `${file}: ${formatBytes(bytes)}; release ${release.name}'s static overrides go whole into the Secret ${overridesSecretName(release.name, 'static')}, and the API server stores no more than ${formatBytes(KUBE_DATA_MAX_BYTES)} in a Secret`,
  );
}

/** Release folders in apply order (wave by wave, table order within a wave), each with the annotations of the target's service defaults. */
function orderForApply(app: App): Release[] {
  return app.graph.waves.flat().map((release) => {
    const serviceDefaults = app.serviceDefaultAnnotations(release.chart);
    return Object.keys(serviceDefaults).length === 0 ? release : { ...release, annotations: { ...release.annotations, ...serviceDefaults } };
  });
}

function payloadFiles(app: App): string[] {
  return APP_PAYLOAD.flatMap((rel) => filesBelow(app.source.files, rel));
}

/**
 * The files below a folder of the app (or the file itself), sorted, hidden
 * ones left out; through the app's own file source, so a long-lived process
 * lists what it read before. Links were checked before the build read
 * anything (checkSourceTree): they are followed as Helm follows them.
 */
function filesBelow(files: FileSource, top: string): string[] {
  const kind = files.kindOf(top);
  if (kind !== 'directory') return kind === 'file' ? [top] : [];
  return files
    .list(top)
    .filter((entry) => !entry.name.startsWith('.'))
    .flatMap((entry) => (entry.kind === 'directory' ? filesBelow(files, `${top}/${entry.name}`) : [`${top}/${entry.name}`]));
}

async function packageCharts(
  app: App,
  previous: PreviousCharts | undefined,
  options: BuildOptions,
  cache: ChartCache | undefined,
): Promise<{ charts: CachedChart[]; bumped: Map<string, [string, string]>; cacheWrite: Promise<void> | undefined }> {
  const byChart = new Map<string, Release>();
  for (const release of app.releases) {
    const seen = byChart.get(release.chart);
    if (seen && app.path(seen.chartPath) !== app.path(release.chartPath)) {
      throw new FlotillaError(
        `chart "${release.chart}" comes from two places (${seen.chartPath} for ${seen.name}, ${release.chartPath} for ${release.name}); a tarball holds one archive per chart name`,
        {
          location: release.location,
        },
      );
    }
    byChart.set(release.chart, release);
  }
  const problems: VersionProblem[] = [];
  const bumped = new Map<string, [string, string]>();
  // With a cache, each chart folder's fingerprint is taken as it is read (src/files/folder-fingerprint.ts), not by a walk of its own
  // (nor twice: not when the cache walked it to see whether the chart changed).
  const repositories = appRepositoryResolver(app, { offline: options.offline, cacheDir: options.dependencyCacheDir });
  const loading = { repositories, ...(cache ? { fingerprint: (dir: string) => cache.fingerprintsAgain(dir) } : {}) };
  const loader = createChartLoader(loading);
  const entries = [...byChart].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const charts = await mapConcurrently(entries, 4, async ([name, release]): Promise<CachedChart | undefined> => {
    // Stopped between charts when its client is gone (or a warm-up is cut short): no chart is left half made.
    options.cancelled?.throwIfAborted();
    const dir = app.path(release.chartPath);
    // Against a previous release every chart is compared by content, so none may be skipped unread.
    const unchanged = previous ? undefined : cache?.unchanged(dir);
    if (unchanged?.name === name) return { archive: unchanged, reused: true };
    // The app parsed this Chart.yaml already (its name is checked at assembly): its tree is read, not the file again.
    let chart = await loader.load(dir, app.chartYaml(release));
    if (chart.name !== name) {
      throw new FlotillaError(`release "${release.name}" names chart "${name}", but ${release.chartPath}/Chart.yaml says "${chart.name}"`, {
        location: release.location,
      });
    }
    const problem = previous && unbumpedChange(chart, undefined, previous);
    if (problem && options.bumpChanged) {
      const version = nextPatchVersion(chart.version, name, previous);
      const chartFile = join(dir, 'Chart.yaml');
      await writeFile(chartFile, rewriteChartVersion(await readFile(chartFile, 'utf8'), version, chartFile));
      bumped.set(name, [chart.version, version]);
      chart = await createChartLoader(loading).load(dir);
    } else if (problem) {
      problems.push(problem);
      return undefined;
    }
    const built = cache ? await cache.packaged(dir, chart) : { archive: await packageChart(chart), reused: false };
    const archiveProblem = previous && unbumpedChange(chart, built.archive.sha256, previous);
    if (archiveProblem && !options.bumpChanged) problems.push(archiveProblem);
    return built;
  });
  const cacheWrite = cache?.save();
  // Awaited with the build's other cache writes; a build that fails before then must not leave it unhandled.
  cacheWrite?.catch(() => undefined);
  if (problems.length > 0 && previous) {
    await cacheWrite; // what was packaged stays packaged
    throw new ChartVersionError(
      problems.sort((a, b) => (a.chart < b.chart ? -1 : 1)),
      previous.source,
    );
  }
  return { charts: charts.filter((c): c is CachedChart => c !== undefined), bumped: new Map([...bumped].sort()), cacheWrite };
}

/** The charts changed since the earlier tarball of the app in the output folder (see earlierTarball) that kept their version. */
async function unbumpedSinceEarlier(outDir: string, appName: string, file: string, charts: readonly CachedChart[]): Promise<BuildResult['sinceEarlier']> {
  const earlier = await earlierTarball(outDir, appName, file);
  if (!earlier) return undefined;
  const previous = await readPreviousCharts(earlier);
  const unbumped: VersionProblem[] = [];
  for (const { archive } of charts) {
    if (!previous.charts.some((c) => c.name === archive.name && c.version === archive.version)) continue;
    const { chart } = await readChartArchive(archive.bytes, { label: archive.fileName });
    const problem = unbumpedChange(chart, archive.sha256, previous);
    if (problem) unbumped.push(problem);
  }
  return { file: earlier, unbumped };
}

/**
 * Refuses an output or cache folder inside a folder the build reads (the
 * app's source folders, a chart's folder): the build would ship its own
 * output, the next build the tarball and cache of this one.
 */
function refuseOwnOutput(root: string, readFolders: readonly string[], options: BuildOptions): void {
  const cacheDir = cacheDirOf(options);
  const written = [['the output folder', options.outDir ?? '.'], ...(cacheDir === undefined ? [] : [['the cache folder', cacheDir]])] as const;
  // Compared as the file system resolves them, so that a link to a source folder is that folder. A folder of
  // the app is its real root and its own path: one look-up a build, not one a chart (this runs on every build).
  const realRoot = realpathLoose(root);
  const folders = readFolders.map((folder) => [folder, isWithin(folder, root) ? join(realRoot, relative(root, folder)) : realpathLoose(folder)] as const);
  for (const [what, dir] of written) {
    const abs = realpathLoose(dir);
    const inside = folders.find(([, real]) => isWithin(abs, real))?.[0];
    if (inside) {
      throw new FlotillaError(
        `${dir}: ${what} is inside the app's ${relative(root, inside) || '.'}/, which the build reads: the tarball would carry its own output; write it outside the app's source folders and charts (-d)`,
      );
    }
  }
}

function cacheDirOf(options: BuildOptions): string | undefined {
  return options.cacheDir === false ? undefined : (options.cacheDir ?? join(options.outDir ?? '.', '.flotilla-cache'));
}

/**
 * Whether the build's cache folder is gone (the user removed the output
 * folder): what a long-lived process kept of earlier builds into it is then
 * dropped, so that the next build writes every cache file again.
 */
export function cacheFolderGone(options: BuildOptions): boolean {
  const dir = cacheDirOf(options);
  return dir !== undefined && !existsSync(dir);
}

/** Records where the pieces of a tarball written from memory lie (see KeptBuilds), for a later process to reuse them. */
export function savePieceTable(options: BuildOptions, tarball: WrittenArchive): Promise<void> | undefined {
  const cache = openBuildCache(options);
  return cache && BundleReuse.open(cache, BUNDLE_TAR_OPTIONS, tarball).save(tarball);
}

/** Which WatchMemory a build may use: what one build kept holds for another with the same cache and link option. */
export function memoryKey(options: BuildOptions): string {
  const cacheDir = cacheDirOf(options);
  return JSON.stringify([cacheDir === undefined ? null : resolve(cacheDir), options.followExternalSymlinks === true]);
}

const PLUGIN_CACHE_FORMAT = 'flotilla-plugin-cache/3';

/**
 * The plugins/ files: bundled now, or taken from the cache when nothing
 * they are made from changed (an entry keyed by the bundle's inputs, its
 * content checked as it is read: src/cache). `cache` is left out with
 * `followExternal`: the bundle's cache key knows nothing of files outside the app.
 */
async function pluginFiles(
  appRoot: string,
  cache: CacheFolder | undefined,
  followExternal: boolean,
): Promise<{ files: Map<string, Buffer>; save?: () => Promise<void> }> {
  const key = cache && (await pluginBundleKey(appRoot));
  const name = `plugins-${key}.json`;
  const inputs = `${PLUGIN_CACHE_FORMAT}\0${key}`;
  const fromCache = cache && readPluginCache(await cache.read(name, 'plugins', inputs));
  if (fromCache) return { files: fromCache };
  const bundle = await bundlePlugins(appRoot, { followExternalSymlinks: followExternal });
  const files = new Map([...bundle.files].map(([file, bytes]) => [file, Buffer.from(bytes)]));
  if (!cache) return { files };
  // Written with the build's other cache files, once the build is known to write any.
  const save = () =>
    cache.write(name, 'plugins', inputs, JSON.stringify(Object.fromEntries([...files].map(([file, data]) => [file, data.toString('base64')]))));
  return { files, save };
}

function readPluginCache(content: Buffer | undefined): Map<string, Buffer> | undefined {
  try {
    const entry = content && (JSON.parse(content.toString('utf8')) as Record<string, unknown> | null);
    if (typeof entry !== 'object' || entry === null) return undefined;
    const files = new Map<string, Buffer>();
    for (const [file, base64] of Object.entries(entry)) {
      if (typeof base64 !== 'string') return undefined;
      files.set(file, Buffer.from(base64, 'base64'));
    }
    return files;
  } catch {
    return undefined;
  }
}
