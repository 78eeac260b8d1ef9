/**
 * The app record through the lifecycle's record store, on the in-memory
 * cluster: a writer in between is a Conflict, re-read and written again on
 * top of what it wrote; a retried write whose first answer was lost finds
 * its own record stored; a retried create likewise; and a record read back
 * that is not what flotilla writes is refused, naming where it is kept.
 */
import { describe, expect, it } from 'vitest';
import { AlreadyExists, Conflict } from '../../src/kube/index.js';
import { LifecycleError, RecordFieldError, type AppRecord } from '../../src/lifecycle/index.js';
import { RecordHandle } from '../../src/lifecycle/operation.js';
import { AppRecords, encodeRecord } from '../../src/lifecycle/record.js';
import { memoryCluster } from '../support/memory-cluster.js';
import { appRecord } from './record-fixture.js';

const record = appRecord;

async function stored(name = 'app') {
  const cluster = memoryCluster();
  const records = new AppRecords(cluster.records);
  const handle = new RecordHandle(records, await records.create(record(name)));
  return { cluster, records, handle };
}

describe('the app record store', () => {
  it('keeps a change made by another writer between the read and the write: the change is made again on top of it', async () => {
    const { cluster, records, handle } = await stored();
    cluster.interfere(async () => {
      const other = await records.get('app');
      await records.write({ ...other.record, userOverrides: { keystone: { debug: true } } }, other.resourceVersion);
    });
    const written = await handle.update((r) => ({ ...r, deployed: ['keystone'] }));
    expect(written.deployed).toEqual(['keystone']);
    expect(written.userOverrides).toEqual({ keystone: { debug: true } });
    expect((await records.get('app')).record).toEqual(written);
    // Ours, theirs, ours again.
    expect(cluster.writes.filter((w) => w.store === 'records' && w.verb === 'replace')).toHaveLength(3);
  });

  it('takes a Conflict on a write that had been stored (its first answer lost) as done, writing nothing more', async () => {
    const { cluster, records, handle } = await stored();
    // The retry policy's second attempt meets the revision its lost first attempt moved on: a Conflict, with the record stored.
    cluster.interfere(async () => {
      const before = await records.get('app');
      await records.write({ ...before.record, deployed: ['keystone'] }, before.resourceVersion);
      throw new Conflict({ verb: 'update', kind: 'record', name: 'app' }, 409, 'Conflict', 'the object has been modified');
    });
    const written = await handle.update((r) => ({ ...r, deployed: ['keystone'] }));
    expect(written.deployed).toEqual(['keystone']);
    expect(cluster.writes.filter((w) => w.store === 'records' && w.verb === 'replace')).toHaveLength(2);
    // The handle holds the stored revision: its next write goes through without a Conflict.
    await handle.update((r) => ({ ...r, mode: 'fast' }));
    expect((await records.get('app')).record.mode).toBe('fast');
  });

  it('gives up after a few Conflicts in a row, with the Conflict', async () => {
    const { cluster, records, handle } = await stored();
    const meddle = async () => {
      const other = await records.get('app');
      await records.write(
        { ...other.record, progress: { ready: other.record.progress ? other.record.progress.ready + 1 : 0, total: 9, percent: 0 } },
        other.resourceVersion,
      );
    };
    for (let i = 0; i < 8; i++) cluster.interfere((write) => (write.verb === 'replace' && i % 2 === 0 ? meddle() : undefined));
    await expect(handle.update((r) => ({ ...r, deployed: ['x'] }))).rejects.toBeInstanceOf(Conflict);
  });

  it('takes AlreadyExists on a create that had been stored as done, and refuses another record of the same name', async () => {
    const cluster = memoryCluster();
    const records = new AppRecords(cluster.records);
    cluster.interfere(async () => {
      await cluster.records.create('app', encodeRecord(record()), { state: 'uploaded', version: '1.0.0' });
    });
    expect((await records.create(record())).record).toEqual(record());
    await expect(records.create({ ...record(), state: 'uploading' })).rejects.toBeInstanceOf(AlreadyExists);
  });

  it('lists records by name and refuses one that is not what flotilla writes, naming where it is kept', async () => {
    const cluster = memoryCluster();
    const records = new AppRecords(cluster.records);
    await records.create(record('zeta'));
    await records.create(record('alpha'));
    expect((await records.list()).map((r) => r.name)).toEqual(['alpha', 'zeta']);
    await cluster.records.create('broken', 'not gzip', { state: 'uploaded', version: '1' });
    await expect(records.read('broken')).rejects.toThrow(/^record broken does not hold a readable app record/);
    const { state: _state, ...stateless } = record('odd');
    await cluster.records.create('odd', encodeRecord(stateless as AppRecord), { state: '', version: '1' });
    const error = await records.read('odd').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordFieldError);
    expect(error).toBeInstanceOf(LifecycleError);
    expect((error as RecordFieldError).field).toBe('state');
  });
});
