/**
 * A Helm repository index.yaml for packaged charts. Deterministic: charts by
 * name, versions newest first (as Helm sorts them), keys in Helm's order
 * (alphabetical, as Helm's JSON-to-YAML marshalling emits them), and the
 * creation time supplied by the caller instead of read from the clock.
 * Matches `helm repo index` field for field, except that `type` is always
 * written (Helm omits it when Chart.yaml does; readers default to application).
 * {@link mergeRepoIndex} adds charts to an existing index, keeping every
 * other entry as it was (`helm repo index --merge`), and refuses a version
 * that is already there with other content.
 */
import { stringify } from 'yaml';
import { FlotillaError } from '../diagnostics/index.js';
import { compareBytewise } from '../tarball/index.js';
import { parseYamlValue } from '../yaml/index.js';
import type { PackagedChart } from './package.js';
import { compareVersions, parseVersion } from './semver.js';
import type { ChartDependency } from './types.js';

/** What an index entry is made from: a packaged chart or an archive read back. */
export type IndexedChart = Pick<PackagedChart, 'name' | 'version' | 'fileName' | 'sha256' | 'metadata'>;

export interface RepoIndexOptions {
  /** RFC 3339 time written as `created` of every entry and `generated`. */
  readonly created: string;
  /** Base URL of the chart files; entries' urls become `<prefix>/<file>` (else just the file name). */
  readonly urlPrefix?: string;
}

function sortedObject(entries: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries.filter(([, v]) => v !== undefined).sort(([a], [b]) => compareBytewise(a, b))) out[k] = v;
  return out;
}

function dependencyEntry(d: ChartDependency): Record<string, unknown> {
  return sortedObject([
    ['name', d.name],
    ['version', d.version],
    ['repository', d.repository ?? ''],
    ['condition', d.condition],
    ['tags', d.tags],
    ['alias', d.alias],
    ['import-values', d.importValues],
  ]);
}

function indexEntry(c: IndexedChart, created: string, prefix: string | undefined): Record<string, unknown> {
  const m = c.metadata;
  return sortedObject([
    ['apiVersion', m.apiVersion],
    ['name', c.name],
    ['version', c.version],
    ['appVersion', m.appVersion],
    ['description', m.description],
    ['type', m.type],
    ['kubeVersion', m.kubeVersion],
    ['home', m.home],
    ['icon', m.icon],
    ['sources', m.sources],
    ['keywords', m.keywords],
    ['maintainers', m.maintainers?.map((x) => sortedObject(Object.entries(x)))],
    ['annotations', m.annotations && sortedObject(Object.entries(m.annotations))],
    ['deprecated', m.deprecated || undefined],
    ['dependencies', m.dependencies.length > 0 ? m.dependencies.map(dependencyEntry) : undefined],
    ['digest', c.sha256],
    ['urls', [prefix === undefined ? c.fileName : `${prefix}/${c.fileName}`]],
    ['created', created],
  ]);
}

function checkCreated(created: string): void {
  if (Number.isNaN(Date.parse(created))) throw new FlotillaError(`repository index: created ${JSON.stringify(created)} is not a date-time`);
}

/** Newest first, as Helm sorts an index; versions that are not semver last, byte-wise. */
function byVersionDescending(a: string, b: string): number {
  const va = parseVersion(a);
  const vb = parseVersion(b);
  if (va && vb) return compareVersions(vb, va) || compareBytewise(b, a);
  if (va || vb) return va ? -1 : 1;
  return compareBytewise(b, a);
}

function renderIndex(entries: Map<string, Record<string, unknown>[]>, generated: string): string {
  const out: Record<string, unknown> = {};
  for (const name of [...entries.keys()].sort(compareBytewise)) {
    out[name] = entries.get(name)!.sort((a, b) => byVersionDescending(String(a.version), String(b.version)));
  }
  return stringify({ apiVersion: 'v1', entries: out, generated }, { lineWidth: 0 });
}

export function buildRepoIndex(charts: readonly IndexedChart[], options: RepoIndexOptions): string {
  checkCreated(options.created);
  const prefix = options.urlPrefix?.replace(/\/+$/, '');
  const entries = new Map<string, Record<string, unknown>[]>();
  for (const chart of charts) {
    const list = entries.get(chart.name) ?? [];
    if (list.some((e) => e.version === chart.version)) {
      throw new FlotillaError(`repository index: chart ${chart.name} version ${chart.version} is listed twice`);
    }
    list.push(indexEntry(chart, options.created, prefix));
    entries.set(chart.name, list);
  }
  return renderIndex(entries, options.created);
}

/** A chart version already in the repository with other content: versions are immutable. */
export class ChartVersionConflictError extends FlotillaError {
  readonly chart: string;
  readonly version: string;
  readonly existingDigest: string;
  readonly newDigest: string;

  constructor(where: string, chart: string, version: string, existingDigest: string, newDigest: string) {
    super(
      `${where}: chart ${chart} version ${version} is already published with different content (existing ${existingDigest}, new ${newDigest}); a published version never changes: bump the chart version`,
    );
    this.chart = chart;
    this.version = version;
    this.existingDigest = existingDigest;
    this.newDigest = newDigest;
  }
}

export interface MergedRepoIndex {
  /** The new index.yaml text (the existing text unchanged when nothing was added). */
  readonly text: string;
  /** Charts added to the index. */
  readonly added: readonly IndexedChart[];
  /** Charts already listed with the same digest. */
  readonly unchanged: readonly IndexedChart[];
}

/**
 * Adds `charts` to an existing index.yaml (`existing` undefined: a new one).
 * Other charts and versions are kept as they were; a version listed with
 * the same digest is left alone; one listed with another digest is refused.
 * `where` names the index in errors.
 */
export function mergeRepoIndex(existing: string | undefined, charts: readonly IndexedChart[], options: RepoIndexOptions & { where: string }): MergedRepoIndex {
  checkCreated(options.created);
  const prefix = options.urlPrefix?.replace(/\/+$/, '');
  const entries = new Map<string, Record<string, unknown>[]>();
  if (existing !== undefined) {
    const doc = parseYamlValue(existing, options.where);
    const index = (doc ?? {}) as { apiVersion?: unknown; entries?: unknown };
    if (typeof doc !== 'object' || index.apiVersion !== 'v1') throw new FlotillaError(`${options.where}: not a Helm repository index (expected apiVersion: v1)`);
    const listed = index.entries ?? {};
    if (typeof listed !== 'object' || listed === null || Array.isArray(listed)) throw new FlotillaError(`${options.where}: entries must be a map of chart names to lists`);
    for (const [name, versions] of Object.entries(listed as Record<string, unknown>)) {
      if (!Array.isArray(versions) || versions.some((v) => typeof v !== 'object' || v === null || typeof (v as { version?: unknown }).version !== 'string')) {
        throw new FlotillaError(`${options.where}: entries.${name} must be a list of chart versions, each with a version`);
      }
      entries.set(name, versions as Record<string, unknown>[]);
    }
  }
  const added: IndexedChart[] = [];
  const unchanged: IndexedChart[] = [];
  for (const chart of charts) {
    const list = entries.get(chart.name) ?? [];
    const present = list.find((e) => e.version === chart.version);
    if (present) {
      if (present.digest !== chart.sha256) throw new ChartVersionConflictError(options.where, chart.name, chart.version, `sha256:${String(present.digest)}`, `sha256:${chart.sha256}`);
      unchanged.push(chart);
      continue;
    }
    list.push(indexEntry(chart, options.created, prefix));
    entries.set(chart.name, list);
    added.push(chart);
  }
  const text = existing !== undefined && added.length === 0 ? existing : renderIndex(entries, options.created);
  return { text, added, unchanged };
}
