/**
 * The repository's own OpenStack app with its plugins: they type-check, the
 * plugin layer decides glance's serving model per OpenStack release, shared
 * passwords agree across charts, and the app-wide check guards apply.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadApp } from '../../src/app/index.js';
import { bundlePlugins, loadAppPlugins, OperationRefusedError } from '../../src/plugins/index.js';
import { computeReleaseValues, explain } from '../../src/values/index.js';
import { tempDir } from '../support/app-fixture.js';
import { flotilla } from './fixtures.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** overrides/deployment.yaml with some text replaced, as a file of its own. */
function deployment(replace: [string | RegExp, string][]): string {
  let text = readFileSync(join(ROOT, 'overrides', 'deployment.yaml'), 'utf8');
  for (const [from, to] of replace) {
    const next = text.replace(from, to);
    if (next === text) throw new Error(`deployment.yaml has no ${String(from)}`);
    text = next;
  }
  const file = join(tempDir(), 'deployment.yaml');
  writeFileSync(file, text);
  return file;
}

describe("the default app's plugins", () => {
  it('type-check with their tests (plugins/tsconfig.json)', async () => {
    const result = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'plugins', 'tsconfig.json')],
      { cwd: ROOT },
    ).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '', failed: true }));
    expect(result).not.toHaveProperty('failed');
  });

  it('bundle into the manifest order lifecycle, infra, control plane', async () => {
    const bundle = await bundlePlugins(ROOT);
    expect(bundle.manifest.plugins.map((p) => `${p.order} ${p.kind === 'chart' ? p.chart : p.kind}`)).toEqual([
      '1 lifecycle',
      '10 mariadb',
      '20 rabbitmq',
      '30 keystone',
      '40 glance',
      '50 cinder',
      '60 placement',
      '70 nova',
      '80 ovn',
      '90 neutron',
      '100 horizon',
      '110 clients',
    ]);
    expect(Object.keys(bundle.manifest.sources)).toContain('plugins/lib/openstack.ts');
  });

  it('flotilla overrides glance: the plugin serves 2025.1 through uWSGI and 2024.1 through the proxy', async () => {
    const state = tempDir('flotilla-state-');
    const y2025 = await flotilla(['overrides', 'glance', '--output', 'json'], state);
    const y2024 = await flotilla(['overrides', 'glance', '--output', 'json', '--deployment', deployment([['release: "2025.1"', 'release: "2024.1"']])], state);
    expect(JSON.parse(y2025.stdout).values.api).toEqual({ mode: 'wsgi' });
    expect(JSON.parse(y2024.stdout).values.api).toEqual({ mode: 'proxy' });
    const explained = await flotilla(['overrides', 'glance', '--explain'], state);
    expect(explained.stdout).toMatch(/^api\.mode\s+"wsgi"\s+plugin glance\s+plugins\/040_glance\.ts:\d+:1$/m);
    // Generated passwords stay out of the output.
    expect(explained.stdout).toMatch(/^endpoints\.identity\.auth\.glance\.password\s+"<secret>"\s+plugin glance/m);
  });

  it('give every chart the same shared passwords, each service its own', async () => {
    const app = await loadApp(ROOT);
    const host = await loadAppPlugins(app, { mode: 'offline', stateDir: tempDir('flotilla-state-') });
    const values = async (name: string) => {
      const v = await computeReleaseValues(app, app.graph.byName.get(name)!, { plugin: host.overridesProvider() });
      return Object.fromEntries(explain(v).map((l) => [l.path.join('.'), l.value]));
    };
    const [mariadb, keystone, glance, nova, neutron, rabbitmq] = await Promise.all(
      ['mariadb', 'keystone', 'glance', 'nova', 'neutron', 'rabbitmq'].map(values),
    );
    const root = mariadb!['endpoints.oslo_db.auth.admin.password'];
    expect(root).toMatch(/^[A-Za-z0-9]{32}$/);
    for (const chart of [keystone, glance, nova]) expect(chart!['endpoints.oslo_db.auth.admin.password']).toBe(root);
    expect(nova!['endpoints.oslo_db_cell0.auth.admin.password']).toBe(root);
    expect(glance!['endpoints.identity.auth.admin.password']).toBe(keystone!['endpoints.identity.auth.admin.password']);
    expect(glance!['endpoints.oslo_messaging.auth.admin.password']).toBe(rabbitmq!['endpoints.oslo_messaging.auth.admin.password']);
    expect(nova!['endpoints.compute_metadata.auth.shared_secret.password']).toBe(neutron!['endpoints.compute_metadata.auth.shared_secret.password']);
    expect(glance!['endpoints.oslo_db.auth.glance.password']).not.toBe(nova!['endpoints.oslo_db.auth.nova.password']);
  });

  it('run the app-wide check before apply: the default spec passes, images in Ceph without a Ceph backend do not', async () => {
    const ok = await loadAppPlugins(await loadApp(ROOT), { mode: 'offline', stateDir: tempDir() });
    expect((await ok.runHooks({ operation: 'apply', timing: 'pre', kind: 'check' })).map((r) => r.hook)).toEqual(['apply.pre.check', 'check(apply)']);
    const noCeph = await loadApp(ROOT, {
      deployment: deployment([
        ['      ceph: {}\n', ''],
        ['  policies: enhanced', '  policies: enhanced\n  glance: {storage: rbd}'],
      ]),
    });
    const host = await loadAppPlugins(noCeph, { mode: 'offline', stateDir: tempDir() });
    const error = await host.runStage({ operation: 'apply', timing: 'pre' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationRefusedError);
    expect((error as Error).message).toMatch(/^apply refused by plugin lifecycle \(plugins\/001_lifecycle\.ts\): features\.glance\.storage is rbd, but/);
  });

  it('refuse removing nova while instances are recorded', async () => {
    const stateDir = tempDir('flotilla-state-');
    writeFileSync(join(stateDir, 'records.json'), JSON.stringify({ 'nova.instances': ['web-1'] }));
    const host = await loadAppPlugins(await loadApp(ROOT), { mode: 'offline', stateDir });
    await expect(host.runStage({ operation: 'remove', timing: 'pre' })).rejects.toThrow(
      'remove refused by plugin nova (plugins/070_nova.ts) for release nova: 1 compute instance(s) still exist (web-1)',
    );
  });
});
