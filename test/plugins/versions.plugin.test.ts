/**
 * Plugins see versions: the default app's plugins over both catalog
 * releases as a cluster targets them (the record's version state), glance's
 * serving model following the same service default its HelmRelease is
 * annotated with (the documented fallback when the catalog entry lacks it),
 * and a plugin's context carrying the target, the deployed release and where
 * each resolved image comes from.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assembleApp, directoryAppSource, loadApp, type App } from '../../src/app/index.js';
import { toPlain } from '../../src/yaml/index.js';
import { loadAppPlugins } from '../../src/plugins/index.js';
import { afterUpload, withCustomImage, type AppVersions } from '../../src/catalog/index.js';
import { tempDir } from '../support/app-fixture.js';
import { chartPlugin, pluginFixture } from './fixtures.js';

const ROOT = resolve(import.meta.dirname, '../..');

async function pluginValues(app: App, chart: string): Promise<Record<string, unknown>> {
  const host = await loadAppPlugins(app, { mode: 'offline', stateDir: tempDir('flotilla-state-') });
  const release = app.releases.find((r) => r.chart === chart)!;
  return toPlain((await host.overrides(release))!) as Record<string, unknown>;
}

const state = async (root: string, target: string, deployed?: string): Promise<AppVersions> => {
  const app = await loadApp(root);
  return { ...afterUpload(undefined, app.catalog, app.metadata.appVersion, target), ...(deployed ? { deployed } : {}) };
};

describe("the default app's plugins across both catalog releases", () => {
  it('glance serves the model its HelmRelease annotation says: uWSGI for 2025.1, the proxy for 2024.1', async () => {
    for (const [target, deployed, mode, wsgi] of [
      ['2025.1', '2024.1', 'wsgi', 'true'],
      ['2024.1', undefined, 'proxy', 'false'],
    ] as const) {
      const app = assembleApp(directoryAppSource(ROOT), { versions: await state(ROOT, target, deployed) });
      expect(app.serviceDefaultAnnotations('glance')['glance.openstack.org/wsgi']).toBe(wsgi);
      expect((await pluginValues(app, 'glance')).api).toEqual({ mode });
    }
  }, 60_000);

  it('a catalog entry without glanceWsgi gets the fallback (false): annotation and plugin agree on the proxy', async () => {
    const root = tempDir('flotilla-app-');
    for (const part of ['charts', 'fluxcd', 'overrides', 'plugins', 'policies']) cpSync(join(ROOT, part), join(root, part), { recursive: true });
    const file = join(root, 'overrides/versions/2025.1.yaml');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace(/^  glanceWsgi: true\n/m, ''));
    const app = await loadApp(root);
    expect(app.target.release).toBe('2025.1');
    expect(app.serviceDefaults.get('glanceWsgi')).toEqual({ value: false, source: 'fallback' });
    expect(app.serviceDefaultAnnotations('glance')['glance.openstack.org/wsgi']).toBe('false');
    expect((await pluginValues(app, 'glance')).api).toEqual({ mode: 'proxy' });
  }, 60_000);

  it("cinder gives each backend the cluster's custom image for it, the rest the release's default", async () => {
    const pinned = 'registry.example/vendor/cinder-volume:2025.1-1@sha256:' + 'd'.repeat(64);
    const app0 = await loadApp(ROOT);
    const versions = withCustomImage(await state(ROOT, '2025.1'), 'cinder_volume.ceph', pinned, app0.catalog, { by: 'ops', now: '2026-11-28T00:00:00Z' });
    const app = assembleApp(directoryAppSource(ROOT), { versions });
    const backends = Object.keys((app.spec.features.cinder as { backends?: object } | undefined)?.backends ?? {});
    const tags = ((await pluginValues(app, 'cinder')).images as { tags: Record<string, string> } | undefined)?.tags ?? {};
    expect(backends.sort()).toEqual(['ceph', 'lvm']);
    expect(tags).toEqual({ cinder_volume_ceph: pinned, cinder_volume_lvm: 'docker.io/openstackhelm/cinder:2025.1-ubuntu_jammy' });
    expect(app.images.get('cinder_volume_ceph')).toMatchObject({ reference: pinned, source: 'custom' });
  }, 60_000);
});

describe("a plugin's context", () => {
  it("carries the target, the deployed release and each image's source", async () => {
    const plugin = chartPlugin(
      'web',
      `  override async getOverrides(ctx: ChartContext): Promise<Values> {
    return { seen: { release: ctx.version.release, target: ctx.version.target, deployed: ctx.version.deployed, web: ctx.version.images.web ?? null, webSource: ctx.version.imageSources.web ?? null, dbSource: ctx.version.imageSources.db ?? null } };
  }`,
    );
    const fixture = await pluginFixture({ 'plugins/010_web.ts': plugin });
    const offline = toPlain((await fixture.host.overrides(fixture.app.releases.find((r) => r.name === 'web')!))!) as { seen: unknown };
    expect(offline.seen).toEqual({
      release: '2.0',
      target: '2.0',
      deployed: null,
      web: 'docker.io/library/nginx:1.27',
      webSource: 'release',
      dbSource: 'release',
    });

    const hotfix = 'registry.example/web:1.0-hotfix@sha256:' + 'e'.repeat(64);
    const versions = withCustomImage({ ...afterUpload(undefined, fixture.app.catalog, '1.0-1', '1.0'), deployed: '1.0' }, 'web', hotfix, fixture.app.catalog, {
      by: 'ops',
      now: '2026-11-28T00:00:00Z',
    });
    const cluster = assembleApp(directoryAppSource(fixture.root), { versions });
    const values = toPlain(
      (await (await loadAppPlugins(cluster, { mode: 'offline', stateDir: fixture.stateDir })).overrides(cluster.releases.find((r) => r.name === 'web')!))!,
    ) as { seen: unknown };
    expect(values.seen).toEqual({ release: '1.0', target: '1.0', deployed: '1.0', web: hotfix, webSource: 'custom', dbSource: 'release' });
  }, 60_000);
});
