/**
 * User overrides (values layer 8) kept in the app record:
 * `flotilla override set|show|delete APP CHART`. They take effect at the
 * next apply, above everything the app computes. `--reuse-values` merges the
 * new values into the ones kept; `--reset-values` (the default, as in Helm)
 * replaces them.
 */
import deepmerge from 'deepmerge';
import type { KubeClient } from '../kube/index.js';
import type { JsonValue } from '../plugins/index.js';
import { parseSetPath, typedSetValue } from '../values/index.js';
import { LifecycleError } from './errors.js';
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

/** One `--set a.b[0].c=VALUE`: the path and the value, read as the values engine reads a `--set` (Helm's strvals: its types, its bounds). */
export function parseSet(text: string): { path: (string | number)[]; value: JsonValue } {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new OverrideUsageError(`--set ${text}: expected PATH=VALUE (e.g. conf.keystone.DEFAULT.debug=true)`);
  return { path: parseSetPath(text.slice(0, eq), { kind: 'set', expression: text }), value: typedSetValue(text.slice(eq + 1)) as JsonValue };
}

function assign(root: Values, path: readonly (string | number)[], value: JsonValue): void {
  let node: JsonValue = root;
  for (const [i, key] of path.entries()) {
    const last = i === path.length - 1;
    const nextIsIndex = typeof path[i + 1] === 'number';
    const container = node as { [k: string]: JsonValue } & JsonValue[];
    if (last) {
      container[key as never] = value as never;
      return;
    }
    let child: JsonValue | undefined = container[key as never];
    if (child === null || typeof child !== 'object') {
      child = nextIsIndex ? [] : {};
      container[key as never] = child as never;
    }
    node = child;
  }
}

const overwriteLists = (_target: unknown[], source: unknown[]) => source;

/** The values a change leaves for one chart. */
export function applyOverrideChange(kept: Values | undefined, change: OverrideChange): Values {
  let values: Values = change.mode === 'reuse' ? structuredClone(kept ?? {}) : {};
  // Lists are replaced, as Helm replaces them.
  for (const file of change.files) values = deepmerge(values, file, { arrayMerge: overwriteLists }) as Values;
  for (const set of change.sets) {
    const { path, value } = parseSet(set);
    assign(values, path, value);
  }
  return values;
}

function checkChart(record: AppRecord, chart: string): void {
  const charts = [...new Set(record.bundle.releases.map((r) => r.chart))].sort();
  if (!charts.includes(chart)) throw new OverrideUsageError(`${record.name} has no chart "${chart}"; its charts: ${charts.join(', ')}`);
}

export async function setOverrides(client: KubeClient, appName: string, chart: string, change: OverrideChange, options: OperationOptions = {}): Promise<Values> {
  if (change.files.length === 0 && change.sets.length === 0 && change.mode === 'reuse') throw new OverrideUsageError('nothing to set: give -f FILE or --set PATH=VALUE');
  return withAppLock(client, appName, 'override', options, async (run) => {
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    checkChart(handle.record, chart);
    const values = applyOverrideChange(handle.record.userOverrides[chart], change);
    await handle.update((r) => ({ ...r, userOverrides: { ...r.userOverrides, [chart]: values } }));
    return values;
  });
}

export async function showOverrides(client: KubeClient, appName: string, chart: string): Promise<Values> {
  const { record } = await new AppRecords(client).get(appName);
  checkChart(record, chart);
  return record.userOverrides[chart] ?? {};
}

export async function deleteOverrides(client: KubeClient, appName: string, chart: string, options: OperationOptions = {}): Promise<boolean> {
  return withAppLock(client, appName, 'override', options, async (run) => {
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    checkChart(handle.record, chart);
    if (!(chart in handle.record.userOverrides)) return false;
    await handle.update((r) => {
      const { [chart]: _dropped, ...rest } = r.userOverrides;
      return { ...r, userOverrides: rest };
    });
    return true;
  });
}
