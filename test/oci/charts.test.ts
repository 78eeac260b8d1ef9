/**
 * Chart delivery: charts pushed to the real docker-registry as Helm OCI
 * artifacts and read back by the real helm (pull, template), byte-compared
 * with what `helm push` stores; and Helm HTTP repositories in a folder.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ChartVersionConflictError, loadChart, packageChart, publishToFolder, type PackagedChart } from '../../src/charts/index.js';
import { chartVersionTag, InvalidReference, MediaType, OciClient, pushCharts, type ImageManifest } from '../../src/oci/index.js';
import { helmToolkit, serviceChart, tempDir, writeTree } from '../charts/fixtures.js';
import { startRegistry, type TestRegistry } from '../support/registry.js';

const run = promisify(execFile);
const helm = () => process.env.FLOTILLA_HELM!;

/** A static file server on loopback, as the web server in front of a repository folder. */
async function serveFolder(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const file = join(dir, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/+/, ''));
    if (!file.startsWith(dir) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${address.port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function packaged(root: string, name: string, extra: Record<string, string> = {}, version?: string): Promise<PackagedChart> {
  await writeTree(join(root, 'helm-toolkit'), helmToolkit);
  await writeTree(join(root, name), serviceChart(name, extra));
  return packageChart(await loadChart(join(root, name)), version ? { version } : {});
}

describe('charts in an OCI registry', () => {
  let registry: TestRegistry;
  let client: OciClient;
  let work: { dir: string; cleanup: () => Promise<void> };

  beforeAll(async () => {
    registry = await startRegistry();
    client = new OciClient({ credentials: { credentialFor: () => undefined } });
    work = await tempDir('flotilla-oci-charts-');
  });
  afterAll(async () => {
    await registry.stop();
    await work.cleanup();
  });

  it('pushes a chart the real helm pulls byte for byte and renders', async () => {
    const glance = await packaged(join(work.dir, 'src'), 'glance');
    const [pushed] = await pushCharts(client, `oci://${registry.host}/charts`, [{ label: glance.fileName, bytes: glance.bytes }]);
    expect(pushed).toMatchObject({ name: 'glance', version: '0.3.1', status: 'pushed' });
    expect(pushed!.reference).toBe(`${registry.host}/charts/glance:0.3.1@${pushed!.digest}`);

    const out = join(work.dir, 'pulled');
    mkdirSync(out);
    const pull = await run(helm(), ['pull', `oci://${registry.host}/charts/glance`, '--version', '0.3.1', '--plain-http', '-d', out]);
    expect(`${pull.stdout}${pull.stderr}`).toContain(`Digest: ${pushed!.digest}`);
    expect(readFileSync(join(out, 'glance-0.3.1.tgz')).equals(glance.bytes)).toBe(true);

    const rendered = await run(helm(), ['template', 'g', `oci://${registry.host}/charts/glance`, '--version', '0.3.1', '--plain-http']);
    expect(rendered.stdout).toContain('kind: ConfigMap');
  });

  it('stores what helm push stores: same config blob, same chart layer, same annotations but the time', async () => {
    const chartYaml = [
      'apiVersion: v2',
      'name: keystone',
      'version: 0.3.1',
      'appVersion: "2025.1"',
      'description: OpenStack Identity <keystone> & friends',
      'type: application',
      'home: https://docs.openstack.org/keystone',
      'icon: https://example.org/icon.png',
      'kubeVersion: ">=1.29.0-0"',
      'sources: [https://opendev.org/openstack/keystone, https://opendev.org/openstack/openstack-helm]',
      'keywords: [openstack, identity]',
      'maintainers:',
      '  - name: OpenStack-Helm Authors',
      '    email: authors@example.org',
      '  - name: Flotilla',
      '    url: https://example.org/flotilla',
      'annotations:',
      '  zeta: last',
      '  alpha: first',
      '  org.opencontainers.image.title: ignored-by-helm',
      'dependencies:',
      '  - name: helm-toolkit',
      '    repository: file://../helm-toolkit',
      '    version: ">= 0.1.0"',
      '    condition: toolkit.enabled',
      '    tags: [base]',
      '',
    ].join('\n');
    const keystone = await packaged(join(work.dir, 'src2'), 'keystone', { 'Chart.yaml': chartYaml });
    const file = join(work.dir, keystone.fileName);
    writeFileSync(file, keystone.bytes);
    await run(helm(), ['push', file, `oci://${registry.host}/by-helm`, '--plain-http']);
    await pushCharts(client, `oci://${registry.host}/by-flotilla`, [{ label: file, bytes: keystone.bytes }]);
    const byHelm = (await client.getManifest(`${registry.host}/by-helm/keystone:0.3.1`)).manifest as ImageManifest;
    const ours = (await client.getManifest(`${registry.host}/by-flotilla/keystone:0.3.1`)).manifest as ImageManifest;
    const config = async (m: ImageManifest, repo: string) => (await client.getBlob(`${registry.host}/${repo}/keystone`, m.config)).toString();
    expect(await config(ours, 'by-flotilla')).toBe(await config(byHelm, 'by-helm'));
    expect(ours.config).toEqual(byHelm.config);
    expect(ours.layers).toEqual(byHelm.layers);
    expect(ours.config.mediaType).toBe(MediaType.helmConfig);
    expect(ours.layers[0]!.mediaType).toBe(MediaType.helmChart);
    const withoutTime = (a: Readonly<Record<string, string>> | undefined) => ({ ...a, 'org.opencontainers.image.created': 'T' });
    expect(withoutTime(ours.annotations)).toEqual(withoutTime(byHelm.annotations));
  });

  it('tags a version with + as helm does (_), and helm pulls it by its version', async () => {
    const nova = await packaged(join(work.dir, 'src3'), 'nova', {}, '1.2.0+stx.3');
    expect(chartVersionTag(nova.version)).toBe('1.2.0_stx.3');
    const [pushed] = await pushCharts(client, `oci://${registry.host}/charts`, [{ label: nova.fileName, bytes: nova.bytes }]);
    expect(pushed!.reference).toContain(`${registry.host}/charts/nova:1.2.0_stx.3@`);
    const out = join(work.dir, 'pulled-nova');
    mkdirSync(out);
    await run(helm(), ['pull', `oci://${registry.host}/charts/nova`, '--version', '1.2.0+stx.3', '--plain-http', '-d', out]);
    expect(readFileSync(join(out, 'nova-1.2.0+stx.3.tgz')).equals(nova.bytes)).toBe(true);
  });

  it('skips a version already there with the same archive and refuses one with other content', async () => {
    const first = await packaged(join(work.dir, 'src4'), 'cinder');
    const target = `oci://${registry.host}/immutable`;
    const [pushed] = await pushCharts(client, target, [{ label: first.fileName, bytes: first.bytes }]);
    const [again] = await pushCharts(client, target, [{ label: first.fileName, bytes: first.bytes }]);
    expect(again).toEqual({ ...pushed, status: 'unchanged' });

    const changed = await packaged(join(work.dir, 'src5'), 'cinder', {
      'templates/extra.yaml': 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: extra\n',
    });
    expect(changed.version).toBe(first.version);
    const fresh = await packaged(join(work.dir, 'src6'), 'horizon');
    const error = await pushCharts(client, target, [
      { label: fresh.fileName, bytes: fresh.bytes },
      { label: changed.fileName, bytes: changed.bytes },
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChartVersionConflictError);
    expect((error as Error).message).toBe(
      `oci://${registry.host}/immutable/cinder:0.3.1: chart cinder version 0.3.1 is already published with different content (existing sha256:${first.sha256}, new sha256:${changed.sha256}); a published version never changes: bump the chart version`,
    );
    const twice = await pushCharts(client, `oci://${registry.host}/fresh`, [
      { label: 'a/cinder.tgz', bytes: changed.bytes },
      { label: 'b/cinder.tgz', bytes: first.bytes },
    ]).catch((e: unknown) => e);
    expect((twice as Error).message).toMatch(/^a\/cinder.tgz and b\/cinder.tgz: chart cinder version 0.3.1 is already published with different content/);
    await expect(client.listTags(`${registry.host}/fresh/cinder`)).rejects.toThrow(/not found/);
    // Nothing was pushed: not the fresh chart, and the registry still serves the first archive.
    await expect(client.resolve(`${registry.host}/immutable/horizon:0.3.1`)).rejects.toThrow(/tag 0.3.1 not found/);
    const manifest = (await client.getManifest(`${registry.host}/immutable/cinder:0.3.1`)).manifest as ImageManifest;
    expect(manifest.layers[0]!.digest).toBe(`sha256:${first.sha256}`);
  });

  it('refuses a target that is not oci://HOST/PATH without a tag, and a file that is not a chart', async () => {
    await expect(pushCharts(client, `${registry.host}/charts`, [])).rejects.toThrow(InvalidReference);
    await expect(pushCharts(client, `oci://${registry.host}/charts:1.0`, [])).rejects.toThrow(/names no tag or digest/);
    await expect(pushCharts(client, `oci://${registry.host}/charts`, [{ label: 'notes.txt', bytes: Buffer.from('not a chart') }])).rejects.toThrow(
      /notes\.txt/,
    );
  });
});

describe('a Helm HTTP repository in a folder', () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    work = await tempDir('flotilla-helm-repo-');
  });
  afterAll(() => work.cleanup());

  it('publishes archives and an index helm reads, merges later charts in, and is idempotent', async () => {
    const repo = join(work.dir, 'repo');
    const glance = await packaged(join(work.dir, 'a'), 'glance');
    const first = await publishToFolder(repo, [{ label: glance.fileName, bytes: glance.bytes }], { created: '2026-01-01T00:00:00Z' });
    expect(first.added.map((c) => c.name)).toEqual(['glance']);
    const index = parse(readFileSync(first.index, 'utf8'));
    expect(index.entries.glance[0]).toMatchObject({ version: '0.3.1', digest: glance.sha256, urls: ['glance-0.3.1.tgz'] });
    expect(readFileSync(join(repo, 'glance-0.3.1.tgz')).equals(glance.bytes)).toBe(true);

    // Another chart and another version of the first: both added, nothing dropped.
    const nova = await packaged(join(work.dir, 'b'), 'nova');
    const glance2 = await packaged(join(work.dir, 'c'), 'glance', {}, '0.4.0');
    const second = await publishToFolder(
      repo,
      [
        { label: nova.fileName, bytes: nova.bytes },
        { label: glance2.fileName, bytes: glance2.bytes },
        { label: glance.fileName, bytes: glance.bytes },
      ],
      { created: '2026-02-01T00:00:00Z' },
    );
    expect(second.added.map((c) => `${c.name}-${c.version}`)).toEqual(['nova-0.3.1', 'glance-0.4.0']);
    expect(second.unchanged.map((c) => `${c.name}-${c.version}`)).toEqual(['glance-0.3.1']);
    const merged = parse(readFileSync(second.index, 'utf8'));
    expect(merged.entries.glance.map((e: { version: string }) => e.version)).toEqual(['0.4.0', '0.3.1']);
    expect(merged.entries.glance[1].created).toBe('2026-01-01T00:00:00Z');
    expect(Object.keys(merged.entries)).toEqual(['glance', 'nova']);

    // Publishing the same again changes nothing, not even the index's bytes.
    const before = readFileSync(second.index);
    const third = await publishToFolder(repo, [{ label: nova.fileName, bytes: nova.bytes }], { created: '2026-03-01T00:00:00Z' });
    expect(third.added).toEqual([]);
    expect(readFileSync(third.index).equals(before)).toBe(true);

    // A deleted archive of an unchanged entry is restored.
    unlinkSync(join(repo, 'nova-0.3.1.tgz'));
    await publishToFolder(repo, [{ label: nova.fileName, bytes: nova.bytes }]);
    expect(existsSync(join(repo, 'nova-0.3.1.tgz'))).toBe(true);

    // The real helm pulls from the folder served over HTTP.
    const server = await serveFolder(repo);
    try {
      const out = join(work.dir, 'pulled');
      mkdirSync(out);
      await run(helm(), ['pull', 'glance', '--repo', server.url, '--version', '0.4.0', '-d', out]);
      expect(readFileSync(join(out, 'glance-0.4.0.tgz')).equals(glance2.bytes)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('refuses a published version with other content and writes nothing', async () => {
    const repo = join(work.dir, 'conflict');
    const cinder = await packaged(join(work.dir, 'd'), 'cinder');
    await publishToFolder(repo, [{ label: cinder.fileName, bytes: cinder.bytes }], { created: '2026-01-01T00:00:00Z' });
    const index = readFileSync(join(repo, 'index.yaml'));
    const changed = await packaged(join(work.dir, 'e'), 'cinder', {
      'templates/extra.yaml': 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: extra\n',
    });
    const keystone = await packaged(join(work.dir, 'f'), 'keystone');
    const error = await publishToFolder(repo, [
      { label: keystone.fileName, bytes: keystone.bytes },
      { label: changed.fileName, bytes: changed.bytes },
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChartVersionConflictError);
    expect((error as Error).message).toContain(`index.yaml: chart cinder version 0.3.1 is already published with different content`);
    expect(readFileSync(join(repo, 'index.yaml')).equals(index)).toBe(true);
    expect(readFileSync(join(repo, 'cinder-0.3.1.tgz')).equals(cinder.bytes)).toBe(true);
    expect(readdirSync(repo).sort()).toEqual(['cinder-0.3.1.tgz', 'index.yaml']);
  });

  it('refuses an index.yaml that is not a Helm repository index, naming it', async () => {
    const repo = join(work.dir, 'bad');
    await writeTree(repo, { 'index.yaml': 'apiVersion: v2\nentries: {}\n' });
    const glance = await packaged(join(work.dir, 'g'), 'glance');
    await expect(publishToFolder(repo, [{ label: glance.fileName, bytes: glance.bytes }])).rejects.toThrow(
      /index.yaml: not a Helm repository index \(expected apiVersion: v1\)/,
    );
    await writeTree(repo, { 'index.yaml': 'apiVersion: v1\nentries:\n  glance: 3\n' });
    await expect(publishToFolder(repo, [{ label: glance.fileName, bytes: glance.bytes }])).rejects.toThrow(/entries.glance must be a list/);
  });
});
