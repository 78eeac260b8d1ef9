/**
 * User overrides (values layer 8) kept in the app record:
 * `flotilla override set|show|delete APP RELEASE` (a release name, or the
 * chart name; kept per chart, as StarlingX keeps them). They take effect at the
 * next apply, above everything the app computes. `--reuse-values` merges the
 * new values into the ones kept; `--reset-values` (the default, as in Helm)
 * replaces them.
 */
import type { Cluster } from './cluster.js';
import { SecretRegistry, type JsonValue, type SecretPathRule } from '../plugins/index.js';
import { chartKeyReferences, describeUnknownKey, mergePlain, schemaFileSecrecy, setExpressionInto, unknownKeys } from '../values/index.js';
import { fromPlain, toPlain } from '../yaml/index.js';
import { readFile } from 'node:fs/promises';
import { readChartArchive } from '../charts/index.js';
import { makeTempDir, removeTempDir } from '../files/index.js';
import { unknownName } from '../names/index.js';
import { chartPuller, fluxValues, render } from './diff.js';
import { LifecycleError } from './errors.js';
import { loadVersion } from './version.js';
import { RecordHandle, withAppLock, type OperationOptions } from './operation.js';
import { AppRecords, type AppRecord } from './record.js';

export type Values = { [key: string]: JsonValue };

export class OverrideUsageError extends LifecycleError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

export interface OverrideChange {
  /** Values files (already parsed, each a map), in the order given: later wins. */
  readonly files: readonly Values[];
  /** `PATH=VALUE` assignments, applied after the files. */
  readonly sets: readonly string[];
  /** `reuse`: merge into the kept values; `reset`: replace them. */
  readonly mode: 'reuse' | 'reset';
}

/** The values a change leaves for one chart. */
export function applyOverrideChange(kept: Values | undefined, change: OverrideChange): Values {
  let values: Values = change.mode === 'reuse' ? structuredClone(kept ?? {}) : {};
  // The values merge (src/values): lists replaced, as Helm replaces them.
  for (const file of change.files) values = mergePlain(values, file) as Values;
  // Each made into them as the values engine makes a `--set` (Helm's strvals: its commas and escapes, its types, its bounds).
  if (change.sets.length > 0) {
    let node = fromPlain(values, {
      layer: 'override set',
      location: { file: `the ${change.mode === 'reuse' ? 'kept overrides and ' : ''}values files`, line: 0, column: 0 },
    });
    for (const expression of change.sets) node = setExpressionInto(node, { kind: 'set', expression }, 'override set --set');
    values = toPlain(node) as Values;
  }
  return values;
}

/**
 * The chart whose user overrides `name` means: a chart of the app, or the
 * chart of the release so named (overrides are kept per chart, so they apply
 * to every release of it); anything else is refused with the nearest name.
 */
function overridesChart(record: AppRecord, name: string): string {
  const { releases } = record.bundle;
  if (releases.some((r) => r.chart === name)) return name;
  const release = releases.find((r) => r.name === name);
  if (release) return release.chart;
  throw new OverrideUsageError(
    `${record.name}: ${unknownName(
      'release or chart',
      name,
      releases.flatMap((r) => [r.name, r.chart]),
    )}`,
  );
}

export interface SetOverridesOptions extends OperationOptions {
  /** False (`--no-check`): store without checking keys or rendering. */
  readonly check?: boolean;
  /** Unknown keys are errors, not warnings. */
  readonly strict?: boolean;
  /** `--show-secrets`: `shown` is the values as stored. */
  readonly showSecrets?: boolean;
}

/** What `override set` stored, and what it warns about (unknown keys, with the nearest known one). */
export interface OverridesSet {
  /** The chart the values are kept for (the one named, or the named release's). */
  readonly chart: string;
  readonly values: Values;
  /** The values as they may be printed (see redactOverrides). */
  readonly shown: Values;
  readonly warnings: readonly string[];
}

/** User overrides the chart refuses (Helm cannot render the release with them, or unknown keys under --strict): nothing was stored. */
export class OverrideRejectedError extends LifecycleError {}

export async function setOverrides(
  cluster: Cluster,
  appName: string,
  name: string,
  change: OverrideChange,
  options: SetOverridesOptions = {},
): Promise<OverridesSet> {
  if (change.files.length === 0 && change.sets.length === 0 && change.mode === 'reuse')
    throw new OverrideUsageError('nothing to set: give -f FILE or --set PATH=VALUE');
  return withAppLock(cluster, appName, 'override', options, async (run) => {
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    const chart = overridesChart(handle.record, name);
    const values = applyOverrideChange(handle.record.userOverrides[chart], change);
    const checked = options.check === false ? undefined : await checkOverrides(cluster, handle.record, chart, values, options.strict === true);
    await handle.update((r) => ({ ...r, userOverrides: { ...r.userOverrides, [chart]: values } }));
    // The check pulled the chart already: its schema says what to redact; without the check it is pulled for that alone.
    const secrecy = options.showSecrets ? undefined : checked ? checked.secrecy : await chartSecrecy(handle.record, chart);
    return { chart, values, shown: options.showSecrets ? values : redactOverrides(values, secrecy), warnings: checked?.warnings ?? [] };
  });
}

/**
 * Before user overrides are stored: each key is checked against the
 * chart's values.yaml and values.schema.json (a warning naming the nearest
 * known key; an error under `strict`), and every release of the chart is
 * rendered by `helm template` with the values an apply would give it —
 * Helm's schema validation and template errors refuse the change here
 * instead of at the next apply.
 */
async function checkOverrides(
  cluster: Cluster,
  record: AppRecord,
  chart: string,
  values: Values,
  strict: boolean,
): Promise<{ warnings: string[]; secrecy: SecretPathRule | undefined }> {
  const work = await makeTempDir('override-check');
  const loaded = await loadVersion(cluster, record.bundle, record.name, {
    events: () => undefined,
    userOverrides: { ...record.userOverrides, [chart]: values },
    readOnly: true,
    ...(record.mode ? { applyMode: record.mode } : {}),
    ...(record.versions ? { versions: record.versions } : {}),
  });
  try {
    const { chartFile, text } = await pulledChart(record, chart, work);
    // The one key checker of the values module, as overrides set and build use it.
    const references = chartKeyReferences({ values: text('values.yaml'), schema: text('values.schema.json'), chartYaml: text('Chart.yaml') });
    const tree = fromPlain(values, { layer: 'user overrides', location: { file: 'the values given', line: 0, column: 0 } });
    const warnings = unknownKeys(references, tree).map((unknown) => `${chart}: ${describeUnknownKey(unknown)}`);
    if (strict && warnings.length > 0) throw new OverrideRejectedError(`${warnings.join('\n')}\nnot stored (--strict)`);
    const releases = loaded.app.releases.filter((r) => r.chart === chart && loaded.host.enabled.some((e) => e.name === r.name));
    for (const release of releases) {
      const computed = await loaded.values(release);
      try {
        await render(release, chartFile, fluxValues(computed.staticOverrides, computed.systemOverrides));
      } catch (error) {
        throw new OverrideRejectedError(
          `release ${release.name} does not render with these overrides, so they were not stored: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
    }
    return { warnings, secrecy: schemaFileSecrecy(text('values.schema.json')) };
  } finally {
    await loaded.dispose();
    await removeTempDir(work);
  }
}

/** The user overrides kept for the chart `name` means (see overridesChart), as they may be printed unless `showSecrets`. */
export async function showOverrides(
  cluster: Cluster,
  appName: string,
  name: string,
  options: { readonly showSecrets?: boolean } = {},
): Promise<{ readonly chart: string; readonly values: Values }> {
  const { record } = await new AppRecords(cluster.records).get(appName);
  const chart = overridesChart(record, name);
  const values = record.userOverrides[chart] ?? {};
  return { chart, values: options.showSecrets ? values : redactOverrides(values, await chartSecrecy(record, chart)) };
}

/** The chart of the version in the cluster, pulled from the app's chart repository into `work`, and its files as text. */
async function pulledChart(
  record: AppRecord,
  chart: string,
  work: string,
): Promise<{ chartFile: string; text: (name: string) => { text: string; file: string } | undefined }> {
  const version = record.bundle.releases.find((r) => r.chart === chart)?.chartVersion ?? '';
  const chartFile = await chartPuller(work)({ repository: record.bundle.repository, name: chart, version });
  const archive = await readChartArchive(await readFile(chartFile), { label: `${chart}-${version}.tgz` });
  const text = (name: string) => {
    const data = archive.chart.files.find((f) => f.path === name)?.data.toString('utf8');
    return data === undefined ? undefined : { text: data, file: `${chart}/${name}` };
  };
  return { chartFile, text };
}

/** What the chart's values.schema.json, of the version in the cluster, marks secret (the chart pulled for that). */
async function chartSecrecy(record: AppRecord, chart: string): Promise<SecretPathRule | undefined> {
  const work = await makeTempDir('override-redact');
  try {
    return schemaFileSecrecy((await pulledChart(record, chart, work)).text('values.schema.json'));
  } finally {
    await removeTempDir(work);
  }
}

/** User overrides as they may be printed: what the redactor hides by key name, and what the chart's schema marks secret, replaced by `<secret>`. */
function redactOverrides(values: Values, secrecy: SecretPathRule | undefined): Values {
  const registry = new SecretRegistry();
  if (secrecy) registry.markSecretPaths(secrecy);
  return registry.redact(values);
}

/** Drops them; `deleted` says whether there were any. */
export async function deleteOverrides(
  cluster: Cluster,
  appName: string,
  name: string,
  options: OperationOptions = {},
): Promise<{ readonly chart: string; readonly deleted: boolean }> {
  return withAppLock(cluster, appName, 'override', options, async (run) => {
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    const chart = overridesChart(handle.record, name);
    if (!(chart in handle.record.userOverrides)) return { chart, deleted: false };
    await handle.update((r) => {
      const { [chart]: _dropped, ...rest } = r.userOverrides;
      return { ...r, userOverrides: rest };
    });
    return { chart, deleted: true };
  });
}
