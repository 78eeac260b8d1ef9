/**
 * Application tarballs in the real docker-registry: push (library and CLI),
 * pull with every blob checked, the signature alongside, tampering and
 * absurd sizes refused, tags that already hold something else.
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTarGzSafely, SIGNATURE_FILE, signBundleFile } from '../../src/tarball/index.js';
import { buildApp } from '../../src/build/index.js';
import { verifyBundle } from '../../src/verify/index.js';
import {
  ContentTooLarge,
  DigestMismatch,
  MediaType,
  NotABundle,
  OciClient,
  parseReference,
  pullBundle,
  pushBundle,
  type ImageManifest,
} from '../../src/oci/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { flotilla } from '../support/cli.js';
import { startRegistry, type TestRegistry } from '../support/registry.js';
import { startTokenRegistry, writeDockerConfig, type TokenRegistry } from '../support/registry-auth.js';

const failure = (...args: string[]) =>
  flotilla(...args).then(
    () => expect.fail('expected a non-zero exit'),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );

const anonymous = () => new OciClient({ credentials: { credentialFor: () => undefined } });

let built: string;
let signed: string;
let keys: { privateKey: string; publicKey: string };
let registry: TestRegistry;

beforeAll(async () => {
  built = (await buildApp(writeApp(), { outDir: tempDir() })).file;
  const pair = generateKeyPairSync('ed25519');
  keys = {
    privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
  signed = join(tempDir(), 'demo-1.0-1.tgz');
  writeFileSync(signed, readFileSync(built));
  await signBundleFile(signed, keys.privateKey);
  registry = await startRegistry();
});
afterAll(() => registry.stop());

/** Where the registry keeps a blob's bytes (to tamper with them). */
function blobFile(digest: string): string {
  const hex = digest.slice('sha256:'.length);
  return join(registry.storage, 'data', 'docker', 'registry', 'v2', 'blobs', 'sha256', hex.slice(0, 2), hex, 'data');
}

describe('pushBundle and pullBundle', () => {
  it('round-trips a signed tarball with its signature alongside, and the pulled file verifies with the key', async () => {
    const client = anonymous();
    const pushed = await pushBundle(client, signed, `oci://${registry.host}/apps/demo`, { chunkBytes: 16 * 1024 });
    expect(pushed).toMatchObject({ app: 'demo', version: '1.0-1', signed: true, status: 'pushed', size: readFileSync(signed).length });
    expect(pushed.reference).toBe(`${registry.host}/apps/demo:1.0-1@${pushed.digest}`);

    const manifest = (await client.getManifest(pushed.reference)).manifest as ImageManifest;
    expect(manifest.config.mediaType).toBe(MediaType.flotillaAppConfig);
    expect(manifest.layers.map((l) => l.mediaType)).toEqual([MediaType.flotillaAppBundle, MediaType.flotillaAppSignature]);
    expect(JSON.parse((await client.getBlob(pushed.reference, manifest.config)).toString())).toEqual({ app: 'demo', version: '1.0-1', signed: true });

    const dest = tempDir();
    const pulled = await pullBundle(client, `oci://${registry.host}/apps/demo:1.0-1`, dest);
    expect(pulled).toMatchObject({ file: join(dest, 'demo-1.0-1.tgz'), app: 'demo', version: '1.0-1', digest: pushed.digest, reference: pushed.reference });
    expect(readFileSync(pulled.file).equals(readFileSync(signed))).toBe(true);
    expect(pulled.signature).toBe((await readTarGzSafely(signed)).get(SIGNATURE_FILE)!.toString());
    expect((await verifyBundle(pulled.file, { publicKey: keys.publicKey })).problems).toEqual([]);
    // Pinned by digest, the same.
    expect((await pullBundle(client, pushed.reference, tempDir())).digest).toBe(pushed.digest);
  });

  it('pushes an unsigned tarball with one layer; the tag defaults to the app version; a second push of the same is a no-op', async () => {
    const client = anonymous();
    const pushed = await pushBundle(client, built, parseReference(`oci://${registry.host}/apps/unsigned`));
    expect(pushed).toMatchObject({ signed: false, status: 'pushed' });
    const manifest = (await client.getManifest(pushed.reference)).manifest as ImageManifest;
    expect(manifest.layers.map((l) => l.mediaType)).toEqual([MediaType.flotillaAppBundle]);
    expect((await pushBundle(client, built, `oci://${registry.host}/apps/unsigned:1.0-1`)).status).toBe('unchanged');
    expect((await pullBundle(client, `${registry.host}/apps/unsigned:1.0-1`, tempDir())).signature).toBeUndefined();
  });

  it('refuses to move a tag holding another bundle unless forced', async () => {
    const client = anonymous();
    await pushBundle(client, built, `oci://${registry.host}/apps/moving:stable`);
    await expect(pushBundle(client, signed, `oci://${registry.host}/apps/moving:stable`)).rejects.toThrow(
      /apps\/moving:stable: the tag already holds another bundle \(sha256:[0-9a-f]{64}\); push under a new tag, or --force to move it/,
    );
    const forced = await pushBundle(client, signed, `oci://${registry.host}/apps/moving:stable`, { force: true });
    expect((await client.resolve(`${registry.host}/apps/moving:stable`)).digest).toBe(forced.digest);
  });

  it('refuses a tampered tarball blob and leaves nothing in the destination', async () => {
    const client = anonymous();
    const pushed = await pushBundle(client, built, `oci://${registry.host}/apps/tampered:1`);
    const manifest = (await client.getManifest(pushed.reference)).manifest as ImageManifest;
    const layer = manifest.layers[0]!;
    const bytes = readFileSync(blobFile(layer.digest));
    bytes[bytes.length - 10] ^= 0xff;
    writeFileSync(blobFile(layer.digest), bytes);
    const dest = tempDir();
    const error = await pullBundle(client, `oci://${registry.host}/apps/tampered:1`, dest).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DigestMismatch);
    expect((error as Error).message).toContain(`${registry.host}/apps/tampered:1@${layer.digest}: blob digest mismatch: expected ${layer.digest}`);
    expect(readdirSync(dest)).toEqual([]);
  });

  it('refuses absurd sizes before downloading, artifacts that are not bundles, and missing tags', async () => {
    const client = anonymous();
    await pushBundle(client, built, `oci://${registry.host}/apps/bounded:1`);
    await expect(pullBundle(client, `oci://${registry.host}/apps/bounded:1`, tempDir(), { maxBytes: 1000 })).rejects.toThrow(ContentTooLarge);
    await expect(pullBundle(client, `oci://${registry.host}/apps/bounded:1`, tempDir(), { maxBytes: 1000 })).rejects.toThrow(
      /the tarball is \d+ bytes, more than the 1000 allowed/,
    );

    // A manifest that claims a huge layer (an existing blob, a lying size): refused from the manifest alone.
    const repo = parseReference(`${registry.host}/apps/liar`);
    const config = await client.pushBlob(repo, Buffer.from('{"app":"demo","version":"1"}'), MediaType.flotillaAppConfig);
    const real = await client.pushBlob(repo, Buffer.from('a small tarball'), MediaType.flotillaAppBundle);
    const huge = { ...real, size: 2 ** 50 };
    await client.pushManifest(
      repo.withTag('1'),
      Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociManifest, config, layers: [huge] })),
      MediaType.ociManifest,
    );
    const dest = tempDir();
    await expect(pullBundle(client, `${registry.host}/apps/liar:1`, dest)).rejects.toThrow(
      /the tarball is 1125899906842624 bytes, more than the 4294967296 allowed/,
    );
    expect(readdirSync(dest)).toEqual([]);

    // A Helm chart (or any other artifact) is not a bundle.
    const helmConfig = await client.pushBlob(repo, Buffer.from('{}'), MediaType.helmConfig);
    const chartLayer = await client.pushBlob(repo, Buffer.from('chart'), MediaType.helmChart);
    await client.pushManifest(
      repo.withTag('chart'),
      Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociManifest, config: helmConfig, layers: [chartLayer] })),
      MediaType.ociManifest,
    );
    await expect(pullBundle(client, `${registry.host}/apps/liar:chart`, tempDir())).rejects.toThrow(NotABundle);
    await expect(pullBundle(client, `${registry.host}/apps/liar:chart`, tempDir())).rejects.toThrow(
      /not a flotilla bundle \(config application\/vnd.cncf.helm.config.v1\+json\)/,
    );

    // A config whose app would escape the destination folder.
    const evil = await client.pushBlob(repo, Buffer.from('{"app":"../../etc","version":"1"}'), MediaType.flotillaAppConfig);
    const tarLayer = await client.pushBlob(repo, Buffer.from('x'), MediaType.flotillaAppBundle);
    await client.pushManifest(
      repo.withTag('evil'),
      Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociManifest, config: evil, layers: [tarLayer] })),
      MediaType.ociManifest,
    );
    await expect(pullBundle(client, `${registry.host}/apps/liar:evil`, tempDir())).rejects.toThrow(/app "..\/..\/etc" is not a name/);

    const plainFile = join(tempDir(), 'file');
    writeFileSync(plainFile, '');
    await expect(pullBundle(client, `${registry.host}/apps/bounded:1`, join(plainFile, 'dest'))).rejects.toThrow(
      `${join(plainFile, 'dest')}: cannot create the download folder (a part of the path is not a folder)`,
    );
    await expect(pullBundle(client, `${registry.host}/apps/bounded:2`, tempDir())).rejects.toThrow(
      `${registry.host}/apps/bounded:2: tag 2 not found in ${registry.host}`,
    );
  });

  it('refuses a file that is not an application tarball, naming it', async () => {
    const notApp = join(tempDir(), 'x.tgz');
    writeFileSync(notApp, 'not gzip');
    await expect(pushBundle(anonymous(), notApp, `oci://${registry.host}/apps/x`)).rejects.toThrow(/x\.tgz/);
  });
});

describe('flotilla push', () => {
  let secure: TokenRegistry;
  const user = { username: 'release', password: 'pa55' };
  beforeAll(async () => {
    secure = await startTokenRegistry([user]);
  });
  afterAll(() => secure.stop());

  it('pushes to a registry that wants a bearer token, with the credentials of --registry-config, and prints JSON with -o json', async () => {
    const config = writeDockerConfig(tempDir(), secure.host, user);
    const { stdout } = await flotilla('push', signed, `oci://${secure.host}/apps/demo`, '--registry-config', config, '-o', 'json');
    const pushed = JSON.parse(stdout) as { reference: string; digest: string; signed: boolean; status: string };
    expect(pushed).toMatchObject({ app: 'demo', version: '1.0-1', signed: true, status: 'pushed' });
    expect(pushed.reference).toBe(`${secure.host}/apps/demo:1.0-1@${pushed.digest}`);
    const yaml = await flotilla(
      'push',
      signed,
      `oci://${secure.host}/apps/demo:1.0-1`,
      '--registry-config',
      config,
      '--insecure-registry',
      secure.host,
      '--insecure-registry',
      'other.example:5000',
      '--output',
      'yaml',
    );
    expect(yaml.stdout).toContain(`status: unchanged\n`);
    expect(yaml.stdout).toContain(`digest: ${pushed.digest}\n`);
    const again = await flotilla('push', signed, `oci://${secure.host}/apps/demo:1.0-1`, '--registry-config', config);
    expect(again.stdout).toMatch(
      new RegExp(`^already there: demo 1\\.0-1 \\([0-9.]+ MiB, signed\\)\\n  ${secure.host.replace(/\./g, '\\.')}/apps/demo:1\\.0-1@sha256:[0-9a-f]{64}\\n$`),
    );
  });

  it('exits 1 with one line when the registry refuses or cannot be reached, and 2 on bad usage', async () => {
    const denied = await failure(
      'push',
      signed,
      `oci://${secure.host}/apps/demo`,
      '--registry-config',
      writeDockerConfig(tempDir(), 'elsewhere.example', user),
    );
    expect(denied.code).toBe(1);
    expect(denied.stderr).toBe(
      `flotilla: ${secure.host}/apps/demo:1.0-1: the token service ${secure.realm.replace(/\/token$/, '')} requires credentials for ${secure.host}, and the registry config has none\n`,
    );
    const missingConfig = await failure('push', signed, `oci://${secure.host}/apps/demo`, '--registry-config', join(tempDir(), 'none.json'));
    expect(missingConfig.code).toBe(1);
    expect(missingConfig.stderr).toMatch(/^flotilla: .*none\.json: cannot read the registry config \(no such file or folder\)\n$/);
    const usage = await failure('push', signed, `${secure.host}/apps/demo`);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('TARGET must be oci://HOST/REPO/APP[:TAG]');
    expect((await failure('push', signed)).code).toBe(2);
    const format = await failure('push', signed, `oci://${secure.host}/apps/demo`, '-o', 'xml');
    expect(format.code).toBe(2);
    expect(format.stderr).toBe("flotilla: option '-o, --output <FORMAT>' argument 'xml' is invalid. Allowed choices are table, json, yaml. (see --help)\n");
    const absent = await failure('push', join(tempDir(), 'absent.tgz'), `oci://${secure.host}/apps/demo`);
    expect(absent.code).toBe(1);
    expect(absent.stderr).toMatch(/^flotilla: .*absent\.tgz/);
    expect(absent.stderr.split('\n').length).toBe(2);
    expect(existsSync(signed)).toBe(true);
  });
});
