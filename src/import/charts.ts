/**
 * Charts of the imported app: found in chart folders (`--charts DIR`, or the
 * source's `charts/`) as source folders or `<chart>-<version>.tgz` archives,
 * read with the charts module (archives through the bundle module's safe tar
 * reader), and laid out as flotilla chart sources under charts/<chart>/.
 *
 * Layout written for one chart:
 * - its own files, as Helm takes them (after .helmignore);
 * - a `file://../<name>` dependency on a sibling folder of the same chart
 *   folder (openstack-helm's helm-toolkit) becomes the sibling charts/<name>/,
 *   so the chart's Chart.yaml keeps working unchanged;
 * - any other dependency is vendored as charts/<chart>/charts/<dep>-<version>.tgz,
 *   as `helm dependency build` would leave it.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { compareBytewise, writeTarGz } from '../tarball/index.js';
import { chartTree, loadChart, loadChartArchive, parseChartYaml, type ChartSource } from '../charts/index.js';
import type { SourceLocation } from '../diagnostics/index.js';
import type { Problems } from './errors.js';
import type { FileSource } from '../files/index.js';
import type { ImportedChart } from './types.js';

/** A place charts are looked for. */
export type ChartPlace =
  { readonly kind: 'disk'; readonly dir: string; readonly explicit: boolean } | { readonly kind: 'tarball'; readonly source: FileSource; readonly dir: string };

/** What the releases ask of one chart. */
export interface ChartNeed {
  readonly chart: string;
  readonly requests: readonly { readonly release: string; readonly version?: string; readonly at: SourceLocation }[];
}

interface Candidate {
  readonly name: string;
  readonly version: string;
  readonly from: string;
  readonly kind: 'directory' | 'archive';
  load(): Promise<ChartSource>;
}

const ARCHIVE = /\.(tgz|tar\.gz)$/;

function placeLabel(place: ChartPlace): string {
  return place.kind === 'disk' ? place.dir : `${place.source.path}#${place.dir}`;
}

async function candidatesIn(place: ChartPlace, wanted: ReadonlySet<string>, problems: Problems): Promise<Candidate[]> {
  const out: Candidate[] = [];
  const prefixMatch = (file: string) => [...wanted].some((chart) => file.startsWith(`${chart}-`));
  if (place.kind === 'tarball') {
    for (const entry of place.source.list(place.dir)) {
      if (entry.kind !== 'file' || !ARCHIVE.test(entry.name) || !prefixMatch(entry.name)) continue;
      const label = `${basename(place.source.path)}#${place.dir}/${entry.name}`;
      const bytes = place.source.read(`${place.dir}/${entry.name}`) as Buffer;
      try {
        const chart = await loadChartArchive(bytes, label);
        out.push({ name: chart.name, version: chart.version, from: label, kind: 'archive', load: async () => chart });
      } catch (error) {
        problems.fromError(error, `chart archive ${label}`);
      }
    }
    return out;
  }
  const info = await stat(place.dir).catch(() => undefined);
  if (!info?.isDirectory()) {
    if (place.explicit) problems.error(`chart folder ${place.dir} does not exist`);
    return out;
  }
  for (const name of (await readdir(place.dir)).sort(compareBytewise)) {
    const path = join(place.dir, name);
    const entry = await stat(path).catch(() => undefined);
    if (entry?.isDirectory()) {
      const chartYaml = join(path, 'Chart.yaml');
      const text = await readFile(chartYaml, 'utf8').catch(() => undefined);
      if (text === undefined) continue;
      try {
        const meta = parseChartYaml(text, chartYaml);
        out.push({ name: meta.name, version: meta.version, from: path, kind: 'directory', load: () => loadChart(path) });
      } catch (error) {
        // A broken chart nobody asked for is not the import's business; one that may be asked for is.
        if (wanted.has(name)) problems.fromError(error, `chart folder ${path}`);
      }
    } else if (entry?.isFile() && ARCHIVE.test(name) && prefixMatch(name)) {
      try {
        const chart = await loadChart(path);
        out.push({ name: chart.name, version: chart.version, from: path, kind: 'archive', load: async () => chart });
      } catch (error) {
        problems.fromError(error, `chart archive ${path}`);
      }
    }
  }
  return out;
}

/** Finds and loads the chart of every need; problems name the HelmRelease line that asks for the chart. */
export async function findCharts(needs: readonly ChartNeed[], places: readonly ChartPlace[], problems: Problems): Promise<Map<string, ImportedChart>> {
  const wanted = new Set(needs.map((n) => n.chart));
  const candidates: Candidate[] = [];
  for (const place of places) candidates.push(...(await candidatesIn(place, wanted, problems)));
  const where = places.map(placeLabel).join(', ');
  const found = new Map<string, ImportedChart>();

  for (const need of needs) {
    const versions = [...new Set(need.requests.map((r) => r.version).filter((v): v is string => v !== undefined))];
    const first = need.requests[0]!;
    if (versions.length > 1) {
      const second = need.requests.find((r) => r.version !== undefined && r.version !== versions[0])!;
      problems.error(`releases ask for chart ${need.chart} in versions ${versions.join(' and ')}; flotilla ships one version of each chart`, second.at);
      continue;
    }
    const requested = versions[0];
    const asking = need.requests.find((r) => r.version === requested) ?? first;
    const ofName = candidates.filter((c) => c.name === need.chart);
    const matching = requested === undefined ? ofName : ofName.filter((c) => c.version === requested);
    const list = (cs: readonly Candidate[]) => cs.map((c) => `${c.from} (${c.version})`).join(', ');
    if (ofName.length === 0) {
      problems.error(
        `chart ${need.chart} (release ${need.requests.map((r) => r.release).join(', ')}) not found in ${where}: expected a folder whose Chart.yaml names it, or ${need.chart}-<version>.tgz`,
        asking.at,
      );
      continue;
    }
    if (matching.length === 0) {
      problems.error(`release ${asking.release} asks for chart ${need.chart} version ${requested}, but only ${list(ofName)} was found`, asking.at);
      continue;
    }
    if (matching.length > 1) {
      problems.error(
        `chart ${need.chart} is found ${matching.length} times (${list(matching)}); keep one, or pass only the folder to use with --charts`,
        asking.at,
      );
      continue;
    }
    const pick = matching[0]!;
    try {
      const chart = await pick.load();
      found.set(need.chart, { name: chart.name, version: chart.version, from: pick.from, kind: pick.kind, chart });
    } catch (error) {
      problems.fromError(error, `chart ${need.chart} (${pick.from})`);
    }
  }
  return found;
}

/** Every chart folder and archive a chart was read from, its dependencies included. */
function origins(chart: ChartSource, out: Set<string> = new Set()): Set<string> {
  out.add(chart.origin.kind === 'directory' ? resolve(chart.origin.dir) : chart.origin.file);
  for (const dep of chart.dependencies) origins(dep.chart, out);
  return out;
}

/**
 * Charts shipped with the app itself (its charts/ folder or the tarball's)
 * that no release uses, directly or as a dependency: not imported, and said so.
 */
export async function unusedCharts(places: readonly ChartPlace[], charts: Iterable<ImportedChart>): Promise<string[]> {
  const used = new Set<string>();
  for (const c of charts) origins(c.chart, used);
  const out: string[] = [];
  for (const place of places) {
    if (place.kind === 'disk' && place.explicit) continue;
    if (place.kind === 'tarball') {
      for (const entry of place.source.list(place.dir)) {
        const label = `${basename(place.source.path)}#${place.dir}/${entry.name}`;
        if (entry.kind === 'file' && ARCHIVE.test(entry.name) && !used.has(label)) out.push(`${place.dir}/${entry.name}`);
      }
      continue;
    }
    for (const name of (await readdir(place.dir).catch(() => [] as string[])).sort(compareBytewise)) {
      const path = resolve(place.dir, name);
      const info = await stat(path).catch(() => undefined);
      const isChart = info?.isDirectory()
        ? await stat(join(path, 'Chart.yaml')).then(
            () => true,
            () => false,
          )
        : info?.isFile() && ARCHIVE.test(name);
      if (isChart && !used.has(path)) out.push(path);
    }
  }
  return out;
}

/** Files of a chart archive for `dep`: its tree under one top folder, in Helm's order. */
function packDependency(dep: ChartSource): Buffer {
  const entries = chartTree(dep).map((f) => ({ path: `${dep.name}/${f.path}`, data: f.data }));
  return writeTarGz(entries, { order: 'given', label: `${dep.name}-${dep.version}.tgz` });
}

const SIBLING = /^file:\/\/\.\.\/([^/\\]+)\/?$/;

/**
 * The files of the imported charts, by path relative to the app root, plus
 * the sibling library folders written for file:// dependencies.
 */
export function chartOutputFiles(charts: readonly ImportedChart[]): { files: Map<string, Buffer>; libraries: string[] } {
  const files = new Map<string, Buffer>();
  /** charts/<folder> → what it holds (a real source path), so two different charts never share a folder. */
  const claims = new Map<string, string>();
  const libraries: string[] = [];
  const originKey = (c: ChartSource) => (c.origin.kind === 'directory' ? resolve(c.origin.dir) : `${c.origin.file}#${c.origin.member ?? ''}`);
  for (const c of charts) claims.set(c.name, originKey(c.chart));

  const write = (folder: string, chart: ChartSource): void => {
    for (const file of chart.files) files.set(`charts/${folder}/${file.path}`, file.data);
    for (const dep of chart.dependencies) {
      const repository = dep.declared[0]?.repository ?? '';
      const sibling =
        dep.source === 'file' && chart.origin.kind === 'directory' && dep.chart.origin.kind === 'directory' ? SIBLING.exec(repository)?.[1] : undefined;
      if (sibling !== undefined && chart.origin.kind === 'directory' && dep.chart.origin.kind === 'directory') {
        const siblingDir = resolve(chart.origin.dir, '..', sibling);
        // Only a true sibling (same parent) keeps working at charts/<sibling>/.
        if (dirname(siblingDir) === dirname(resolve(chart.origin.dir)) && relative(siblingDir, resolve(dep.chart.origin.dir)) === '') {
          const key = originKey(dep.chart);
          const claimed = claims.get(sibling);
          if (claimed === key) continue; // already written (or being written) there
          if (claimed === undefined) {
            claims.set(sibling, key);
            libraries.push(sibling);
            write(sibling, dep.chart);
            continue;
          }
        }
      }
      files.set(`charts/${folder}/charts/${dep.name}-${dep.chart.version}.tgz`, packDependency(dep.chart));
    }
  };
  for (const c of charts) write(c.name, c.chart);
  return { files, libraries: libraries.sort(compareBytewise) };
}

/** A comparable fingerprint of what Helm would package for a chart: every path and its bytes. */
export function chartFingerprint(chart: ChartSource): Map<string, string> {
  return new Map(chartTree(chart).map((f) => [f.path, f.data.toString('base64')]));
}
