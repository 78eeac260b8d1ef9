/**
 * `flotilla bump`: the app version in fluxcd/metadata.yaml and chart versions
 * in Chart.yaml, edited like any other scalar (comments and quoting kept).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { APP_FILES } from '../app/index.js';
import { nextPatchVersion, readPreviousCharts, unbumpedChangeOf } from '../build/index.js';
import { compareVersions, createChartLoader, parseVersion } from '../charts/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import type { FileChange } from './changes.js';
import { appTree, readReleaseTable, unknownChart, type AppTree } from './overrides.js';
import { EditRefusedError, YamlFileEditor } from './yaml-edit.js';

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
  /** `app` or the chart name. */
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
  const changes: FileChange[] = [];
  const bumped: VersionChange[] = [];
  if (request.appVersion !== undefined) {
    const { change, from, to } = await setVersion(tree, APP_FILES.metadata, 'app_version', (current) =>
      request.appVersion === true ? nextAppVersion(current) : checkAppVersion(request.appVersion as string, current, request.force),
      request.force,
    );
    changes.push(change);
    bumped.push({ what: 'app', file: APP_FILES.metadata, from, to });
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
  for (const [name, version] of [...wanted].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const dir = chartDirs.get(name);
    if (!dir) throw unknownChart(name, [...chartDirs.keys()]);
    const file = join(dir, 'Chart.yaml');
    const { change, from, to } = await setVersion(tree, file, 'version', (current) => (version === undefined ? nextChartVersion(current, name) : checkChartVersion(name, version, current, request.force)), request.force);
    changes.push(change);
    bumped.push({ what: name, file, from, to });
  }
  if (changes.length === 0 && request.allChangedAgainst === undefined) throw new VersionBumpError('nothing to bump: give --app-version, --chart or --all-changed', { exitCode: 2 });
  return { changes, bumped };
}

/** Chart name → chart directory, from the release table (one directory per chart name). */
async function chartDirectories(tree: AppTree): Promise<Map<string, string>> {
  const dirs = new Map<string, string>();
  for (const release of await readReleaseTable(tree)) if (!dirs.has(release.chart)) dirs.set(release.chart, release.chartPath);
  // Library charts no release names directly, found as file:// dependencies, are bumped by name too.
  for (const dir of [...dirs.values()]) {
    const chart = await createChartLoader().load(tree.path(dir)).catch(() => undefined);
    for (const dependency of chart?.dependencies ?? []) {
      const origin = dependency.chart.origin;
      if (dependency.source === 'file' && origin.kind === 'directory' && !dirs.has(dependency.name)) dirs.set(dependency.name, tree.display(origin.dir));
    }
  }
  return dirs;
}

async function setVersion(tree: AppTree, file: string, key: string, next: (current: string) => string, force: boolean | undefined): Promise<{ change: FileChange; from: string; to: string }> {
  const path = tree.path(file);
  if (!existsSync(path)) throw new VersionBumpError(`${file} does not exist`);
  const before = await readFile(path, 'utf8');
  const editor = new YamlFileEditor(before, file);
  const held = editor.lookup([key]);
  if (!held.exists || typeof held.value !== 'string' && typeof held.value !== 'number') {
    throw new EditRefusedError(`${key} is missing or not a scalar`, { location: held.location ?? { file, line: 1, column: 1 } });
  }
  const from = String(held.value);
  const to = next(from);
  editor.set([key], to, { force });
  return { change: { path, file, before, after: editor.text, edits: editor.records }, from, to };
}

function checkAppVersion(version: string, current: string, force: boolean | undefined): string {
  if (!/^\S+$/.test(version)) throw new VersionBumpError(`app version "${version}" must be one word without spaces`, { exitCode: 2 });
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
