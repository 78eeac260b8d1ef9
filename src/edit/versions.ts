/**
 * `flotilla bump`: the app version in fluxcd/metadata.yaml and chart versions
 * in Chart.yaml, edited like any other scalar (comments and quoting kept).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { APP_FILES } from '../app/index.js';
import { nextPatchVersion, readPreviousCharts, unbumpedChangeOf } from '../build/index.js';
import { compareVersions, createChartLoader, parseConstraint, parseVersion } from '../charts/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import { ChangeSet, type FileChange } from './changes.js';
import { appTree, readReleaseTable, unknownChart, type AppTree } from './overrides.js';
import { formatValuePath, type ValuePath } from './path.js';
import { EditRefusedError } from './yaml-edit.js';
import { FILE_NAME_PART_RULE, isFileNamePart } from '../names/index.js';

export class VersionBumpError extends FlotillaError {}

export interface ChartBump {
  readonly chart: string;
  /** The new version; the next patch version when absent. */
  readonly version?: string;
}

export interface VersionBumpRequest {
  readonly appDir: string;
  /** `true`: the next StarlingX revision (1.0-2 → 1.0-3); a string: that version. */
  readonly appVersion?: true | string;
  readonly charts?: readonly ChartBump[];
  /** Bump every chart whose content changed since this tarball or repository index.yaml (as `build --bump-changed`). */
  readonly allChangedAgainst?: string;
  /** Allow a version that is not above the current one, and dropping a build token. */
  readonly force?: boolean;
}

export interface VersionChange {
  /** The app version, a chart's version, or the version a chart asks of a `file://` dependency. */
  readonly kind: 'app' | 'chart' | 'dependency';
  /** `app_version`, the chart name, or `chart → dependency`. */
  readonly what: string;
  readonly file: string;
  readonly from: string;
  readonly to: string;
}

export interface VersionBumpResult {
  readonly changes: readonly FileChange[];
  readonly bumped: readonly VersionChange[];
}

/**
 * The next app version: the number after the last `-` (StarlingX's package
 * revision, `24.09-1` → `24.09-2`), else the last number (`1.4` → `1.5`).
 */
export function nextAppVersion(version: string): string {
  const match = /^(.*?)(\d+)([^\d]*)$/.exec(version);
  if (!match || /@[A-Z][A-Z0-9_]*@/.test(version)) {
    throw new VersionBumpError(`cannot work out the version after app_version "${version}"; give it: --app-version VERSION`);
  }
  const [, head, number, tail] = match as unknown as [string, string, string, string];
  return `${head}${String(Number(number) + 1).padStart(number.length, '0')}${tail}`;
}

/** The version after a chart's: the next patch (pre-release and build metadata dropped). */
export function nextChartVersion(version: string, chart: string): string {
  const v = parseVersion(version);
  if (!v) throw new VersionBumpError(`chart ${chart}: version "${version}" is not semver; give the new one: --chart ${chart}=VERSION`);
  return `${v.major}.${v.minor}.${v.patch + 1}`;
}

export async function bumpVersions(request: VersionBumpRequest): Promise<VersionBumpResult> {
  const tree = appTree(request.appDir);
  const set = new ChangeSet((file) => tree.path(file));
  const bumped: VersionChange[] = [];
  const setVersion = async (file: string, path: ValuePath, next: (current: string) => string): Promise<{ from: string; to: string }> => {
    if (!existsSync(tree.path(file))) throw new VersionBumpError(`${file} does not exist`);
    const editor = await set.yaml(file);
    const held = editor.lookup(path);
    if (!held.exists || (typeof held.value !== 'string' && typeof held.value !== 'number')) {
      throw new EditRefusedError(`${formatValuePath(path)} is missing or not a scalar`, { location: held.location ?? { file, line: 1, column: 1 } });
    }
    const from = String(held.value);
    const to = next(from);
    editor.set(path, to, { force: request.force });
    return { from, to };
  };
  if (request.appVersion !== undefined) {
    const appVersion = request.appVersion;
    const { from, to } = await setVersion(APP_FILES.metadata, ['app_version'], (current) =>
      appVersion === true ? nextAppVersion(current) : checkAppVersion(appVersion, current, request.force),
    );
    bumped.push({ kind: 'app', what: 'app_version', file: APP_FILES.metadata, from, to });
  }
  const wanted = new Map<string, string | undefined>();
  for (const c of request.charts ?? []) wanted.set(c.chart, c.version);
  const chartDirs = await chartDirectories(tree);
  if (request.allChangedAgainst !== undefined) {
    const previous = await readPreviousCharts(request.allChangedAgainst);
    const loader = createChartLoader();
    for (const [name, dir] of chartDirs) {
      if (wanted.has(name)) continue;
      const chart = await loader.load(tree.path(dir));
      if (await unbumpedChangeOf(chart, previous)) wanted.set(name, nextPatchVersion(chart.version, name, previous));
    }
  }
  const newVersions = new Map<string, string>();
  for (const [name, version] of [...wanted].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const dir = chartDirs.get(name);
    if (!dir) throw unknownChart(name, [...chartDirs.keys()]);
    const file = join(dir, 'Chart.yaml');
    const { from, to } = await setVersion(file, ['version'], (current) =>
      version === undefined ? nextChartVersion(current, name) : checkChartVersion(name, version, current, request.force),
    );
    newVersions.set(name, to);
    bumped.push({ kind: 'chart', what: name, file, from, to });
  }
  bumped.push(...(await followDependencies(tree, set, chartDirs, newVersions)));
  if (bumped.length === 0 && request.allChangedAgainst === undefined)
    throw new VersionBumpError('nothing to bump: give --app-version, --chart or --all-changed', { exitCode: 2 });
  return { changes: set.changes().filter((c) => c.before !== c.after), bumped };
}

/**
 * Charts that take a bumped chart through `file://` and pin a version it no
 * longer satisfies (`version: 0.1.0` for a library now at 0.1.1) get the new
 * version; a range that still matches is left alone. Without this the next
 * build could not resolve the dependency.
 */
async function followDependencies(
  tree: AppTree,
  set: ChangeSet,
  chartDirs: ReadonlyMap<string, string>,
  newVersions: ReadonlyMap<string, string>,
): Promise<VersionChange[]> {
  const out: VersionChange[] = [];
  if (newVersions.size === 0) return out;
  for (const [chart, dir] of chartDirs) {
    const file = join(dir, 'Chart.yaml');
    if (!existsSync(tree.path(file))) continue;
    const editor = await set.yaml(file);
    const dependencies = editor.lookup(['dependencies']).value;
    if (!Array.isArray(dependencies)) continue;
    for (const [index, entry] of dependencies.entries()) {
      const { name, version, repository } = (entry ?? {}) as { name?: unknown; version?: unknown; repository?: unknown };
      const to = typeof name === 'string' ? newVersions.get(name) : undefined;
      if (to === undefined || typeof repository !== 'string' || !repository.startsWith('file://') || version === undefined) continue;
      if (resolve(tree.path(dir), repository.slice('file://'.length)) !== tree.path(chartDirs.get(name as string) ?? '')) continue;
      const parsed = parseVersion(to);
      if (parsed && parseConstraint(String(version))?.satisfiedBy(parsed)) continue;
      editor.set(['dependencies', index, 'version'], to);
      out.push({ kind: 'dependency', what: `${chart} → ${name as string}`, file, from: String(version), to });
    }
  }
  return out;
}

/** Chart name → chart directory, from the release table (one directory per chart name). */
async function chartDirectories(tree: AppTree): Promise<Map<string, string>> {
  const dirs = new Map<string, string>();
  for (const release of await readReleaseTable(tree)) if (!dirs.has(release.chart)) dirs.set(release.chart, release.chartPath);
  // Library charts no release names directly, found as file:// dependencies, are bumped by name too.
  for (const dir of [...dirs.values()]) {
    const chart = await createChartLoader()
      .load(tree.path(dir))
      .catch(() => undefined);
    for (const dependency of chart?.dependencies ?? []) {
      const origin = dependency.chart.origin;
      if (dependency.source === 'file' && origin.kind === 'directory' && !dirs.has(dependency.name)) dirs.set(dependency.name, tree.display(origin.dir));
    }
  }
  return dirs;
}

function checkAppVersion(version: string, current: string, force: boolean | undefined): string {
  if (!isFileNamePart(version))
    throw new VersionBumpError(`app version "${version}" cannot name the tarball: expected ${FILE_NAME_PART_RULE}`, { exitCode: 2 });
  if (version === current && !force) throw new VersionBumpError(`app_version already is ${current}`);
  return version;
}

function checkChartVersion(chart: string, version: string, current: string, force: boolean | undefined): string {
  const wanted = parseVersion(version);
  if (!wanted) throw new VersionBumpError(`chart ${chart}: "${version}" is not a semantic version such as 1.2.3`, { exitCode: 2 });
  const now = parseVersion(current);
  if (now && compareVersions(wanted, now) <= 0 && !force) {
    throw new VersionBumpError(`chart ${chart}: ${version} is not above the current version ${current} (pass --force to set it anyway)`);
  }
  return version;
}
