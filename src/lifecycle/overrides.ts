/**
 * User overrides (values layer 8) kept in the app record:
 * `flotilla override set|show|delete APP CHART`. They take effect at the
 * next apply, above everything the app computes. `--reuse-values` merges the
 * new values into the ones kept; `--reset-values` (the default, as in Helm)
 * replaces them.
 */
import type { KubeClient } from '../kube/index.js';
import type { JsonValue } from '../plugins/index.js';
import { mergePlain, setExpressionInto } from '../values/index.js';
import { fromPlain, toPlain } from '../document/index.js';
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

/** The values a change leaves for one chart. */
export function applyOverrideChange(kept: Values | undefined, change: OverrideChange): Values {
  let values: Values = change.mode === 'reuse' ? structuredClone(kept ?? {}) : {};
  // The values merge (src/values): lists replaced, as Helm replaces them.
  for (const file of change.files) values = mergePlain(values, file) as Values;
  // Each made into them as the values engine makes a `--set` (Helm's strvals: its commas and escapes, its types, its bounds).
  if (change.sets.length > 0) {
    let node = fromPlain(values, { layer: 'override set', location: { file: `the ${change.mode === 'reuse' ? 'kept overrides and ' : ''}values files`, line: 0, column: 0 } });
    for (const expression of change.sets) node = setExpressionInto(node, { kind: 'set', expression }, 'override set --set');
    values = toPlain(node) as Values;
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
