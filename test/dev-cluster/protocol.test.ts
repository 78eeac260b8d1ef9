/**
 * The dev cluster TEST FIXTURE speaks the Kubernetes REST protocol: checked
 * through the real @kubernetes/client-node.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiException,
  ApisApi,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
  type KubernetesObject,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { startDevCluster, type DevCluster } from '../support/dev-cluster/index.js';

let cluster: DevCluster;
let kc: KubeConfig;
let core: CoreV1Api;
let objects: KubernetesObjectApi;
let custom: CustomObjectsApi;

// Sent through client-node's model, which knows the extension by its TypeScript name (the wire name would be dropped,
// leaving a schema that prunes every field, as the real server would).
const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', shortNames: ['wg'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
      },
    ],
  },
};

/** The Status body of a failed call. */
async function failure(call: Promise<unknown>): Promise<{ code: number; reason: string; message: string; details?: Record<string, unknown> }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiException) {
      const body = typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
      expect(body.kind).toBe('Status');
      expect(body.code).toBe(error.code);
      return body;
    }
    throw error;
  }
  throw new Error('the call succeeded');
}

beforeAll(async () => {
  cluster = await startDevCluster({ registry: false, flux: false, bookmarkIntervalMs: 200, historySize: 400 });
  kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  expect(kc.getCurrentContext()).toBe('flotilla-dev');
  core = kc.makeApiClient(CoreV1Api);
  objects = KubernetesObjectApi.makeApiClient(kc);
  custom = kc.makeApiClient(CustomObjectsApi);
  await core.createNamespace({ body: { metadata: { name: 'proto' } } });
  await objects.create(WIDGET_CRD);
});

afterAll(async () => {
  await cluster?.stop();
});

describe('dev cluster (test fixture): CRUD', () => {
  it('creates, reads, lists by label, updates and deletes with Kubernetes metadata', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'proto', body: { metadata: { name: 'one', labels: { tier: 'a' } }, data: { k: 'v' } } });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(Number(created.metadata?.resourceVersion)).toBeGreaterThan(0);
    expect(created.metadata?.managedFields?.[0]).toMatchObject({ operation: 'Update', fieldsType: 'FieldsV1' });
    await core.createNamespacedConfigMap({ namespace: 'proto', body: { metadata: { name: 'two', labels: { tier: 'b' } } } });
    await core.createNamespacedConfigMap({ namespace: 'proto', body: { metadata: { name: 'three' } } });
    const names = async (labelSelector: string) =>
      (await core.listNamespacedConfigMap({ namespace: 'proto', labelSelector })).items.map((i) => i.metadata?.name);
    expect(await names('tier=a')).toEqual(['one']);
    expect(await names('tier!=a')).toEqual(['three', 'two']);
    expect(await names('tier in (a,b)')).toEqual(['one', 'two']);
    expect(await names('tier notin (a)')).toEqual(['three', 'two']);
    expect(await names('tier')).toEqual(['one', 'two']);
    expect(await names('!tier')).toEqual(['three']);
    const byName = await core.listNamespacedConfigMap({ namespace: 'proto', fieldSelector: 'metadata.name=two' });
    expect(byName.items.map((i) => i.metadata?.name)).toEqual(['two']);
    const unsupported = await failure(core.listNamespacedConfigMap({ namespace: 'proto', fieldSelector: 'data.k=v' }));
    expect(unsupported).toMatchObject({ code: 400, reason: 'BadRequest', message: 'field label not supported: data.k' });
    const page = await core.listNamespacedConfigMap({ namespace: 'proto', limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.metadata?.remainingItemCount).toBe(1);
    const rest = await core.listNamespacedConfigMap({ namespace: 'proto', limit: 2, _continue: page.metadata!._continue! });
    expect(rest.items.map((i) => i.metadata?.name)).toEqual(['two']);

    const updated = await core.replaceNamespacedConfigMap({ name: 'one', namespace: 'proto', body: { ...created, data: { k: 'w' } } });
    expect(updated.data).toEqual({ k: 'w' });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion));
    expect(updated.metadata?.uid).toBe(created.metadata?.uid);

    const stale = await failure(core.replaceNamespacedConfigMap({ name: 'one', namespace: 'proto', body: { ...created, data: { k: 'x' } } }));
    expect(stale).toMatchObject({ code: 409, reason: 'Conflict', details: { name: 'one', kind: 'configmaps' } });
    expect(stale.message).toBe(
      'Operation cannot be fulfilled on configmaps "one": the object has been modified; please apply your changes to the latest version and try again',
    );

    await core.deleteNamespacedConfigMap({ name: 'one', namespace: 'proto' });
    const gone = await failure(core.readNamespacedConfigMap({ name: 'one', namespace: 'proto' }));
    expect(gone).toMatchObject({ code: 404, reason: 'NotFound', message: 'configmaps "one" not found', details: { name: 'one', kind: 'configmaps' } });
  });

  it('answers AlreadyExists, a missing namespace, an invalid name and a mismatched namespace as the real server does', async () => {
    const exists = await failure(core.createNamespacedConfigMap({ namespace: 'proto', body: { metadata: { name: 'two' } } }));
    expect(exists).toMatchObject({ code: 409, reason: 'AlreadyExists', message: 'configmaps "two" already exists' });
    const noNamespace = await failure(core.createNamespacedConfigMap({ namespace: 'nowhere', body: { metadata: { name: 'x' } } }));
    expect(noNamespace).toMatchObject({ code: 404, reason: 'NotFound', message: 'namespaces "nowhere" not found' });
    const badName = await failure(core.createNamespacedConfigMap({ namespace: 'proto', body: { metadata: { name: 'Bad_Name' } } }));
    expect(badName).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(badName.message).toContain('ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"');
    const otherNamespace = await failure(core.createNamespacedConfigMap({ namespace: 'proto', body: { metadata: { name: 'x', namespace: 'default' } } }));
    expect(otherNamespace).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'the namespace of the provided object does not match the namespace sent on the request',
    });
  });

  it('requires a resourceVersion to update a custom resource, answers 415 to a strategic merge patch of one, and applies JSON and merge patches', async () => {
    const widget = (await objects.create({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: 'proto' },
      spec: { size: 1 },
    } as KubernetesObject)) as KubernetesObject & { spec: { size: number } };
    const { resourceVersion: _rv, ...withoutVersion } = widget.metadata!;
    const unconditional = await failure(objects.replace({ ...widget, metadata: withoutVersion }));
    expect(unconditional).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(unconditional.message).toContain('metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
    const strategic = await failure(
      objects.patch({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'proto' }, spec: { size: 2 } } as KubernetesObject),
    );
    expect(strategic).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
    expect(strategic.message).toContain('application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
    const merged = (await objects.patch(
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'proto' }, spec: { colour: 'red' } } as KubernetesObject,
      undefined,
      undefined,
      'test',
      undefined,
      PatchStrategy.MergePatch,
    )) as KubernetesObject & { spec: object };
    expect(merged.spec).toEqual({ size: 1, colour: 'red' });
    const patched = (await custom.patchNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      namespace: 'proto',
      plural: 'widgets',
      name: 'w1',
      body: [{ op: 'replace', path: '/spec/size', value: 3 }],
    })) as { spec: object; metadata: { generation: number } };
    expect(patched.spec).toEqual({ size: 3, colour: 'red' });
    expect(patched.metadata.generation).toBe(3);
  });

  it('keeps spec and status apart on a status subresource and bumps generation on spec changes only', async () => {
    const created = (await objects.create({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w2', namespace: 'proto' },
      spec: { size: 1 },
      status: { phase: 'ignored' },
    } as KubernetesObject)) as KubernetesObject & { status?: object };
    expect(created.status).toBeUndefined();
    expect(created.metadata?.generation).toBe(1);
    const withStatus = (await custom.replaceNamespacedCustomObjectStatus({
      group: 'example.com',
      version: 'v1',
      namespace: 'proto',
      plural: 'widgets',
      name: 'w2',
      body: { ...created, spec: { size: 99 }, status: { phase: 'Ready' } },
    })) as { spec: object; status: object; metadata: { generation: number } };
    expect(withStatus.spec).toEqual({ size: 1 });
    expect(withStatus.status).toEqual({ phase: 'Ready' });
    expect(withStatus.metadata.generation).toBe(1);
    const withSpec = (await custom.replaceNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      namespace: 'proto',
      plural: 'widgets',
      name: 'w2',
      body: { ...withStatus, spec: { size: 2 }, status: { phase: 'overwritten?' } },
    })) as { spec: object; status: object; metadata: { generation: number } };
    expect(withSpec.status).toEqual({ phase: 'Ready' });
    expect(withSpec.metadata.generation).toBe(2);
    const labelled = (await custom.patchNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      namespace: 'proto',
      plural: 'widgets',
      name: 'w2',
      body: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }],
    })) as { metadata: { generation: number } };
    expect(labelled.metadata.generation).toBe(2);
  });

  it('holds a deleted object with finalizers (deletionTimestamp) until the last finalizer goes', async () => {
    await core.createNamespacedConfigMap({ namespace: 'proto', body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    await core.deleteNamespacedConfigMap({ name: 'held', namespace: 'proto', propagationPolicy: 'Foreground' });
    const held = await core.readNamespacedConfigMap({ name: 'held', namespace: 'proto' });
    expect(held.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    await core.replaceNamespacedConfigMap({ name: 'held', namespace: 'proto', body: { ...held, metadata: { ...held.metadata, finalizers: [] } } });
    expect((await failure(core.readNamespacedConfigMap({ name: 'held', namespace: 'proto' }))).code).toBe(404);
  });

  it('empties a deleted namespace, then removes it', async () => {
    const created = await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    expect(created.status?.phase).toBe('Active');
    expect(created.spec?.finalizers).toEqual(['kubernetes']);
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'c' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    await core.deleteNamespace({ name: 'doomed' });
    const terminating = await failure(core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'late' } } }));
    expect(terminating).toMatchObject({ code: 403, reason: 'Forbidden' });
    expect(terminating.message).toContain('because it is being terminated');
    expect((await core.readNamespace({ name: 'doomed' })).status?.phase).toBe('Terminating');
    await cluster.waitFor(() => cluster.get('v1', 'ConfigMap', 'doomed', 'c') === undefined, 5_000);
    await core.patchNamespacedConfigMap({ name: 'held', namespace: 'doomed', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    await cluster.waitFor(() => cluster.get('v1', 'Namespace', '', 'doomed') === undefined, 5_000);
  });
});

describe('dev cluster (test fixture): discovery and built-in kinds', () => {
  it('serves the registered groups only: without Flux there are no Flux kinds', async () => {
    const groups = (await kc.makeApiClient(ApisApi).getAPIVersions()).groups.map((g) => g.name);
    expect(groups).toEqual(
      expect.arrayContaining(['apps', 'batch', 'coordination.k8s.io', 'rbac.authorization.k8s.io', 'apiextensions.k8s.io', 'example.com']),
    );
    expect(groups.filter((g) => g.includes('fluxcd'))).toEqual([]);
    const missing = await failure(
      custom.listNamespacedCustomObject({ group: 'helm.toolkit.fluxcd.io', version: 'v2', namespace: 'proto', plural: 'helmreleases' }),
    );
    expect(missing).toMatchObject({ code: 404, reason: 'NotFound' });
  });

  it('keeps Leases with optimistic concurrency, as a lock needs', async () => {
    const leases = kc.makeApiClient(CoordinationV1Api);
    const lease = await leases.createNamespacedLease({
      namespace: 'proto',
      body: { metadata: { name: 'lock' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 30, acquireTime: new Date() } },
    });
    expect(lease.spec?.holderIdentity).toBe('a');
    await leases.replaceNamespacedLease({ name: 'lock', namespace: 'proto', body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } } });
    const lost = await failure(
      leases.replaceNamespacedLease({ name: 'lock', namespace: 'proto', body: { ...lease, spec: { ...lease.spec, holderIdentity: 'c' } } }),
    );
    expect(lost).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on leases.coordination.k8s.io "lock": the object has been modified; please apply your changes to the latest version and try again',
    });
  });
});

describe('dev cluster (test fixture): watch', () => {
  it('resumes from a list resourceVersion, sends selector transitions and bookmarks, and ends on request', async () => {
    const list = await core.listNamespacedConfigMap({ namespace: 'proto' });
    const events: Array<[string, string | undefined, string | undefined]> = [];
    const bookmarks: string[] = [];
    let done = false;
    const controller = await new Watch(kc).watch(
      '/api/v1/namespaces/proto/configmaps',
      { resourceVersion: list.metadata!.resourceVersion!, allowWatchBookmarks: true, labelSelector: 'watched=yes' },
      (type, object: V1ConfigMap) => {
        if (type === 'BOOKMARK') bookmarks.push(object.metadata!.resourceVersion!);
        else events.push([type, object.metadata?.name, object.data?.n]);
      },
      () => {
        done = true;
      },
    );
    await core.createNamespacedConfigMap({ namespace: 'proto', body: { metadata: { name: 'w', labels: { watched: 'yes' } }, data: { n: '1' } } });
    await core.createNamespacedConfigMap({ namespace: 'proto', body: { metadata: { name: 'unwatched' } } });
    const patch = (path: string, value: string) => core.patchNamespacedConfigMap({ name: 'w', namespace: 'proto', body: [{ op: 'replace', path, value }] });
    await patch('/data/n', '2');
    await patch('/metadata/labels/watched', 'no');
    await patch('/metadata/labels/watched', 'yes');
    await core.deleteNamespacedConfigMap({ name: 'w', namespace: 'proto' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    controller.abort();
    expect(events).toEqual([
      ['ADDED', 'w', '1'],
      ['MODIFIED', 'w', '2'],
      ['DELETED', 'w', '2'],
      ['ADDED', 'w', '2'],
      ['DELETED', 'w', '2'],
    ]);
    expect(bookmarks.length).toBeGreaterThan(0);
    expect(Number(bookmarks[bookmarks.length - 1])).toBeGreaterThan(Number(list.metadata!.resourceVersion));
    await cluster.waitFor(() => true);
    expect(done || controller.signal.aborted).toBe(true);
  });

  it('delivers events in resourceVersion order when a change made while another is being told comes first (a controller writing as it observes)', async () => {
    // A subscriber (told before the watch, as the controllers subscribed at start are) that writes synchronously when
    // told of a change, as a controller reacting inside the notification would.
    const configMaps = cluster.cluster.type('', 'v1', 'configmaps');
    const unsubscribe = cluster.cluster.store.subscribe((change) => {
      if (change.type === 'ADDED' && change.name.startsWith('ordered-') && !change.name.endsWith('-echo')) {
        cluster.cluster.create(configMaps, 'proto', { metadata: { name: `${change.name}-echo`, labels: { ordered: 'yes' } } });
      }
    });
    const resourceVersions: number[] = [];
    const controller = await new Watch(kc).watch(
      '/api/v1/namespaces/proto/configmaps',
      { labelSelector: 'ordered=yes' },
      (_type, object: V1ConfigMap) => {
        resourceVersions.push(Number(object.metadata!.resourceVersion));
      },
      () => undefined,
    );
    for (const n of [1, 2, 3])
      await core.createNamespacedConfigMap({ namespace: 'proto', body: { metadata: { name: `ordered-${n}`, labels: { ordered: 'yes' } } } });
    await cluster.waitFor(() => resourceVersions.length === 6, 5_000).catch(() => undefined);
    unsubscribe();
    controller.abort();
    expect(resourceVersions).toHaveLength(6);
    expect(resourceVersions).toEqual([...resourceVersions].sort((a, b) => a - b));
  });

  it('takes any value but false and 0 as true in a bool query parameter, as apimachinery converts them (watch=True is a watch)', async () => {
    const opened: Array<[string, string]> = [];
    for (const value of ['True', 'yes', '', 'FALSE', '0']) {
      const abort = new AbortController();
      const response = await fetch(`${cluster.server}/api/v1/namespaces/proto/configmaps?watch=${value}`, { signal: abort.signal });
      const reader = response.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      abort.abort();
      opened.push([value, JSON.parse(first.split('\n')[0]!).type ?? JSON.parse(first).kind]);
    }
    expect(opened).toEqual([
      ['True', 'ADDED'],
      ['yes', 'ADDED'],
      ['', 'ADDED'],
      ['FALSE', 'ConfigMapList'],
      ['0', 'ConfigMapList'],
    ]);
  });

  it('streams the current objects then an initial-events-end bookmark to a watch-list request (sendInitialEvents)', async () => {
    const seen: string[] = [];
    const controller = await new Watch(kc).watch(
      '/api/v1/namespaces/proto/configmaps',
      { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true },
      (type, object: V1ConfigMap) =>
        seen.push(type === 'BOOKMARK' ? `BOOKMARK ${object.metadata?.annotations?.['k8s.io/initial-events-end']}` : `${type} ${object.metadata?.name}`),
      () => undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    controller.abort();
    const names = (await core.listNamespacedConfigMap({ namespace: 'proto' })).items.map((i) => `ADDED ${i.metadata?.name}`);
    expect(seen.slice(0, names.length)).toEqual(names);
    expect(seen[names.length]).toBe('BOOKMARK true');
  });

  it('replays history to a watch started from an older resourceVersion, and sends 410 Expired once history is gone', async () => {
    const start = (await core.listNamespacedConfigMap({ namespace: 'proto' })).metadata!.resourceVersion!;
    await core.createNamespacedConfigMap({ namespace: 'proto', body: { metadata: { name: 'replayed' } } });
    const seen: string[] = [];
    const replay = await new Watch(kc).watch(
      '/api/v1/namespaces/proto/configmaps',
      { resourceVersion: start },
      (type, o: V1ConfigMap) => seen.push(`${type} ${o.metadata?.name}`),
      () => undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    replay.abort();
    expect(seen).toEqual(['ADDED replayed']);
    // Push the history (400 changes) past `start`.
    for (let i = 0; i < 410; i++)
      cluster.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'churn', namespace: 'default' }, data: { i: String(i) } });
    const errors: Array<{ code: number; reason: string }> = [];
    await new Promise<void>((resolve) => {
      void new Watch(kc).watch(
        '/api/v1/namespaces/proto/configmaps',
        { resourceVersion: start },
        (type, o) => {
          if (type === 'ERROR') errors.push(o as { code: number; reason: string });
        },
        () => resolve(),
      );
    });
    expect(errors).toEqual([expect.objectContaining({ code: 410, reason: 'Expired' })]);
  });
});

describe('dev cluster (test fixture): server-side apply', () => {
  const widget = (spec: object, name = 'applied') =>
    ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'proto' }, spec }) as KubernetesObject;
  const apply = (object: KubernetesObject, manager: string, force = false) =>
    objects.patch(object, undefined, undefined, manager, force, PatchStrategy.ServerSideApply);

  it("creates on apply, tracks each manager's fields, refuses a conflicting apply naming manager and field, and takes over with force", async () => {
    const created = (await apply(widget({ size: 1, colour: 'red' }), 'alice')) as KubernetesObject & { spec: object };
    expect(created.spec).toEqual({ size: 1, colour: 'red' });
    expect(created.metadata?.managedFields).toEqual([
      expect.objectContaining({ manager: 'alice', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:size': {}, 'f:colour': {} } } }),
    ]);
    // Same value: shared ownership, no conflict.
    await apply(widget({ size: 1, shape: 'round' }), 'bob');
    const conflict = await failure(apply(widget({ size: 2 }), 'bob'));
    expect(conflict).toMatchObject({ code: 409, reason: 'Conflict', message: 'Apply failed with 1 conflict: conflict with "alice": .spec.size' });
    expect(conflict.details).toMatchObject({ causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.size' }] });
    const forced = (await apply(widget({ size: 2, shape: 'round' }), 'bob', true)) as KubernetesObject & { spec: object };
    expect(forced.spec).toEqual({ size: 2, colour: 'red', shape: 'round' });
    const owners = Object.fromEntries(forced.metadata!.managedFields!.map((e) => [e.manager, e.fieldsV1]));
    expect(owners).toEqual({ alice: { 'f:spec': { 'f:colour': {} } }, bob: { 'f:spec': { 'f:size': {}, 'f:shape': {} } } });
  });

  it('removes the fields a manager stops applying unless another manager owns them, and names Update managers with their apiVersion', async () => {
    await apply(widget({ a: 1, b: 2 }, 'pruned'), 'carol');
    const pruned = (await apply(widget({ a: 1 }, 'pruned'), 'carol')) as KubernetesObject & { spec: object };
    expect(pruned.spec).toEqual({ a: 1 });
    await custom.patchNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      namespace: 'proto',
      plural: 'widgets',
      name: 'pruned',
      body: [{ op: 'replace', path: '/spec/a', value: 5 }],
    });
    const conflict = await failure(apply(widget({ a: 1 }, 'pruned'), 'carol'));
    expect(conflict.message).toMatch(/^Apply failed with 1 conflict: conflict with "[^"]+" using example.com\/v1: \.spec\.a$/);
    const missingManager = await failure(objects.patch(widget({ a: 1 }, 'pruned'), undefined, undefined, undefined, undefined, PatchStrategy.ServerSideApply));
    expect(missingManager).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(missingManager.message).toContain('fieldManager is required');
  });

  it('dry-runs an apply without storing it', async () => {
    const before = cluster.get('example.com/v1', 'Widget', 'proto', 'applied');
    const dry = (await objects.patch(
      widget({ size: 7, colour: 'red', shape: 'round' }),
      undefined,
      'All',
      'bob',
      true,
      PatchStrategy.ServerSideApply,
    )) as KubernetesObject & { spec: { size: number } };
    expect(dry.spec.size).toBe(7);
    expect(cluster.get('example.com/v1', 'Widget', 'proto', 'applied')).toEqual(before);
  });
});

describe('dev cluster (test fixture): faults', () => {
  it('answers transient 503/429 to matching requests, then serves them again', async () => {
    const handle = cluster.faults.failRequests({ method: 'GET', path: '/namespaces/proto/configmaps/two', status: 503, times: 2 });
    expect((await failure(core.readNamespacedConfigMap({ name: 'two', namespace: 'proto' }))).code).toBe(503);
    const throttled = cluster.faults.failRequests({ method: 'GET', path: '/namespaces/proto/configmaps/two', status: 429, retryAfterSeconds: 1 });
    expect((await failure(core.readNamespacedConfigMap({ name: 'two', namespace: 'proto' }))).code).toBe(503);
    expect((await failure(core.readNamespacedConfigMap({ name: 'two', namespace: 'proto' }))).reason).toBe('TooManyRequests');
    expect((await core.readNamespacedConfigMap({ name: 'two', namespace: 'proto' })).metadata?.name).toBe('two');
    expect([handle.hits, throttled.hits]).toEqual([2, 1]);
  });

  it('survives a client dying in the middle of an apply: nothing is half-applied and the server keeps serving', async () => {
    const before = cluster.get('v1', 'ConfigMap', 'proto', 'two');
    const url = new URL(cluster.server);
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two' }, data: { half: 'x'.repeat(100_000) } });
    await new Promise<void>((resolve) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(
          `PATCH /api/v1/namespaces/proto/configmaps/two?fieldManager=dying HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/apply-patch+yaml\r\nContent-Length: ${body.length}\r\n\r\n`,
        );
        socket.write(body.slice(0, 50_000), () => {
          socket.destroy();
          resolve();
        });
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(cluster.get('v1', 'ConfigMap', 'proto', 'two')).toEqual(before);
    expect((await core.readNamespacedConfigMap({ name: 'two', namespace: 'proto' })).metadata?.resourceVersion).toBe(
      (before!.metadata as { resourceVersion: string }).resourceVersion,
    );
  });

  it('survives a crash that cuts open watches and a dropped request, keeping its state', async () => {
    let ended = false;
    await new Watch(kc).watch(
      '/api/v1/namespaces/proto/configmaps',
      {},
      () => undefined,
      () => {
        ended = true;
      },
    );
    const drop = cluster.faults.dropConnections({ method: 'POST', path: '/configmaps' });
    await expect(core.createNamespacedConfigMap({ namespace: 'proto', body: { metadata: { name: 'dropped' } } })).rejects.toThrow();
    expect(drop.hits).toBe(1);
    await cluster.faults.crash({ downForMs: 100 });
    await cluster.waitFor(() => true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ended).toBe(true);
    expect((await core.readNamespacedConfigMap({ name: 'two', namespace: 'proto' })).metadata?.name).toBe('two');
    expect(cluster.get('v1', 'ConfigMap', 'proto', 'dropped')).toBeUndefined();
  });
});
