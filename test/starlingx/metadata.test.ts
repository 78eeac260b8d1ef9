/**
 * The Kubernetes range of an app's metadata against the versions current
 * StarlingX runs: sysinv compares `supported_k8s_version` with the cluster's
 * version as loose versions and refuses an apply outside the range.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { resolve } from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { loadApp } from '../../src/app/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

const run = promisify(execFile);

/** distutils' LooseVersion as sysinv uses it: numbers compared as numbers, `v` dropped. */
function looseCompare(a: string, b: string): number {
  const parts = (v: string) => v.replace(/^v/, '').split('.').map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if ((x[i] ?? -1) !== (y[i] ?? -1)) return (x[i] ?? -1) - (y[i] ?? -1);
  }
  return 0;
}

const metadataWith = (range: string) => `app_name: demo\napp_version: 1.0-1\nsupported_k8s_version:\n${range}`;

describe('supported_k8s_version and the platform', () => {
  it("the default app's range admits every Kubernetes current StarlingX runs, 1.35 included", async () => {
    const metadata = load(readFileSync(resolve(import.meta.dirname, '../../fluxcd/metadata.yaml'), 'utf8')) as {
      supported_k8s_version: { minimum: string; maximum: string };
    };
    const { minimum, maximum } = metadata.supported_k8s_version;
    for (const cluster of ['v1.32.2', 'v1.33.0', 'v1.34.1', 'v1.35.0', 'v1.35.2']) {
      expect(looseCompare(cluster, minimum), cluster).toBeGreaterThanOrEqual(0);
      expect(looseCompare(cluster, maximum), cluster).toBeLessThanOrEqual(0);
    }
    const app = await loadApp(resolve(import.meta.dirname, '../..'));
    expect(app.metadata.platformWarnings).toEqual([]);
  });

  it('build warns, at the line, when maximum is below the newest version StarlingX runs or minimum above the oldest', async () => {
    const lowApp = writeApp({ 'fluxcd/metadata.yaml': metadataWith('  minimum: v1.29.0\n  maximum: v1.32.2\n') });
    const low = await loadApp(lowApp);
    expect(low.warnings).toEqual([]); // not every command: build says it
    expect(low.metadata.platformWarnings).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^supported_k8s_version\.maximum v1\.32\.2 is below v1\.35\.2, the newest Kubernetes StarlingX runs/),
        location: expect.objectContaining({ file: 'fluxcd/metadata.yaml', line: 5 }),
      }),
    ]);
    const high = await loadApp(writeApp({ 'fluxcd/metadata.yaml': metadataWith('  minimum: v1.33.0\n  maximum: v1.35.2\n') }));
    expect(high.metadata.platformWarnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^supported_k8s_version\.minimum v1\.33\.0 is above v1\.32\.2, the oldest Kubernetes StarlingX runs/),
    ]);
    const { stderr } = await run(
      process.execPath,
      [resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs'), 'build', lowApp, '-d', tempDir(), '--no-server'],
      {
        env: { ...process.env, FLOTILLA_STATE_DIR: tempDir() },
      },
    );
    expect(stderr).toMatch(/fluxcd\/metadata\.yaml:5:\d+: warning: supported_k8s_version\.maximum v1\.32\.2 is below v1\.35\.2/);
  });
});
