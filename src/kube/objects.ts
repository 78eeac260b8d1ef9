/**
 * Objects of any kind, as flotilla writes and reads them: server-side apply
 * under one field manager, reads, deletes and the API path of a kind (found
 * by discovery, so custom resources work like built-in ones).
 */
import type { KubernetesObject, V1APIResource } from '@kubernetes/client-node';
import type { KubeClient } from './client.js';
import { loadClientModule } from './client.js';
import { mapConcurrently } from '../concurrency/index.js';
import { NotFound } from './errors.js';
import { kubeCall, kubeRead } from './retry.js';

/** The field manager of everything flotilla applies: `kubectl get -o yaml --show-managed-fields` names it. */
export const FIELD_MANAGER = 'flotilla';

/** A Kubernetes object as JSON: the identifying fields typed, the rest open. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly resourceVersion?: string;
    readonly uid?: string;
    readonly generation?: number;
    readonly creationTimestamp?: string | Date;
    readonly deletionTimestamp?: string | Date;
  };
  readonly [field: string]: unknown;
}

/** Which objects: one kind, one namespace (or cluster-wide), optionally by labels. */
export interface KindSelector {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly labelSelector?: string;
}

export interface ApplyOptions {
  /**
   * Take over fields another manager set (a `kubectl edit`, an earlier tool).
   * Right for objects flotilla owns outright (its releases, sources, override
   * Secrets); without it such a field is a Conflict naming the other manager.
   */
  readonly force?: boolean;
  /** Ask the server to validate and default without storing. */
  readonly dryRun?: boolean;
  /** Requests in flight at once (default 8); objects are independent, the caller orders groups. */
  readonly concurrency?: number;
}

const callOf = (verb: string, object: Pick<KubeObject, 'kind' | 'metadata'>) => ({
  verb,
  kind: object.kind,
  name: object.metadata.name,
  ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
});

/**
 * Server-side apply of each object (several at once); returns what the
 * server stored, in input order. The client looks up an apiVersion's
 * resources (discovery) on its first request for it and keeps them; so one
 * object of each apiVersion is applied before the others start, which would
 * otherwise each look it up again.
 */
export async function serverSideApply(client: Pick<KubeClient, 'objects'>, objects: readonly KubeObject[], options: ApplyOptions = {}): Promise<KubeObject[]> {
  const { PatchStrategy } = await loadClientModule();
  const concurrency = options.concurrency ?? 8;
  const stored = new Map<KubeObject, KubeObject>();
  const apply = async (object: KubeObject): Promise<void> => {
    // Apply bodies carry no server-owned fields: a stale resourceVersion would turn the apply into a conflict.
    const { resourceVersion: _rv, uid: _uid, generation: _gen, creationTimestamp: _ct, deletionTimestamp: _dt, ...metadata } = object.metadata;
    const body = { ...object, metadata } as KubernetesObject;
    const result = await kubeCall(callOf('apply', object), () =>
      client.objects.patch(body, undefined, options.dryRun ? 'All' : undefined, FIELD_MANAGER, options.force ?? false, PatchStrategy.ServerSideApply),
    );
    stored.set(object, result as KubeObject);
  };
  const onePerApiVersion = [...new Map(objects.map((object) => [object.apiVersion, object])).values()];
  await mapConcurrently(onePerApiVersion, concurrency, apply);
  await mapConcurrently(
    objects.filter((object) => !stored.has(object)),
    concurrency,
    apply,
  );
  return objects.map((object) => stored.get(object) as KubeObject);
}

/** One object, or undefined when it does not exist. */
export async function readObject<T extends KubeObject = KubeObject>(
  client: Pick<KubeClient, 'objects'>,
  ref: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>,
): Promise<T | undefined> {
  const spec = {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: { name: ref.metadata.name, ...(ref.metadata.namespace ? { namespace: ref.metadata.namespace } : {}) },
  };
  return (await kubeRead(callOf('read', ref), () => client.objects.read(spec))) as T | undefined;
}

export async function listObjects<T extends KubeObject = KubeObject>(
  client: Pick<KubeClient, 'objects'>,
  selector: KindSelector,
): Promise<{ items: T[]; resourceVersion: string }> {
  const call = { verb: 'list', kind: selector.kind, ...(selector.namespace ? { namespace: selector.namespace } : {}) };
  const list = await kubeCall(call, () =>
    client.objects.list(selector.apiVersion, selector.kind, selector.namespace, undefined, undefined, undefined, undefined, selector.labelSelector),
  );
  return { items: list.items as unknown as T[], resourceVersion: list.metadata?.resourceVersion ?? '' };
}

/**
 * A JSON merge patch of one object (`kubectl patch --type merge`): for a
 * field flotilla does not own, where a server-side apply of a partial object
 * would drop the fields flotilla's earlier applies own.
 */
export async function mergePatch(
  client: Pick<KubeClient, 'objects'>,
  ref: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>,
  patch: Record<string, unknown>,
): Promise<KubeObject> {
  const { PatchStrategy } = await loadClientModule();
  const metadata = {
    ...(patch.metadata as Record<string, unknown> | undefined),
    name: ref.metadata.name,
    ...(ref.metadata.namespace ? { namespace: ref.metadata.namespace } : {}),
  };
  const body = { ...patch, apiVersion: ref.apiVersion, kind: ref.kind, metadata } as KubernetesObject;
  return (await kubeCall(callOf('patch', ref), () =>
    client.objects.patch(body, undefined, undefined, FIELD_MANAGER, undefined, PatchStrategy.MergePatch),
  )) as KubeObject;
}

/** Deletes an object; true when it was there. Deletion may finish later (finalizers): watch for it to go. */
export async function deleteObject(client: Pick<KubeClient, 'objects'>, ref: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): Promise<boolean> {
  const spec = {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: { name: ref.metadata.name, ...(ref.metadata.namespace ? { namespace: ref.metadata.namespace } : {}) },
  };
  const result = await kubeRead(callOf('delete', ref), () => client.objects.delete(spec, undefined, undefined, undefined, undefined, 'Background'));
  return result !== undefined;
}

/** A kind as discovery describes it: its plural resource name and whether it is namespaced. */
export interface ServedKind {
  readonly name: string;
  readonly namespaced: boolean;
}

const discovered = new WeakMap<object, Map<string, Promise<readonly V1APIResource[]>>>();

/** The kind as the server serves it, or undefined when its group/version is served without it; NotFound when the group/version is not served at all. */
export async function discoverKind(client: Pick<KubeClient, 'core' | 'custom'>, apiVersion: string, kind: string): Promise<ServedKind | undefined> {
  let cache = discovered.get(client);
  if (!cache) discovered.set(client, (cache = new Map<string, Promise<readonly V1APIResource[]>>()));
  let resources = cache.get(apiVersion);
  if (!resources) {
    const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
    resources = kubeCall(
      { verb: 'discover', kind: apiVersion },
      async () => (group === '' ? await client.core.getAPIResources() : await client.custom.getAPIResources({ group, version })).resources,
    );
    cache.set(apiVersion, resources);
    resources.catch(() => cache.delete(apiVersion));
  }
  const found = (await resources).find((r) => r.kind === kind && !r.name.includes('/'));
  return found && { name: found.name, namespaced: found.namespaced };
}

/** The API path of a kind's collection (`/apis/helm.toolkit.fluxcd.io/v2/namespaces/x/helmreleases`), from discovery. */
export async function collectionPath(
  client: Pick<KubeClient, 'core' | 'custom'>,
  selector: Pick<KindSelector, 'apiVersion' | 'kind' | 'namespace'>,
): Promise<string> {
  const resource = await discoverKind(client, selector.apiVersion, selector.kind);
  if (!resource)
    throw new NotFound({ verb: 'discover', kind: selector.kind }, 404, 'NotFound', `the server does not serve kind ${selector.kind} in ${selector.apiVersion}`);
  const base = selector.apiVersion.includes('/') ? `/apis/${selector.apiVersion}` : `/api/${selector.apiVersion}`;
  const scope = resource.namespaced && selector.namespace ? `/namespaces/${encodeURIComponent(selector.namespace)}` : '';
  return `${base}${scope}/${resource.name}`;
}
