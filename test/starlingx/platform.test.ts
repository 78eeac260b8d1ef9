/**
 * The StarlingX platform path: `flotilla overrides --all -d DIR` writes each
 * enabled release's system overrides (layers 2–7, passwords from the offline
 * store) ready for `system helm-override-update`, with a script of those
 * commands; `flotilla verify` warns about releases whose values depend on
 * layers a StarlingX platform does not compute.
 */
import { execFile } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { verifyBundle } from '../../src/verify/index.js';
import { chartPlugin } from '../plugins/fixtures.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

const run = promisify(execFile);
const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');
const flotilla = (...args: string[]) => run(process.execPath, [cli, ...args]);

const PLUGIN = chartPlugin(
  'web',
  `  override async getOverrides(ctx: ChartContext): Promise<Values> {
    return { conf: { admin: { password: await this.password(ctx, 'web-admin') } } };
  }`,
);

/** Both releases on, a plugin generating a password for web. */
const app = () =>
  writeApp({
    'plugins/010_web.ts': PLUGIN,
    'overrides/deployment.yaml': readFileSync(join(writeApp(), 'overrides/deployment.yaml'), 'utf8').replace(
      'services: [frontend]',
      'services: [frontend, database]',
    ),
  });

describe('flotilla overrides --all -d DIR', () => {
  it('writes one values file per enabled release (layers 2–7, the stored password in clear, 0600) and the helm-override-update script', async () => {
    const root = app();
    const state = tempDir('flotilla-state-');
    writeFileSync(join(state, 'passwords.json'), JSON.stringify({ 'web-admin': 'kept-from-the-store' }));
    const out = join(tempDir(), 'stx-overrides');
    const { stdout } = await flotilla('overrides', root, '--all', '-d', out, '--state-dir', state);
    expect(stdout).toMatch(/^RELEASE\s+CHART\s+NAMESPACE\s+FILE\s+TOP-LEVEL KEYS$/m);
    expect(stdout).toMatch(/^db\s+db\s+demo\s+db\.yaml\s+/m);
    expect(stdout).toMatch(/^web\s+web\s+demo\s+web\.yaml\s+/m);

    const web = load(readFileSync(join(out, 'web.yaml'), 'utf8')) as {
      conf: { admin: { password: string }; mode: string; greeting?: string };
      pod: { replicas: number };
    };
    expect(web.conf.admin.password).toBe('kept-from-the-store'); // plugin layer, password from the offline store
    expect(web.conf.mode).toBe('modern'); // template layer
    expect(web.pod.replicas).toBe(2); // common.groups layer
    expect(web.conf.greeting).toBeUndefined(); // static overrides ship in the bundle: not repeated
    expect(statSync(join(out, 'web.yaml')).mode & 0o777).toBe(0o600);

    const script = readFileSync(join(out, 'helm-override-update.sh'), 'utf8');
    expect(script.split('\n').filter((l) => l.startsWith('system '))).toEqual([
      `system helm-override-update "$APP" 'db' 'demo' --reuse-values --values 'db.yaml'`,
      `system helm-override-update "$APP" 'web' 'demo' --reuse-values --values 'web.yaml'`,
    ]);
    expect(script).toContain('APP="${APP:-demo}"');
    // The script runs as written: a stand-in `system` on PATH records its arguments.
    const bin = tempDir('flotilla-bin-');
    writeFileSync(join(bin, 'system'), '#!/bin/sh\necho "$@" >> "$CALLS"\n', { mode: 0o755 });
    const calls = join(bin, 'calls.txt');
    await run('sh', [join(out, 'helm-override-update.sh')], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, CALLS: calls } });
    expect(readFileSync(calls, 'utf8').trim().split('\n')).toEqual([
      'helm-override-update demo db demo --reuse-values --values db.yaml',
      'helm-override-update demo web demo --reuse-values --values web.yaml',
    ]);
  });

  it('refuses a non-empty folder, and --all without -d, as usage mistakes', async () => {
    const root = app();
    const full = tempDir();
    writeFileSync(join(full, 'keep.txt'), 'mine');
    const notEmpty = await flotilla('overrides', root, '--all', '-d', full).catch((e: { code: number; stderr: string }) => e);
    expect(notEmpty).toMatchObject({ code: 1 });
    expect((notEmpty as { stderr: string }).stderr).toMatch(/is not empty: give a new or empty folder/);
    expect(readFileSync(join(full, 'keep.txt'), 'utf8')).toBe('mine');
    const noDir = await flotilla('overrides', root, '--all').catch((e: { code: number; stderr: string }) => e);
    expect(noDir).toMatchObject({ code: 2 });
    expect((noDir as { stderr: string }).stderr).toContain('give a release (RELEASE), or --all -d DIR');
  });
});

describe('flotilla verify on the StarlingX platform path', () => {
  it('warns, per release, about the layers a StarlingX platform will not compute', async () => {
    const built = await buildApp(app(), { outDir: tempDir(), cacheDir: false });
    const report = await verifyBundle(built.file);
    expect(report.problems).toEqual([]);
    const platform = report.warnings.filter((w) => w.startsWith('StarlingX platform:'));
    const tail =
      'applied by StarlingX it gets only its static overrides: deploy it with what flotilla starlingx export APP_DIR -d DIR writes (docs/starlingx.md)';
    expect(platform).toEqual([
      `StarlingX platform: release db depends on layers the platform will not compute (images 2.0 (overrides/versions/2.0.yaml); common.charts); ${tail}`,
      'StarlingX platform: release web depends on layers the platform will not compute (template (overrides/templates/web.yaml.hbs); images 2.0 (overrides/versions/2.0.yaml); ' +
        `common.charts; common.groups.apps; services.frontend.web; plugin web (getOverrides, generated passwords)); ${tail}`,
    ]);
  });
});
