/**
 * `images pin` and `images pin --check` against Debian's docker-registry on
 * loopback: single manifests and indexes in OCI and Docker media types, a
 * registry that wants a bearer token (credentials from a Docker config
 * file), a tag that moved, a digest that was deleted, a missing tag and an
 * unreachable registry.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPins, ImageLookupError, pinImages, writeChanges } from '../../src/edit/index.js';
import { MediaType, OciClient, parseReference } from '../../src/oci/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { failure, flotilla } from '../support/cli.js';
import { freePort, startRegistry, type TestRegistry } from '../support/registry.js';
import { startTokenRegistry, writeDockerConfig, type TokenRegistry } from '../support/registry-auth.js';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const USER = { username: 'builder', password: 'tr0ub4dor' };

/** Pushes config + layer + manifest under `ref`'s tag; returns the manifest digest computed here from the bytes sent. */
async function pushImage(client: OciClient, ref: string, kind: 'oci' | 'docker', marker: string): Promise<{ digest: string; size: number; mediaType: string }> {
  const repo = parseReference(ref);
  const config = await client.pushBlob(
    repo,
    json({ architecture: 'amd64', os: 'linux', marker }),
    kind === 'oci' ? 'application/vnd.oci.image.config.v1+json' : 'application/vnd.docker.container.image.v1+json',
  );
  const layer = await client.pushBlob(
    repo,
    Buffer.from(`layer ${marker}`),
    kind === 'oci' ? 'application/vnd.oci.image.layer.v1.tar+gzip' : 'application/vnd.docker.image.rootfs.diff.tar.gzip',
  );
  const mediaType = kind === 'oci' ? MediaType.ociManifest : MediaType.dockerManifest;
  const bytes = json({ schemaVersion: 2, mediaType, config, layers: [layer] });
  await client.pushManifest(repo, bytes, mediaType);
  return { digest: sha256(bytes), size: bytes.length, mediaType };
}

/** Two platform images and an index (OCI) or manifest list (Docker) over them under `ref`'s tag. */
async function pushIndex(client: OciClient, ref: string, kind: 'oci' | 'docker', marker: string): Promise<string> {
  const repo = parseReference(ref);
  const amd = await pushImage(client, `${repo.name}:${marker}-amd64`, kind, `${marker}-amd64`);
  const arm = await pushImage(client, `${repo.name}:${marker}-arm64`, kind, `${marker}-arm64`);
  const mediaType = kind === 'oci' ? MediaType.ociIndex : MediaType.dockerManifestList;
  const manifests = [
    { ...amd, platform: { architecture: 'amd64', os: 'linux' } },
    { ...arm, platform: { architecture: 'arm64', os: 'linux' } },
  ];
  const bytes = json({ schemaVersion: 2, mediaType, manifests });
  await client.pushManifest(repo, bytes, mediaType);
  return sha256(bytes);
}

let open: TestRegistry;
let secured: TokenRegistry;
let dockerConfig: string;
let openClient: OciClient;
let securedClient: OciClient;

beforeAll(async () => {
  [open, secured] = await Promise.all([startRegistry(), startTokenRegistry([USER])]);
  dockerConfig = writeDockerConfig(tempDir(), secured.host, USER);
  openClient = new OciClient({ credentials: { credentialFor: () => undefined } });
  securedClient = new OciClient({ registryConfig: dockerConfig });
}, 60_000);

afterAll(async () => {
  await Promise.all([open?.stop(), secured?.stop()]);
});

interface Pushed {
  web: string;
  proxy: string;
  db: string;
  volume: string;
  /** Release 1.0's web and db images. */
  web1: string;
  db1: string;
}

/** An app whose images live in both registries, written in the catalog, static overrides and a template. */
async function pinnableApp(tag: string): Promise<{ app: string; pushed: Pushed; files: Record<string, string> }> {
  const refs = {
    web: `${open.host}/library/web:${tag}`,
    proxy: `${open.host}/library/proxy:${tag}`,
    db: `${open.host}/library/db:${tag}`,
    volume: `${secured.host}/private/volume:${tag}`,
    web1: `${open.host}/library/web:${tag}-1.0`,
    db1: `${open.host}/library/db:${tag}-1.0`,
  };
  const pushed: Pushed = {
    web: (await pushImage(openClient, refs.web, 'docker', `web-${tag}`)).digest,
    proxy: await pushIndex(openClient, refs.proxy, 'docker', `proxy-${tag}`),
    db: await pushIndex(openClient, refs.db, 'oci', `db-${tag}`),
    volume: (await pushImage(securedClient, refs.volume, 'oci', `volume-${tag}`)).digest,
    web1: (await pushImage(openClient, refs.web1, 'oci', `web-${tag}-1.0`)).digest,
    db1: (await pushImage(openClient, refs.db1, 'oci', `db-${tag}-1.0`)).digest,
  };
  const files = {
    'overrides/deployment.yaml': `main:\n  release: "2.0"\n  domain: example.org\nfeatures:\n  services: [frontend]\n`,
    'overrides/versions/2.0.yaml': `release: "2.0"\nimages:\n  web: ${refs.web}   # frontend\n  db: "${refs.db}"\n  web_proxy: ${refs.proxy}\nserviceDefaults:\n  modern: true\n`,
    // Release 1.0, a possible target too: its web and db images its own, its proxy the one 2.0 has.
    'overrides/versions/1.0.yaml': `release: "1.0"\nimages:\n  web: ${refs.web1}\n  db: ${refs.db1}\n  web_proxy: ${refs.proxy}\nserviceDefaults:\n  modern: false\n`,
    'overrides/versions/images.yaml': `web:\n  web: images.tags.web\ndb:\n  db: images.tags.db\nweb_proxy:\n  web: images.tags.proxy\n`,
    'overrides/static/db.yaml': `# Database overrides.\n---\nimages:\n  tags:\n    db: '${refs.db}'   # from the catalog\n    volume: ${refs.volume}\n    site: "@IMAGE_PREFIX@/site/tool:1"\n...\n`,
    'overrides/templates/web.yaml.hbs': `conf:\n  host: web.{{main.domain}}\n  sidecar: ${refs.proxy}\n`,
  };
  return { app: writeApp(files), pushed, files };
}

const read = (app: string, file: string) => readFileSync(join(app, file), 'utf8');

describe('images pin', () => {
  it('writes name:tag@digest everywhere each reference is written, indexes pinned by the index digest', async () => {
    const { app, pushed, files } = await pinnableApp('1.0');
    const before = secured.tokenRequests.length;
    const result = await pinImages(app, { registryConfig: dockerConfig });
    await writeChanges(result.changes);
    const at = (ref: string, digest: string) => `${ref}@${digest}`;
    expect(read(app, 'overrides/versions/2.0.yaml')).toBe(
      files['overrides/versions/2.0.yaml']
        .replace(`library/web:1.0`, at('library/web:1.0', pushed.web))
        .replace(`library/db:1.0`, at('library/db:1.0', pushed.db))
        .replace(`library/proxy:1.0`, at('library/proxy:1.0', pushed.proxy)),
    );
    expect(read(app, 'overrides/static/db.yaml')).toBe(
      files['overrides/static/db.yaml']
        .replace(`library/db:1.0`, at('library/db:1.0', pushed.db))
        .replace('private/volume:1.0', at('private/volume:1.0', pushed.volume)),
    );
    expect(read(app, 'overrides/templates/web.yaml.hbs')).toBe(
      files['overrides/templates/web.yaml.hbs'].replace('library/proxy:1.0', at('library/proxy:1.0', pushed.proxy)),
    );
    // Every catalog release is pinned, not only main.release's.
    expect(read(app, 'overrides/versions/1.0.yaml')).toBe(
      files['overrides/versions/1.0.yaml']
        .replace(`library/web:1.0-1.0`, at('library/web:1.0-1.0', pushed.web1))
        .replace(`library/db:1.0-1.0`, at('library/db:1.0-1.0', pushed.db1))
        .replace(`library/proxy:1.0`, at('library/proxy:1.0', pushed.proxy)),
    );
    expect(result.skipped.map((s) => `${s.reference}: ${s.reason}`)).toEqual([
      '@IMAGE_PREFIX@/site/tool:1: holds a build token: the registry is known only when the app is built',
    ]);
    expect(result.pinned.find((p) => p.digest === pushed.db)?.mediaType).toBe(MediaType.ociIndex);
    expect(result.pinned.find((p) => p.digest === pushed.proxy)?.mediaType).toBe(MediaType.dockerManifestList);
    expect(result.pinned.find((p) => p.digest === pushed.web)?.mediaType).toBe(MediaType.dockerManifest);
    // The secured registry was reached with a bearer token obtained with the Docker config's credentials.
    expect(secured.tokenRequests.slice(before)).toContainEqual({ scope: ['repository:private/volume:pull'], user: USER.username });
    // Pinned references are left alone the next time.
    const again = await pinImages(app, { registryConfig: dockerConfig });
    expect(again.changes.every((c) => c.before === c.after)).toBe(true);
  });

  it('--release restricts it to that catalog release; an unknown one is refused, naming the known ones', async () => {
    const { app, pushed, files } = await pinnableApp('5.0');
    const result = await pinImages(app, { registryConfig: dockerConfig, releases: ['1.0'] });
    await writeChanges(result.changes);
    expect(read(app, 'overrides/versions/1.0.yaml')).toBe(
      files['overrides/versions/1.0.yaml']
        .replace(`library/web:5.0-1.0`, `library/web:5.0-1.0@${pushed.web1}`)
        .replace(`library/db:5.0-1.0`, `library/db:5.0-1.0@${pushed.db1}`)
        .replace(`library/proxy:5.0`, `library/proxy:5.0@${pushed.proxy}`),
    );
    // main.release's entry and what belongs to it (static overrides, templates) stay as they were.
    for (const file of ['overrides/versions/2.0.yaml', 'overrides/static/db.yaml', 'overrides/templates/web.yaml.hbs'])
      expect(read(app, file)).toBe(files[file as keyof typeof files]);
    expect((await checkPins(app, { registryConfig: dockerConfig, releases: ['1.0'] })).map((c) => c.status)).toEqual(['current', 'current', 'current']);
    await expect(pinImages(app, { releases: ['3.0'] })).rejects.toThrow('--release 3.0: no release "3.0"');
  });

  it('writes nothing when a tag is missing or a registry is unreachable, naming the image and file:line', async () => {
    const { app, files } = await pinnableApp('2.0');
    const port = await freePort();
    const broken = {
      ...files,
      'overrides/static/web.yaml': `images:\n  tags:\n    web: ${open.host}/library/web:9.9\n    extra: 127.0.0.1:${port}/library/gone:1\n`,
    };
    const brokenApp = writeApp(broken);
    const error = await pinImages(brokenApp, { registryConfig: dockerConfig }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImageLookupError);
    const message = (error as Error).message;
    expect(message).toMatch(/^2 image lookups failed; nothing was written:\n/);
    expect(message).toContain(`\n  overrides/static/web.yaml:3:5: error: image ${open.host}/library/web:9.9: tag 9.9 not found in ${open.host}\n`);
    expect(message).toContain(
      `\n  overrides/static/web.yaml:4:5: error: image 127.0.0.1:${port}/library/gone:1: cannot reach http://127.0.0.1:${port} (ECONNREFUSED)`,
    );
    for (const [file, text] of Object.entries(broken)) expect(read(brokenApp, file)).toBe(text);
    // Without the credentials the secured registry refuses: also a lookup failure, nothing written.
    const empty = join(tempDir(), 'config.json');
    writeFileSync(empty, '{"auths": {}}');
    const refused = await pinImages(app, { registryConfig: empty }).catch((e: unknown) => e);
    expect((refused as Error).message).toContain(`overrides/static/db.yaml:6:5: error: image ${secured.host}/private/volume:2.0`);
    for (const [file, text] of Object.entries(files)) expect(read(app, file)).toBe(text);
  });
});

describe('images pin --check', () => {
  it('passes on current pins, then reports a moved tag and a deleted digest', async () => {
    const { app, pushed } = await pinnableApp('3.0');
    await writeChanges((await pinImages(app, { registryConfig: dockerConfig })).changes);
    const first = await checkPins(app, { registryConfig: dockerConfig });
    expect(first.map((c) => c.status)).toEqual(['current', 'current', 'current', 'current', 'current', 'current']);

    // The web tag moves to a new image; the db index is deleted from the registry.
    const moved = await pushImage(openClient, `${open.host}/library/web:3.0`, 'oci', 'web-3.0-rebuilt');
    const deleted = await fetch(`${open.url}/v2/library/db/manifests/${pushed.db}`, { method: 'DELETE' });
    expect(deleted.status).toBe(202);
    const checks = await checkPins(app, { registryConfig: dockerConfig });
    const byStatus = Object.fromEntries(checks.map((c) => [c.reference.replace(/@.*/, ''), `${c.status}: ${c.detail}`]));
    expect(byStatus).toEqual({
      [`${open.host}/library/web:3.0`]: `tag-moved: tag 3.0 now points to ${moved.digest}, not the pinned ${pushed.web}`,
      [`${open.host}/library/db:3.0`]: `digest-gone: the pinned digest ${pushed.db} no longer exists in ${open.host}/library/db`,
      [`${open.host}/library/proxy:3.0`]: 'current: tag 3.0 still points to the pinned digest',
      [`${open.host}/library/web:3.0-1.0`]: 'current: tag 3.0-1.0 still points to the pinned digest',
      [`${open.host}/library/db:3.0-1.0`]: 'current: tag 3.0-1.0 still points to the pinned digest',
      [`${secured.host}/private/volume:3.0`]: 'current: tag 3.0 still points to the pinned digest',
    });

    // The CLI exits 1 naming each, and changes nothing.
    const files = ['overrides/versions/2.0.yaml', 'overrides/static/db.yaml'].map((f) => read(app, f));
    const e = await failure('images', 'pin', app, '--check', '--registry-config', dockerConfig);
    expect(e.code).toBe(1);
    expect(e.stdout).toMatch(/^REFERENCE\s+STATUS\s+DETAIL\s+WRITTEN AT$/m);
    expect(e.stderr).toBe(
      `flotilla: 2 pinned images changed in the registry: ${open.host}/library/db:3.0@${pushed.db} (digest-gone), ${open.host}/library/web:3.0@${pushed.web} (tag-moved); ` +
        'once the new images are checked, flotilla images pin --repin pins the digests the tags point to now\n',
    );
    // The same checks as data, in each format of the output contract.
    const asYaml = await failure('images', 'pin', app, '--check', '--registry-config', dockerConfig, '-o', 'yaml');
    expect(asYaml.stdout).toMatch(/^apiVersion: flotilla\/v1\nkind: PinCheckList\nitems:\n  - reference: /);
    expect(asYaml.stdout).toContain('status: tag-moved');
    expect(['overrides/versions/2.0.yaml', 'overrides/static/db.yaml'].map((f) => read(app, f))).toEqual(files);
  });

  it('pin --dry-run prints the diff and writes nothing; --repin follows a moved tag', async () => {
    const { app, files } = await pinnableApp('4.0');
    const { stdout, stderr } = await flotilla('images', 'pin', app, '--registry-config', dockerConfig, '--dry-run');
    expect(stdout).toContain('+++ b/overrides/static/db.yaml\n');
    expect(stderr).toContain(`pinned ${secured.host}/private/volume:4.0 → sha256:`);
    expect(stderr).toContain('dry run: ');
    for (const [file, text] of Object.entries(files)) expect(read(app, file)).toBe(text);
    await flotilla('images', 'pin', app, '--registry-config', dockerConfig);
    const moved = await pushImage(openClient, `${open.host}/library/web:4.0`, 'docker', 'web-4.0-rebuilt');
    await flotilla('images', 'pin', app, '--registry-config', dockerConfig, '--repin');
    expect(read(app, 'overrides/versions/2.0.yaml')).toContain(`library/web:4.0@${moved.digest}   # frontend\n`);
    await expect(flotilla('images', 'pin', app, '--check', '--registry-config', dockerConfig)).resolves.toBeDefined();
  });
});
