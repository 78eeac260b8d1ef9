/**
 * What a release installed, and whether any of it outlived the release.
 *
 * Before remove deletes a HelmRelease it reads what Helm's uninstall will
 * delete: the objects of the release's manifest in Helm's storage (the
 * Secret `sh.helm.release.v1.NAME.vN` of its latest revision, labelled
 * owner=helm, as `helm` itself reads it). Once every release is gone, each
 * of those objects still there was left by the uninstall; so is every
 * workload still carrying helm-controller's labels of a removed release (a
 * release uninstalled earlier without its manifest: a suspended one, a
 * remove run again). A workload left fails the remove; other objects Helm
 * kept on purpose (`helm.sh/resource-policy: keep`, e.g. a volume's claim)
 * are named and stay.
 */
import { gunzipSync } from 'node:zlib';
import { mapConcurrently } from '../concurrency/index.js';
import { FLUX_OWNER_NAME, FLUX_OWNER_NAMESPACE, HELM_RELEASE_API } from '../flux/index.js';
import type { KubeObject } from '../kube/index.js';
import { parseYamlStream } from '../yaml/index.js';
import type { ObjectStore } from './cluster.js';
import { LifecycleError } from './errors.js';
import type { ReleaseKey } from './releases.js';

/** Workloads the releases installed that are still there after every HelmRelease is gone. */
export class LeftBehindError extends LifecycleError {}

/** Helm's annotation that keeps an object through an uninstall. */
const RESOURCE_POLICY = 'helm.sh/resource-policy';

/** Kinds a release's workload is made of: what must be gone once Flux has uninstalled it. */
const WORKLOAD_KINDS = [
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'apps/v1', kind: 'StatefulSet' },
  { apiVersion: 'apps/v1', kind: 'DaemonSet' },
  { apiVersion: 'batch/v1', kind: 'Job' },
  { apiVersion: 'batch/v1', kind: 'CronJob' },
  { apiVersion: 'v1', kind: 'Service' },
] as const;
const isWorkload = (kind: string) => WORKLOAD_KINDS.some((w) => w.kind === kind);

/** One object a release installed. */
export interface OwnedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  /** The HelmRelease that installed it (`namespace/name`). */
  readonly release: string;
  /** Its manifest asks Helm to keep it through an uninstall. */
  readonly kept: boolean;
}

type StoredHelmRelease = KubeObject & {
  spec?: { releaseName?: string; storageNamespace?: string };
  status?: { storageNamespace?: string; history?: { name?: string }[] };
};

/** What Helm stores of a release (the fields read here). */
interface HelmStoredRelease {
  readonly namespace?: string;
  readonly manifest?: string;
}

/** Helm's release text in a storage Secret: base64 (inside the Secret's own base64) of gzipped JSON, as Helm's storage driver encodes it. */
function decodeHelmRelease(data: string, where: string): HelmStoredRelease {
  const bytes = Buffer.from(Buffer.from(data, 'base64').toString('utf8'), 'base64');
  const gzipped = bytes[0] === 0x1f && bytes[1] === 0x8b;
  try {
    return JSON.parse((gzipped ? gunzipSync(bytes, { maxOutputLength: 256 * 1024 * 1024 }) : bytes).toString('utf8')) as HelmStoredRelease;
  } catch (error) {
    throw new LifecycleError(`${where}: not a Helm release as Helm stores one: ${(error as Error).message}`);
  }
}

/** The objects of a release's latest revision in Helm's storage; none when Flux never installed it (or it is gone). */
export async function ownedObjects(objects: ObjectStore, release: ReleaseKey): Promise<OwnedObject[]> {
  const hr = await objects.read<StoredHelmRelease>({
    apiVersion: HELM_RELEASE_API,
    kind: 'HelmRelease',
    metadata: { name: release.name, namespace: release.namespace },
  });
  if (!hr) return [];
  const storageNamespace = hr.status?.storageNamespace ?? hr.spec?.storageNamespace ?? release.namespace;
  const releaseName = hr.status?.history?.[0]?.name ?? hr.spec?.releaseName ?? release.name;
  const items = await objects.list<KubeObject & { data?: { release?: string } }>({
    apiVersion: 'v1',
    kind: 'Secret',
    namespace: storageNamespace,
    labelSelector: `owner=helm,name=${releaseName}`,
  });
  const latest = items.sort((a, b) => Number(b.metadata.labels?.version ?? 0) - Number(a.metadata.labels?.version ?? 0))[0];
  if (!latest?.data?.release) return [];
  const where = `Secret ${storageNamespace}/${latest.metadata.name}`;
  const stored = decodeHelmRelease(latest.data.release, where);
  const owned: OwnedObject[] = [];
  for (const doc of parseYamlStream(stored.manifest ?? '', `${where} (manifest)`)) {
    const object = doc as Partial<KubeObject> | null;
    if (!object?.kind || !object.apiVersion || !object.metadata?.name) continue;
    if (!(await objects.serves(object.apiVersion, object.kind).catch(() => false))) continue;
    // Helm puts a namespaced object that names none in the release's namespace; a cluster-scoped kind's is not used to find it.
    const namespace = object.metadata.namespace ?? stored.namespace ?? release.namespace;
    owned.push({
      apiVersion: object.apiVersion,
      kind: object.kind,
      name: object.metadata.name,
      namespace,
      release: `${release.namespace}/${release.name}`,
      kept: object.metadata.annotations?.[RESOURCE_POLICY] === 'keep',
    });
  }
  return owned;
}

const describeObject = (o: Pick<OwnedObject, 'kind' | 'name' | 'namespace'>) => `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
const deleteCommand = (o: Pick<OwnedObject, 'kind' | 'name' | 'namespace'>) =>
  `kubectl delete ${o.kind.toLowerCase()} ${o.name}${o.namespace ? ` -n ${o.namespace}` : ''}`;

/** Objects read back at once when checking what an uninstall left. */
const READS_AT_ONCE = 8;

/** What remained after the releases were uninstalled: workloads left (a failure) and objects Helm kept on purpose. */
export interface Leftovers {
  readonly left: readonly OwnedObject[];
  readonly kept: readonly OwnedObject[];
  /** Objects of the releases' manifests checked. */
  readonly checked: number;
}

/** Once every HelmRelease of `releases` is gone: which of `owned` remain, and which workloads still carry those releases' labels. */
export async function findLeftovers(objects: ObjectStore, releases: readonly ReleaseKey[], owned: readonly OwnedObject[]): Promise<Leftovers> {
  const left: OwnedObject[] = [];
  const kept: OwnedObject[] = [];
  const seen = new Set<string>();
  // One read an object, a few at once: an app's releases own hundreds.
  const found = await mapConcurrently(owned, READS_AT_ONCE, (object) =>
    objects.read({
      apiVersion: object.apiVersion,
      kind: object.kind,
      metadata: { name: object.name, ...(object.namespace ? { namespace: object.namespace } : {}) },
    }),
  );
  for (const [i, object] of owned.entries()) {
    const there = found[i];
    // Being deleted (a finalizer still runs): the uninstall asked for it to go.
    if (!there || there.metadata.deletionTimestamp) continue;
    seen.add(describeObject(object));
    (object.kept && !isWorkload(object.kind) ? kept : left).push(object);
  }
  const byNamespace = new Map<string, Set<string>>();
  for (const r of releases) byNamespace.set(r.namespace, (byNamespace.get(r.namespace) ?? new Set()).add(r.name));
  for (const [hrNamespace, names] of byNamespace) {
    for (const kind of WORKLOAD_KINDS) {
      if (!(await objects.serves(kind.apiVersion, kind.kind).catch(() => false))) continue;
      const items = await objects.list({ ...kind, labelSelector: `${FLUX_OWNER_NAMESPACE}=${hrNamespace}` });
      for (const item of items) {
        const owner = item.metadata.labels?.[FLUX_OWNER_NAME];
        const object = { ...kind, name: item.metadata.name, ...(item.metadata.namespace ? { namespace: item.metadata.namespace } : {}) };
        if (!owner || !names.has(owner) || seen.has(describeObject(object))) continue;
        seen.add(describeObject(object));
        left.push({ ...object, release: `${hrNamespace}/${owner}`, kept: item.metadata.annotations?.[RESOURCE_POLICY] === 'keep' });
      }
    }
  }
  return { left, kept, checked: owned.length };
}

/** What the record and the user are told of objects Helm kept on purpose. */
export function describeKept(kept: readonly OwnedObject[]): string {
  return `kept by ${RESOURCE_POLICY}: keep, as Helm keeps them: ${kept.map(describeObject).join(', ')} (delete them when they are no longer wanted: ${kept.map(deleteCommand).join('; ')})`;
}

/** The failure when workloads were left: each named with its release and why, and what to do. */
export function leftBehindError(appName: string, left: readonly OwnedObject[]): LeftBehindError {
  const named = left.map((o) => `${describeObject(o)} (HelmRelease ${o.release}${o.kept ? `, kept by its ${RESOURCE_POLICY}: keep annotation` : ''})`);
  return new LeftBehindError(
    `every HelmRelease is gone, but Flux's uninstall left what they installed: ${named.join(', ')}. ` +
      `Delete them if they are no longer wanted (${left.map(deleteCommand).join('; ')}), then run flotilla remove ${appName} again to finish`,
  );
}
