/**
 * `flotilla remove APP`: pre-remove hooks (a check may refuse, with the
 * plugin's reason) → HelmReleases deleted in reverse dependency order, each
 * waited on until Flux has uninstalled it → the app's sources deleted →
 * post-remove hooks → `uploaded`. `flotilla delete APP` then forgets an
 * uploaded app: its record, its stored bundles and its lock.
 */
import { HELM_RELEASE_API, SOURCE_API } from '../flux/index.js';
import { APP_LABEL, MANAGED_BY, recordsConfigMapName, type KubeObject } from '../kube/index.js';
import { OperationRefusedError } from '../plugins/index.js';
import { DEFAULT_RELEASE_WAIT_MS } from './apply.js';
import type { Cluster, ObjectStore } from './cluster.js';
import { AppStateError } from './errors.js';
import type { EventSink } from './events.js';
import { decidedOrRefused, lockName, RecordHandle, reasonOf, withAppLock, type OperationOptions } from './operation.js';
import { describeKept, findLeftovers, leftBehindError, ownedObjects, type OwnedObject } from './leftovers.js';
import { deletePayload } from './payload.js';
import { completion, SYSTEM_NAMESPACE, type AppRecord } from './record.js';
import { deleteRelease, removalOrder, type ReleaseKey } from './releases.js';
import { loadVersion } from './version.js';
import { withoutDeployed } from '../catalog/index.js';

export interface RemoveOptions extends OperationOptions {
  /** How long to wait for each release to be gone. */
  readonly timeoutMs?: number;
  /** Resume suspended releases so Flux uninstalls them, instead of refusing. */
  readonly force?: boolean;
}

/** A remove refused before it deleted anything: a release is suspended (Flux would delete it without uninstalling). */
export class SuspendedReleasesError extends AppStateError {}

export async function removeApp(cluster: Cluster, appName: string, options: RemoveOptions = {}): Promise<AppRecord> {
  return withAppLock(cluster, appName, 'remove', options, async (run) => {
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    const before = handle.record.state;
    decidedOrRefused(handle.record, { operation: 'remove' }, run.events);
    // Read and checked before the state changes: a stored payload changed in the cluster refuses the remove, leaving the state as it was.
    const loaded = await loadVersion(cluster, handle.record.bundle, appName, {
      events: run.events,
      signal: run.signal,
      userOverrides: handle.record.userOverrides,
    });
    await handle.begin('remove', 'removing', run.lease.holder).catch(async (error: unknown) => {
      await loaded.dispose();
      throw error;
    });
    try {
      const known = new Map(handle.record.bundle.releases.map((r) => [r.name, r]));
      const deployed = handle.record.deployed.map((name) => known.get(name) ?? { name, namespace: loaded.namespace, dependsOn: [] });
      await resumeOrRefuseSuspended(cluster.objects, appName, deployed, options.force === true, run.events);
      run.events({ type: 'step', message: 'running remove checks and pre hooks' });
      await loaded.host.runStage({ operation: 'remove', timing: 'pre' });
      const order = removalOrder(deployed);
      let removed = 0;
      const owned: OwnedObject[] = [];
      for (const release of order) {
        // Read before the delete: Helm's storage goes with the uninstall.
        owned.push(...(await ownedObjects(cluster.objects, release)));
        run.events({ type: 'progress', progress: completion(removed, order.length, 0, release.name), elapsedMs: 0 });
        run.events({ type: 'step', message: `deleting HelmRelease ${release.namespace}/${release.name}` });
        await deleteRelease(cluster.objects, release, { timeoutMs: options.timeoutMs ?? DEFAULT_RELEASE_WAIT_MS, signal: run.signal });
        removed++;
        await handle.update((r) => ({ ...r, deployed: r.deployed.filter((n) => n !== release.name) }));
      }
      const { left, kept, checked } = await findLeftovers(cluster.objects, deployed, owned);
      if (left.length > 0) {
        // Their releases stay recorded as deployed: a remove run again checks them again.
        const owners = new Set(left.map((o) => o.release));
        const still = deployed.filter((r) => owners.has(`${r.namespace}/${r.name}`)).map((r) => r.name);
        await handle.update((r) => ({ ...r, deployed: [...new Set([...r.deployed, ...still])].sort() }));
        throw leftBehindError(appName, left);
      }
      run.events({ type: 'step', message: `no workload the releases installed remains (${checked} objects of their Helm manifests checked)` });
      if (kept.length > 0) run.events({ type: 'warning', message: describeKept(kept) });
      await deleteSources(cluster.objects, appName, [...new Set([loaded.namespace, ...deployed.map((r) => r.namespace)])]);
      run.events({ type: 'step', message: 'running remove post hooks' });
      await loaded.host.runStage({ operation: 'remove', timing: 'post' });
      // Nothing of any release runs any more: no release is deployed.
      const versions = handle.record.versions;
      return await handle.end('uploaded', 'succeeded', kept.length > 0 ? describeKept(kept) : undefined, {
        progress: completion(0, handle.record.bundle.releases.length, 0),
        ...(versions ? { versions: withoutDeployed(versions) } : {}),
      });
    } catch (error) {
      const refused = error instanceof OperationRefusedError || error instanceof SuspendedReleasesError;
      await handle
        .end(refused ? before : 'remove-failed', refused ? 'refused' : run.signal.aborted ? 'aborted' : 'failed', reasonOf(error))
        .catch(() => undefined);
      throw error;
    } finally {
      await loaded.dispose();
    }
  });
}

/**
 * Flux deletes a suspended HelmRelease without uninstalling it: its workload
 * would stay. Refused, naming each with the command that resumes it; under
 * `--force` each is resumed (a merge patch of spec.suspend) so Flux uninstalls it.
 */
async function resumeOrRefuseSuspended(
  objects: ObjectStore,
  appName: string,
  releases: readonly ReleaseKey[],
  force: boolean,
  events: EventSink,
): Promise<void> {
  const wanted = new Set(releases.map((r) => `${r.namespace}/${r.name}`));
  const suspended: KubeObject[] = [];
  for (const namespace of new Set(releases.map((r) => r.namespace))) {
    const items = await objects.list<KubeObject & { spec?: { suspend?: boolean } }>({
      apiVersion: HELM_RELEASE_API,
      kind: 'HelmRelease',
      namespace,
      labelSelector: `${APP_LABEL}=${appName}`,
    });
    suspended.push(...items.filter((item) => item.spec?.suspend === true && wanted.has(`${namespace}/${item.metadata.name}`)));
  }
  if (suspended.length === 0) return;
  const names = suspended.map((r) => `${r.metadata.namespace}/${r.metadata.name}`);
  if (!force) {
    const resume = suspended.map((r) => `flux resume helmrelease ${r.metadata.name} -n ${r.metadata.namespace}`);
    throw new SuspendedReleasesError(
      `${appName}: HelmRelease(s) ${names.join(', ')} are suspended; Flux would delete them without uninstalling, leaving their workloads. Resume them first (${resume.join('; ')}), or remove with --force to resume and uninstall them`,
    );
  }
  for (const release of suspended) {
    events({
      type: 'warning',
      message: `resuming the suspended HelmRelease ${release.metadata.namespace}/${release.metadata.name} so Flux uninstalls it (--force)`,
    });
    await objects.patch(release, { spec: { suspend: false } });
  }
}

/** The HelmRepositories an apply wrote for the app (labelled with it), once no release uses them. */
async function deleteSources(objects: ObjectStore, appName: string, namespaces: readonly string[]): Promise<void> {
  for (const namespace of namespaces) {
    const remaining = await objects.list({
      apiVersion: HELM_RELEASE_API,
      kind: 'HelmRelease',
      namespace,
      labelSelector: `${APP_LABEL}=${appName}`,
    });
    if (remaining.length > 0) continue;
    const sources = await objects.list({ apiVersion: SOURCE_API, kind: 'HelmRepository', namespace, labelSelector: `${APP_LABEL}=${appName}` });
    for (const source of sources) await objects.delete(source);
  }
}

export interface DeleteOptions extends OperationOptions {
  /** Also delete what delete otherwise keeps: the app's password Secrets, its plugins' records and the namespaces flotilla created for it. */
  readonly purge?: boolean;
}

/** What delete left in the cluster (unless purged) or deleted with `--purge`. */
export interface DeleteOutcome {
  readonly kept: readonly string[];
  readonly purged: readonly string[];
}

/**
 * `flotilla delete APP`: forget an uploaded app — its record, stored
 * bundles and lock. Charts stay in the repository (published versions never
 * change). Its generated passwords, plugin records and namespaces stay too
 * (a later upload and apply finds the same passwords), unless `--purge`.
 */
export async function deleteApp(cluster: Cluster, appName: string, options: DeleteOptions = {}): Promise<DeleteOutcome> {
  const outcome = await withAppLock(cluster, appName, 'delete', options, async (run) => {
    const { record } = await run.records.get(appName);
    decidedOrRefused(record, { operation: 'delete' }, run.events);
    const others = (await run.records.list()).filter((r) => r.name !== appName);
    const leftovers = await appLeftovers(cluster.objects, appName, record, others);
    for (const bundle of [record.bundle, record.previous]) if (bundle?.payload) await deletePayload(cluster.payloads, bundle.payload);
    if (options.purge) for (const object of leftovers) await cluster.objects.delete(object);
    await run.records.remove(appName);
    const names = leftovers.map((o) => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`);
    return options.purge ? { kept: [], purged: names } : { kept: names, purged: [] };
  });
  // The lock was released above; nothing of the app is left to guard.
  await cluster.locks.remove(SYSTEM_NAMESPACE, lockName(appName));
  return outcome;
}

/** What an app leaves behind after remove: its password Secrets and plugin records (labelled with it), and the namespaces flotilla created for it that no other app uses. */
async function appLeftovers(objects: ObjectStore, appName: string, record: AppRecord, others: readonly AppRecord[]): Promise<KubeObject[]> {
  const namespaces = [...new Set(record.bundle.releases.map((r) => r.namespace))].sort();
  const found: KubeObject[] = [];
  for (const namespace of namespaces) {
    found.push(
      ...(await objects.list({ apiVersion: 'v1', kind: 'Secret', namespace, labelSelector: `${APP_LABEL}=${appName}` })).map((o) => ({
        ...o,
        apiVersion: 'v1',
        kind: 'Secret',
      })),
    );
    const records = await objects.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: recordsConfigMapName(appName), namespace } });
    if (records) found.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: recordsConfigMapName(appName), namespace } });
  }
  const shared = new Set(others.flatMap((r) => r.bundle.releases.map((release) => release.namespace)));
  for (const namespace of namespaces.filter((n) => !shared.has(n))) {
    const object = await objects.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    if (object?.metadata?.labels?.['app.kubernetes.io/managed-by'] === MANAGED_BY['app.kubernetes.io/managed-by'])
      found.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  }
  return found;
}
