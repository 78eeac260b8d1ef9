/**
 * Loading a chart the way Helm does (helm pkg/chart/loader), then resolving
 * its dependencies the way `helm dependency build` + `helm package` would:
 * - a directory is walked with its `.helmignore` (+ Helm's default rule),
 *   following symlinks, refusing irregular files, dropping a UTF-8 BOM;
 * - under `charts/`, each folder or `.tgz` is a vendored subchart, used as
 *   is (a folder is filtered by the PARENT's rules, as Helm's walk does);
 *   names starting with `_` or `.` are skipped, `*.prov` stay plain files;
 * - a declared dependency not vendored, whose repository is `file://<path>`
 *   (relative to the chart folder), is loaded recursively as its own chart
 *   (its own .helmignore: what `helm dependency update` would pack), and
 *   its version must satisfy the declared range, as helm would insist;
 * - any other repository (oci://, https://) not vendored is asked of the
 *   loader's RepositoryResolver (src/dependencies: the app's mapping to its
 *   own chart folders, the cache, the repository), with the version
 *   Chart.lock pins when the chart has one — after Helm's check that the
 *   lock is in sync with Chart.yaml; without a resolver it must be vendored.
 * `condition`, `tags`, `alias` only matter at render time: packaging vendors
 * every dependency once, under `charts/<chart name>/`, like Helm (aliases of
 * one chart share that folder, so two different charts of one name are
 * refused: `helm package` would write both into it).
 */
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { compareBytewise, readTarGzEntriesSync, type DecompressionBudget } from '../tarball/index.js';
import { FolderFingerprinter } from '../files/index.js';
import type { ParsedText } from '../yaml/index.js';
import { chartMetadata, parseChartYaml, parseRequirementsYaml } from './chart-file.js';
import { CHART_LOCK, chartLockText, lockedVersions, parseChartLock, type LockedDependency } from './chart-lock.js';
import { ChartArchiveError, ChartDependencyError, ChartError, ChartFileError, HelmignoreError } from './errors.js';
import { HELMIGNORE, HelmignoreRules } from './helmignore.js';
import { parseConstraint, parseVersion } from './semver.js';
import type { ChartDependency, ChartFile, ChartMetadata, ChartOrigin, ChartSource, RepositoryResolver, ResolvedDependency } from './types.js';

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function stripBom(data: Buffer): Buffer {
  return data.subarray(0, 3).equals(UTF8_BOM) ? data.subarray(3) : data;
}

interface LoadContext {
  /** file:// charts by real path, so a library used by several charts is read once per load. */
  readonly cache: Map<string, Promise<ChartSource>>;
  /** Which chart folders to fingerprint as they are read (ChartSource.fingerprint). */
  readonly fingerprint?: (dir: string) => boolean;
  /** What the archives of this load (and the tarball holding them) may still decompress. */
  readonly budget?: DecompressionBudget;
  /** Dependencies on chart repositories (oci://, https://) that are not vendored; without it they are refused. */
  readonly repositories?: RepositoryResolver;
}

/** Real paths of the file:// charts on the way to the one being loaded (a cycle check). */
type Ancestry = readonly string[];

/** Reads a chart source directory (or a chart .tgz) and resolves its dependencies. */
export async function loadChart(dir: string, options: ChartLoaderOptions = {}): Promise<ChartSource> {
  return createChartLoader(options).load(dir);
}

/**
 * Loads charts sharing one cache of file:// dependencies, so a library used
 * by many charts is read once. `chartYaml`, the chart's Chart.yaml as its
 * caller parsed it already (an app parses the Chart.yaml of each release), is
 * read instead of the file while the file still holds that text.
 */
export interface ChartLoader {
  load(dir: string, chartYaml?: ParsedText): Promise<ChartSource>;
}

export interface ChartLoaderOptions {
  /** Which chart folders to fingerprint as they are read (ChartSource.fingerprint). */
  readonly fingerprint?: (dir: string) => boolean;
  /** Resolves dependencies on chart repositories that are not vendored (see src/dependencies). */
  readonly repositories?: RepositoryResolver;
}

export function createChartLoader(options: ChartLoaderOptions = {}): ChartLoader {
  const ctx: LoadContext = { cache: new Map(), fingerprint: options.fingerprint, repositories: options.repositories };
  return {
    async load(dir: string, chartYaml?: ParsedText): Promise<ChartSource> {
      const path = resolve(dir);
      const real = realpathOrUndefined(path);
      if (real === undefined) throw new ChartError(`chart not found: ${path}`);
      return loadPath(path, [real], ctx, chartYaml);
    },
  };
}

function realpathOrUndefined(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

/**
 * A chart folder is looked at synchronously, as it is walked (walkChartDir):
 * in a cold build libuv's pool is busy compressing the charts already
 * loaded, and a stat queued behind that would hold up loading the next.
 */
async function loadPath(path: string, ancestry: Ancestry, ctx: LoadContext, chartYaml?: ParsedText): Promise<ChartSource> {
  const info = statSync(path, { throwIfNoEntry: false });
  if (!info) throw new ChartError(`chart not found: ${path}`);
  if (info.isDirectory()) return loadDirectory(path, ancestry, ctx, chartYaml);
  if (info.isFile()) return chartFromArchive(await readFile(path), { kind: 'archive', file: path }, ancestry, ctx);
  throw new ChartError(`not a chart directory or archive: ${path}`);
}

async function loadDirectory(dir: string, ancestry: Ancestry, ctx: LoadContext, chartYaml?: ParsedText): Promise<ChartSource> {
  const ignoreFile = join(dir, HELMIGNORE);
  let ignoreText: string | undefined;
  try {
    ignoreText = stripBom(readFileSync(ignoreFile)).toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const rules = ignoreText === undefined ? HelmignoreRules.defaultsOnly() : HelmignoreRules.parse(ignoreText, ignoreFile);
  const fingerprinter = ctx.fingerprint?.(dir) ? new FolderFingerprinter() : undefined;
  const files = await walkChartDir(dir, rules, fingerprinter);
  if (!files.has('Chart.yaml')) {
    const rule = rules.decidingRule('Chart.yaml', false);
    const onDisk = statSync(join(dir, 'Chart.yaml'), { throwIfNoEntry: false }) !== undefined;
    if (rule && onDisk) {
      const why = rule.negate
        ? `in Helm a "!" rule ignores every path it does NOT match, so helm package would fail with "Chart.yaml file is missing"`
        : 'Helm would not see the chart';
      throw new HelmignoreError(`rule ${JSON.stringify(rule.raw)} excludes Chart.yaml: ${why}`, { file: ignoreFile, line: rule.line, column: 1 });
    }
  }
  const chart = await buildChart(files, { kind: 'directory', dir }, (rel) => join(dir, rel), ancestry, ctx, chartYaml);
  const fingerprint = fingerprinter?.finish();
  return fingerprint ? { ...chart, fingerprint } : chart;
}

/**
 * Helm's directory walk: sorted, symlinks followed (loops refused), ignored
 * dirs skipped whole. Synchronous on purpose: a chart is many small files,
 * and the thread-pool round trips of async calls cost more than the reads.
 * With a fingerprinter, every entry counts towards the folder's fingerprint, the
 * ignored ones too: a file read is fingerprinted from the descriptor it is read
 * through, so taking the fingerprint costs no second look at it.
 */
async function walkChartDir(root: string, rules: HelmignoreRules, fingerprinter?: FolderFingerprinter): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const visit = (abs: string, rel: string, real: string, ancestors: ReadonlySet<string>): void => {
    const entries = readdirSync(abs, { withFileTypes: true }).sort((a, b) => compareBytewise(a.name, b.name));
    for (const entry of entries) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const childAbs = join(abs, entry.name);
      // Only a symlink needs a stat to learn what it points at (and where).
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      const info = entry.isSymbolicLink() ? statSync(childAbs, { throwIfNoEntry: false }) : undefined;
      if (entry.isSymbolicLink()) {
        if (!info) {
          // A dangling symlink: fine when ignored (as in Helm), an error otherwise.
          if (rules.ignores(childRel, false)) continue;
          throw new ChartError(`${childAbs}: cannot read (dangling symbolic link)`);
        }
        isDir = info.isDirectory();
        isFile = info.isFile();
      }
      if (isDir) {
        if (info) fingerprinter?.folder(info);
        else fingerprinter?.folderAt(childAbs);
        if (rules.ignores(childRel, true)) {
          fingerprinter?.walk(childAbs, `${childRel}/`);
          continue;
        }
        const childReal = entry.isSymbolicLink() ? realpathSync.native(childAbs) : join(real, entry.name);
        if (ancestors.has(childReal)) throw new ChartError(`${childAbs}: symbolic link loop`);
        visit(childAbs, childRel, childReal, new Set([...ancestors, childReal]));
        continue;
      }
      if (rules.ignores(childRel, false)) {
        if (info) fingerprinter?.file(childRel, info);
        else fingerprinter?.fileAt(childAbs, childRel);
        continue;
      }
      if (!isFile) throw new ChartError(`${childAbs}: cannot load an irregular file (device, socket or FIFO)`);
      files.set(childRel, stripBom(fingerprinter ? fingerprinter.read(childAbs, childRel) : readFileSync(childAbs)));
    }
  };
  const real = realpathSync.native(root);
  visit(root, '', real, new Set([real]));
  return files;
}

/** The files of a chart .tgz, relative to its single top folder (Helm strips the first path segment). */
function chartArchiveFiles(bytes: Buffer, label: string, budget?: DecompressionBudget): { top: string; files: Map<string, Buffer>; order: string[] } {
  const entries = readTarGzEntriesSync(bytes, { label, budget });
  let top: string | undefined;
  const files = new Map<string, Buffer>();
  const order: string[] = [];
  for (const entry of entries) {
    const slash = entry.path.indexOf('/');
    const first = slash === -1 ? entry.path : entry.path.slice(0, slash);
    if (top === undefined) top = first;
    else if (first !== top) throw new ChartArchiveError(`${label}: entries are not all under one chart folder (${JSON.stringify(top)} and ${JSON.stringify(first)})`);
    if (entry.type !== 'file') continue;
    if (slash === -1) throw new ChartArchiveError(`${label}: file ${JSON.stringify(entry.path)} is not inside the chart folder`);
    files.set(entry.path.slice(slash + 1), stripBom(entry.data));
    order.push(entry.path);
  }
  if (top === undefined) throw new ChartArchiveError(`${label}: empty archive`);
  return { top, files, order };
}

function archiveLabel(origin: Extract<ChartOrigin, { kind: 'archive' }>): string {
  return origin.member === undefined ? origin.file : `${origin.file}#${origin.member}`;
}

async function chartFromArchive(
  bytes: Buffer,
  origin: Extract<ChartOrigin, { kind: 'archive' }>,
  ancestry: Ancestry,
  ctx: LoadContext,
): Promise<ChartSource> {
  return (await chartAndListing(bytes, origin, ancestry, ctx)).chart;
}

/** One read of the archive gives both the chart and the files as stored. */
async function chartAndListing(
  bytes: Buffer,
  origin: Extract<ChartOrigin, { kind: 'archive' }>,
  ancestry: Ancestry,
  ctx: LoadContext,
): Promise<{ readonly chart: ChartSource; readonly top: string; readonly order: readonly string[] }> {
  const label = archiveLabel(origin);
  const { top, files, order } = chartArchiveFiles(bytes, label, ctx.budget);
  // .helmignore is not evaluated inside archives (Helm neither).
  return { chart: await buildChart(files, origin, (rel) => `${label}#${top}/${rel}`, ancestry, ctx), top, order };
}

/** Loads a chart .tgz held in memory (no file:// resolution: archives must carry their dependencies). */
export async function loadChartArchive(bytes: Buffer, label = 'chart archive', budget?: DecompressionBudget): Promise<ChartSource> {
  return (await loadChartArchiveWithListing(bytes, label, budget)).chart;
}

/** As loadChartArchive, with the archive's top folder and file paths in archive order, from the same single read. */
export function loadChartArchiveWithListing(bytes: Buffer, label = 'chart archive', budget?: DecompressionBudget): ReturnType<typeof chartAndListing> {
  return chartAndListing(bytes, { kind: 'archive', file: label }, [], { cache: new Map(), budget });
}

function subOrigin(origin: ChartOrigin, rel: string): ChartOrigin {
  if (origin.kind === 'directory') return { kind: 'directory', dir: join(origin.dir, ...rel.split('/')) };
  return { kind: 'archive', file: origin.file, member: origin.member === undefined ? rel : `${origin.member}/${rel}` };
}

interface Partition {
  readonly own: ChartFile[];
  readonly folders: Map<string, Map<string, Buffer>>;
  readonly archives: Map<string, Buffer>;
}

/** Splits a chart's files into its own and its vendored subcharts, like Helm's LoadFiles. */
function partition(files: ReadonlyMap<string, Buffer>, chartName: string): Partition {
  const own: ChartFile[] = [];
  const folders = new Map<string, Map<string, Buffer>>();
  const archives = new Map<string, Buffer>();
  for (const [path, data] of files) {
    if (!path.startsWith('charts/') || path.endsWith('.prov')) {
      own.push({ path, data });
      continue;
    }
    const rest = path.slice('charts/'.length);
    const slash = rest.indexOf('/');
    const folder = slash === -1 ? rest : rest.slice(0, slash);
    if (folder.startsWith('_') || folder.startsWith('.')) continue; // Helm skips these entirely
    if (slash === -1) {
      if (!folder.endsWith('.tgz')) {
        throw new ChartDependencyError(chartName, folder, `charts/${folder} is neither a chart folder nor a .tgz archive (Helm refuses it)`);
      }
      archives.set(folder, data);
      continue;
    }
    let group = folders.get(folder);
    if (!group) folders.set(folder, (group = new Map<string, Buffer>()));
    group.set(rest.slice(slash + 1), data);
  }
  own.sort((a, b) => compareBytewise(a.path, b.path));
  return { own, folders, archives };
}

interface MutableDependency {
  name: string;
  source: ResolvedDependency['source'];
  declared: ChartDependency[];
  chart: ChartSource;
  /** Real path of a file:// or mapped dependency, or an archive's digest: tells two different charts of one name apart. */
  identity?: string;
}

async function buildChart(
  files: ReadonlyMap<string, Buffer>,
  origin: ChartOrigin,
  where: (rel: string) => string,
  ancestry: Ancestry,
  ctx: LoadContext,
  known?: ParsedText,
): Promise<ChartSource> {
  const metadata = readChartMetadata(files, where, known);
  const { own, folders, archives } = partition(files, metadata.name);
  const byName = await vendoredDependencies(metadata.name, folders, archives, origin, where, ancestry, ctx);
  await resolveDeclaredDependencies(metadata, files, byName, origin, where, ancestry, ctx);
  const dependencies: ResolvedDependency[] = [...byName.values()]
    .sort((a, b) => compareBytewise(a.name, b.name))
    .map(({ name, source, declared, chart }) => ({ name, source, declared, chart }));
  addWrittenLock(metadata, files, own, dependencies);
  return {
    name: metadata.name,
    version: metadata.version,
    metadata,
    origin,
    chartFile: where('Chart.yaml'),
    files: own,
    dependencies,
  };
}

/** Chart.yaml (as the app parsed it, when it gave the same text), its dependencies taken from requirements.yaml when there is one. */
function readChartMetadata(files: ReadonlyMap<string, Buffer>, where: (rel: string) => string, known: ParsedText | undefined): ChartMetadata {
  const chartYaml = files.get('Chart.yaml');
  if (!chartYaml) throw new ChartFileError('Chart.yaml is missing', { file: where('Chart.yaml'), line: 0, column: 0 });
  const text = chartYaml.toString('utf8');
  const metadata: ChartMetadata = known?.text === text ? chartMetadata(known) : parseChartYaml(text, where('Chart.yaml'));
  const requirements = files.get('requirements.yaml');
  // Helm reads requirements.yaml over Chart.yaml's dependencies (deprecated, v1 charts).
  return requirements ? { ...metadata, dependencies: parseRequirementsYaml(requirements.toString('utf8'), where('requirements.yaml')) } : metadata;
}

/** The charts vendored under charts/, folders then archives, by name; one name vendored twice is refused. */
async function vendoredDependencies(
  chartName: string,
  folders: ReadonlyMap<string, ReadonlyMap<string, Buffer>>,
  archives: ReadonlyMap<string, Buffer>,
  origin: ChartOrigin,
  where: (rel: string) => string,
  ancestry: Ancestry,
  ctx: LoadContext,
): Promise<Map<string, MutableDependency>> {
  const byName = new Map<string, MutableDependency>();
  const addVendored = (dep: MutableDependency, from: string): void => {
    const clash = byName.get(dep.name);
    if (clash) throw new ChartDependencyError(chartName, dep.name, `vendored twice under charts/ (${from} and another entry)`);
    byName.set(dep.name, dep);
  };
  for (const folder of [...folders.keys()].sort(compareBytewise)) {
    const rel = `charts/${folder}`;
    const chart = await buildChart(folders.get(folder)!, subOrigin(origin, rel), (r) => where(`${rel}/${r}`), ancestry, ctx);
    addVendored({ name: chart.name, source: 'vendored-directory', declared: [], chart }, rel);
  }
  for (const file of [...archives.keys()].sort(compareBytewise)) {
    const rel = `charts/${file}`;
    const archiveOrigin: Extract<ChartOrigin, { kind: 'archive' }> =
      origin.kind === 'directory' ? { kind: 'archive', file: join(origin.dir, 'charts', file) } : (subOrigin(origin, rel) as Extract<ChartOrigin, { kind: 'archive' }>);
    const chart = await chartFromArchive(archives.get(file)!, archiveOrigin, ancestry, ctx);
    addVendored({ name: chart.name, source: 'vendored-archive', declared: [], chart }, rel);
  }
  return byName;
}

/**
 * Each dependency Chart.yaml declares, matched to its chart in `byName`: a
 * vendored one, a file:// folder, or one a repository resolves to (through
 * `ctx.repositories`, at Chart.lock's version when there is one); one that
 * is none of these is refused.
 */
async function resolveDeclaredDependencies(
  metadata: ChartMetadata,
  files: ReadonlyMap<string, Buffer>,
  byName: Map<string, MutableDependency>,
  origin: ChartOrigin,
  where: (rel: string) => string,
  ancestry: Ancestry,
  ctx: LoadContext,
): Promise<void> {
  let locked: readonly LockedDependency[] | undefined;
  const lockedVersion = (index: number): string | undefined => {
    const lock = files.get(CHART_LOCK);
    if (lock === undefined) return undefined;
    locked ??= lockedVersions(metadata.dependencies, parseChartLock(lock.toString('utf8'), where(CHART_LOCK)));
    return locked[index]!.version;
  };
  for (const [index, dep] of metadata.dependencies.entries()) {
    let entry = byName.get(dep.name);
    const repository = dep.repository ?? '';
    if (repository.startsWith('file://') && (!entry || entry.source === 'file')) {
      entry = await fileDependency(metadata.name, dep, entry, origin, ancestry, ctx);
    } else if (repository !== '' && ctx.repositories && (!entry || entry.source === 'mapped' || entry.source === 'repository')) {
      const resolved = await resolveFromRepository(metadata.name, where('Chart.yaml'), dep, lockedVersion(index), ancestry, ctx);
      if (entry && entry.identity !== resolved.identity) {
        throw new ChartDependencyError(
          metadata.name,
          dep.name,
          `resolves to ${resolved.chart.name} ${resolved.chart.version}, but an earlier entry of the same chart to ${entry.chart.version}: helm package would write both into charts/${dep.name}/`,
          dep.location,
        );
      }
      entry ??= { name: dep.name, declared: [], ...resolved };
    }
    if (!entry) {
      const why =
        repository === ''
          ? 'is not vendored under charts/ and names no repository'
          : `comes from ${repository} and is not vendored under charts/ (run \`helm dependency build\` and keep charts/, use a file:// path, or map the repository to a chart folder of the app)`;
      throw new ChartDependencyError(metadata.name, dep.name, why, dep.location);
    }
    byName.set(dep.name, entry);
    entry.declared.push(dep);
  }
}

/** A file:// dependency: the folder it points at (only from a chart folder), loaded once; another entry of its name must be the same folder. */
async function fileDependency(
  chartName: string,
  dep: ChartDependency,
  entry: MutableDependency | undefined,
  origin: ChartOrigin,
  ancestry: Ancestry,
  ctx: LoadContext,
): Promise<MutableDependency> {
  const repository = dep.repository ?? '';
  if (origin.kind !== 'directory') {
    throw new ChartDependencyError(chartName, dep.name, `${repository} cannot be resolved inside an archive; the archive must carry it under charts/`, dep.location);
  }
  const target = resolveFileRepository(origin.dir, repository);
  const real = realpathOrUndefined(target);
  if (real === undefined) throw new ChartDependencyError(chartName, dep.name, `${repository} points to ${target}, which does not exist`, dep.location);
  if (entry && entry.identity !== real) {
    throw new ChartDependencyError(chartName, dep.name, `two different charts are named ${JSON.stringify(dep.name)} (${repository} and an earlier entry)`, dep.location);
  }
  if (entry) return entry;
  const chart = await loadDependencyFolder(target, real, chartName, dep, ancestry, ctx);
  checkConstraint(chartName, dep, chart);
  return { name: dep.name, source: 'file', declared: [], chart, identity: real };
}

/** `helm dependency build` writes a Chart.lock into a chart that has none, and helm package ships it. */
function addWrittenLock(metadata: ChartMetadata, files: ReadonlyMap<string, Buffer>, own: ChartFile[], dependencies: readonly ResolvedDependency[]): void {
  const fromRepositories = dependencies.some((d) => d.source === 'mapped' || d.source === 'repository');
  if (!fromRepositories || metadata.apiVersion !== 'v2' || files.has(CHART_LOCK)) return;
  const versionOf = new Map(dependencies.map((d) => [d.name, d.chart.version]));
  const locked = metadata.dependencies.map((d) => ({ name: d.name, repository: d.repository ?? '', version: versionOf.get(d.name)! }));
  own.push({ path: CHART_LOCK, data: Buffer.from(chartLockText(metadata.dependencies, locked), 'utf8') });
  own.sort((a, b) => compareBytewise(a.path, b.path));
}

/**
 * `helm dependency update` refuses a file:// chart whose version does not
 * satisfy the declared range; so do we. (Vendored charts are taken as they
 * are, as `helm package` does.)
 */
function checkConstraint(chartName: string, dep: ChartDependency, chart: ChartSource): void {
  if (dep.version === undefined || dep.version.trim() === '') return;
  const constraint = parseConstraint(dep.version);
  if (!constraint) throw new ChartDependencyError(chartName, dep.name, `version ${JSON.stringify(dep.version)} is not a valid version constraint`, dep.location);
  const version = parseVersion(chart.version)!;
  if (!constraint.satisfiedBy(version)) {
    throw new ChartDependencyError(chartName, dep.name, `${dep.repository} holds version ${chart.version}, which does not satisfy ${JSON.stringify(dep.version)}`, dep.location);
  }
}

/** `file://../x` is relative to the chart folder; `file:///abs` is absolute (as in Helm). */
function resolveFileRepository(chartDir: string, repository: string): string {
  const path = decodeURI(repository.slice('file://'.length));
  return isAbsolute(path) ? path : resolve(chartDir, path);
}

/**
 * A dependency on a chart repository, from the loader's resolver: a chart
 * folder of the app (loaded as a file:// one is) or an archive (loaded once
 * per digest). Its name must be the one declared; a fetched archive's
 * version must be the one Chart.lock pins, if any, and within the declared
 * range. A mapped folder is taken as it is, as Helm takes a chart vendored
 * in charts/: the app that maps the repository chose its version.
 */
async function resolveFromRepository(
  chartName: string,
  chartFile: string,
  dep: ChartDependency,
  locked: string | undefined,
  ancestry: Ancestry,
  ctx: LoadContext,
): Promise<{ source: 'mapped' | 'repository'; chart: ChartSource; identity: string }> {
  const found = await ctx.repositories!.resolve({ chart: chartName, chartFile, dependency: dep, locked });
  let resolved: { source: 'mapped' | 'repository'; chart: ChartSource; identity: string };
  if (found.kind === 'directory') {
    const real = realpathOrUndefined(found.dir);
    if (real === undefined) throw new ChartDependencyError(chartName, dep.name, `${dep.repository} is mapped to ${found.dir}, which does not exist`, dep.location);
    resolved = { source: 'mapped', chart: await loadDependencyFolder(found.dir, real, chartName, dep, ancestry, ctx), identity: real };
  } else {
    let loading = ctx.cache.get(found.digest);
    if (!loading) ctx.cache.set(found.digest, (loading = chartFromArchive(found.bytes, { kind: 'archive', file: found.label }, ancestry, ctx)));
    const chart = await loading;
    if (chart.name !== dep.name) {
      throw new ChartDependencyError(chartName, dep.name, `${found.label} holds chart ${JSON.stringify(chart.name)}, not ${JSON.stringify(dep.name)}`, dep.location);
    }
    if (locked !== undefined && chart.version !== locked) {
      throw new ChartDependencyError(chartName, dep.name, `${found.label} holds version ${chart.version}, but Chart.lock pins ${locked}`, dep.location);
    }
    checkConstraint(chartName, dep, chart);
    resolved = { source: 'repository', chart, identity: found.digest };
  }
  return resolved;
}

/** A dependency read from a chart folder (file://, or a repository the app maps to one): its own .helmignore, loaded once per load. */
async function loadDependencyFolder(
  target: string,
  real: string,
  chartName: string,
  dep: ChartDependency,
  ancestry: Ancestry,
  ctx: LoadContext,
): Promise<ChartSource> {
  if (ancestry.includes(real)) {
    const chain = [...ancestry.slice(ancestry.indexOf(real)), real].join(' -> ');
    throw new ChartDependencyError(chartName, dep.name, `dependency cycle: ${chain}`, dep.location);
  }
  // Dependencies load one after another, so a pending cache entry is always an
  // ancestor (caught above) and awaiting one cannot deadlock.
  let loading = ctx.cache.get(real);
  if (!loading) {
    loading = loadPath(target, [...ancestry, real], ctx);
    ctx.cache.set(real, loading);
  }
  const chart = await loading;
  if (chart.name !== dep.name) {
    throw new ChartDependencyError(chartName, dep.name, `${dep.repository} (${target}) holds chart ${JSON.stringify(chart.name)}, not ${JSON.stringify(dep.name)}`, dep.location);
  }
  return chart;
}
