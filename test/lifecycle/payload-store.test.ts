/**
 * The stored payload through the lifecycle's payload store, on the
 * in-memory cluster: split in pieces under the object size limit, read back
 * only when every piece and the whole match the digests upload recorded —
 * a piece changed, cut, gone or shuffled is refused, naming it — and
 * deleted piece by piece. (test/lifecycle/stored-payload.test.ts holds the
 * same refusals end to end, through the CLI and the dev cluster.)
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SYSTEM_NAMESPACE } from '../../src/kube/index.js';
import { LifecycleError, PayloadIntegrityError } from '../../src/lifecycle/index.js';
import { deletePayload, readPayload, storePayload } from '../../src/lifecycle/payload.js';
import { memoryCluster } from '../support/memory-cluster.js';

/** Files of a payload: random bytes do not compress, so 1.5 MiB of them make several pieces. */
const FILES = new Map([
  ['metadata.yaml', Buffer.from('app_name: app\napp_version: 1.0.0\n')],
  ['fluxcd-manifests/blob.bin', randomBytes(1536 * 1024)],
]);

async function stored() {
  const cluster = memoryCluster();
  const payload = await storePayload(cluster.payloads, 'app', '1.0.0', FILES);
  const bundle = { payload: payload.name, payloadDigests: payload.digests, charts: [], source: 'app-1.0.0.tgz' };
  return { cluster, payload, bundle };
}

describe('the stored payload', () => {
  it('is stored in pieces under the size limit and read back whole', async () => {
    const { cluster, payload, bundle } = await stored();
    expect(payload.name).toBe('flotilla-bundle-app-1.0.0');
    expect([...cluster.payloads.pieces.keys()]).toEqual(['flotilla-bundle-app-1.0.0', 'flotilla-bundle-app-1.0.0-1', 'flotilla-bundle-app-1.0.0-2']);
    for (const { piece, count } of cluster.payloads.pieces.values()) {
      expect(piece.length).toBeLessThanOrEqual(700 * 1024);
      expect(count).toBe(3);
    }
    const read = await readPayload(cluster.payloads, bundle);
    expect([...read.files.keys()].sort()).toEqual([...FILES.keys()].sort());
    for (const [path, bytes] of FILES) expect(read.files.get(path)?.equals(bytes)).toBe(true);
  });

  it('refuses a piece changed in the cluster, naming it', async () => {
    const { cluster, bundle } = await stored();
    const kept = cluster.payloads.pieces.get('flotilla-bundle-app-1.0.0-1')!;
    kept.piece[100] = kept.piece[100]! ^ 1;
    const error = await readPayload(cluster.payloads, bundle).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadIntegrityError);
    expect((error as Error).message).toBe(
      `Secret ${SYSTEM_NAMESPACE}/flotilla-bundle-app-1.0.0-1 (the stored bundle of app-1.0.0.tgz) is not what upload stored: its sha256 differs from the one recorded; it was changed in the cluster; upload the tarball again (flotilla upload app-1.0.0.tgz)`,
    );
  });

  it('refuses pieces swapped whole (each matches its own digest, not its place) and a payload the record has no digests of', async () => {
    const { cluster, bundle } = await stored();
    const first = cluster.payloads.pieces.get('flotilla-bundle-app-1.0.0-1')!;
    const second = cluster.payloads.pieces.get('flotilla-bundle-app-1.0.0-2')!;
    cluster.payloads.pieces.set('flotilla-bundle-app-1.0.0-1', second);
    cluster.payloads.pieces.set('flotilla-bundle-app-1.0.0-2', first);
    await expect(readPayload(cluster.payloads, bundle)).rejects.toBeInstanceOf(PayloadIntegrityError);
    const { payloadDigests: _digests, ...undigested } = bundle;
    await expect(readPayload(cluster.payloads, undigested)).rejects.toThrow(
      `the app record holds no digests of the stored bundle ${SYSTEM_NAMESPACE}/flotilla-bundle-app-1.0.0 (bundle.payloadDigests): it cannot be checked`,
    );
  });

  it('says which piece is gone, and when all of it is', async () => {
    const { cluster, bundle } = await stored();
    cluster.payloads.pieces.delete('flotilla-bundle-app-1.0.0-2');
    const error = await readPayload(cluster.payloads, bundle).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LifecycleError);
    expect((error as Error).message).toMatch(/is incomplete \(piece 2 of 3, Secret flotilla-bundle-app-1\.0\.0-2, is gone\)/);
    await deletePayload(cluster.payloads, bundle.payload);
    expect(cluster.payloads.pieces.size).toBe(0);
    await expect(readPayload(cluster.payloads, bundle)).rejects.toThrow(`the stored bundle ${SYSTEM_NAMESPACE}/flotilla-bundle-app-1.0.0 is gone`);
  });

  it('writes the same pieces again over what a killed upload left', async () => {
    const { cluster, bundle } = await stored();
    cluster.payloads.pieces.get('flotilla-bundle-app-1.0.0')!.piece.fill(0);
    const again = await storePayload(cluster.payloads, 'app', '1.0.0', FILES);
    expect(again.name).toBe(bundle.payload);
    const read = await readPayload(cluster.payloads, { ...bundle, payloadDigests: again.digests });
    expect(read.files.get('metadata.yaml')?.toString()).toBe('app_name: app\napp_version: 1.0.0\n');
  });
});
