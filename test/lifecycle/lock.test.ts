/**
 * The app's lock (src/kube's Lease protocol) on leases kept in memory and a
 * clock the test moves: another holder's lease is judged by whether its
 * record changes while this process watches it for its duration, on this
 * process's monotonic clock — never by its stamps against our wall clock;
 * a live holder renews and keeps it; a dead one's is taken over, and the
 * operation taking it closes the dead run's history entry.
 */
import { describe, expect, it } from 'vitest';
import { AbortRequestedError, LockedError, LockLostError, SYSTEM_NAMESPACE } from '../../src/kube/index.js';
import { abortApp, lockName, type AppRecord } from '../../src/lifecycle/index.js';
import { AppRecords } from '../../src/lifecycle/record.js';
import { memoryCluster, type MemoryCluster } from '../support/memory-cluster.js';
import { appRecord } from './record-fixture.js';

const NAME = 'flotilla-lock-app';
const acquire = (cluster: MemoryCluster, holder: string, durationSeconds = 3) =>
  cluster.locks.acquire({ namespace: SYSTEM_NAMESPACE, name: NAME, operation: 'apply', holder, durationSeconds });

/** A lease left by a holder that is gone: stamped `renewedAgoMs` before the cluster's wall clock (negative: in its future). */
async function deadLease(cluster: MemoryCluster, renewedAgoMs: number, name = NAME): Promise<void> {
  const renewed = new Date(cluster.clock.wall().getTime() - renewedAgoMs);
  await cluster.locks.leases.create(SYSTEM_NAMESPACE, name, {
    holder: 'gone@elsewhere pid 1',
    durationSeconds: 3,
    acquired: renewed,
    renewed,
    transitions: 0,
    labels: {},
    annotations: { 'flotilla.starlingx.io/operation': 'apply' },
  });
}

/** Whether a promise has settled yet. */
const settled = (promise: Promise<unknown>) => {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  return () => done;
};

describe('the app lock', () => {
  it.each([
    ['an hour ago', 3_600_000],
    ['an hour in our future (a skewed clock)', -3_600_000],
  ])('takes a dead holder’s lease renewed %s only after watching it unchanged for its whole duration on its own clock', async (_, ago) => {
    const cluster = memoryCluster();
    await deadLease(cluster, ago);
    const taking = acquire(cluster, 'next');
    const done = settled(taking);
    await cluster.clock.advance(2_999);
    expect(done()).toBe(false);
    await cluster.clock.advance(1);
    const held = await taking;
    expect(held.tookOver).toEqual({
      holder: 'gone@elsewhere pid 1',
      operation: 'apply',
      lastRenewed: new Date(cluster.clock.wall().getTime() - 3_000 - ago).toISOString(),
    });
    const lease = await cluster.locks.leases.read(SYSTEM_NAMESPACE, NAME);
    expect(lease?.holder).toBe('next');
    expect(lease?.transitions).toBe(1);
    await held.release();
  });

  it('refuses while a live holder renews, naming it and its operation', async () => {
    const cluster = memoryCluster();
    const first = await acquire(cluster, 'alice');
    const second = acquire(cluster, 'bob').catch((e: unknown) => e);
    // alice renews every second: bob sees her record change before her 3 s are up.
    await cluster.clock.advance(1_500);
    const refused = await second;
    expect(refused).toBeInstanceOf(LockedError);
    expect((refused as LockedError).holder).toBe('alice');
    expect((refused as Error).message).toMatch(/^flotilla-lock-app is locked by alice \(apply\) since 2026-01-01T00:00:00\.000Z; it renews the lock/);
    expect(first.lost.aborted).toBe(false);
    await first.release();
  });

  it('renews while held, and gives it back on release', async () => {
    const cluster = memoryCluster();
    const held = await acquire(cluster, 'alice');
    const renewedAt = async () => (await cluster.locks.leases.read(SYSTEM_NAMESPACE, NAME))?.renewed?.getTime();
    const start = await renewedAt();
    await cluster.clock.advance(1_000);
    expect((await renewedAt())! - start!).toBe(1_000);
    await cluster.clock.advance(1_000);
    expect((await renewedAt())! - start!).toBe(2_000);
    await held.release();
    expect(await cluster.locks.leases.read(SYSTEM_NAMESPACE, NAME)).toBeUndefined();
    // Released: no renewal writes any more.
    const writes = cluster.writes.length;
    await cluster.clock.advance(5_000);
    expect(cluster.writes.length).toBe(writes);
  });

  it('tells the holder when the lease was taken from it, or when someone asked it to stop', async () => {
    const cluster = memoryCluster();
    const held = await acquire(cluster, 'alice');
    const lease = (await cluster.locks.leases.read(SYSTEM_NAMESPACE, NAME))!;
    await cluster.locks.leases.replace(SYSTEM_NAMESPACE, NAME, { ...lease, holder: 'mallory' });
    await cluster.clock.advance(1_000);
    expect(held.lost.reason).toBeInstanceOf(LockLostError);
    expect((held.lost.reason as Error).message).toBe(`lost the lock ${SYSTEM_NAMESPACE}/${NAME}: now held by mallory`);
    // Not ours any more: release leaves it.
    await held.release();
    expect((await cluster.locks.leases.read(SYSTEM_NAMESPACE, NAME))?.holder).toBe('mallory');

    const other = memoryCluster();
    const running = await acquire(other, 'alice');
    expect(await other.locks.requestAbort(SYSTEM_NAMESPACE, NAME, 'ops')).toEqual({ holder: 'alice', operation: 'apply' });
    await other.clock.advance(1_000);
    expect(running.lost.reason).toBeInstanceOf(AbortRequestedError);
    expect((running.lost.reason as Error).message).toBe('aborted: requested by ops at 2026-01-01T00:00:00.000Z');
    // Winding down, it renews on: a holder asked to stop is alive until it releases the lock.
    const renewed = (await other.locks.leases.read(SYSTEM_NAMESPACE, NAME))!.renewed;
    await other.clock.advance(60_000);
    expect((await other.locks.leases.read(SYSTEM_NAMESPACE, NAME))!.renewed).not.toBe(renewed);
    await running.release();
    expect(await other.locks.leases.read(SYSTEM_NAMESPACE, NAME)).toBeUndefined();
  });

  it('closes the run a dead holder left open as killed when an operation takes its lock over', async () => {
    const cluster = memoryCluster();
    const records = new AppRecords(cluster.records);
    const open: AppRecord = {
      ...appRecord('app'),
      state: 'applying',
      history: [{ operation: 'apply', version: '1.0.0', started: '2026-01-01T00:00:00.000Z', by: 'gone@elsewhere pid 1' }],
    };
    await records.create(open);
    await deadLease(cluster, 0, lockName('app'));
    const warnings: string[] = [];
    const aborting = abortApp(cluster, 'app', { holder: 'ops', events: (e) => void (e.type === 'warning' && warnings.push(e.message)) });
    // abort asks the holder to stop, then takes the lock: the dead holder never answers, so its lease lapses after 3 s.
    await cluster.clock.advance(3_000);
    expect(await aborting).toEqual({ kind: 'closed', from: 'applying', to: 'apply-failed' });
    expect(warnings).toEqual(['took over the expired lock of gone@elsewhere pid 1 (apply); its run is gone']);
    const { record } = await records.get('app');
    expect(record.state).toBe('apply-failed');
    expect(record.history.map((h) => [h.operation, h.result, h.reason])).toEqual([
      ['apply', 'killed', 'its run (gone@elsewhere pid 1) ended without finishing; last seen 2026-01-01T00:00:00.000Z'],
    ]);
    // The lock is given back.
    expect(await cluster.locks.leases.read(SYSTEM_NAMESPACE, lockName('app'))).toBeUndefined();
  });
});
