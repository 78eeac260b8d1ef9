/**
 * Mapping a StarlingX HelmRelease to a flotilla release entry. Every field of
 * the HelmRelease is either modelled by the release table (releaseName, chart,
 * interval, timeout, install/upgrade, dependsOn, labels), checked to be what
 * flotilla generates (valuesFrom, sourceRef), passed through untouched
 * (`helmReleaseSpec`), or refused with its file and line: nothing is dropped
 * silently.
 */
import type { ReleaseActionFlags } from '../app/index.js';
import type { SourceLocation } from '../diagnostics/index.js';
import { deepEqual, getNode, toPlain, type MapNode, type PlainValue, type ValueNode } from '../document/index.js';
import type { Problems } from './errors.js';
import { VERSION_PLACEHOLDER, type ImportedRelease, type StxReleaseFolder } from './types.js';
import { asMap, asString, locationOf, shown } from './yaml-read.js';
import { FLUX_DEFAULT_INTERVAL, FLUX_DEFAULT_TIMEOUT, HELM_RELEASE_NAME_MAX, isDns1123Label, isFluxDuration, isHelmReleaseName } from '../names/index.js';
import { overridesValuesFrom, overridesValuesKey } from '../flux/index.js';


export interface MappingContext {
  /** Namespace of the top kustomization. */
  readonly namespace: string;
  /** Name of the app's HelmRepository. */
  readonly repository: string;
  /** Every release folder of the app. */
  readonly releaseNames: ReadonlySet<string>;
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
    dependsOn: spec.dependsOn,
    timeout,
    interval,
    install: spec.install,
    upgrade: spec.upgrade,
    labels: metadata.labels,
    helmReleaseSpec: spec.helmReleaseSpec,
    expected: expectedHelmRelease(hr, specNode, spec, namespace),
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

/** metadata: name = folder, labels = chart_group + labels; the namespace is the kustomization's. */
function readReleaseMetadata(hr: MapNode, name: string, namespace: string, start: SourceLocation, problems: Problems): { group?: string; labels: Record<string, string> } {
  const metadata = asMap(getNode(hr, ['metadata']));
  let group: string | undefined;
  const labels: Record<string, string> = {};
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
    if (key !== 'labels') {
      problems.error(`metadata.${key} cannot be imported: the generated HelmRelease carries only name and labels`, locationOf(node), ['metadata', key]);
      continue;
    }
    const labelMap = asMap(node);
    if (!labelMap) {
      problems.error(`metadata.labels must be a map, not ${shown(node)}`, locationOf(node), ['metadata', key]);
      continue;
    }
    for (const [label, value] of labelMap.entries) {
      const text = asString(value);
      if (text === undefined) {
        problems.error(`label ${label}: ${shown(value)} is not a string (Kubernetes label values are strings; quote it)`, locationOf(value), ['metadata', 'labels', label]);
      } else if (label === 'chart_group') group = text;
      else labels[label] = text;
    }
  }
  return { ...(group !== undefined ? { group } : {}), labels };
}

/** What the spec says, field by field; every field is modelled, checked, passed through or refused. */
interface ReadSpec {
  releaseName?: string;
  chart?: string;
  requestedVersion?: string;
  requestedVersionAt: SourceLocation;
  dropReconcileStrategy: boolean;
  interval?: string;
  timeout?: string;
  install: ReleaseActionFlags;
  upgrade: ReleaseActionFlags;
  dependsOn: string[];
  /** Fields passed through as written (driftDetection, maxHistory, uninstall, rollback, suspend, postRenderers …). */
  helmReleaseSpec: Plain;
  /** Flux defaults the generator will write explicitly, as `field: value`. */
  filled: string[];
}

function readSpec(spec: MapNode, name: string, namespace: string, ctx: MappingContext, problems: Problems): ReadSpec {
  const read: ReadSpec = {
    requestedVersionAt: locationOf(spec),
    dropReconcileStrategy: false,
    install: { disableHooks: false, disableWait: false },
    upgrade: { disableHooks: false, disableWait: false },
    dependsOn: [],
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
        const result = readChart(node, ctx, problems);
        if (result) {
          read.chart = result.chart;
          read.requestedVersion = result.version;
          read.requestedVersionAt = result.versionAt;
          read.dropReconcileStrategy = result.dropReconcileStrategy;
        }
        break;
      }
      case 'chartRef':
        problems.error(
          'spec.chartRef cannot be imported: flotilla ships the charts in the app and points spec.chart at its HelmRepository',
          locationOf(node),
          ['spec', key],
        );
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
        read.dependsOn = readDependsOn(node, name, namespace, ctx, problems, read.filled);
        break;
      case 'valuesFrom':
        checkValuesFrom(node, name, problems);
        break;
      case 'values':
        problems.error(
          `inline spec.values cannot be imported: Flux applies them above both overrides Secrets, so no flotilla layer (nor a user override) could change them; move them into ${overridesValuesKey(name, 'static')}`,
          locationOf(node),
          ['spec', key],
        );
        break;
      default:
        read.helmReleaseSpec[key] = toPlain(node);
    }
  }
  if (!spec.entries.has('chart') && !spec.entries.has('chartRef')) problems.error('spec.chart is missing', locationOf(spec), ['spec', 'chart']);
  if (!spec.entries.has('valuesFrom')) {
    const [staticName, systemName] = overridesValuesFrom(name).map((v) => v.name);
    problems.error(`spec.valuesFrom is missing: flotilla feeds every release from the Secrets ${staticName} and ${systemName}`, locationOf(spec), ['spec', 'valuesFrom']);
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
    if (read.releaseName.length > HELM_RELEASE_NAME_MAX) problems.error(`Flux's default release name ${read.releaseName} is longer than 53 characters; set spec.releaseName`, locationOf(spec), ['spec']);
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
function expectedHelmRelease(hr: MapNode, spec: MapNode, read: ReadSpec, namespace: string): Plain {
  const expected = toPlain(hr) as Plain;
  delete expected.status;
  const metadata = (isPlainMap(expected.metadata) ? expected.metadata : (expected.metadata = {})) as Plain;
  delete metadata.namespace;
  if (metadata.labels === undefined) metadata.labels = {};
  const expectedSpec = expected.spec as Plain;
  if (read.dropReconcileStrategy) delete ((expectedSpec.chart as Plain).spec as Plain).reconcileStrategy;
  expectedSpec.install = actionFlagsPlain(read.install);
  expectedSpec.upgrade = actionFlagsPlain(read.upgrade);
  if (spec.entries.has('dependsOn')) {
    if (read.dependsOn.length === 0) delete expectedSpec.dependsOn;
    else expectedSpec.dependsOn = read.dependsOn.map((dep) => ({ name: dep, namespace }));
  }
  if (!spec.entries.has('releaseName')) expectedSpec.releaseName = read.releaseName;
  if (!spec.entries.has('interval')) expectedSpec.interval = read.interval;
  if (!spec.entries.has('timeout')) expectedSpec.timeout = read.timeout;
  if (!spec.entries.has('test')) expectedSpec.test = { enable: false };
  return expected;
}

function readChart(
  node: ValueNode,
  ctx: MappingContext,
  problems: Problems,
): { chart: string; version?: string; versionAt: SourceLocation; dropReconcileStrategy: boolean } | undefined {
  const map = asMap(node);
  const spec = asMap(getNode(map, ['spec']));
  if (!map || !spec) {
    problems.error('spec.chart.spec is missing', locationOf(node), ['spec', 'chart']);
    return undefined;
  }
  let ok = true;
  for (const [key, child] of map.entries) {
    if (key !== 'spec') {
      problems.error(`spec.chart.${key} cannot be imported: flotilla writes spec.chart.spec only`, locationOf(child), ['spec', 'chart', key]);
      ok = false;
    }
  }
  let dropReconcileStrategy = false;
  for (const [key, child] of spec.entries) {
    if (['chart', 'version', 'sourceRef'].includes(key)) continue;
    if (key === 'reconcileStrategy' && asString(child) === 'ChartVersion') {
      problems.warn('spec.chart.spec.reconcileStrategy: ChartVersion is Flux\'s default; not written', locationOf(child), ['spec', 'chart', 'spec', key]);
      dropReconcileStrategy = true;
      continue;
    }
    problems.error(
      `spec.chart.spec.${key} cannot be imported: flotilla writes chart, version and sourceRef only`,
      locationOf(child),
      ['spec', 'chart', 'spec', key],
    );
    ok = false;
  }
  const chartNode = getNode(spec, ['chart']);
  const chart = asString(chartNode);
  if (chart === undefined || !isDns1123Label(chart)) {
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
    problems.warn('spec.chart.spec.version is not set (Flux takes the latest); flotilla writes the version of the shipped chart', locationOf(spec), ['spec', 'chart', 'spec']);
  }
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
        problems.error(`sourceRef.name ${shown(child)} is not the app's HelmRepository "${ctx.repository}" (base/); flotilla points every release at it`, locationOf(child), path);
        ok = false;
      } else if (key === 'namespace' || key === 'apiVersion') {
        problems.error(`sourceRef.${key} cannot be imported: flotilla's sourceRef names the HelmRepository in the release's own namespace`, locationOf(child), path);
        ok = false;
      } else if (key !== 'kind' && key !== 'name') {
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
    dropReconcileStrategy,
  };
}

const ACTION_FLAG_HINT =
  'the release table models disableHooks, disableWait and remediation {retries, strategy} (a pass-through for the other install/upgrade fields would need a change to src/app)';

function readActionFlags(which: 'install' | 'upgrade', node: ValueNode, problems: Problems, filled: string[]): ReleaseActionFlags | undefined {
  const map = asMap(node);
  if (!map) {
    problems.error(`spec.${which} must be a map, not ${shown(node)}`, locationOf(node), ['spec', which]);
    return undefined;
  }
  let ok = true;
  const flags: { disableHooks: boolean; disableWait: boolean; remediation?: { retries?: number; strategy?: 'rollback' | 'uninstall' } } = {
    disableHooks: false,
    disableWait: false,
  };
  for (const [key, child] of map.entries) {
    const path = ['spec', which, key];
    if (key === 'disableHooks' || key === 'disableWait') {
      if (child.kind !== 'scalar' || typeof child.value !== 'boolean') {
        problems.error(`spec.${which}.${key} ${shown(child)} is not a boolean`, locationOf(child), path);
        ok = false;
      } else flags[key] = child.value;
      continue;
    }
    if (key === 'remediation') {
      const rem = asMap(child);
      if (!rem) {
        problems.error(`spec.${which}.remediation must be a map`, locationOf(child), path);
        ok = false;
        continue;
      }
      const remediation: { retries?: number; strategy?: 'rollback' | 'uninstall' } = {};
      for (const [rkey, rnode] of rem.entries) {
        const rpath = [...path, rkey];
        const value = rnode.kind === 'scalar' ? rnode.value : undefined;
        if (rkey === 'retries' && typeof value === 'number' && Number.isInteger(value) && value >= -1) remediation.retries = value;
        else if (rkey === 'strategy' && (value === 'rollback' || value === 'uninstall')) remediation.strategy = value;
        else if (rkey === 'retries' || rkey === 'strategy') {
          problems.error(`spec.${which}.remediation.${rkey} ${shown(rnode)} is not valid (${rkey === 'retries' ? 'an integer, -1 for unlimited' : 'rollback or uninstall'})`, locationOf(rnode), rpath);
          ok = false;
        } else {
          problems.error(`spec.${which}.remediation.${rkey} cannot be imported: ${ACTION_FLAG_HINT}`, locationOf(rnode), rpath);
          ok = false;
        }
      }
      flags.remediation = remediation;
      continue;
    }
    problems.error(`spec.${which}.${key} cannot be imported: ${ACTION_FLAG_HINT}`, locationOf(child), path);
    ok = false;
  }
  for (const key of ['disableHooks', 'disableWait'] as const) if (!map.entries.has(key)) filled.push(`${which}.${key}: false`);
  return ok ? flags : undefined;
}

/** The plain install/upgrade map the generator writes for these flags. */
export function actionFlagsPlain(flags: ReleaseActionFlags): Plain {
  return { disableHooks: flags.disableHooks, disableWait: flags.disableWait, ...(flags.remediation ? { remediation: { ...flags.remediation } } : {}) };
}

function readDependsOn(node: ValueNode, self: string, namespace: string, ctx: MappingContext, problems: Problems, filled: string[]): string[] {
  if (node.kind !== 'seq') {
    problems.error(`spec.dependsOn must be a list, not ${shown(node)}`, locationOf(node), ['spec', 'dependsOn']);
    return [];
  }
  const out: string[] = [];
  node.items.forEach((item, i) => {
    const path = ['spec', 'dependsOn', i];
    const entry = asMap(item);
    const name = asString(getNode(entry, ['name']));
    if (!entry || !name) {
      problems.error(`spec.dependsOn[${i}] has no name`, locationOf(item), path);
      return;
    }
    for (const [key, child] of entry.entries) {
      if (key === 'name') continue;
      if (key === 'namespace') {
        if (asString(child) !== namespace) {
          problems.error(
            `dependsOn ${name} in namespace ${shown(child)} cannot be imported: flotilla's dependsOn names releases of this app, in its namespace "${namespace}"`,
            locationOf(child),
            [...path, key],
          );
        }
        continue;
      }
      problems.error(`spec.dependsOn[${i}].${key} cannot be imported (flotilla writes name and namespace)`, locationOf(child), [...path, key]);
    }
    if (!entry.entries.has('namespace')) filled.push(`dependsOn ${name}: namespace ${namespace}`);
    if (name === self) problems.error(`release ${self} depends on itself`, locationOf(item), path);
    else if (!ctx.releaseNames.has(name)) {
      problems.error(`dependsOn ${name}: no release folder of this app is named so (flotilla's dependsOn names releases of the app)`, locationOf(item), path);
    } else if (out.includes(name)) problems.error(`dependsOn ${name} is listed twice`, locationOf(item), path);
    else out.push(name);
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
    else if (entry && asString(getNode(entry, ['valuesKey'])) === undefined && asString(getNode(entry, ['name'])) === expected.name) why = `valuesKey is missing (Flux would read values.yaml)`;
    else why = `${shown(item)} is not ${JSON.stringify(expected)}`;
    problems.error(`spec.valuesFrom[${i}]: ${why}; ${hint}`, locationOf(item), ['spec', 'valuesFrom', i]);
  });
  if (node.items.length < want.length) problems.error(`spec.valuesFrom has ${node.items.length} entries; ${hint}`, locationOf(node), ['spec', 'valuesFrom']);
}
