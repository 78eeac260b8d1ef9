/**
 * `build` without `--against` and the app's earlier tarball in the output
 * folder: a chart changed since that release that kept its version is a
 * warning naming it, the files changed and the fix; nothing when the chart's
 * version was raised, when the folder holds only this version, or another
 * app's tarball.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { flotilla } from '../support/cli.js';

const setVersion = (app: string, version: string) => {
  const file = join(app, 'fluxcd/metadata.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replace(/^app_version: .*$/m, `app_version: ${version}`));
};

describe('build without --against, after an earlier release in the output folder', () => {
  it('warns about a chart changed without a new version, naming the earlier tarball and the fix', async () => {
    const app = writeApp();
    const out = tempDir();
    const first = await flotilla('build', app, '-d', out);
    expect(first.stderr).not.toMatch(/changed since/);
    // The same version built again: no earlier release to compare with.
    appendFileSync(join(app, 'charts/web/templates/configmap.yaml'), '  extra: "1"\n');
    expect((await flotilla('build', app, '-d', out)).stderr).not.toMatch(/changed since/);
    setVersion(app, '1.0-2');
    appendFileSync(join(app, 'charts/web/templates/configmap.yaml'), '  more: "2"\n');
    const next = await flotilla('build', app, '-d', out);
    const earlier = join(out, 'demo-1.0-1.tgz');
    expect(next.stderr).toContain(
      `warning: charts changed since ${earlier} (this app's earlier tarball in the output folder) without a new version: web 0.1.0 (templates/configmap.yaml); ` +
        `raise their version (flotilla bump APP_DIR --chart web) or build with --against ${earlier} --bump-changed`,
    );
    expect(next.stderr).not.toMatch(/: db 0\.1\.0/);
    // Raised: quiet.
    writeFileSync(join(app, 'charts/web/Chart.yaml'), readFileSync(join(app, 'charts/web/Chart.yaml'), 'utf8').replace('version: 0.1.0', 'version: 0.1.1'));
    expect((await flotilla('build', app, '-d', out)).stderr).not.toMatch(/changed since/);
  }, 120_000);

  it("leaves another app's tarball alone", async () => {
    const other = writeApp({ 'fluxcd/metadata.yaml': 'app_name: demo-web\napp_version: 1.0-1\nsupported_k8s_version:\n  minimum: v1.29.0\n' });
    const out = tempDir();
    await flotilla('build', other, '-d', out);
    const app = writeApp();
    appendFileSync(join(app, 'charts/web/templates/configmap.yaml'), '  extra: "1"\n');
    expect((await flotilla('build', app, '-d', out)).stderr).not.toMatch(/changed since/);
  }, 120_000);
});
