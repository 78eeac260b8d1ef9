/**
 * `flotilla remove APP`: pre-remove hooks (a check may refuse, with the
 * plugin's reason) → HelmReleases deleted in reverse dependency order, each
 * waited on until Flux has uninstalled it → the app's sources deleted →
 * post-remove hooks → `uploaded`. `flotilla delete APP` then forgets an
 * uploaded app: its record, its stored bundles and its lock.
 */
import { HELM_RELEASE_API, SOURCE_API } from '../flux/index.js';
import { APP_LABEL, deleteObject, listObjects, kubeRead, type KubeClient } from '../kube/index.js';
import { OperationRefusedError } from '../plugins/index.js';
import { DEFAULT_APPLY_TIMEOUT_MS } from './apply.js';
import { AppStateError } from './errors.js';
import { lockName, RecordHandle, reasonOf, withAppLock, type OperationOptions } from './operation.js';
import { deletePayload } from './payload.js';
import { SYSTEM_NAMESPACE, type AppRecord, type AppState } from './record.js';
import { deleteRelease, removalOrder } from './releases.js';
import { loadVersion } from './version.js';

export interface RemoveOptions extends OperationOptions {
  /** How long to wait for each release to be gone. */
  readonly timeoutMs?: number;
}

const REMOVE_FROM: ReadonlySet<AppState> = new Set(['applied', 'apply-failed', 'applying', 'removing', 'remove-failed', 'updating', 'recovering']);

export async function removeApp(client: KubeClient, appName: string, options: RemoveOptions = {}): Promise<AppRecord> {
  return withAppLock(client, appName, 'remove', options, async (run) => {
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    const before = handle.record.state;
    if (!REMOVE_FROM.has(before)) throw new AppStateError(`${appName} is ${before}: nothing is applied to remove`);
    // Read and checked before the state changes: a stored payload changed in the cluster refuses the remove, leaving the state as it was.
    const loaded = await loadVersion(client, handle.record.bundle, appName, { events: run.events, signal: run.signal, userOverrides: handle.record.userOverrides });
    await handle.begin('remove', 'removing', run.lease.holder).catch(async (error: unknown) => {
      await loaded.dispose();
      throw error;
    });
    try {
      run.events({ type: 'step', message: 'running remove checks and pre hooks' });
      await loaded.host.runStage({ operation: 'remove', timing: 'pre' });
      const known = new Map(handle.record.bundle.releases.map((r) => [r.name, r]));
      const deployed = handle.record.deployed.map((name) => known.get(name) ?? { name, namespace: loaded.namespace, dependsOn: [] });
      const order = removalOrder(deployed);
      let removed = 0;
      for (const release of order) {
        run.events({ type: 'progress', progress: { ready: removed, total: order.length, current: release.name, percent: Math.round((removed / Math.max(1, order.length)) * 100) }, elapsedMs: 0 });
        run.events({ type: 'step', message: `deleting HelmRelease ${release.namespace}/${release.name}` });
        await deleteRelease(client, release, { timeoutMs: options.timeoutMs ?? DEFAULT_APPLY_TIMEOUT_MS, signal: run.signal });
        removed++;
        await handle.update((r) => ({ ...r, deployed: r.deployed.filter((n) => n !== release.name) }));
      }
      await deleteSources(client, appName, [...new Set([loaded.namespace, ...deployed.map((r) => r.namespace)])]);
      run.events({ type: 'step', message: 'running remove post hooks' });
      await loaded.host.runStage({ operation: 'remove', timing: 'post' });
      return await handle.end('uploaded', 'succeeded', undefined, { progress: { ready: 0, total: handle.record.bundle.releases.length, percent: 0 } });
    } catch (error) {
      const refused = error instanceof OperationRefusedError;
      await handle.end(refused ? before : 'remove-failed', refused ? 'refused' : run.signal.aborted ? 'aborted' : 'failed', reasonOf(error)).catch(() => undefined);
      throw error;
    } finally {
      await loaded.dispose();
    }
  });
}

/** The HelmRepositories an apply wrote for the app (labelled with it), once no release uses them. */
async function deleteSources(client: KubeClient, appName: string, namespaces: readonly string[]): Promise<void> {
  for (const namespace of namespaces) {
    const { items: remaining } = await listObjects(client, { apiVersion: HELM_RELEASE_API, kind: 'HelmRelease', namespace, labelSelector: `${APP_LABEL}=${appName}` });
    if (remaining.length > 0) continue;
    const { items } = await listObjects(client, { apiVersion: SOURCE_API, kind: 'HelmRepository', namespace, labelSelector: `${APP_LABEL}=${appName}` });
    for (const source of items) await deleteObject(client, source);
  }
}

/** `flotilla delete APP`: forget an uploaded app — its record, stored bundles and lock. Charts stay in the repository (published versions never change). */
export async function deleteApp(client: KubeClient, appName: string, options: OperationOptions = {}): Promise<void> {
  await withAppLock(client, appName, 'delete', options, async (run) => {
    const { record } = await run.records.get(appName);
    if (!['uploaded', 'upload-failed', 'uploading'].includes(record.state) || record.deployed.length > 0) {
      throw new AppStateError(`${appName} is ${record.state}${record.deployed.length > 0 ? ` with ${record.deployed.length} release(s) in the cluster` : ''}; remove it first (flotilla remove ${appName})`);
    }
    for (const bundle of [record.bundle, record.previous]) if (bundle?.payload) await deletePayload(client, bundle.payload);
    await run.records.remove(appName);
  });
  // The lock was released above; nothing of the app is left to guard.
  await kubeRead({ verb: 'delete', kind: 'Lease', namespace: SYSTEM_NAMESPACE, name: lockName(appName) }, () => client.coordination.deleteNamespacedLease({ name: lockName(appName), namespace: SYSTEM_NAMESPACE }));
}
