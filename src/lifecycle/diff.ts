/**
 * `flotilla diff APP [BUNDLE]`: what an apply (or an update to BUNDLE)
 * would change, per release — the values Flux would be given (static then
 * system overrides) against the ones in the cluster's overrides Secrets, and
 * the objects the real `helm template` renders from each side. Nothing is
 * written: plugins run with read-only stores. Secret data in rendered
 * objects and every password a plugin handed out are redacted.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import type { Release } from '../app/index.js';
import { mapConcurrently } from '../concurrency/index.js';
import { dumpYaml, parseYamlStream, parseYamlValue, type PlainValue } from '../yaml/index.js';
import { mergePlain } from '../values/index.js';
import { overridesSecretName, overridesValuesKey, type OverridesKind } from '../flux/index.js';
import type { KubeObject } from '../kube/index.js';
import type { Cluster } from './cluster.js';
import { helm } from '../tools/index.js';
import { makeTempDir, removeTempDir } from '../files/index.js';
import { readClusterConfig } from './config.js';
import { chartArchives } from '../tarball/index.js';
import { readChartArchive } from '../charts/index.js';
import { planApply } from './plan.js';
import { AppRecords, type ChartRepository } from './record.js';
import { fetchBundle, verifyForUpload } from './upload.js';
import { LifecycleError } from './errors.js';
import { loadVersion, loadVersionFrom, type LoadedVersion } from './version.js';

export interface ValueChange {
  /** Dotted path (`conf.keystone.DEFAULT.debug`). */
  readonly path: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

export interface ObjectChange {
  readonly change: 'added' | 'removed' | 'changed';
  /** `Kind namespace/name`. */
  readonly object: string;
  /** Unified diff of the object's YAML (Secret data redacted). */
  readonly diff: string;
}

export interface ReleaseDiff {
  readonly name: string;
  readonly namespace: string;
  readonly change: 'added' | 'removed' | 'changed' | 'unchanged';
  readonly values: readonly ValueChange[];
  readonly objects: readonly ObjectChange[];
}

export interface DiffReport {
  readonly app: string;
  readonly from: string;
  readonly to: string;
  readonly releases: readonly ReleaseDiff[];
  readonly changed: boolean;
}

export interface DiffOptions {
  /** A tarball of another version: what an update to it would change. */
  readonly bundle?: string;
  readonly concurrency?: number;
  /** Print secrets (values under secret keys, plugins' passwords, Secret data) as they are: `--show-secrets`. */
  readonly showSecrets?: boolean;
}

type Plain = { [key: string]: unknown };

/** What Flux gives Helm: static overrides, then system overrides on top (lists replaced). */
export function fluxValues(staticValues: unknown, systemValues: unknown): Plain {
  const asMap = (v: unknown): Plain => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Plain) : {});
  return mergePlain(asMap(staticValues) as PlainValue, asMap(systemValues) as PlainValue) as Plain;
}

/** Leaves by dotted path; a list is one leaf (Helm replaces lists whole). */
function leavesOf(value: unknown, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0) {
    for (const [key, child] of Object.entries(value as Plain)) leavesOf(child, prefix ? `${prefix}.${key}` : key, out);
  } else if (prefix) out.set(prefix, value);
  return out;
}

function valueChanges(before: unknown, after: unknown): ValueChange[] {
  const a = leavesOf(before);
  const b = leavesOf(after);
  const changes: ValueChange[] = [];
  for (const path of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const x = a.get(path);
    const y = b.get(path);
    if (!a.has(path)) changes.push({ path, after: y });
    else if (!b.has(path)) changes.push({ path, before: x });
    else if (JSON.stringify(x) !== JSON.stringify(y)) changes.push({ path, before: x, after: y });
  }
  return changes;
}

interface RenderedObject {
  readonly key: string;
  readonly object: Plain;
}

function parseRendered(text: string): Map<string, RenderedObject> {
  const objects = new Map<string, RenderedObject>();
  for (const doc of parseYamlStream(text, 'helm template output')) {
    if (doc === null || typeof doc !== 'object') continue;
    const o = doc as { kind?: string; metadata?: { name?: string; namespace?: string } };
    const key = `${o.kind ?? '?'} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name ?? '?'}`;
    objects.set(key, { key, object: doc as Plain });
  }
  return objects;
}

/** Secret data shown as `***`, or `*** (changed)` where the other side's value differs. */
function maskSecret(object: Plain, other: Plain | undefined): Plain {
  if (object.kind !== 'Secret') return object;
  const mask = (field: 'data' | 'stringData') => {
    const values = object[field] as Record<string, unknown> | undefined;
    if (!values) return undefined;
    const others = other?.[field] as Record<string, unknown> | undefined;
    return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, others && k in others && others[k] !== v ? '*** (changed)' : '***']));
  };
  const data = mask('data');
  const stringData = mask('stringData');
  return { ...object, ...(data ? { data } : {}), ...(stringData ? { stringData } : {}) };
}

/** The objects that differ, each as a unified diff; secrets redacted by `redact` (none when it is absent: `--show-secrets`). */
function objectChanges(before: Map<string, RenderedObject>, after: Map<string, RenderedObject>, redact: (<T>(v: T) => T) | undefined): ObjectChange[] {
  const changes: ObjectChange[] = [];
  const shown = (object: Plain, other: Plain | undefined) => dumpYaml(redact ? redact(maskSecret(object, other)) : object);
  for (const key of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const x = before.get(key)?.object;
    const y = after.get(key)?.object;
    const left = x ? shown(x, undefined) : '';
    const right = y ? shown(y, x) : '';
    if (left === right) continue;
    changes.push({
      change: !x ? 'added' : !y ? 'removed' : 'changed',
      object: key,
      diff: createTwoFilesPatch(`${key} (cluster)`, `${key} (apply)`, left, right, undefined, undefined, { context: 3 }),
    });
  }
  return changes;
}

/** Where `helm template` takes a chart from: a file, or the chart repository. */
export type ChartSource = { readonly file: string } | { readonly repository: ChartRepository; readonly name: string; readonly version: string };

/** Chart archives pulled from the chart repository, once per chart version for the whole diff. */
export function chartPuller(work: string): (chart: ChartSource) => Promise<string> {
  const pulled = new Map<string, Promise<string>>();
  return (chart) => {
    if ('file' in chart) return Promise.resolve(chart.file);
    const key = `${chart.name}@${chart.version}`;
    let file = pulled.get(key);
    if (!file) {
      const dir = join(work, 'charts', key);
      const source =
        chart.repository.type === 'oci'
          ? [`${chart.repository.url}/${chart.name}`, ...(chart.repository.plainHttp ? ['--plain-http'] : [])]
          : [chart.name, '--repo', chart.repository.url];
      file = mkdir(dir, { recursive: true })
        .then(() => helm(['pull', ...source, '--version', chart.version, '--destination', dir]))
        .then(() => join(dir, `${chart.name}-${chart.version}.tgz`));
      pulled.set(key, file);
    }
    return file;
  };
}

/** Renders with the values handed to helm on its standard input: they hold secrets, and never touch the disk. */
export async function render(
  release: Pick<Release, 'releaseName' | 'namespace' | 'name'>,
  chartFile: string,
  values: Plain,
): Promise<Map<string, RenderedObject>> {
  const { stdout } = await helm(['template', release.releaseName, chartFile, '--namespace', release.namespace, '-f', '-'], { input: dumpYaml(values) });
  return parseRendered(stdout);
}

/** The values the cluster's overrides Secrets give a release now, or undefined when it has none. */
async function clusterValues(cluster: Cluster, release: Pick<Release, 'name' | 'namespace'>): Promise<Plain | undefined> {
  const read = async (kind: OverridesKind) => {
    const name = overridesSecretName(release.name, kind);
    const secret = await cluster.objects.read<KubeObject & { data?: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: release.namespace },
    });
    const data = secret?.data?.[overridesValuesKey(release.name, kind)];
    return secret ? (data ? parseYamlValue(Buffer.from(data, 'base64').toString('utf8'), `Secret ${release.namespace}/${name}`) : {}) : undefined;
  };
  const staticValues = await read('static');
  const systemValues = await read('system');
  if (staticValues === undefined && systemValues === undefined) return undefined;
  return fluxValues(staticValues, systemValues);
}

export async function diffApp(cluster: Cluster, appName: string, options: DiffOptions = {}): Promise<DiffReport> {
  const { record } = await new AppRecords(cluster.records).get(appName);
  const current = record.bundle;
  const loadOptions = {
    events: () => undefined,
    userOverrides: record.userOverrides,
    readOnly: true,
    ...(record.mode ? { applyMode: record.mode } : {}),
    ...(record.versions ? { versions: record.versions } : {}),
  };
  let loaded: LoadedVersion;
  let chartFiles: ReadonlyMap<string, Buffer> | undefined;
  let target = current.version;
  if (options.bundle) {
    const fetched = await fetchBundle(options.bundle);
    const verified = await verifyForUpload(fetched.path, await readClusterConfig(cluster.settings)).finally(() => fetched.dispose());
    chartFiles = new Map(
      await Promise.all(
        chartArchives(verified.bundle.files).map(async ([path, bytes]) => [(await readChartArchive(bytes, { label: path })).name, bytes] as const),
      ),
    );
    const userOverrides = verified.metadata.maintainUserOverrides ? record.userOverrides : {};
    loaded = await loadVersionFrom(cluster, verified.bundle, appName, { ...loadOptions, userOverrides });
    target = verified.metadata.appVersion;
  } else {
    loaded = await loadVersion(cluster, current, appName, loadOptions);
  }
  const work = await makeTempDir('diff');
  try {
    const plan = await planApply(loaded.host, { ...(record.mode ? { mode: record.mode } : {}), deployed: record.deployed });
    const redact = <T>(value: T, at?: readonly string[]): T => (options.showSecrets ? value : loaded.host.redact(value, at));
    const byName = new Map(loaded.app.releases.map((r) => [r.name, r]));
    const pull = chartPuller(work);
    const deployedNow = new Map(current.releases.map((r) => [r.name, r]));
    const wanted = plan.releases.map((r) => byName.get(r.name) as Release);
    const releases = await mapConcurrently(wanted, options.concurrency ?? 3, async (release): Promise<ReleaseDiff> => {
      const values = await loaded.values(release);
      const after = fluxValues(values.staticOverrides, values.systemOverrides);
      const before = record.deployed.includes(release.name) ? await clusterValues(cluster, release) : undefined;
      const newChart: ChartSource = chartFiles
        ? await writeChart(work, release.chart, chartFiles)
        : { repository: current.repository, name: release.chart, version: current.releases.find((r) => r.name === release.name)?.chartVersion ?? '' };
      const side = target === current.version ? 'what apply would write' : `version ${target}`;
      const renderedAfter = await sideOf(release, side, async () => render(release, await pull(newChart), after));
      const old = deployedNow.get(release.name);
      const renderedBefore =
        before && old
          ? await sideOf(release, `what the cluster has (version ${current.version})`, async () =>
              render(release, await pull({ repository: current.repository, name: old.chart, version: old.chartVersion }), before),
            )
          : new Map<string, RenderedObject>();
      const valueDiff = valueChanges(before ?? {}, after).map(({ path, ...sides }) => ({ path, ...redact(sides, path.split('.')) }));
      const objects = objectChanges(renderedBefore, renderedAfter, options.showSecrets ? undefined : redact);
      return {
        name: release.name,
        namespace: release.namespace,
        change: before === undefined ? 'added' : valueDiff.length + objects.length > 0 ? 'changed' : 'unchanged',
        values: valueDiff,
        objects,
      };
    });
    for (const name of [...record.deployed].filter((n) => !plan.releases.some((r) => r.name === n)).sort()) {
      const old = deployedNow.get(name);
      releases.push({ name, namespace: old?.namespace ?? loaded.namespace, change: 'removed', values: [], objects: [] });
    }
    return { app: appName, from: current.version, to: target, releases, changed: target !== current.version || releases.some((r) => r.change !== 'unchanged') };
  } finally {
    await removeTempDir(work);
    await loaded.dispose();
  }
}

/** One side of a release's diff rendered; a failure says which release and which side (the cluster's, or what would be written). */
async function sideOf<T>(release: Pick<Release, 'name'>, side: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new LifecycleError(`release ${release.name}: rendering ${side} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

async function writeChart(work: string, chart: string, files: ReadonlyMap<string, Buffer>): Promise<ChartSource> {
  const bytes = files.get(chart);
  if (!bytes) throw new LifecycleError(`the tarball has no archive of chart ${chart}`);
  const file = join(work, `${chart}.tgz`);
  await writeFile(file, bytes);
  return { file };
}
