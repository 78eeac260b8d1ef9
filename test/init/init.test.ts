/**
 * `flotilla init`: from an empty folder and charts a user brings (one made
 * by `helm create`, one packaged by `helm package`) to an app that builds,
 * previews, verifies and applies on the dev cluster — with only the three
 * files every app needs; the version catalog is a feature an app turns on.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadApp } from '../../src/app/index.js';
import { toolPath } from '../../src/tools/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { startDevCluster, type DevCluster } from '../support/dev-cluster/index.js';
import { flotilla, stopStarted } from '../lifecycle/support.js';

const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'flotilla.cjs');
const offline = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  run(process.execPath, [cli, ...args], { env: { ...process.env, FLOTILLA_BUILD_SERVER: '0', ...env }, maxBuffer: 1 << 24 }).then(
    (r) => ({ ...r, code: 0 }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );

describe('flotilla init', () => {
  let cluster: DevCluster;
  let work: string;
  let app: string;
  let state: string;

  beforeAll(async () => {
    work = tempDir('flotilla-init-');
    state = join(work, 'state');
    const helm = toolPath('helm');
    // The charts a new user brings: one made with helm create, one packaged as helm pull leaves it.
    await run(helm, ['create', join(work, 'web')]);
    await run(helm, ['create', join(work, 'cache')]);
    await run(helm, ['package', join(work, 'cache'), '-d', work]);
    app = join(work, 'shop');
    const made = await offline(['init', app, '--chart', join(work, 'web'), '--chart', join(work, 'cache-0.1.0.tgz'), '--target', 'flux']);
    expect(made.code, made.stderr).toBe(0);
    cluster = await startDevCluster({ requeueDependencyMs: 250 });
  }, 240_000);

  afterEach(stopStarted);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('writes the three files every app needs, each saying what it is for, and one release per chart', async () => {
    for (const file of ['fluxcd/metadata.yaml', 'fluxcd/releases.yaml', 'overrides/deployment.yaml']) {
      expect(readFileSync(join(app, file), 'utf8'), file).toMatch(/^# /);
    }
    expect(existsSync(join(app, 'overrides', 'versions'))).toBe(false);
    expect(existsSync(join(app, 'charts', 'web', 'Chart.yaml')) && existsSync(join(app, 'charts', 'cache', 'Chart.yaml'))).toBe(true);
    const loaded = await loadApp(app);
    expect(loaded.metadata.appName).toBe('shop');
    expect(loaded.metadata.target).toBe('flux');
    expect(loaded.releases.map((r) => [r.name, r.namespace])).toEqual([
      ['web', 'shop'],
      ['cache', 'shop'],
    ]);
    expect(loaded.enabled.map((r) => r.name)).toEqual(['web', 'cache']);
    expect(loaded.warnings).toEqual([]);
  });

  it('builds, previews and verifies, with no StarlingX warning for a plain-Flux app', async () => {
    const preflight = await offline(['preflight', app], { FLOTILLA_STATE_DIR: state });
    expect(preflight.code, preflight.stdout + preflight.stderr).toBe(0);
    expect(preflight.stdout).toMatch(/^preflight shop 0\.1\.0-1; 2 release\(s\)/m);
    const build = await offline(['build', app, '-d', join(work, 'out')], { FLOTILLA_STATE_DIR: state });
    expect(build.code, build.stderr).toBe(0);
    const verify = await offline(['verify', join(work, 'out', 'shop-0.1.0-1.tgz')]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(verify.stderr).not.toMatch(/StarlingX/);
  });

  it('uploads and applies on the dev cluster', async () => {
    const upload = await flotilla(cluster.kubeconfigPath, ['upload', join(work, 'out', 'shop-0.1.0-1.tgz')]);
    expect(upload.code, upload.stderr).toBe(0);
    const apply = await flotilla(cluster.kubeconfigPath, ['apply', 'shop', '--timeout', '3m']);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stderr).toContain('all 2 release(s) ready');
    for (const name of ['web', 'cache']) expect(cluster.releaseReady('shop', name)?.status).toBe('True');
  }, 240_000);

  it('refuses a folder that holds an app, and a folder with no application chart', async () => {
    const again = await offline(['init', app]);
    expect(again).toMatchObject({ code: 1 });
    expect(again.stderr).toMatch(/fluxcd\/metadata\.yaml exists: .* already holds an app/);
    const empty = await offline(['init', tempDir()]);
    expect(empty).toMatchObject({ code: 1 });
    expect(empty.stderr).toMatch(/no application chart: give --chart PATH/);
  });
});

describe('the version catalog is optional', () => {
  it('an app with a catalog needs main.release, and a release the catalog lacks says which file to create', async () => {
    const noRelease = writeApp({ 'overrides/deployment.yaml': 'features:\n  services: [frontend]\n' });
    await expect(loadApp(noRelease)).rejects.toThrow(
      /main\.release is not set, and the app has a version catalog \(overrides\/versions\/\): set it to one of 1\.0, 2\.0/,
    );
    const noCatalog = writeApp({
      'overrides/versions/1.0.yaml': null,
      'overrides/versions/2.0.yaml': null,
      'overrides/versions/images.yaml': null,
      'overrides/templates/web.yaml.hbs': null,
    });
    await expect(loadApp(noCatalog)).rejects.toThrow(
      /release "2\.0" is not in the version catalog: the app has none; create overrides\/versions\/2\.0\.yaml .*or remove main\.release/,
    );
    writeFileSync(join(noCatalog, 'overrides/deployment.yaml'), 'features:\n  services: [frontend]\n');
    const loaded = await loadApp(noCatalog);
    expect(loaded.target.release).toBe('');
    expect(loaded.images.size).toBe(0);
  });
});

describe('metadata flotilla.target', () => {
  it('keeps verify from warning about the StarlingX platform for a plain-Flux app', async () => {
    const both = writeApp();
    const flux = writeApp({ 'fluxcd/metadata.yaml': `${readFileSync(join(both, 'fluxcd/metadata.yaml'), 'utf8')}flotilla:\n  target: flux\n` });
    const verifyOf = async (root: string) => {
      const out = tempDir();
      await offline(['build', root, '-d', out], { FLOTILLA_STATE_DIR: tempDir() });
      return offline(['verify', join(out, 'demo-1.0-1.tgz')]);
    };
    expect((await verifyOf(both)).stderr).toMatch(/warning: StarlingX platform: release web/);
    const quiet = await verifyOf(flux);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toMatch(/StarlingX/);
  }, 120_000);
});
