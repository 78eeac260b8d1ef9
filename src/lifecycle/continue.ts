/**
 * `flotilla version continue APP --phase NAME`: the explicit go for a held
 * update phase. The hold is lifted in the record, then the app is applied
 * as the held run was (an update with its update hooks, else an apply): the phases before it have nothing to change and are
 * skipped, the held one and those after it run, and `versions.deployed` is
 * set once the last is Ready.
 */
import type { Cluster } from './cluster.js';
import { applyWithState, type ApplyOptions } from './apply.js';
import { PhaseUsageError } from './errors.js';
import { decidedOrRefused, RecordHandle, withAppLock } from './operation.js';
import { withVersions } from './phases.js';
import type { AppRecord } from './record.js';

export async function continueApp(cluster: Cluster, appName: string, phase: string, options: ApplyOptions = {}): Promise<AppRecord> {
  return withAppLock(cluster, appName, 'apply', options, async (run) => {
    await cluster.requireFlux();
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    const versions = handle.record.versions;
    if (versions?.held !== phase && !versions?.holdAt?.includes(phase)) {
      throw new PhaseUsageError(
        `${appName}: update phase ${phase} is not held (${versions?.held ? `held: ${versions.held}` : 'no phase is held'}); nothing to continue`,
      );
    }
    decidedOrRefused(handle.record, { operation: 'apply' }, run.events);
    // A held update goes on as the update it is: its own hooks run around the apply's, as they would have without the hold.
    const operation = versions.heldOperation ?? 'apply';
    await handle.update((r) => withVersions(r, ({ held: _held, ...v }) => ({ ...v, holdAt: (v.holdAt ?? []).filter((p) => p !== phase) })));
    return applyWithState(run, handle, handle.record.bundle, {
      ...options,
      operation,
      running: operation === 'update' ? 'updating' : 'applying',
      failed: 'apply-failed',
    });
  });
}
