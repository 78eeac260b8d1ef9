/**
 * Mapping a StarlingX HelmRelease to a flotilla release entry. Every field of
 * the HelmRelease is either modelled by the release table (releaseName, chart,
 * interval, timeout, install/upgrade, dependsOn, labels, annotations), checked
 * to be what flotilla generates (valuesFrom, sourceRef), or passed through
 * untouched (`helmReleaseSpec`, chart.metadata and chart.spec fields included);
 * the whole object is checked against flotilla's schema of the Flux API first.
 * Nothing is dropped silently.
 */
import { checkSchema, type ReleaseActionFlags, type ReleaseDependency } from '../app/index.js';
import type { SourceLocation } from '../diagnostics/index.js';
import { deepEqual, getNode, toPlain, type MapNode, type PlainValue, type ValueNode } from '../yaml/index.js';
import type { Problems } from './errors.js';
import { VERSION_PLACEHOLDER, type ImportedRelease, type StxReleaseFolder } from './types.js';
import { asMap, asString, locationOf, shown } from './yaml-read.js';
import { FLUX_DEFAULT_INTERVAL, FLUX_DEFAULT_TIMEOUT, HELM_RELEASE_NAME_MAX, isFluxDuration, isHelmReleaseName, isLabelCharacters } from '../names/index.js';
import { helmReleaseSchema, overridesValuesFrom, overridesValuesKey } from '../flux/index.js';

export interface MappingContext {
  /** Namespace of the top kustomization. */
  readonly namespace: string;
  /** Name of the app's HelmRepository. */
  readonly repository: string;
  /** Every release folder of the app. */
  readonly releaseNames: ReadonlySet<string>;
  /** The namespace each release folder deploys to. */
  readonly namespaces: ReadonlyMap<string, string>;
}

/** Paths the mapping below checks with messages of its own; the schema speaks for the rest (install, upgrade, pass-through fields). */
const MAPPED = [
  'apiVersion',
  'kind',
  'metadata',
  'status',
  'spec.chart',
  'spec.chartRef',
  'spec.releaseName',
  'spec.interval',
  'spec.timeout',
  'spec.valuesFrom',
  'spec.values',
];

/** Problems of the whole HelmRelease against flotilla's schema of the Flux API, except where the mapping says more. */
function schemaProblems(hr: MapNode, file: string, problems: Problems): void {
  const mapped = (path: readonly (string | number)[] | undefined) => MAPPED.some((m) => (path ?? []).join('.').startsWith(m));
  problems.add(
    checkSchema(helmReleaseSchema, hr, file).filter((d) => !mapped(d.path) && d.path?.length !== 1 && !(d.path?.[0] === 'spec' && d.path.length === 1)),
  );
}

type Plain = Record<string, unknown>;

function isPlainMap(value: unknown): value is Plain {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Maps one release folder's HelmRelease, in steps: the top-level keys, the
 * metadata, the spec (read, nothing changed), Flux's defaults made explicit,
 * and last the original as the generator must reproduce it.
 */
export function mapHelmRelease(folder: StxReleaseFolder, ctx: MappingContext, problems: Problems): ImportedRelease | undefined {
  const hr = folder.helmRelease.root;
  const start: SourceLocation = { file: folder.helmRelease.file, line: 1, column: 1 };
  const before = problems.errors.length;
  const name = folder.folder;
  const namespace = folder.namespace ?? ctx.namespace;

  schemaProblems(hr, folder.helmRelease.file, problems);
  checkTopLevelKeys(hr, problems);
  const metadata = readReleaseMetadata(hr, name, namespace, start, problems);
  const specNode = asMap(getNode(hr, ['spec']));
  if (!specNode) {
    problems.error('spec is missing', start, ['spec']);
    return undefined;
  }
  const spec = readSpec(specNode, name, namespace, ctx, problems);
  const filled = fillFluxDefaults(specNode, spec, name, problems);
  if (filled.length > 0) problems.warn(`Flux defaults written explicitly (same behaviour): ${filled.join(', ')}`, start);

  const { chart, releaseName, interval, timeout } = spec;
  if (problems.errors.length > before || !chart || !releaseName || !interval || !timeout) return undefined;
  return {
    name,
    chart,
    ...(spec.requestedVersion !== undefined ? { requestedVersion: spec.requestedVersion } : {}),
    requestedVersionAt: spec.requestedVersionAt,
    service: name,
    ...(metadata.group !== undefined ? { group: metadata.group } : {}),
    namespace,
    releaseName,
    dependsOn: spec.dependencies.filter((d) => !d.external).map((d) => d.name),
    dependencies: spec.dependencies,
    timeout,
    interval,
    install: spec.install,
    upgrade: spec.upgrade,
    labels: metadata.labels,
    annotations: metadata.annotations,
    helmReleaseSpec: spec.helmReleaseSpec,
    kustomization: folder.kustomization,
    expected: expectedHelmRelease(hr, specNode, spec),
    defaultsFilled: filled,
    source: folder,
  };
}

/** A HelmRelease has apiVersion, kind, metadata and spec; status is the cluster's. */
function checkTopLevelKeys(hr: MapNode, problems: Problems): void {
  for (const [key, node] of hr.entries) {
    if (['apiVersion', 'kind', 'metadata', 'spec'].includes(key)) continue;
    if (key === 'status') problems.warn('status is not imported (the cluster writes it)', locationOf(node), [key]);
    else problems.error(`"${key}" cannot be imported: a HelmRelease has apiVersion, kind, metadata and spec`, locationOf(node), [key]);
  }
}

/** metadata: name = folder, labels = chart_group + labels, annotations; the namespace is the kustomization's. */
function readReleaseMetadata(
  hr: MapNode,
  name: string,
  namespace: string,
  start: SourceLocation,
  problems: Problems,
): { group?: string; labels: Record<string, string>; annotations: Record<string, string> } {
  const metadata = asMap(getNode(hr, ['metadata']));
  let group: string | undefined;
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  if (!metadata) problems.error('metadata is missing', start, ['metadata']);
  const metaName = asString(getNode(metadata, ['name']));
  if (metadata && metaName !== name) {
    problems.error(
      `metadata.name ${shown(getNode(metadata, ['name']))} differs from its folder "${name}": flotilla names the HelmRelease and its folder alike`,
      locationOf(getNode(metadata, ['name']) ?? metadata),
      ['metadata', 'name'],
    );
  }
  for (const [key, node] of metadata?.entries ?? []) {
    if (key === 'name') continue;
    if (key === 'namespace') {
      problems.warn(`metadata.namespace is not written: the kustomization sets the namespace (${namespace})`, locationOf(node), ['metadata', key]);
      continue;
    }
    if (key !== 'labels' && key !== 'annotations') {
      problems.error(`metadata.${key} cannot be imported: the generated HelmRelease carries name, labels and annotations`, locationOf(node), ['metadata', key]);
      continue;
    }
    const labelMap = asMap(node);
    if (!labelMap) {
      problems.error(`metadata.${key} must be a map, not ${shown(node)}`, locationOf(node), ['metadata', key]);
      continue;
    }
    for (const [label, value] of labelMap.entries) {
      const text = asString(value);
      if (text === undefined) {
        problems.error(
          `${key === 'labels' ? 'label' : 'annotation'} ${label}: ${shown(value)} is not a string (Kubernetes ${key} values are strings; quote it)`,
          locationOf(value),
          ['metadata', key, label],
        );
      } else if (key === 'annotations') annotations[label] = text;
      else if (label === 'chart_group') group = text;
      else labels[label] = text;
    }
  }
  return { ...(group !== undefined ? { group } : {}), labels, annotations };
}

/** What the spec says, field by field; every field is modelled, checked, passed through or refused. */
interface ReadSpec {
  releaseName?: string;
  chart?: string;
  requestedVersion?: string;
  requestedVersionAt: SourceLocation;
  /** sourceRef.namespace names the release's own namespace: Flux's default, which the generator leaves out. */
  dropSourceNamespace: boolean;
  interval?: string;
  timeout?: string;
  install: ReleaseActionFlags;
  upgrade: ReleaseActionFlags;
  dependencies: ReleaseDependency[];
  /** Fields passed through as written (driftDetection, maxHistory, uninstall, rollback, suspend, postRenderers …). */
  helmReleaseSpec: Plain;
  /** Flux defaults the generator will write explicitly, as `field: value`. */
  filled: string[];
}

function readSpec(spec: MapNode, name: string, namespace: string, ctx: MappingContext, problems: Problems): ReadSpec {
  const read: ReadSpec = {
    requestedVersionAt: locationOf(spec),
    dropSourceNamespace: false,
    install: { disableHooks: false, disableWait: false },
    upgrade: { disableHooks: false, disableWait: false },
    dependencies: [],
    helmReleaseSpec: {},
    filled: [],
  };
  const duration = (key: 'interval' | 'timeout', node: ValueNode): string | undefined => {
    const text = asString(node);
    if (text === undefined || !isFluxDuration(text)) {
      problems.error(`spec.${key} ${shown(node)} is not a Flux duration such as 30m, 1h or 90s`, locationOf(node), ['spec', key]);
      return undefined;
    }
    return text;
  };
  for (const [key, node] of spec.entries) {
    switch (key) {
      case 'releaseName': {
        const text = asString(node);
        if (text === undefined || !isHelmReleaseName(text)) {
          problems.error(`spec.releaseName ${shown(node)} is not a Helm release name of at most 53 characters`, locationOf(node), ['spec', key]);
        } else read.releaseName = text;
        break;
      }
      case 'chart': {
        const result = readChart(node, namespace, ctx, problems);
        if (result) {
          read.chart = result.chart;
          read.requestedVersion = result.version;
          read.requestedVersionAt = result.versionAt;
          read.dropSourceNamespace = result.dropSourceNamespace;
          if (Object.keys(result.passThrough).length > 0) read.helmReleaseSpec.chart = result.passThrough;
        }
        break;
      }
      case 'chartRef':
        problems.error('spec.chartRef cannot be imported: flotilla ships the charts in the app and points spec.chart at its HelmRepository', locationOf(node), [
          'spec',
          key,
        ]);
        break;
      case 'interval':
      case 'timeout':
        read[key] = duration(key, node);
        break;
      case 'test': {
        const value = toPlain(node);
        if (!deepEqual(value, { enable: false })) read.helmReleaseSpec.test = value; // written after the generated test: {enable: false}
        break;
      }
      case 'install':
      case 'upgrade': {
        const flags = readActionFlags(key, node, problems, read.filled);
        if (flags) read[key] = flags;
        break;
      }
      case 'dependsOn':
        read.dependencies = readDependsOn(node, name, namespace, ctx, problems, read.filled);
        break;
      case 'valuesFrom':
        checkValuesFrom(node, name, problems);
        break;
      case 'values':
        problems.warn(
          `inline spec.values are carried in helmReleaseSpec.values: Flux applies them above both overrides Secrets, so no flotilla layer (nor a user override) can change them; consider moving them into ${overridesValuesKey(name, 'static')}`,
          locationOf(node),
          ['spec', key],
        );
        read.helmReleaseSpec.values = toPlain(node);
        break;
      default:
        read.helmReleaseSpec[key] = toPlain(node);
    }
  }
  if (!spec.entries.has('chart') && !spec.entries.has('chartRef')) problems.error('spec.chart is missing', locationOf(spec), ['spec', 'chart']);
  if (!spec.entries.has('valuesFrom')) {
    const [staticName, systemName] = overridesValuesFrom(name).map((v) => v.name);
    problems.error(`spec.valuesFrom is missing: flotilla feeds every release from the Secrets ${staticName} and ${systemName}`, locationOf(spec), [
      'spec',
      'valuesFrom',
    ]);
  }
  return read;
}

/**
 * Fields the HelmRelease leaves to Flux's defaults, set to those defaults
 * (the generator writes them); returns everything filled, for one warning.
 */
function fillFluxDefaults(spec: MapNode, read: ReadSpec, name: string, problems: Problems): string[] {
  const filled = [...read.filled];
  if (read.releaseName === undefined && !spec.entries.has('releaseName')) {
    const target = asString(getNode(spec, ['targetNamespace']));
    read.releaseName = target ? `${target}-${name}` : name;
    if (read.releaseName.length > HELM_RELEASE_NAME_MAX)
      problems.error(`Flux's default release name ${read.releaseName} is longer than 53 characters; set spec.releaseName`, locationOf(spec), ['spec']);
    filled.push(`releaseName: ${read.releaseName}`);
  }
  if (read.interval === undefined && !spec.entries.has('interval')) {
    read.interval = FLUX_DEFAULT_INTERVAL;
    problems.warn(`spec.interval is missing (Flux requires it); written as ${read.interval}`, locationOf(spec), ['spec', 'interval']);
  }
  if (read.timeout === undefined && !spec.entries.has('timeout')) {
    read.timeout = FLUX_DEFAULT_TIMEOUT;
    filled.push(`timeout: ${read.timeout}`);
  }
  if (!spec.entries.has('test')) filled.push('test.enable: false');
  for (const key of ['install', 'upgrade'] as const) if (!spec.entries.has(key)) filled.push(`${key}.disableHooks: false`, `${key}.disableWait: false`);
  return filled;
}

/**
 * The original HelmRelease as the build must reproduce it: a copy of what
 * was read, with what flotilla writes differently but equivalently (no
 * status, no metadata.namespace, Flux defaults explicit, dependsOn with
 * namespaces) put the way the generator writes it.
 */
function expectedHelmRelease(hr: MapNode, spec: MapNode, read: ReadSpec): Plain {
  const expected = toPlain(hr) as Plain;
  delete expected.status;
  const metadata = (isPlainMap(expected.metadata) ? expected.metadata : (expected.metadata = {})) as Plain;
  delete metadata.namespace;
  if (metadata.labels === undefined) metadata.labels = {};
  const expectedSpec = expected.spec as Plain;
  if (read.dropSourceNamespace) delete (((expectedSpec.chart as Plain).spec as Plain).sourceRef as Plain).namespace;
  expectedSpec.install = actionFlagsPlain(read.install);
  expectedSpec.upgrade = actionFlagsPlain(read.upgrade);
  if (spec.entries.has('dependsOn')) {
    if (read.dependencies.length === 0) delete expectedSpec.dependsOn;
    else expectedSpec.dependsOn = read.dependencies.map((dep) => ({ name: dep.name, namespace: dep.namespace }));
  }
  if (!spec.entries.has('releaseName')) expectedSpec.releaseName = read.releaseName;
  if (!spec.entries.has('interval')) expectedSpec.interval = read.interval;
  if (!spec.entries.has('timeout')) expectedSpec.timeout = read.timeout;
  if (!spec.entries.has('test')) expectedSpec.test = { enable: false };
  return expected;
}

interface ChartReading {
  readonly chart: string;
  readonly version?: string;
  readonly versionAt: SourceLocation;
  /** chart.metadata and chart.spec fields beyond chart, version and sourceRef: helmReleaseSpec.chart. */
  readonly passThrough: Plain;
  /** sourceRef.namespace names the release's own namespace: Flux's default, which the generator leaves out. */
  readonly dropSourceNamespace: boolean;
}

function readChart(node: ValueNode, namespace: string, ctx: MappingContext, problems: Problems): ChartReading | undefined {
  const map = asMap(node);
  const spec = asMap(getNode(map, ['spec']));
  if (!map || !spec) {
    problems.error('spec.chart.spec is missing', locationOf(node), ['spec', 'chart']);
    return undefined;
  }
  let ok = true;
  const passThrough: Plain = {};
  const metadata = map.entries.get('metadata');
  if (metadata) passThrough.metadata = toPlain(metadata);
  const extraSpec: Plain = {};
  for (const [key, child] of spec.entries) if (!['chart', 'version', 'sourceRef'].includes(key)) extraSpec[key] = toPlain(child);
  if (Object.keys(extraSpec).length > 0) passThrough.spec = extraSpec;
  const chartNode = getNode(spec, ['chart']);
  const chart = asString(chartNode);
  if (chart === undefined || !isLabelCharacters(chart)) {
    problems.error(
      `spec.chart.spec.chart ${shown(chartNode)} is not a chart name (a path or URL cannot be imported: flotilla ships the chart in the app)`,
      chartNode ? locationOf(chartNode) : locationOf(spec),
      ['spec', 'chart', 'spec', 'chart'],
    );
    ok = false;
  }
  const versionNode = getNode(spec, ['version']);
  const version = asString(versionNode);
  if (versionNode && version === undefined) {
    problems.error(`spec.chart.spec.version ${shown(versionNode)} must be a string (quote it)`, locationOf(versionNode), ['spec', 'chart', 'spec', 'version']);
    ok = false;
  }
  if (!versionNode) {
    problems.warn('spec.chart.spec.version is not set (Flux takes the latest); flotilla writes the version of the shipped chart', locationOf(spec), [
      'spec',
      'chart',
      'spec',
    ]);
  }
  let dropSourceNamespace = false;
  const sourceRef = asMap(getNode(spec, ['sourceRef']));
  if (!sourceRef) {
    problems.error('spec.chart.spec.sourceRef is missing', locationOf(spec), ['spec', 'chart', 'spec', 'sourceRef']);
    ok = false;
  } else {
    for (const [key, child] of sourceRef.entries) {
      const path = ['spec', 'chart', 'spec', 'sourceRef', key];
      const value = asString(child);
      if (key === 'kind' && value !== 'HelmRepository') {
        problems.error(`sourceRef.kind ${shown(child)} cannot be imported: flotilla ships the charts to the app's HelmRepository`, locationOf(child), path);
        ok = false;
      } else if (key === 'name' && value !== ctx.repository) {
        problems.error(
          `sourceRef.name ${shown(child)} is not the app's HelmRepository "${ctx.repository}" (base/); flotilla points every release at it`,
          locationOf(child),
          path,
        );
        ok = false;
      } else if (key === 'namespace' && value !== ctx.namespace) {
        problems.error(
          `sourceRef.namespace ${shown(child)} is not the namespace of the app's HelmRepository ("${ctx.namespace}"); flotilla points every release at it`,
          locationOf(child),
          path,
        );
        ok = false;
      } else if (key === 'namespace' && namespace === ctx.namespace) {
        problems.warn(`sourceRef.namespace ${shown(child)} is the release's own namespace (Flux's default); not written`, locationOf(child), path);
        dropSourceNamespace = true;
      } else if (key === 'apiVersion') {
        problems.error(`sourceRef.${key} cannot be imported: flotilla's sourceRef names the app's HelmRepository by kind and name`, locationOf(child), path);
        ok = false;
      } else if (!['kind', 'name', 'namespace'].includes(key)) {
        problems.error(`sourceRef.${key} cannot be imported`, locationOf(child), path);
        ok = false;
      }
    }
    if (!sourceRef.entries.has('kind')) {
      problems.error('sourceRef.kind is missing (HelmRepository)', locationOf(sourceRef), ['spec', 'chart', 'spec', 'sourceRef']);
      ok = false;
    }
  }
  if (!ok || chart === undefined) return undefined;
  return {
    chart,
    ...(version !== undefined && version !== VERSION_PLACEHOLDER ? { version } : {}),
    versionAt: versionNode ? locationOf(versionNode) : locationOf(spec),
    passThrough,
    dropSourceNamespace,
  };
}

/** install/upgrade as written (their fields were checked against Flux's struct for each), with Flux's disableHooks/disableWait defaults filled in. */
function readActionFlags(which: 'install' | 'upgrade', node: ValueNode, problems: Problems, filled: string[]): ReleaseActionFlags | undefined {
  const map = asMap(node);
  if (!map) {
    problems.error(`spec.${which} must be a map, not ${shown(node)}`, locationOf(node), ['spec', which]);
    return undefined;
  }
  for (const key of ['disableHooks', 'disableWait'] as const) if (!map.entries.has(key)) filled.push(`${which}.${key}: false`);
  return { disableHooks: false, disableWait: false, ...(toPlain(map) as Plain) } as ReleaseActionFlags;
}

/** The plain install/upgrade map the generator writes for these flags. */
export function actionFlagsPlain(flags: ReleaseActionFlags): Plain {
  return { ...flags };
}

/**
 * dependsOn entries in order. One naming a release folder of the app in that
 * release's namespace is an app dependency; any other names a HelmRelease the
 * app does not deploy (another app's, in any namespace Flux can see): kept as
 * an external dependency, which Flux waits for and flotilla does not.
 */
function readDependsOn(node: ValueNode, self: string, namespace: string, ctx: MappingContext, problems: Problems, filled: string[]): ReleaseDependency[] {
  if (node.kind !== 'seq') {
    problems.error(`spec.dependsOn must be a list, not ${shown(node)}`, locationOf(node), ['spec', 'dependsOn']);
    return [];
  }
  const out: ReleaseDependency[] = [];
  node.items.forEach((item, i) => {
    const path = ['spec', 'dependsOn', i];
    const entry = asMap(item);
    const name = asString(getNode(entry, ['name']));
    if (!entry || !name) {
      problems.error(`spec.dependsOn[${i}] has no name`, locationOf(item), path);
      return;
    }
    const namespaceNode = getNode(entry, ['namespace']);
    // Flux reads a missing namespace as the depending release's own.
    const target = asString(namespaceNode) ?? namespace;
    if (!namespaceNode) filled.push(`dependsOn ${name}: namespace ${namespace}`);
    const inApp = ctx.releaseNames.has(name) && ctx.namespaces.get(name) === target;
    if (name === self && target === namespace) {
      problems.error(`release ${self} depends on itself`, locationOf(item), path);
      return;
    }
    if (out.some((d) => d.name === name && d.namespace === target)) {
      problems.error(`dependsOn ${target}/${name} is listed twice`, locationOf(item), path);
      return;
    }
    if (!inApp) {
      problems.warn(
        `dependsOn ${target}/${name} is not a release of this app: kept as an external dependency (Flux waits for it; flotilla does not deploy or wait on it)`,
        locationOf(item),
        path,
      );
    }
    out.push({ name, namespace: target, external: !inApp });
  });
  return out;
}

function checkValuesFrom(node: ValueNode, release: string, problems: Problems): void {
  const want = overridesValuesFrom(release);
  const hint = `flotilla writes exactly [${want.map((w) => `Secret ${w.name} (valuesKey ${w.valuesKey})`).join(', ')}], static first so the system overrides win`;
  if (node.kind !== 'seq') {
    problems.error(`spec.valuesFrom must be a list: ${hint}`, locationOf(node), ['spec', 'valuesFrom']);
    return;
  }
  node.items.forEach((item, i) => {
    const got = toPlain(item) as PlainValue;
    const expected = want[i];
    if (expected && deepEqual(got, { ...expected })) return;
    const entry = item.kind === 'map' ? (item as MapNode) : undefined;
    const extra = entry ? [...entry.entries.keys()].filter((k) => !['kind', 'name', 'valuesKey'].includes(k)) : [];
    let why: string;
    if (!expected) why = `an extra values source (${shown(item)})`;
    else if (extra.length > 0) why = `${extra.join(', ')} cannot be imported`;
    else if (entry && asString(getNode(entry, ['valuesKey'])) === undefined && asString(getNode(entry, ['name'])) === expected.name)
      why = `valuesKey is missing (Flux would read values.yaml)`;
    else why = `${shown(item)} is not ${JSON.stringify(expected)}`;
    problems.error(`spec.valuesFrom[${i}]: ${why}; ${hint}`, locationOf(item), ['spec', 'valuesFrom', i]);
  });
  if (node.items.length < want.length) problems.error(`spec.valuesFrom has ${node.items.length} entries; ${hint}`, locationOf(node), ['spec', 'valuesFrom']);
}
