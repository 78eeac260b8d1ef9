/**
 * A Helm repository index.yaml for packaged charts. Deterministic: charts by
 * name, versions newest first (as Helm sorts them), keys in Helm's order
 * (alphabetical, as Helm's JSON-to-YAML marshalling emits them), and the
 * creation time supplied by the caller instead of read from the clock.
 * Matches `helm repo index` field for field, except that `type` is always
 * written (Helm omits it when Chart.yaml does; readers default to application).
 */
import { stringify } from 'yaml';
import { FlotillaError } from '../diagnostics/index.js';
import { compareBytewise } from '../bundle/index.js';
import type { PackagedChart } from './package.js';
import { compareVersions, parseVersion } from './semver.js';
import type { ChartDependency } from './types.js';

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

export function buildRepoIndex(charts: readonly PackagedChart[], options: RepoIndexOptions): string {
  if (Number.isNaN(Date.parse(options.created))) throw new FlotillaError(`repository index: created ${JSON.stringify(options.created)} is not a date-time`);
  const prefix = options.urlPrefix?.replace(/\/+$/, '');
  const byName = new Map<string, PackagedChart[]>();
  for (const chart of charts) {
    const list = byName.get(chart.name) ?? [];
    if (list.some((c) => c.version === chart.version)) {
      throw new FlotillaError(`repository index: chart ${chart.name} version ${chart.version} is listed twice`);
    }
    list.push(chart);
    byName.set(chart.name, list);
  }
  const entries: Record<string, unknown> = {};
  for (const name of [...byName.keys()].sort(compareBytewise)) {
    const versions = byName.get(name)!.sort((a, b) => compareVersions(parseVersion(b.version)!, parseVersion(a.version)!) || compareBytewise(b.version, a.version));
    entries[name] = versions.map((c) => {
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
        ['created', options.created],
      ]);
    });
  }
  return stringify({ apiVersion: 'v1', entries, generated: options.created }, { lineWidth: 0 });
}
