/**
 * fluxcd/releases.yaml — the release table, and the dependency graph between
 * releases (Flux `dependsOn`): unknown names and cycles are errors; waves say
 * what can be installed in parallel.
 */
import deepmerge from 'deepmerge';
import { FlotillaError, type Diagnostic, type SourceLocation } from '../diagnostics/index.js';
import { getNode, toPlain, type ValueNode } from '../document/index.js';
import type { ReleaseActionFlags } from '../flux/index.js';
import { checkSchema, type JsonSchema } from './schema-check.js';
import { unknownName, DNS1123_LABEL_PATTERN, FLUX_DEFAULT_INTERVAL, FLUX_DEFAULT_TIMEOUT, FLUX_DURATION_PATTERN, HELM_RELEASE_NAME_MAX } from '../names/index.js';

export type { ReleaseActionFlags };

export interface Release {
  /** HelmRelease name and fluxcd-manifests folder. */
  readonly name: string;
  /** Chart name (Chart.yaml `name`). */
  readonly chart: string;
  /** Chart directory relative to the app root. */
  readonly chartPath: string;
  readonly service?: string;
  readonly group?: string;
  readonly namespace: string;
  readonly releaseName: string;
  readonly dependsOn: readonly string[];
  readonly timeout: string;
  readonly install: ReleaseActionFlags;
  readonly upgrade: ReleaseActionFlags;
  readonly labels: Readonly<Record<string, string>>;
  /** Flux reconcile interval of the HelmRelease. */
  readonly interval: string;
  /** HelmRelease spec fields flotilla does not model, passed through as written (e.g. driftDetection). */
  readonly helmReleaseSpec: Readonly<Record<string, unknown>>;
  /** Where the release is declared. */
  readonly location: SourceLocation;
}

const dns1123Label = DNS1123_LABEL_PATTERN;
const duration: JsonSchema = {
  type: 'string',
  pattern: FLUX_DURATION_PATTERN,
  expected: 'a Flux duration such as 30m, 1h or 90s',
};
// Flux's install/upgrade fields, by name, so a typo is still an error.
const remediationFields = {
  retries: { type: 'integer', minimum: -1 },
  strategy: { enum: ['rollback', 'uninstall'] },
  ignoreTestFailures: { type: 'boolean' },
  remediateLastFailure: { type: 'boolean' },
};
const actionFlagsDefinition: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    disableHooks: { type: 'boolean' },
    disableWait: { type: 'boolean' },
    disableWaitForJobs: { type: 'boolean' },
    disableOpenAPIValidation: { type: 'boolean' },
    disableSchemaValidation: { type: 'boolean' },
    disableTakeOwnership: { type: 'boolean' },
    timeout: duration,
    crds: { enum: ['Skip', 'Create', 'CreateReplace'] },
    createNamespace: { type: 'boolean' },
    replace: { type: 'boolean' },
    force: { type: 'boolean' },
    cleanupOnFail: { type: 'boolean' },
    preserveValues: { type: 'boolean' },
    maxHistory: { type: 'integer', minimum: 0 },
    remediation: { type: 'object', additionalProperties: false, properties: remediationFields },
  },
};
const actionFlags: JsonSchema = { $ref: '#/$defs/actionFlags' };
const releaseFields = {
  chart: { type: 'string', pattern: dns1123Label, expected: 'a chart name (lower-case letters, digits, dashes)' },
  path: { type: 'string', minLength: 1 },
  service: { type: 'string', minLength: 1 },
  group: { type: 'string', minLength: 1 },
  namespace: { type: 'string', pattern: dns1123Label, expected: 'a namespace name (DNS-1123 label)' },
  releaseName: { type: 'string', maxLength: HELM_RELEASE_NAME_MAX, pattern: dns1123Label, expected: 'a Helm release name of at most 53 characters' },
  releaseNamePrefix: { type: 'string' },
  dependsOn: { type: 'array', items: { type: 'string' }, uniqueItems: true },
  timeout: duration,
  install: actionFlags,
  upgrade: actionFlags,
  labels: { type: 'object', additionalProperties: { type: 'string' } },
  interval: duration,
  helmReleaseSpec: {
    type: 'object',
    // These are generated from the fields above; writing them here would fight the generator.
    propertyNames: { not: { enum: ['releaseName', 'chart', 'chartRef', 'dependsOn', 'valuesFrom', 'install', 'upgrade', 'timeout', 'interval'] } },
    expected: 'a map of HelmRelease spec fields flotilla does not generate (not releaseName, chart, dependsOn, valuesFrom, install, upgrade, timeout, interval)',
  },
};

export const releasesSchema: JsonSchema = {
  $id: 'flotilla:releases',
  $defs: { actionFlags: actionFlagsDefinition },
  type: 'object',
  additionalProperties: false,
  required: ['releases'],
  properties: {
    defaults: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(Object.entries(releaseFields).filter(([k]) => !['chart', 'path', 'releaseName', 'dependsOn'].includes(k))),
    },
    releases: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'chart'],
        properties: { name: { type: 'string', pattern: dns1123Label, maxLength: HELM_RELEASE_NAME_MAX, expected: 'a release name (DNS-1123 label)' }, ...releaseFields },
      },
    },
  },
};

interface RawRelease {
  name: string;
  chart: string;
  path?: string;
  service?: string;
  group?: string;
  namespace?: string;
  releaseName?: string;
  releaseNamePrefix?: string;
  dependsOn?: string[];
  timeout?: string;
  install?: Partial<ReleaseActionFlags>;
  upgrade?: Partial<ReleaseActionFlags>;
  labels?: Record<string, string>;
  interval?: string;
  helmReleaseSpec?: Record<string, unknown>;
}

export interface ReleasesResult {
  readonly releases: readonly Release[];
  readonly diagnostics: Diagnostic[];
}

export function readReleases(root: ValueNode | undefined, file: string): ReleasesResult {
  const diagnostics = checkSchema(releasesSchema, root, file);
  if (!root || diagnostics.length > 0) return { releases: [], diagnostics };
  const table = toPlain(root) as unknown as { defaults?: Partial<RawRelease>; releases: RawRelease[] };
  const seen = new Map<string, number>();
  const releases = table.releases.map((entry, index): Release => {
    const raw = deepmerge<RawRelease>(table.defaults ?? {}, entry);
    const location = getNode(root, ['releases', index])?.origin.location ?? { file, line: 0, column: 0 };
    const releaseName = raw.releaseName ?? `${raw.releaseNamePrefix ?? ''}${raw.name}`;
    if (seen.has(raw.name)) {
      diagnostics.push({ severity: 'error', message: `release "${raw.name}" is declared twice (first as releases[${seen.get(raw.name)}])`, path: ['releases', index, 'name'], location });
    }
    seen.set(raw.name, index);
    if (releaseName.length > HELM_RELEASE_NAME_MAX) {
      diagnostics.push({
        severity: 'error',
        message: `releaseName "${releaseName}" is ${releaseName.length} characters; Helm allows at most 53 (set releaseName or a shorter releaseNamePrefix)`,
        path: ['releases', index],
        location,
      });
    }
    const names = new Set(table.releases.map((r) => r.name));
    (raw.dependsOn ?? []).forEach((dep, i) => {
      if (names.has(dep)) return;
      const at = getNode(root, ['releases', index, 'dependsOn', i])?.origin.location ?? location;
      diagnostics.push({ severity: 'error', message: `release "${raw.name}" dependsOn: ${unknownName('release', dep, names)}`, path: ['releases', index, 'dependsOn', i], location: at });
    });
    return {
      name: raw.name,
      chart: raw.chart,
      chartPath: raw.path ?? `charts/${raw.chart}`,
      service: raw.service,
      group: raw.group,
      namespace: raw.namespace ?? 'default',
      releaseName,
      dependsOn: raw.dependsOn ?? [],
      timeout: raw.timeout ?? FLUX_DEFAULT_TIMEOUT,
      install: { disableHooks: false, disableWait: false, ...raw.install },
      upgrade: { disableHooks: false, disableWait: false, ...raw.upgrade },
      labels: raw.labels ?? {},
      interval: raw.interval ?? FLUX_DEFAULT_INTERVAL,
      helmReleaseSpec: raw.helmReleaseSpec ?? {},
      location,
    };
  });
  return { releases, diagnostics };
}

export class DependencyCycleError extends FlotillaError {
  readonly cycle: readonly string[];
  constructor(cycle: readonly string[], location: SourceLocation | undefined) {
    super(`dependency cycle between releases: ${cycle.join(' → ')}`, { location });
    this.cycle = cycle;
  }
}

export class UnknownDependencyError extends FlotillaError {}

export interface ReleaseGraph {
  /** Releases by name. */
  readonly byName: ReadonlyMap<string, Release>;
  /** Waves of releases: each wave depends only on earlier waves, so its members can be installed in parallel. */
  readonly waves: readonly (readonly Release[])[];
  /** Every release a release needs, directly or not. */
  dependenciesOf(name: string): ReadonlySet<string>;
}

/** Builds the graph; throws on an unknown dependency or a cycle (the cycle is printed). */
export function buildReleaseGraph(releases: readonly Release[]): ReleaseGraph {
  const byName = new Map(releases.map((r) => [r.name, r]));
  for (const release of releases) {
    for (const dep of release.dependsOn) {
      if (!byName.has(dep)) {
        throw new UnknownDependencyError(`release "${release.name}" depends on "${dep}", which is not in the release table`, { location: release.location });
      }
    }
  }
  const cycle = findDependencyCycle(releases);
  if (cycle) throw new DependencyCycleError(cycle, byName.get(cycle[0] as string)?.location);

  const depth = new Map<string, number>();
  const depthOf = (name: string): number => {
    const known = depth.get(name);
    if (known !== undefined) return known;
    const deps = byName.get(name)?.dependsOn ?? [];
    const d = deps.length === 0 ? 0 : Math.max(...deps.map(depthOf)) + 1;
    depth.set(name, d);
    return d;
  };
  const waves: Release[][] = [];
  for (const release of releases) (waves[depthOf(release.name)] ??= []).push(release);

  const closure = new Map<string, Set<string>>();
  const dependenciesOf = (name: string): Set<string> => {
    let set = closure.get(name);
    if (set) return set;
    set = new Set<string>();
    for (const dep of byName.get(name)?.dependsOn ?? []) {
      set.add(dep);
      for (const d of dependenciesOf(dep)) set.add(d);
    }
    closure.set(name, set);
    return set;
  };
  return { byName, waves, dependenciesOf };
}

/** A dependency cycle among named items (releases), as the names around it, or undefined. */
export function findDependencyCycle(items: readonly { readonly name: string; readonly dependsOn: readonly string[] }[]): string[] | undefined {
  const byName = new Map(items.map((item) => [item.name, item]));
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): string[] | undefined => {
    const s = state.get(name);
    if (s === 'done') return undefined;
    if (s === 'visiting') return [...stack.slice(stack.indexOf(name)), name];
    state.set(name, 'visiting');
    stack.push(name);
    for (const dep of byName.get(name)?.dependsOn ?? []) {
      const found = visit(dep);
      if (found) return found;
    }
    stack.pop();
    state.set(name, 'done');
    return undefined;
  };
  for (const item of items) {
    const found = visit(item.name);
    if (found) return found;
  }
  return undefined;
}

/** Release fields a `-l KEY=VALUE` selector may name, besides the release's own labels. */
const SELECTABLE_FIELDS = ['name', 'chart', 'service', 'group', 'namespace'] as const;

/**
 * The releases a command works on: the ones named (by release or chart
 * name), those matching every `KEY=VALUE` of a selector (`group=infra`,
 * `service=identity`, or a release label), or, with neither, `all`.
 */
export function selectReleases(releases: readonly Release[], all: readonly Release[], names: readonly string[], selector?: string): Release[] {
  let chosen: readonly Release[] = all;
  if (names.length > 0) {
    chosen = names.map((name) => {
      const byName = releases.find((r) => r.name === name);
      if (byName) return byName;
      const ofChart = releases.filter((r) => r.chart === name);
      if (ofChart.length === 1) return ofChart[0] as Release;
      if (ofChart.length > 1) throw new FlotillaError(`chart "${name}" is used by several releases (${ofChart.map((r) => r.name).join(', ')}); name the release`);
      throw new FlotillaError(unknownName('release', name, releases.map((r) => r.name)));
    });
  }
  if (selector !== undefined) {
    const terms = selector.split(',').map((term) => {
      const m = /^\s*([A-Za-z0-9_./-]+)\s*(!=|==|=)\s*([^,]*?)\s*$/.exec(term);
      if (!m) throw new FlotillaError(`-l ${selector}: expected KEY=VALUE[,KEY=VALUE…] (keys: ${SELECTABLE_FIELDS.join(', ')} or a release label)`, { exitCode: 2 });
      return { key: m[1] as string, negated: m[2] === '!=', value: m[3] as string };
    });
    const valueOf = (r: Release, key: string): string | undefined =>
      (SELECTABLE_FIELDS as readonly string[]).includes(key) ? (r as unknown as Record<string, string | undefined>)[key] : r.labels[key];
    chosen = chosen.filter((r) => terms.every((t) => (valueOf(r, t.key) === t.value) !== t.negated));
  }
  return [...chosen];
}
