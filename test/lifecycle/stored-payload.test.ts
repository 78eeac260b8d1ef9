/**
 * The stored payload and the app record are read back from the cluster, so
 * they are not trusted (docs/security.md): on the dev cluster TEST FIXTURE,
 * a payload whose plugins.mjs was rewritten together with its manifest hash
 * and checksums is refused by apply and diff before any plugin runs, with
 * and without a signing key (with one, also when the record's digests were
 * rewritten to match), and a record with a tampered field is refused naming
 * it. Uploading the same tarball again restores the payload.
 */
import { generateKeyPairSync } from 'node:crypto';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { md5sumFile, readTarGzSafelySync, sha256sumFile, signBundleFile, writeTarGz } from '../../src/tarball/index.js';
import { SYSTEM_NAMESPACE } from '../../src/lifecycle/index.js';
import { tempDir } from '../support/app-fixture.js';
import type { DevCluster } from '../support/dev-cluster/index.js';
import { APP, buildDefaultApp, flotilla, useDevCluster } from './support.js';

type Secret = { metadata: { name: string; annotations?: Record<string, string> }; type?: string; data: Record<string, string> };

let cluster: DevCluster;
let bundle: string;
const cli = (...args: string[]) => flotilla(cluster.kubeconfigPath, args);
const PAYLOAD = `flotilla-bundle-${APP}-25.03-0`;
const RECORD = `flotilla-app-${APP}`;
const PIECE_BYTES = 700 * 1024;
const marker = join(tempDir(), 'plugin-ran');

useDevCluster(
  {},
  () => buildDefaultApp(),
  (dev, built) => {
    [cluster, bundle] = [dev, built];
  },
);

const secret = (name: string) => cluster.get('v1', 'Secret', SYSTEM_NAMESPACE, name) as Secret | undefined;
const putSecret = (s: Secret) =>
  cluster.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: s.metadata.name, namespace: SYSTEM_NAMESPACE }, data: s.data });
const sha256 = async (bytes: Buffer) => (await import('node:crypto')).createHash('sha256').update(bytes).digest('hex');

/** The stored payload rewritten as an attacker with write access to Secrets in flotilla-system would: plugins.mjs, its manifest hash and the checksums. */
async function tamperPayload(): Promise<{ archive: string; pieces: string[] }> {
  const count = Number(secret(PAYLOAD)!.metadata.annotations?.['flotilla.starlingx.io/pieces'] ?? '1');
  const names = Array.from({ length: count }, (_, i) => (i === 0 ? PAYLOAD : `${PAYLOAD}-${i}`));
  const files = readTarGzSafelySync(Buffer.concat(names.map((n) => Buffer.from(secret(n)!.data.payload!, 'base64'))));
  const entry = 'plugins/plugins.mjs';
  const code = Buffer.from(
    `import { writeFileSync as flotillaTamper } from 'node:fs';\nflotillaTamper(${JSON.stringify(marker)}, 'ran');\n${files.get(entry)!.toString('utf8')}`,
  );
  files.set(entry, code);
  const manifest = JSON.parse(files.get('plugins/manifest.json')!.toString('utf8')) as { files: Record<string, string> };
  manifest.files['plugins.mjs'] = await sha256(code);
  files.set('plugins/manifest.json', Buffer.from(JSON.stringify(manifest)));
  const listed = [...files].filter(([path]) => !path.startsWith('checksum.')).map(([path, data]) => ({ path, data }));
  files.set('checksum.sha256', Buffer.from(sha256sumFile(listed)));
  files.set('checksum.md5', Buffer.from(md5sumFile(listed)));
  const archive = writeTarGz([...files].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([path, data]) => ({ path, data })));
  const pieces: string[] = [];
  for (let index = 0; index * PIECE_BYTES < archive.length; index++) {
    const piece = archive.subarray(index * PIECE_BYTES, (index + 1) * PIECE_BYTES);
    const name = index === 0 ? PAYLOAD : `${PAYLOAD}-${index}`;
    putSecret({ metadata: { name, annotations: {} }, data: { payload: piece.toString('base64') } });
    pieces.push(await sha256(piece));
  }
  expect(pieces.length).toBe(count);
  return { archive: await sha256(archive), pieces };
}

/** The app record as kept: gzipped JSON, base64 inside the Secret's (base64) data. */
const readRecord = (): Record<string, unknown> =>
  JSON.parse(gunzipSync(Buffer.from(Buffer.from(secret(RECORD)!.data.record!, 'base64').toString('utf8'), 'base64')).toString('utf8')) as Record<
    string,
    unknown
  >;
const writeRecord = (record: unknown) =>
  putSecret({ metadata: { name: RECORD }, data: { record: Buffer.from(gzipSync(Buffer.from(JSON.stringify(record))).toString('base64')).toString('base64') } });

async function expectRefused(what: RegExp, commands: readonly ('apply' | 'diff')[] = ['apply', 'diff']): Promise<void> {
  if (commands.includes('apply')) {
    const apply = await cli('apply', APP, '--timeout', '1m');
    expect(apply.stderr).toMatch(what);
    expect(apply.code).toBe(1);
  }
  if (!commands.includes('diff')) return;
  const diff = await cli('diff', APP);
  expect(diff.stderr).toMatch(what);
  // diff exits 1 for "changes": a refusal exits above it.
  expect(diff.code).toBe(2);
  expect(existsSync(marker)).toBe(false);
}

describe('the stored payload', () => {
  it('is refused by apply and diff when changed in the cluster, naming the Secret and how to upload again', async () => {
    expect((await cli('upload', bundle)).code).toBe(0);
    await tamperPayload();
    await expectRefused(
      new RegExp(
        `^flotilla: Secret ${SYSTEM_NAMESPACE}/${PAYLOAD} \\(the stored bundle of ${APP}-25.03-0.tgz\\) is not what upload stored: .*upload the tarball again \\(flotilla upload ${APP}-25.03-0.tgz\\)\\n$`,
      ),
    );
    // The same tarball again stores the payload anew; the refusals left the state as it was.
    expect((await cli('upload', bundle)).code).toBe(0);
    expect(readRecord()).toMatchObject({ state: 'uploaded' });
  }, 240_000);

  it('with a signing key, is refused also when the record was rewritten to match it', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const signed = join(tempDir(), `${APP}-25.03-0.tgz`);
    copyFileSync(bundle, signed);
    await signBundleFile(signed, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    const config = cluster.get('v1', 'ConfigMap', SYSTEM_NAMESPACE, 'flotilla-config') as { data: Record<string, string> };
    cluster.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'flotilla-config', namespace: SYSTEM_NAMESPACE },
      data: { ...config.data, signingKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() },
    });
    try {
      expect((await cli('upload', signed)).code).toBe(0);
      const digests = await tamperPayload();
      const record = readRecord() as { bundle: Record<string, unknown> };
      writeRecord({ ...record, bundle: { ...record.bundle, payloadDigests: digests } });
      await expectRefused(
        new RegExp(
          `^flotilla: the stored bundle ${SYSTEM_NAMESPACE}/${PAYLOAD} is not signed by the signing key \\(checksum.sha256.sig is not a valid signature of its checksum.sha256\\) \\(the cluster's flotilla-config has a signingKey\\); upload the tarball again`,
        ),
      );
      expect((await cli('upload', signed)).code).toBe(0);
    } finally {
      cluster.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'flotilla-config', namespace: SYSTEM_NAMESPACE }, data: config.data });
    }
  }, 240_000);

  it('refuses an app record with a field that is not what flotilla writes, naming the field', async () => {
    const record = readRecord() as { bundle: Record<string, unknown> };
    writeRecord({ ...record, bundle: { ...record.bundle, sha256: 'not a digest' } });
    await expectRefused(
      new RegExp(`^flotilla: Secret ${SYSTEM_NAMESPACE}/${RECORD}: the app record's bundle.sha256 is missing or invalid \\(expected a sha256 in hex\\)`),
      ['apply'],
    );
    const { payloadDigests: _dropped, ...withoutDigests } = record.bundle;
    writeRecord({ ...record, bundle: withoutDigests });
    await expectRefused(/the app record holds no digests of the stored bundle .* \(bundle\.payloadDigests\): it cannot be checked; upload the tarball again/, [
      'diff',
    ]);
  }, 240_000);
});
