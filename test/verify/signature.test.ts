import { execFile, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { paxRecord, rawTarGz, type RawEntry } from '../tarball/raw-tar.js';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { md5sumFile, readTarGzSafely, sha256sumFile, SIGNATURE_FILE, signBundleFile, SignatureKeyError, writeTarGz } from '../../src/tarball/index.js';
import { buildApp } from '../../src/build/index.js';
import { verifyBundle } from '../../src/verify/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

const run = promisify(execFile);
const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');

const pair = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
};

const PLUGIN = `import { ChartPlugin } from 'flotilla/plugin';
export default class WebPlugin extends ChartPlugin {
  chart = 'web';
  getOverrides() {
    return { conf: { plugin: 'web' } };
  }
}
`;

let built: string;
beforeAll(async () => {
  built = (await buildApp(writeApp({ 'plugins/010_web.ts': PLUGIN }), { outDir: tempDir() })).file;
});

function copyOf(file: string): string {
  const copy = join(tempDir(), 'demo-1.0-1.tgz');
  writeFileSync(copy, readFileSync(file));
  return copy;
}

describe('signing', () => {
  it('accepts a tarball signed with the matching key, and refuses an unsigned or wrongly signed one', async () => {
    const keys = pair();
    const other = pair();
    const signed = copyOf(built);
    await signBundleFile(signed, keys.privateKey);
    expect((await readTarGzSafely(signed)).get(SIGNATURE_FILE)?.toString()).toMatch(/^[A-Za-z0-9+/]{86}==\n$/);
    expect((await verifyBundle(signed, { publicKey: keys.publicKey })).problems).toEqual([]);
    expect((await verifyBundle(signed, { publicKey: other.publicKey })).problems).toEqual([
      `${SIGNATURE_FILE}: not a valid signature of checksum.sha256 by the given key`,
    ]);
    expect((await verifyBundle(copyOf(built), { publicKey: keys.publicKey })).problems).toEqual([
      `${SIGNATURE_FILE} is missing: the tarball is not signed (flotilla sign BUNDLE --key PRIVATE.pem)`,
    ]);
    // without a key, a signed tarball still verifies, with a reminder
    const report = await verifyBundle(signed);
    expect(report.ok).toBe(true);
    expect(report.warnings).toContain('the tarball is signed; pass --key PUBLIC.pem to check the signature');
  });

  it('catches a file changed after signing, even with its checksums recomputed', async () => {
    const keys = pair();
    const signed = copyOf(built);
    await signBundleFile(signed, keys.privateKey);
    const files = await readTarGzSafely(signed);
    files.set('app/overrides/deployment.yaml', Buffer.from('main: {release: "1.0"}\n'));
    const entries = [...files].filter(([p]) => !p.startsWith('checksum.')).map(([path, data]) => ({ path, data }));
    const forged = writeTarGz([
      ...entries,
      { path: 'checksum.md5', data: md5sumFile(entries) },
      { path: 'checksum.sha256', data: sha256sumFile(entries) },
      { path: SIGNATURE_FILE, data: files.get(SIGNATURE_FILE)! },
    ]);
    const path = join(tempDir(), 'demo-1.0-1.tgz');
    writeFileSync(path, forged);
    expect((await verifyBundle(path, { publicKey: keys.publicKey })).problems).toEqual([
      `${SIGNATURE_FILE}: not a valid signature of checksum.sha256 by the given key`,
    ]);
  });

  it('refuses a signed tarball repacked so that other readers extract something else (two pax headers, a sparse name)', async () => {
    const keys = pair();
    const signed = copyOf(built);
    await signBundleFile(signed, keys.privateKey);
    expect((await verifyBundle(signed, { publicKey: keys.publicKey })).problems).toEqual([]);
    const files = await readTarGzSafely(signed);
    const chart = 'charts/web-0.1.0.tgz';
    const repack = (smuggle: (name: string, data: Buffer) => RawEntry[]): string => {
      const entries = [...files].flatMap(([name, data]) => (name === chart ? smuggle(name, data) : [{ name, data }]));
      const path = join(tempDir(), 'demo-1.0-1.tgz');
      writeFileSync(path, rawTarGz(entries));
      return path;
    };
    const pax = (...records: [string, string][]): RawEntry => ({ name: 'PaxHeader/web', type: 'x', data: records.map(([k, v]) => paxRecord(k, v)).join('') });

    // Merging both headers gives the signed bytes; GNU tar keeps only the second, so the ustar size (0) decides.
    const twoPax = repack((name, data) => [pax(['size', String(data.length)]), pax(['path', name]), { name, data, size: 0 }]);
    const gnu = tempDir();
    spawnSync('tar', ['-xzf', twoPax, '-C', gnu]);
    expect(readFileSync(join(gnu, chart)).length).toBe(0); // what GNU tar installs is not what was signed
    const refused = await verifyBundle(twoPax, { publicKey: keys.publicKey });
    expect(refused.problems).toEqual([
      'archive rejected (demo-1.0-1.tgz): entry "PaxHeader/web": a pax header follows a pax header for the same entry (readers disagree on which applies)',
    ]);

    // A sparse record renames the entry for GNU tar only.
    const sparse = repack((name, data) => [
      pax(['path', name], ['GNU.sparse.name', 'charts/evil-6.6.6.tgz'], ['GNU.sparse.major', '1'], ['GNU.sparse.minor', '0']),
      { name, data },
    ]);
    expect((await verifyBundle(sparse, { publicKey: keys.publicKey })).problems).toEqual([
      'archive rejected (demo-1.0-1.tgz): entry "PaxHeader/web": pax header has the sparse-file record "GNU.sparse.name" (GNU tar alone applies it, extracting another name or size than other readers)',
    ]);
    expect((await verifyBundle(signed, { publicKey: keys.publicKey })).ok).toBe(true);
  });

  it('refuses keys that are not ed25519, and tarballs whose checksums already fail', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await expect(signBundleFile(copyOf(built), rsa)).rejects.toThrow(SignatureKeyError);
    await expect(signBundleFile(copyOf(built), 'not a key')).rejects.toThrow(/not an ed25519 private key in PEM format: expected -----BEGIN PRIVATE KEY-----/);
    const files = await readTarGzSafely(built);
    files.set('metadata.yaml', Buffer.from('app_name: x\n'));
    const tampered = join(tempDir(), 'demo-1.0-1.tgz');
    writeFileSync(tampered, writeTarGz([...files].map(([path, data]) => ({ path, data }))));
    await expect(signBundleFile(tampered, pair().privateKey)).rejects.toThrow(/not signing a tarball whose checksums fail/);
  });

  it('signs and verifies from the CLI (exit 1 on a wrong key)', async () => {
    const keys = pair();
    const dir = tempDir();
    writeFileSync(join(dir, 'key.pem'), keys.privateKey);
    writeFileSync(join(dir, 'key.pub'), keys.publicKey);
    writeFileSync(join(dir, 'other.pub'), pair().publicKey);
    const signed = copyOf(built);
    expect((await run(process.execPath, [cli, 'sign', signed, '--key', join(dir, 'key.pem')])).stdout).toContain(': signed');
    expect((await run(process.execPath, [cli, 'verify', signed, '--key', join(dir, 'key.pub')])).stdout).toContain('verified');
    const wrong = (await run(process.execPath, [cli, 'verify', signed, '--key', join(dir, 'other.pub')]).catch((e: unknown) => e)) as {
      code: number;
      stdout: string;
    };
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toContain('not a valid signature');
  });
});

describe('plugins in the tarball', () => {
  it('ships the bundled plugins with a manifest, and refuses a plugin changed after the build', async () => {
    const files = await readTarGzSafely(built);
    const manifest = JSON.parse(files.get('plugins/manifest.json')!.toString()) as { plugins: { file: string; chart?: string }[] };
    expect(manifest.plugins.map((p) => [p.file, p.chart])).toEqual([['plugins/010_web.ts', 'web']]);
    expect((await verifyBundle(built)).problems).toEqual([]);

    // rewritten with fresh tarball checksums, so only the plugin manifest can tell
    files.set('plugins/plugins.mjs', Buffer.from(`${files.get('plugins/plugins.mjs')!.toString()}\nprocess.exit(99);\n`));
    const entries = [...files].filter(([p]) => !p.startsWith('checksum.')).map(([path, data]) => ({ path, data }));
    const path = join(tempDir(), 'demo-1.0-1.tgz');
    writeFileSync(
      path,
      writeTarGz([...entries, { path: 'checksum.md5', data: md5sumFile(entries) }, { path: 'checksum.sha256', data: sha256sumFile(entries) }]),
    );
    const problems = (await verifyBundle(path)).problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^plugins: plugins\/plugins\.mjs: sha256 [0-9a-f]{64} does not match the manifest/);
  });
});
