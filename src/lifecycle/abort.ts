/**
 * `flotilla abort APP`: stop the operation running on the app. The holder
 * of the app's lock is asked to stop (its next lock renewal sees the request
 * and fails the operation as `aborted`), and abort waits for the lock: a
 * live holder releases it as it stops; a dead one's lapses, and the state
 * its run left running is closed as failed, so the next operation starts
 * clean. Flux may still be reconciling what the run wrote: `show` says so.
 */
import { defaultHolder } from '../kube/index.js';
import type { Cluster } from './cluster.js';
import { AppStateError } from './errors.js';
import { lockName, RecordHandle, withAppLock, type OperationOptions } from './operation.js';
import { AppRecords, SYSTEM_NAMESPACE, type AppState } from './record.js';

/** A running state and the state its operation fails into. */
const FAILS_INTO: Readonly<Partial<Record<AppState, AppState>>> = {
  uploading: 'upload-failed',
  applying: 'apply-failed',
  updating: 'apply-failed',
  recovering: 'apply-failed',
  removing: 'remove-failed',
};

export type AbortOutcome =
  | { readonly kind: 'requested'; readonly holder: string; readonly operation?: string }
  | { readonly kind: 'closed'; readonly from: AppState; readonly to: AppState };

export async function abortApp(cluster: Cluster, appName: string, options: OperationOptions = {}): Promise<AbortOutcome> {
  const by = options.holder ?? defaultHolder();
  await new AppRecords(cluster.records).get(appName);
  const requested = await cluster.locks.requestAbort(SYSTEM_NAMESPACE, lockName(appName), by);
  // Taking the lock waits for a live holder to stop (it releases the lock), or for a dead one's lease to lapse.
  return withAppLock(cluster, appName, 'abort', options, async (run) => {
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    const from = handle.record.state;
    if (requested && handle.record.history.at(-1)?.result === 'aborted') return { kind: 'requested', ...requested };
    const to = FAILS_INTO[from];
    if (!to) throw new AppStateError(`no operation is running on ${appName} (it is ${from})`);
    await handle.end(to, 'aborted', `aborted by ${by}: the run that left it ${from} is gone`);
    return { kind: 'closed', from, to };
  });
}
