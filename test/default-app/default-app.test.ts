/**
 * The repository's own OpenStack app: it loads cleanly, every enabled
 * release renders through the real helm, glance's values come from many
 * layers, and the tarball is reproducible and passes verify.
 */
import { cpSync, readdirSync, writeFileSync } from 'node:fs';
import { loadAll } from 'js-yaml';
import { readTarGzSafely } from '../../src/tarball/index.js';
import { helm } from '../../src/tools/index.js';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadApp, type App } from '../../src/app/index.js';
import { buildApp } from '../../src/build/index.js';
import { preflight } from '../../src/preflight/index.js';
import { computeReleaseValues, explain } from '../../src/values/index.js';
import { verifyBundle } from '../../src/verify/index.js';
import { tempDir, touchAll } from '../support/app-fixture.js';
import { Session } from '../../src/session/index.js';

const root = resolve(import.meta.dirname, '../..');
const APP_PARTS = ['charts', 'fluxcd', 'overrides', 'plugins', 'policies'];

let app: App;
beforeAll(async () => {
  app = await loadApp(root);
});

function copyApp(target: string): string {
  for (const part of APP_PARTS) cpSync(join(root, part), join(target, part), { recursive: true });
  return target;
}

describe('the default OpenStack app', () => {
  it('loads without errors or warnings, with the expected services', () => {
    expect(app.warnings).toEqual([]);
    const charts = new Set(app.releases.map((r) => r.chart));
    for (const chart of ['mariadb', 'rabbitmq', 'memcached', 'keystone', 'glance', 'cinder', 'placement', 'nova', 'neutron', 'ovn', 'horizon', 'clients']) {
      expect(charts).toContain(chart);
    }
    expect(app.catalog.versions.size).toBeGreaterThanOrEqual(2);
  });

  it('renders every enabled release through the real helm', async () => {
    const report = await preflight(Session.forApp(app));
    const failures = report.checks.filter((c) => !c.ok).map((c) => `${c.release.name}: ${c.error}`);
    expect(failures).toEqual([]);
    for (const check of report.checks) expect(check.objects.length).toBeGreaterThan(0);
    // workloads of the control and data planes are all there
    const kinds = new Set(report.checks.flatMap((c) => c.objects.map((o) => o.kind)));
    for (const kind of ['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'Service', 'ConfigMap']) expect(kinds).toContain(kind);
  }, 120_000);

  it('explains glance values from at least four layers', async () => {
    const glance = app.releases.find((r) => r.chart === 'glance')!;
    const values = await computeReleaseValues(app, glance);
    const layers = new Set(explain(values).map((l) => l.origin.layer.split(' ')[0]));
    expect(layers.size).toBeGreaterThanOrEqual(4);
  });

  it('builds byte-identically from a fresh copy with every file time changed, and the result verifies', async () => {
    const first = await buildApp(root, { outDir: tempDir(), cacheDir: false });
    const copy = copyApp(join(tempDir(), 'checkout'));
    touchAll(copy, new Date('2030-01-02T03:04:05Z'));
    const second = await buildApp(copy, { outDir: tempDir(), cacheDir: false });
    expect(second.sha256).toBe(first.sha256);
    const report = await verifyBundle(first.file);
    expect(report.problems).toEqual([]);

    // Every shipped archive renders on its own with the real helm, and the plugins ship bundled.
    const files = await readTarGzSafely(first.file);
    const dir = tempDir();
    for (const [name, data] of files) {
      if (!/^charts\/[^/]+\.tgz$/.test(name)) continue;
      writeFileSync(join(dir, name.slice('charts/'.length)), data);
      const rendered = loadAll((await helm(['template', 'check', join(dir, name.slice('charts/'.length))])).stdout);
      expect(rendered.length, name).toBeGreaterThan(0);
    }
    // The target release's service defaults are explicit on the HelmReleases they affect (2025.1: glance under uWSGI).
    const glance = loadAll(files.get('fluxcd-manifests/glance/helmrelease.yaml')!.toString()) as { metadata: { annotations?: Record<string, string> } }[];
    expect(glance[0]?.metadata.annotations).toMatchObject({ 'glance.openstack.org/wsgi': 'true', 'rabbitmq.openstack.org/transient-quorum-queue': 'true' });
    const manifest = JSON.parse(files.get('plugins/manifest.json')!.toString()) as { plugins: { file: string }[] };
    expect(manifest.plugins.map((p) => p.file)).toEqual(
      readdirSync(join(root, 'plugins'))
        .filter((f) => /^\d{3}_.*\.ts$/.test(f))
        .map((f) => `plugins/${f}`),
    );
  }, 120_000);
});
