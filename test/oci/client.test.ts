/**
 * The distribution client against the real docker-registry on loopback:
 * every manifest media type, chunked uploads, tags, errors, tampering, and
 * Basic and Bearer-token authentication.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DigestMismatch,
  digestOf,
  ManifestUnknown,
  MediaType,
  OciClient,
  parseReference,
  RegistryUnreachable,
  Unauthorized,
  type Descriptor,
} from '../../src/oci/index.js';
import { freePort, startRegistry, type TestRegistry } from '../support/registry.js';
import { startBasicAuthRegistry, startTokenRegistry, writeDockerConfig, type TokenRegistry } from '../support/registry-auth.js';

const DOCKER_CONFIG = 'application/vnd.docker.container.image.v1+json';
const DOCKER_LAYER = 'application/vnd.docker.image.rootfs.diff.tar.gzip';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
const OCI_LAYER = 'application/vnd.oci.image.layer.v1.tar+gzip';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

/** An image (config + one layer) pushed with the given schema; returns the manifest's bytes and descriptor. */
async function pushImage(client: OciClient, ref: string, kind: 'oci' | 'docker', marker: string): Promise<Descriptor> {
  const repo = parseReference(ref);
  const config = await client.pushBlob(
    repo,
    json({ architecture: 'amd64', os: 'linux', marker, rootfs: { type: 'layers', diff_ids: [] } }),
    kind === 'oci' ? OCI_CONFIG : DOCKER_CONFIG,
  );
  const layer = await client.pushBlob(repo, Buffer.from(`layer ${marker}`), kind === 'oci' ? OCI_LAYER : DOCKER_LAYER);
  const mediaType = kind === 'oci' ? MediaType.ociManifest : MediaType.dockerManifest;
  return client.pushManifest(repo, json({ schemaVersion: 2, mediaType, config, layers: [layer] }), mediaType);
}

async function pushIndex(client: OciClient, ref: string, kind: 'oci' | 'docker', manifests: Descriptor[]): Promise<Descriptor> {
  const mediaType = kind === 'oci' ? MediaType.ociIndex : MediaType.dockerManifestList;
  const entries = manifests.map((m, i) => ({ ...m, platform: { architecture: i === 0 ? 'amd64' : 'arm64', os: 'linux' } }));
  return client.pushManifest(parseReference(ref), json({ schemaVersion: 2, mediaType, manifests: entries }), mediaType);
}

/** Finds a blob's data file in the registry's storage (to tamper with it). */
function blobFile(registry: TestRegistry, digest: string): string {
  const hex = digest.slice('sha256:'.length);
  return join(registry.storage, 'data', 'docker', 'registry', 'v2', 'blobs', 'sha256', hex.slice(0, 2), hex, 'data');
}

/**
 * A loopback proxy in front of a registry: drops one response header (a
 * registry that does not announce digests), or answers 503 to the first
 * requests (a busy registry).
 */
async function startProxy(target: TestRegistry, options: { dropHeader?: string; busyFirst?: number }): Promise<{ host: string; close(): Promise<void> }> {
  const targetUrl = new URL(target.url);
  let busy = options.busyFirst ?? 0;
  const server: Server = createServer((req, res) => {
    if (busy > 0) {
      busy--;
      res.writeHead(503).end();
      return;
    }
    const upstream = httpRequest({ host: targetUrl.hostname, port: targetUrl.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
      const headers = { ...up.headers };
      if (options.dropHeader) delete headers[options.dropHeader];
      res.writeHead(up.statusCode ?? 502, headers);
      up.pipe(res);
    });
    req.pipe(upstream);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { host: `127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('OciClient against docker-registry', () => {
  let registry: TestRegistry;
  let client: OciClient;
  let work: string;

  beforeAll(async () => {
    registry = await startRegistry();
    work = mkdtempSync(join(tmpdir(), 'flotilla-oci-'));
    client = new OciClient({ credentials: { credentialFor: () => undefined } });
  });
  afterAll(async () => {
    await registry.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('resolves tags of an OCI manifest, a Docker v2 manifest, an OCI index and a Docker manifest list', async () => {
    const oci = await pushImage(client, `${registry.host}/images/app:oci`, 'oci', 'one');
    const docker = await pushImage(client, `${registry.host}/images/app:docker`, 'docker', 'two');
    const ociIndex = await pushIndex(client, `${registry.host}/images/app:oci-index`, 'oci', [oci]);
    const dockerList = await pushIndex(client, `${registry.host}/images/app:docker-list`, 'docker', [docker]);
    const cases: [string, Descriptor, string][] = [
      ['oci', oci, MediaType.ociManifest],
      ['docker', docker, MediaType.dockerManifest],
      ['oci-index', ociIndex, MediaType.ociIndex],
      ['docker-list', dockerList, MediaType.dockerManifestList],
    ];
    for (const [tag, pushed, mediaType] of cases) {
      const resolved = await client.resolve(`${registry.host}/images/app:${tag}`);
      expect(resolved).toEqual({ mediaType, digest: pushed.digest, size: pushed.size });
      const fetched = await client.getManifest(`${registry.host}/images/app:${tag}`);
      expect(fetched.descriptor).toEqual(resolved);
      expect(digestOf(fetched.bytes)).toBe(pushed.digest);
    }
    // A reference pinned by digest resolves to itself.
    expect((await client.resolve(`${registry.host}/images/app@${oci.digest}`)).digest).toBe(oci.digest);
    expect((await client.listTags(`${registry.host}/images/app`)).sort()).toEqual(['docker', 'docker-list', 'oci', 'oci-index']);
  });

  it('computes the digest from the body when the registry does not send Docker-Content-Digest', async () => {
    const pushed = await pushImage(client, `${registry.host}/images/plain:v1`, 'oci', 'plain');
    const proxy = await startProxy(registry, { dropHeader: 'docker-content-digest' });
    try {
      expect(await client.resolve(`${proxy.host}/images/plain:v1`)).toEqual(pushed);
    } finally {
      await proxy.close();
    }
  });

  it('tries a read again when the registry is busy', async () => {
    const pushed = await pushImage(client, `${registry.host}/images/busy:v1`, 'oci', 'busy');
    const proxy = await startProxy(registry, { busyFirst: 2 });
    try {
      const patient = new OciClient({ credentials: { credentialFor: () => undefined }, retryDelaysMs: [10, 10] });
      expect(await patient.resolve(`${proxy.host}/images/busy:v1`)).toEqual(pushed);
    } finally {
      await proxy.close();
    }
  });

  it('follows a tag that moved', async () => {
    const ref = `${registry.host}/images/moving:stable`;
    const before = await pushImage(client, ref, 'oci', 'before');
    expect((await client.resolve(ref)).digest).toBe(before.digest);
    const after = await pushImage(client, ref, 'oci', 'after');
    expect(after.digest).not.toBe(before.digest);
    expect((await client.resolve(ref)).digest).toBe(after.digest);
    // The old digest is still there, pinned.
    expect((await client.resolve(`${registry.host}/images/moving@${before.digest}`)).digest).toBe(before.digest);
  });

  it('names the reference when a tag, a digest or a repository is missing', async () => {
    await pushImage(client, `${registry.host}/images/present:v1`, 'oci', 'present');
    const missingTag = `${registry.host}/images/present:v2`;
    await expect(client.resolve(missingTag)).rejects.toThrow(ManifestUnknown);
    await expect(client.resolve(missingTag)).rejects.toThrow(`${missingTag}: tag v2 not found in ${registry.host}`);
    await expect(client.getManifest(missingTag)).rejects.toThrow(`${missingTag}: tag v2 not found`);
    const missingDigest = `${registry.host}/images/present@sha256:${'0'.repeat(64)}`;
    await expect(client.resolve(missingDigest)).rejects.toThrow(ManifestUnknown);
    await expect(client.getManifest(`${registry.host}/images/absent:v1`)).rejects.toThrow(/images\/absent:v1: (repository images\/absent|tag v1) not found/);
  });

  it('reports an unreachable registry with the reference and the reason', async () => {
    const closed = `127.0.0.1:${await freePort()}`;
    const error = await client.resolve(`${closed}/images/app:v1`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegistryUnreachable);
    expect((error as Error).message).toBe(`${closed}/images/app:v1: cannot reach http://${closed} (ECONNREFUSED)`);
  });

  it('gives up on a registry that does not answer in time, and reports what a failing registry says', async () => {
    const silent = createServer(() => undefined);
    let failures = 0;
    const failing = createServer((_req, res) => {
      failures++;
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ code: 'UNAVAILABLE', message: 'storage is read-only' }] }));
    });
    const listen = async (server: Server) => {
      const port = await freePort();
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      return `127.0.0.1:${port}`;
    };
    const silentHost = await listen(silent);
    const failingHost = await listen(failing);
    try {
      const impatient = new OciClient({ credentials: { credentialFor: () => undefined }, timeoutMs: 300 });
      const late = await impatient.resolve(`${silentHost}/images/app:v1`).catch((e: unknown) => e);
      expect(late).toBeInstanceOf(RegistryUnreachable);
      expect((late as Error).message).toBe(`${silentHost}/images/app:v1: cannot reach http://${silentHost} (timed out)`);
      const quick = new OciClient({ credentials: { credentialFor: () => undefined }, retryDelaysMs: [10, 10] });
      await expect(quick.resolve(`${failingHost}/images/app:v1`)).rejects.toThrow(
        `${failingHost}/images/app:v1: reading the manifest: ${failingHost} answered UNAVAILABLE: storage is read-only`,
      );
      // HEAD and GET, each tried three times.
      expect(failures).toBe(6);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      await new Promise<void>((resolve) => failing.close(() => resolve()));
    }
  });

  it('gives up on a registry that trickles, when no byte came for the idle time, however long the request may take', async () => {
    const trickles: NodeJS.Timeout[] = [];
    const trickling = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json', 'content-length': '1000' });
      if (req.method === 'HEAD') return void res.end();
      res.write('{');
      // One byte a second: the whole request's 20 s would let it hold the run for most of them.
      trickles.push(setInterval(() => res.write(' '), 1000));
    });
    const port = await freePort();
    await new Promise<void>((resolve) => trickling.listen(port, '127.0.0.1', resolve));
    try {
      const watchful = new OciClient({
        credentials: { credentialFor: () => undefined },
        timeoutMs: 20_000,
        blobTimeoutMs: 20_000,
        idleTimeoutMs: 300,
        retryDelaysMs: [],
      });
      const error = await watchful.getManifest(`127.0.0.1:${port}/images/app:v1`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RegistryUnreachable);
      expect((error as Error).message).toBe(`127.0.0.1:${port}/images/app:v1: http://127.0.0.1:${port} sent nothing for 0.3 s; giving up`);
    } finally {
      for (const trickle of trickles) clearInterval(trickle);
      trickling.closeAllConnections();
      await new Promise<void>((resolve) => trickling.close(() => resolve()));
    }
  });

  it('uploads in chunks and in one piece, skips blobs the registry has, and reads them back checked', async () => {
    const repo = parseReference(`${registry.host}/blobs/big`);
    const file = join(work, 'big.bin');
    const data = Buffer.alloc(300_000);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7919) % 251;
    writeFileSync(file, data);
    const chunked = await client.pushBlobFile(repo, file, 'application/octet-stream', { chunkBytes: 64 * 1024 });
    expect(chunked).toEqual({ mediaType: 'application/octet-stream', digest: digestOf(data), size: data.length });
    expect(await client.blobExists(repo, chunked.digest)).toBe(true);
    expect((await client.getBlob(repo, chunked)).equals(data)).toBe(true);
    // Same content again: nothing uploaded, same descriptor.
    expect(await client.pushBlobFile(repo, file, 'application/octet-stream')).toEqual(chunked);

    const small = Buffer.from('small blob');
    const single = await client.pushBlobFile(repo, (writeFileSync(join(work, 's.bin'), small), join(work, 's.bin')), 'text/plain');
    expect((await client.getBlob(repo, single.digest)).toString()).toBe('small blob');

    const out = join(work, 'downloaded.bin');
    await client.downloadBlob(repo, chunked, out, { maxBytes: 1024 * 1024 });
    expect(statSync(out).size).toBe(data.length);
    await expect(client.downloadBlob(repo, chunked, join(work, 'refused.bin'), { maxBytes: 1000 })).rejects.toThrow(/more than the 1000 allowed/);
    await expect(client.pushBlobFile(repo, join(work, 'absent.bin'), 'application/octet-stream')).rejects.toThrow(
      `${join(work, 'absent.bin')}: cannot read the file to upload (no such file or folder)`,
    );
    const notAFolder = join(work, 'plain-file');
    writeFileSync(notAFolder, '');
    await expect(client.downloadBlob(repo, chunked, join(notAFolder, 'out.bin'), { maxBytes: 1024 * 1024 })).rejects.toThrow(
      `${join(notAFolder, 'out.bin')}: cannot write the download (a part of the path is not a folder)`,
    );
    expect(await client.blobExists(repo, `sha256:${'1'.repeat(64)}`)).toBe(false);
  });

  it('refuses a blob whose bytes no longer match its digest, leaving no file behind', async () => {
    const repo = parseReference(`${registry.host}/blobs/tampered`);
    const original = Buffer.from('the original content of a blob');
    const descriptor = await client.pushBlob(repo, original);
    writeFileSync(blobFile(registry, descriptor.digest), Buffer.from('the tampered content of a blob'));
    const error = await client.getBlob(repo, descriptor).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DigestMismatch);
    expect((error as DigestMismatch).expected).toBe(descriptor.digest);
    expect((error as Error).message).toContain(`${registry.host}/blobs/tampered@${descriptor.digest}: blob digest mismatch`);
    const target = join(work, 'tampered.bin');
    await expect(client.downloadBlob(repo, descriptor, target, { maxBytes: 1024 })).rejects.toThrow(DigestMismatch);
    expect(readdirSync(work).filter((f) => f.startsWith('tampered'))).toEqual([]);
  });
});

describe('OciClient authentication', () => {
  const user = { username: 'builder', password: 's3cret:with-colon' };
  let work: string;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'flotilla-oci-auth-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  describe('Bearer tokens (docker-registry auth: token)', () => {
    let registry: TokenRegistry;
    beforeAll(async () => {
      registry = await startTokenRegistry([user]);
    });
    afterAll(() => registry.stop());

    it('gets a token from the realm with the config file credentials, pushes and resolves', async () => {
      const config = writeDockerConfig(work, registry.host, user);
      const client = new OciClient({ registryConfig: config });
      const pushed = await pushImage(client, `${registry.host}/secure/app:v1`, 'oci', 'token');
      expect(await client.resolve(`${registry.host}/secure/app:v1`)).toEqual(pushed);
      expect(registry.tokenRequests.length).toBeGreaterThan(0);
      expect(registry.tokenRequests.every((r) => r.user === user.username)).toBe(true);
      // The registry names the actions in no set order.
      const scopes = registry.tokenRequests.flatMap((r) =>
        r.scope.map((s) => s.replace(/:([a-z,]+)$/, (_m, actions: string) => `:${actions.split(',').sort().join(',')}`)),
      );
      expect(scopes).toContain('repository:secure/app:pull,push');
      // Tokens are reused: a second resolve asks for none.
      const before = registry.tokenRequests.length;
      await client.resolve(`${registry.host}/secure/app:v1`);
      expect(registry.tokenRequests.length).toBe(before);
    });

    it('refuses without credentials and with a wrong password, naming the registry', async () => {
      const anonymous = new OciClient({ credentials: { credentialFor: () => undefined } });
      await expect(anonymous.resolve(`${registry.host}/secure/app:v1`)).rejects.toThrow(Unauthorized);
      await expect(anonymous.resolve(`${registry.host}/secure/app:v1`)).rejects.toThrow(`requires credentials for ${registry.host}`);
      const wrong = new OciClient({ credentials: { credentialFor: () => ({ kind: 'basic', username: user.username, password: 'nope' }) } });
      await expect(wrong.resolve(`${registry.host}/secure/app:v1`)).rejects.toThrow(`refused the credentials for ${registry.host}`);
    });
  });

  describe('Bearer tokens for anonymous pulls', () => {
    let registry: TokenRegistry;
    beforeAll(async () => {
      registry = await startTokenRegistry([user], { anonymousPull: true });
    });
    afterAll(() => registry.stop());

    it('pulls with an anonymous token and says why a push is refused', async () => {
      const config = writeDockerConfig(work, registry.host, user);
      const pushed = await pushImage(new OciClient({ registryConfig: config }), `${registry.host}/public/app:v1`, 'oci', 'public');
      const anonymous = new OciClient({ credentials: { credentialFor: () => undefined } });
      expect(await anonymous.resolve(`${registry.host}/public/app:v1`)).toEqual(pushed);
      expect(registry.tokenRequests.some((r) => r.user === undefined && r.scope.includes('repository:public/app:pull'))).toBe(true);
      const error = await pushImage(anonymous, `${registry.host}/public/app:v2`, 'oci', 'anonymous').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Unauthorized);
      expect((error as Error).message).toMatch(
        new RegExp(
          `${registry.host}/public/app:v2: ${registry.host} refused anonymous access to push \\(UNAUTHORIZED: .*\\); the registry config has no credentials for it`,
        ),
      );
    });
  });

  it('never sends credentials over plain HTTP to a token service off loopback', async () => {
    const registry = await startTokenRegistry([user], { advertisedRealm: 'http://token.example/token' });
    try {
      const client = new OciClient({ credentials: { credentialFor: () => ({ kind: 'basic', ...user }) } });
      const error = await client.resolve(`${registry.host}/secure/app:v1`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Unauthorized);
      expect((error as Error).message).toBe(`${registry.host}/secure/app:v1: refusing to send credentials over plain HTTP to http://token.example`);
      expect(registry.tokenRequests).toEqual([]);
    } finally {
      await registry.stop();
    }
  });

  describe('Basic (docker-registry auth: htpasswd)', () => {
    let registry: TestRegistry;
    beforeAll(async () => {
      registry = await startBasicAuthRegistry([user]);
    });
    afterAll(() => registry.stop());

    it('answers the Basic challenge with the config file credentials', async () => {
      const config = writeDockerConfig(work, `http://${registry.host}/`, user);
      const client = new OciClient({ registryConfig: config });
      const pushed = await pushImage(client, `${registry.host}/basic/app:v1`, 'docker', 'basic');
      expect(await client.resolve(`${registry.host}/basic/app:v1`)).toEqual(pushed);
      expect(await client.listTags(`${registry.host}/basic/app`)).toEqual(['v1']);
    });

    it('refuses without credentials', async () => {
      const anonymous = new OciClient({ credentials: { credentialFor: () => undefined } });
      const error = await anonymous.resolve(`${registry.host}/basic/app:v1`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Unauthorized);
      expect((error as Error).message).toBe(
        `${registry.host}/basic/app:v1: ${registry.host} requires a username and password, and the registry config has none for it`,
      );
      const wrong = new OciClient({ credentials: { credentialFor: () => ({ kind: 'basic', username: user.username, password: 'nope' }) } });
      await expect(wrong.resolve(`${registry.host}/basic/app:v1`)).rejects.toThrow(`${registry.host} refused the credentials`);
    });
  });

  it('names a missing --registry-config file', () => {
    expect(() => new OciClient({ registryConfig: join(work, 'absent.json') })).toThrow(
      /absent.json: cannot read the registry config \(no such file or folder\)/,
    );
  });
});
