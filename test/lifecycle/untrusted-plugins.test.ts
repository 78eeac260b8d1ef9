/**
 * A tarball whose plugin code was changed (the manifest and checksums
 * recomputed, no signature) on the dev cluster TEST FIXTURE: verify, upload,
 * diff and apply run its plugins only in the plugin process, where writing a
 * file fails (docs/security.md, "Plugin code").
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { md5sumFile, readTarGzSafelySync, sha256sumFile, writeTarGz } from '../../src/tarball/index.js';
import { sha256 } from '../../src/plugins/manifest.js';
import { tempDir } from '../support/app-fixture.js';
import type { DevCluster } from '../support/dev-cluster/index.js';
import { APP, buildDefaultApp, flotilla, useDevCluster } from './support.js';

let cluster: DevCluster;
let bundle: string;
const cli = (...args: string[]) => flotilla(cluster.kubeconfigPath, args);
const planted = tempDir('flotilla-planted-');
/** Written (if it could) when the bundle is loaded, and when a plugin computes values against a cluster. */
const onLoad = join(planted, 'on-load');
const onApply = join(planted, 'on-apply');

/**
 * The built tarball with plugins.mjs changed as an attacker would: code at its
 * top (`caught`: the write's failure swallowed, so the bundle still loads) and in
 * every getOverrides, the manifest's sha256 and both checksum files recomputed.
 */
function tampered(caught: boolean): string {
  const files = readTarGzSafelySync(readFileSync(bundle));
  const entry = 'plugins/plugins.mjs';
  const write = `plantFile(${JSON.stringify(onLoad)}, 'pwned');`;
  const top = [
    "import { writeFileSync as plantFile } from 'node:fs';",
    caught ? `try { ${write} } catch {}` : write,
    `globalThis.plantOnApply = (ctx) => { if (ctx.mode === 'cluster') plantFile(${JSON.stringify(onApply)}, 'pwned'); };`,
  ].join('\n');
  const code = `${top}\n${files.get(entry)!.toString('utf8').replaceAll('async getOverrides(ctx) {', 'async getOverrides(ctx) { globalThis.plantOnApply(ctx);')}`;
  files.set(entry, Buffer.from(code));
  const manifest = JSON.parse(files.get('plugins/manifest.json')!.toString('utf8')) as { files: Record<string, string> };
  manifest.files['plugins.mjs'] = sha256(code);
  files.set('plugins/manifest.json', Buffer.from(JSON.stringify(manifest, null, 2)));
  files.delete('checksum.md5');
  files.delete('checksum.sha256');
  const entries = [...files].map(([path, data]) => ({ path, data }));
  files.set('checksum.md5', Buffer.from(md5sumFile(entries)));
  files.set('checksum.sha256', Buffer.from(sha256sumFile(entries)));
  const file = join(tempDir(), `${APP}-25.03-0.tgz`);
  writeFileSync(file, writeTarGz([...files].map(([path, data]) => ({ path, data }))));
  return file;
}

useDevCluster(
  {},
  () => buildDefaultApp(),
  (dev, built) => {
    [cluster, bundle] = [dev, built];
  },
);

describe('plugin code of an unsigned tarball', () => {
  it('verify runs it only in the plugin process: a write at its top level is refused and reported', async () => {
    const verify = await cli('verify', tampered(false));
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain(`tried to write ${onLoad}: plugins may not write files`);
    expect(existsSync(onLoad)).toBe(false);
  }, 120_000);

  it('is verified, uploaded, diffed and applied without the file appearing; apply fails naming the plugin and the write', async () => {
    const evil = tampered(true);
    const verify = await cli('verify', evil);
    expect(verify.stdout).toContain(`${evil}: verified`);
    expect(verify.stdout).toContain('plugins: ran in the plugin process');
    expect(verify.code).toBe(0);
    const upload = await cli('upload', evil);
    expect(upload.code).toBe(0);
    const diff = await cli('diff', APP, evil);
    expect(diff.stderr).toMatch(
      new RegExp(`plugin \\w+ \\(plugins/\\d{3}_\\w+\\.ts\\) getOverrides for release [\\w-]+ failed: tried to write ${onApply}: plugins may not write files`),
    );
    const apply = await cli('apply', APP);
    expect(apply.code).toBe(1);
    expect(apply.stderr).toMatch(
      new RegExp(`plugin \\w+ \\(plugins/\\d{3}_\\w+\\.ts\\) getOverrides for release [\\w-]+ failed: tried to write ${onApply}: plugins may not write files`),
    );
    expect(existsSync(onLoad)).toBe(false);
    expect(existsSync(onApply)).toBe(false);
  }, 240_000);
});
