/**
 * `flotilla update BUNDLE`: from version N (applied) to N+1. The new
 * version's `upgrades.from_versions` must match N; it is verified and
 * uploaded; user overrides are carried over when its metadata says
 * `maintain_user_overrides`; then it is applied. If that fails, the app
 * recovers to N — N's stored bundle, plugins, overrides and releases applied
 * again, releases only N+1 had removed — unless N+1 says
 * `update_failure_no_rollback`. The history says what happened and why.
 */
import type { Cluster } from './cluster.js';
import { applyBundle, DEFAULT_RELEASE_WAIT_MS, heldReason, refusedBeforeChange, type ApplyOptions } from './apply.js';
import { waitForSettled } from './releases.js';
import { readClusterConfig } from './config.js';
import { LifecycleError, UpdateRefusedError } from './errors.js';
import { decidedOrRefused, RecordHandle, reasonOf, withAppLock, type LockedRun } from './operation.js';
import { deletePayload } from './payload.js';
import type { AppRecord, RecordedBundle, UserOverrides } from './record.js';
import { afterSpecUpload, afterUpload, deployedTarget } from '../catalog/index.js';
import { fetchBundle, fromVersionPatterns, stageBundle, verifyForUpload, type UploadOptions, type VerifiedBundle } from './upload.js';

export interface UpdateOptions extends ApplyOptions, UploadOptions {
  /** Consent to drop the user overrides a new version without `maintain_user_overrides` does not keep. */
  readonly dropUserOverrides?: boolean;
}

/** The update failed and the app was recovered to the version it left. */
export class UpdateRecoveredError extends LifecycleError {}

export async function updateApp(cluster: Cluster, source: string, options: UpdateOptions = {}): Promise<AppRecord> {
  const fetched = await fetchBundle(source, options);
  try {
    return await updateTo(cluster, await verifyForUpload(fetched.path, await readClusterConfig(cluster.settings)), options);
  } finally {
    await fetched.dispose();
  }
}

async function updateTo(cluster: Cluster, verified: VerifiedBundle, options: UpdateOptions): Promise<AppRecord> {
  const { appName, appVersion } = verified.metadata;
  return withAppLock(cluster, appName, 'update', options, async (run) => {
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    const before = handle.record.state;
    const resuming = decidedOrRefused(handle.record, { operation: 'update', version: appVersion }, run.events).kind === 'resume';
    const old = resuming ? (handle.record.previous ?? handle.record.bundle) : handle.record.bundle;
    const oldOverrides = resuming ? (handle.record.previousUserOverrides ?? {}) : handle.record.userOverrides;
    const oldVersions = handle.record.versions;
    if (!resuming) refuseUnlessAllowed(verified, old, oldOverrides, options);
    // A new main.release changes a target that follows the spec: refused here, before anything changes, as `version target` would refuse it.
    const specRelease = verified.app.spec.main.release;
    const uploadedVersions = resuming
      ? afterUpload(handle.record.versions, verified.app.catalog, appVersion, specRelease)
      : afterSpecUpload(handle.record.versions, verified.app.catalog, appVersion, specRelease, verified.metadata.releaseUpgrades);
    await handle.begin('update', 'updating', run.lease.holder, appVersion);
    let reason: string;
    // Until the apply writes, the running version is untouched: a failure there is no reason to recover.
    let changing = false;
    let staged: RecordedBundle | undefined;
    try {
      run.events({ type: 'step', message: `uploading ${appName} ${appVersion}` });
      staged = await stageBundle(cluster, verified, options.chartRepository ?? old.repository, options);
      const bundle = staged;
      const userOverrides = verified.metadata.maintainUserOverrides ? oldOverrides : {};
      await handle.update((r) => ({ ...r, bundle, previous: old, previousUserOverrides: oldOverrides, userOverrides, versions: uploadedVersions }));
      changing = true;
      const outcome = await applyBundle(run, handle, bundle, { ...options, operation: 'update' });
      const versions = handle.record.versions;
      // Held before a phase: the update is done up to there, the target not yet deployed.
      const reason = outcome === 'held' ? `updated from ${old.version} up to a held phase; ${heldReason(handle.record)}` : `updated from ${old.version}`;
      const done = await handle.end('applied', 'succeeded', reason, {
        previous: undefined,
        previousUserOverrides: undefined,
        ...(versions ? { versions: outcome === 'held' ? { ...versions, heldOperation: 'update' as const } : deployedTarget(versions) } : {}),
      });
      if (old.payload !== bundle.payload) await deletePayload(cluster.payloads, old.payload).catch(() => undefined);
      return done;
    } catch (error) {
      if (run.signal.aborted) {
        await handle.end('apply-failed', 'aborted', reasonOf(error)).catch(() => undefined);
        throw error;
      }
      if (!resuming && (!changing || refusedBeforeChange(error))) {
        // Refused before anything of the running version changed (a check hook, a chart version published with
        // other content, …): the old version stays as it was, nothing to recover.
        await handle
          .end(before, 'refused', reasonOf(error), {
            bundle: old,
            userOverrides: oldOverrides,
            versions: oldVersions,
            previous: undefined,
            previousUserOverrides: undefined,
          })
          .catch(() => undefined);
        if (staged && staged.payload !== old.payload) await deletePayload(cluster.payloads, staged.payload).catch(() => undefined);
        throw error;
      }
      reason = reasonOf(error);
    }
    return recoverFromFailedUpdate(run, handle, { verified, old, oldOverrides, oldVersions, reason }, options);
  });
}

/** What an update refuses before it changes anything: user overrides the new version would drop, a version it may not update from. */
function refuseUnlessAllowed(verified: VerifiedBundle, old: RecordedBundle, oldOverrides: UserOverrides, options: UpdateOptions): void {
  const { appName, appVersion } = verified.metadata;
  const dropped = Object.keys(oldOverrides)
    .filter((chart) => Object.keys(oldOverrides[chart] ?? {}).length > 0)
    .sort();
  if (!verified.metadata.maintainUserOverrides && dropped.length > 0 && options.dropUserOverrides !== true) {
    throw new UpdateRefusedError(
      `${appName} ${appVersion} does not keep user overrides (maintain_user_overrides is false): the update would drop those of ${dropped.join(', ')} (flotilla override show ${appName} CHART); to update without them: --drop-user-overrides`,
    );
  }
  const from = verified.metadata.upgrades.fromVersions;
  if (from.length > 0 && !from.some((re) => re.test(old.version))) {
    throw new UpdateRefusedError(
      `${appName} ${appVersion} may update only from versions matching ${fromVersionPatterns(verified.metadata).join(', ')} (upgrades.from_versions); the cluster has ${old.version}`,
    );
  }
}

/** What the update left when it failed after changing the running version, and why. */
interface FailedUpdate {
  readonly verified: VerifiedBundle;
  readonly old: RecordedBundle;
  readonly oldOverrides: UserOverrides;
  readonly oldVersions: AppRecord['versions'];
  readonly reason: string;
}

/**
 * After a failed update: the old version applied again (`recovering`, then
 * `applied` and UpdateRecoveredError), unless the new version forbids it
 * (update_failure_no_rollback: `apply-failed`). Always throws.
 */
async function recoverFromFailedUpdate(
  run: LockedRun,
  handle: RecordHandle,
  { verified, old, oldOverrides, oldVersions, reason }: FailedUpdate,
  options: UpdateOptions,
): Promise<never> {
  const { appName, appVersion } = verified.metadata;
  if (verified.metadata.upgrades.updateFailureNoRollback) {
    await handle.end('apply-failed', 'failed', `${reason}; not recovered to ${old.version} (update_failure_no_rollback)`);
    throw new LifecycleError(
      `update of ${appName} to ${appVersion} failed: ${reason}\nnot recovered to ${old.version}: the new version sets update_failure_no_rollback`,
    );
  }
  await handle.end('recovering', 'failed', reason);
  const failed = handle.record.bundle;
  await handle.begin('recover', 'recovering', run.lease.holder, old.version);
  await handle.update((r) => ({
    ...r,
    bundle: old,
    userOverrides: oldOverrides,
    versions: oldVersions,
    previous: undefined,
    previousUserOverrides: undefined,
  }));
  run.events({ type: 'warning', message: `update to ${appVersion} failed; recovering to ${old.version}` });
  try {
    // A release still upgrading (the update timed out on another) finishes or fails before the recovery writes over it.
    await waitForSettled(run.cluster.objects, appName, [...new Set([...old.releases, ...failed.releases].map((r) => r.namespace))], {
      timeoutMs: options.timeoutMs ?? DEFAULT_RELEASE_WAIT_MS,
      signal: run.signal,
    });
    await applyBundle(run, handle, old, { ...options, operation: 'recover' });
  } catch (error) {
    await handle
      .end('apply-failed', 'failed', `recovery to ${old.version} after the failed update to ${appVersion} failed too: ${reasonOf(error)}`)
      .catch(() => undefined);
    throw new LifecycleError(`update of ${appName} to ${appVersion} failed: ${reason}\nrecovery to ${old.version} failed too: ${reasonOf(error)}`);
  }
  await handle.end('applied', 'recovered', `recovered to ${old.version} after the update to ${appVersion} failed: ${reason}`);
  if (failed.payload && failed.payload !== old.payload) await deletePayload(run.cluster.payloads, failed.payload).catch(() => undefined);
  throw new UpdateRecoveredError(`update of ${appName} to ${appVersion} failed: ${reason}\nrecovered: ${appName} is back at ${old.version}, applied`);
}
