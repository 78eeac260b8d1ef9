/**
 * The version model on the dev cluster TEST FIXTURE, through the shipped
 * CLI: `version status` after upload and apply (deployed only once every
 * release was waited Ready), `version target` and its refusals, custom
 * images set with --resolve through a real registry (Debian's
 * docker-registry), shown by `diff`, carried out by the next apply, and the
 * service-default annotation following the target on the HelmRelease.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { MediaType, OciClient, parseReference } from '../../src/oci/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';
import type { DevCluster } from '../support/dev-cluster/index.js';
import { flotilla, useDevCluster } from './support.js';

let cluster: DevCluster;
let bundle: string;
let hotfix: { reference: string; digest: string };
const cli = (...args: string[]) => flotilla(cluster.kubeconfigPath, args);
const status = async () =>
  JSON.parse((await cli('version', 'status', 'demo', '-o', 'json')).stdout) as Record<string, unknown> & {
    images: Record<string, { reference: string; source: string }>;
  };
const webRelease = () => cluster.get('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'demo', 'web') as { metadata: { annotations: Record<string, string> } };

/**
 * The demo app at release 1.0, its catalog 1.0 → 2.0 → 3.0, `modern` a
 * declared service default annotated on web; `next` is its version 1.0-2,
 * whose catalog no longer has 1.0 and whose spec names 2.0.
 */
async function buildDemo(next = false): Promise<string> {
  const root = writeApp({
    'overrides/versions/3.0.yaml': `release: "3.0"\nimages:\n  web: docker.io/library/nginx:1.28\n  db: docker.io/library/mariadb:11.8\nserviceDefaults:\n  modern: true\n`,
    'overrides/service-defaults.yaml': `modern:\n  fallback: false\n  annotation: web.example.org/modern\n  charts: [web]\n`,
    ...(next ? { 'overrides/versions/1.0.yaml': null } : {}),
  });
  const edit = (file: string, from: string, to: string) => writeFileSync(join(root, file), readFileSync(join(root, file), 'utf8').replace(from, to));
  if (next) edit('fluxcd/metadata.yaml', 'app_version: 1.0-1', 'app_version: 1.0-2');
  else edit('overrides/deployment.yaml', 'release: "2.0"', 'release: "1.0"');
  return (await buildApp(root, { outDir: tempDir(), cacheDir: false })).file;
}

/** An image pushed to the cluster's registry under a tag; its manifest digest computed here from the bytes sent. */
async function pushHotfix(host: string): Promise<{ reference: string; digest: string }> {
  const client = new OciClient();
  const reference = `${host}/demo/web:1.0-hotfix`;
  const repo = parseReference(reference);
  const config = await client.pushBlob(repo, Buffer.from('{"architecture":"amd64","os":"linux"}'), 'application/vnd.oci.image.config.v1+json');
  const layer = await client.pushBlob(repo, Buffer.from('hotfix layer'), 'application/vnd.oci.image.layer.v1.tar+gzip');
  const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociManifest, config, layers: [layer] }));
  await client.pushManifest(repo, manifest, MediaType.ociManifest);
  return { reference, digest: `sha256:${createHash('sha256').update(manifest).digest('hex')}` };
}

useDevCluster({}, buildDemo, async (dev, built) => {
  [cluster, bundle] = [dev, built];
  hotfix = await pushHotfix(cluster.registry!.host);
});

describe('flotilla version', () => {
  it("status after upload: the spec's release targeted, nothing deployed, the catalog newest first, each image with its source", async () => {
    expect((await cli('upload', bundle)).code).toBe(0);
    const s = await status();
    expect(s).toMatchObject({ app: 'demo', target: '1.0', targetSet: null, deployed: null, phase: null, held: null });
    expect(s.available).toEqual([
      { release: '3.0', bundle: '1.0-1', inBundle: true },
      { release: '2.0', bundle: '1.0-1', inBundle: true },
      { release: '1.0', bundle: '1.0-1', inBundle: true },
    ]);
    expect(s.images.web).toEqual({ reference: 'docker.io/library/nginx:1.24', source: 'catalog of release 1.0' });
    expect(s.serviceDefaults).toEqual({ modern: { value: false, source: 'release 1.0' } });
    const table = (await cli('version', 'status', 'demo')).stdout;
    expect(table).toContain("target:     1.0 (the deployment spec's main.release)");
    expect(table).toMatch(/^web\s+docker\.io\/library\/nginx:1\.24\s+catalog of release 1\.0$/m);
  });

  it('apply --no-wait deploys nothing yet; an apply that waits sets deployed, the annotation written', async () => {
    expect((await cli('apply', 'demo', '--no-wait')).code).toBe(0);
    expect((await status()).deployed).toBeNull();
    expect((await cli('apply', 'demo')).code).toBe(0);
    expect((await status()).deployed).toBe('1.0');
    expect(webRelease().metadata.annotations['web.example.org/modern']).toBe('false');
  }, 120_000);

  it('target refuses an unknown release and a jump past the next one, each saying what to do', async () => {
    const unknown = await cli('version', 'target', 'demo', '9.0');
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toBe(
      'flotilla: release "9.0" is neither available nor known to this app (did you mean "3.0"?); available: 3.0, 2.0, 1.0. Upload a bundle whose catalog (overrides/versions/) has it first\n',
    );
    const jump = await cli('version', 'target', 'demo', '3.0');
    expect(jump.code).toBe(1);
    expect(jump.stderr).toContain(
      '1.0 → 3.0 skips releases: the app updates one release at a time (next: 2.0), and its metadata names no skip-level jump from 1.0',
    );
    expect((await status()).target).toBe('1.0');
  });

  it('image set --resolve pins the tag through the registry; diff shows it; a target change keeps it (it changed since the last target)', async () => {
    const set = await cli('version', 'image', 'set', 'demo', 'web', hotfix.reference, '--resolve');
    expect(set).toMatchObject({ code: 0, stdout: `demo: custom image web = ${hotfix.reference}@${hotfix.digest}; run flotilla apply demo to use it\n` });
    const bad = await cli('version', 'image', 'set', 'demo', 'web', 'Not/A:Ref!');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^flotilla: custom image web: "Not\/A:Ref!" not a valid image reference/);
    const list = (
      JSON.parse((await cli('version', 'image', 'list', 'demo', '-o', 'json')).stdout) as {
        kind: string;
        images: Record<string, { reference: string; by: string }>;
      }
    ).images;
    expect(list.web?.reference).toBe(`${hotfix.reference}@${hotfix.digest}`);
    expect(list.web?.by).toMatch(/@/);
    expect((await status()).images.web?.source).toMatch(/^custom image web, set \S+ by \S+/);
    const diff = await cli('diff', 'demo');
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain(`~ images.tags.web: "docker.io/library/nginx:1.24" → "${hotfix.reference}@${hotfix.digest}"`);
    const target = await cli('version', 'target', 'demo', '2.0');
    expect(target).toMatchObject({ code: 0, stdout: 'demo: target 2.0 (deployed: 1.0); run flotilla apply demo to carry it out\n' });
  });

  it('the next apply carries the target out: deployed, the custom image and the annotation follow it', async () => {
    expect((await cli('apply', 'demo')).code).toBe(0);
    expect(await status()).toMatchObject({ target: '2.0', deployed: '2.0' });
    expect(webRelease().metadata.annotations['web.example.org/modern']).toBe('true');
    const values = await cli('diff', 'demo', '-o', 'json');
    expect(JSON.parse(values.stdout).changed).toBe(false);
  }, 120_000);

  it('refuses the next target change while the custom image is unchanged since the last target, unless acknowledged', async () => {
    const forgotten = await cli('version', 'target', 'demo', '3.0');
    expect(forgotten.code).toBe(1);
    expect(forgotten.stderr).toBe(
      "flotilla: custom images are set and unchanged since the target was last set (web): they would stay on top of 3.0's images (a forgotten hotfix). Remove them (flotilla version image unset APP FIELD), set ones built for 3.0, or keep them with --ack-custom-images\n",
    );
    const acked = await cli('version', 'target', 'demo', '3.0', '--ack-custom-images');
    expect(acked).toMatchObject({ code: 0, stderr: 'warning: custom images kept across the target change: web\n' });
    expect((await cli('version', 'image', 'unset', 'demo', 'web')).code).toBe(0);
    expect((await status()).images.web).toEqual({ reference: 'docker.io/library/nginx:1.28', source: 'catalog of release 3.0' });
  });

  it('refuses a downgrade below the deployed release; --force says so loudly', async () => {
    const down = await cli('version', 'target', 'demo', '1.0');
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(
      "flotilla: 1.0 is older than 2.0: downgrades are refused (OpenStack's database migrations run forward only). Target 2.0 or a newer release; --force exists for development clusters only\n",
    );
    const forced = await cli('version', 'target', 'demo', '1.0', '--force');
    expect(forced.stderr).toMatch(/^warning: DOWNGRADE FORCED: 2\.0 → 1\.0\./);
    expect(forced.code).toBe(0);
    expect((await status()).target).toBe('1.0');
  });

  it("an update to a bundle without the target's release keeps it known and carries it out from the catalog entry kept", async () => {
    const update = await cli('update', await buildDemo(true));
    expect(update.code).toBe(0);
    const s = await status();
    expect(s).toMatchObject({ target: '1.0', deployed: '1.0' });
    expect(s.available).toEqual([
      { release: '3.0', bundle: '1.0-2', inBundle: true },
      { release: '2.0', bundle: '1.0-2', inBundle: true },
      { release: '1.0', bundle: '1.0-1', inBundle: false },
    ]);
    expect(s.images.web).toEqual({ reference: 'docker.io/library/nginx:1.24', source: 'release 1.0 (known from bundle 1.0-1)' });
    expect(webRelease().metadata.annotations['web.example.org/modern']).toBe('false');
    expect((await cli('version', 'status', 'demo')).stdout).toContain('available:  3.0, 2.0, 1.0 (known from 1.0-1)');
  }, 180_000);
});
