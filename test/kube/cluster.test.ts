/**
 * src/kube against the dev cluster TEST FIXTURE: waiting by watch (and
 * listing again when the server no longer has the version a watch resumes
 * from), server-side apply under flotilla's field manager, the Lease lock
 * (refusal, abort request, release), the Flux check.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AbortRequestedError,
  acquireLease,
  ConfigMapRecordStore,
  connect,
  FIELD_MANAGER,
  LockedError,
  requestAbort,
  requireFlux,
  serverSideApply,
  watchUntil,
  WaitTimeoutError,
  type KubeClient,
} from '../../src/kube/index.js';
import { startDevCluster, type DevCluster } from '../support/dev-cluster/index.js';

let cluster: DevCluster;
let client: KubeClient;
const NS = 'kube-test';

beforeAll(async () => {
  cluster = await startDevCluster({ registry: false, historySize: 5 });
  client = await connect({ kubeconfig: cluster.kubeconfigPath });
  cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

const configMap = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data });

describe('kube on the dev cluster', () => {
  it('applies server-side as flotilla and waits by watch, listing again after 410 Gone', async () => {
    const [stored] = await serverSideApply(client, [configMap('target', { ready: 'no' })]);
    expect((stored?.metadata as { managedFields?: { manager: string }[] }).managedFields?.map((f) => f.manager)).toContain(FIELD_MANAGER);
    // The first watch request is dropped; while it is retried, more changes than the server keeps go by.
    cluster.faults.dropConnections({ method: 'GET', path: /configmaps\?.*watch=true/, times: 1 });
    const ready = watchUntil(
      client,
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: NS },
      (objects) => ((objects.get(`${NS}/target`) as { data?: Record<string, string> } | undefined)?.data?.ready === 'yes' ? 'seen' : undefined),
      { waitingFor: 'target to be ready', timeoutMs: 20_000 },
    );
    const listsOf = () =>
      cluster.requests.filter((r) => r.method === 'GET' && r.url.startsWith(`/api/v1/namespaces/${NS}/configmaps`) && !r.url.includes('watch=true'));
    while (listsOf().length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    for (let i = 0; i < 10; i++) cluster.apply(configMap(`noise-${i}`, { i: String(i) }));
    cluster.apply(configMap('target', { ready: 'yes' }));
    expect(await ready).toBe('seen');
    // Listed, watched from a version the server had dropped (410), listed again.
    expect(listsOf().length).toBe(2);
  });

  it('applies many objects with one discovery request per apiVersion and returns what was stored, in input order', async () => {
    const fresh = await connect({ kubeconfig: cluster.kubeconfigPath });
    const objects = Array.from({ length: 12 }, (_, i) =>
      i % 3 === 0
        ? { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: `many-${i}`, namespace: NS }, spec: { holderIdentity: `h${i}` } }
        : configMap(`many-${i}`, { i: String(i) }),
    );
    const before = cluster.requests.length;
    const stored = await serverSideApply(fresh, objects);
    expect(stored.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`));
    const discovery = cluster.requests.slice(before).filter((r) => r.method === 'GET' && (r.url === '/api/v1' || r.url === '/apis/coordination.k8s.io/v1'));
    expect(discovery.map((r) => r.url).sort()).toEqual(['/api/v1', '/apis/coordination.k8s.io/v1']);
  });

  it('survives a 429 with Retry-After and a dropped connection on a write, and on a record write', async () => {
    const patches = () => cluster.requests.filter((r) => r.method === 'PATCH' && r.url.startsWith(`/api/v1/namespaces/${NS}/configmaps/flaky`)).length;
    const before = patches();
    const throttled = cluster.faults.failRequests({ method: 'PATCH', path: '/configmaps/flaky', status: 429, retryAfterSeconds: 1 });
    const dropped = cluster.faults.dropConnections({ method: 'PATCH', path: '/configmaps/flaky' });
    const [stored] = await serverSideApply(client, [configMap('flaky', { a: '1' })]);
    expect((stored as { data?: unknown }).data).toEqual({ a: '1' });
    expect([throttled.hits, dropped.hits, patches() - before]).toEqual([1, 1, 3]);
    // A record store's read-modify-write whose write loses its connection: retried, stored once.
    const records = new ConfigMapRecordStore(client, NS, 'flaky-app');
    await records.set('first', 1);
    const lost = cluster.faults.dropConnections({ method: 'PUT', path: '/configmaps/flaky-app-records' });
    await records.set('second', { n: 2 });
    expect(lost.hits).toBe(1);
    expect([await records.get('first'), await records.get('second')]).toEqual([1, { n: 2 }]);
  });

  it('times out naming what it waited for', async () => {
    const waiting = watchUntil(client, { apiVersion: 'v1', kind: 'ConfigMap', namespace: NS }, () => undefined, {
      waitingFor: () => 'nothing in particular',
      timeoutMs: 300,
    });
    await expect(waiting).rejects.toThrow(new WaitTimeoutError('timed out after 300ms waiting for nothing in particular'));
  });

  it('locks with a Lease: a second holder is refused, an abort request reaches the holder, release frees it', async () => {
    const first = await acquireLease(client, { namespace: NS, name: 'lock', operation: 'apply', holder: 'one', durationSeconds: 1 });
    const refused = await acquireLease(client, { namespace: NS, name: 'lock', operation: 'remove', holder: 'two' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockedError);
    expect((refused as LockedError).message).toMatch(/^lock is locked by one \(apply\) since /);
    expect(await requestAbort(client, NS, 'lock', 'ops')).toEqual({ holder: 'one', operation: 'apply' });
    await new Promise<void>((resolve) => first.lost.addEventListener('abort', () => resolve(), { once: true }));
    expect(first.lost.reason).toBeInstanceOf(AbortRequestedError);
    await first.release();
    const second = await acquireLease(client, { namespace: NS, name: 'lock', operation: 'remove', holder: 'two' });
    expect(second.tookOver).toBeUndefined();
    await second.release();
  });

  it("judges a lease by its renewals as this process sees them, not by the other machine's clock", async () => {
    // The first holder renews every second; a second operator whose clock runs 60 s ahead reads its renewTime as a minute old.
    const first = await acquireLease(client, { namespace: NS, name: 'clock', operation: 'apply', holder: 'one', durationSeconds: 3 });
    const realNow = Date.now.bind(Date);
    const ahead = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 60_000);
    let refused: unknown;
    try {
      refused = await acquireLease(client, { namespace: NS, name: 'clock', operation: 'remove', holder: 'two', durationSeconds: 3 }).catch((e: unknown) => e);
    } finally {
      ahead.mockRestore();
    }
    expect(refused).toBeInstanceOf(LockedError);
    expect(first.lost.aborted).toBe(false);
    await first.release();
    // A lease whose holder is gone, stamped by a clock far ahead of ours: taken over once it stayed unchanged for its duration.
    const future = new Date(realNow() + 3_600_000).toISOString();
    cluster.apply({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'clock', namespace: NS },
      spec: { holderIdentity: 'gone', leaseDurationSeconds: 1, acquireTime: future, renewTime: future },
    });
    const taken = await acquireLease(client, { namespace: NS, name: 'clock', operation: 'apply', holder: 'three' });
    expect(taken.tookOver).toMatchObject({ holder: 'gone', lastRenewed: future });
    await taken.release();
  });

  it('finds Flux served', async () => {
    await expect(requireFlux(client)).resolves.toBeUndefined();
  });
});
