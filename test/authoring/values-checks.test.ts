/**
 * Issue 27 item 5: a key the chart does not know, and a malformed image
 * reference, reported at their file:line by build, preflight, verify and
 * `overrides --explain` — the key a warning with the nearest known key (an
 * error under --strict), the image always an error.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { md5sumFile, readTarGzSafely, sha256sumFile, writeTarGz } from '../../src/tarball/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { failure, flotilla } from '../support/cli.js';

const TYPO =
  'overrides/static/web.yaml:3:7: warning: release "web": static sets pod.replicsa, a key unknown to charts/web/values.yaml and charts/web/values.schema.json; did you mean pod.replicas?';
const typoApp = () => writeApp({ 'overrides/static/web.yaml': 'conf:\n  greeting: hi\npod: {replicsa: 2}\nlabels: {any: thing}\n' });
const badImage = 'images:\n  tags:\n    web: "repo::tag"\n';

/** A built tarball whose static override of web is replaced by `text` (checksums made again): what verify sees of a hand-edited tarball. */
async function tarballWith(text: string): Promise<string> {
  const built = await buildApp(writeApp(), { outDir: tempDir(), cacheDir: false });
  const files = await readTarGzSafely(built.file);
  files.set('app/overrides/static/web.yaml', Buffer.from(text));
  files.delete('checksum.md5');
  files.delete('checksum.sha256');
  const entries = [...files].map(([path, data]) => ({ path, data }));
  const file = join(tempDir(), 'demo-1.0-1.tgz');
  writeFileSync(file, writeTarGz([...entries, { path: 'checksum.md5', data: md5sumFile(entries) }, { path: 'checksum.sha256', data: sha256sumFile(entries) }]));
  return file;
}

describe('a key the chart does not know', () => {
  it('is a warning at its line with the nearest key from build, preflight and overrides --explain; open maps are not flagged', async () => {
    const app = typoApp();
    const built = await flotilla('build', app, '-d', tempDir());
    expect(built.stderr).toContain(TYPO);
    expect(built.stderr).not.toContain('labels.any'); // labels: an open map
    expect(built.stderr).not.toContain('conf.greeting'); // conf: an open map
    const preflight = await flotilla('preflight', app, 'web');
    expect(preflight.stderr).toContain(TYPO);
    const explain = await flotilla('overrides', app, 'web', '--explain');
    expect(explain.stderr).toContain(TYPO);
  });

  it('is an error under --strict: build writes nothing, preflight and overrides exit 1', async () => {
    const app = typoApp();
    const out = tempDir();
    const build = await failure('build', app, '-d', out, '--strict');
    expect(build.code).toBe(1);
    expect(build.stderr).toContain(TYPO.replace('warning:', 'error:'));
    expect(readdirSync(out).filter((f) => f.endsWith('.tgz'))).toEqual([]);
    const preflight = await failure('preflight', app, 'web', '--strict');
    expect(preflight.code).toBe(1);
    expect(preflight.stdout + preflight.stderr).toContain(TYPO.replace('warning:', 'error:'));
    expect((await failure('overrides', app, 'web', '--explain', '--strict')).code).toBe(1);
  });

  it('is a warning from verify of the tarball, a problem under --strict', async () => {
    const tarball = await tarballWith('pod: {replicsa: 2}\n');
    const verified = await flotilla('verify', tarball);
    expect(verified.stderr).toContain('overrides/static/web.yaml:1:7: warning: release "web": static sets pod.replicsa, a key unknown to');
    expect(verified.stderr).toContain('did you mean pod.replicas?');
    const strict = await failure('verify', tarball, '--strict');
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('overrides/static/web.yaml:1:7: error: release "web": static sets pod.replicsa');
  });
});

describe('a malformed image reference in a static override', () => {
  const refused = /overrides\/static\/web\.yaml:3:5: error: release "web": images\.tags\.web: image reference "repo::tag" is malformed: tag ":tag" must be/;

  it('is refused at its line by build and preflight', async () => {
    const app = writeApp({ 'overrides/static/web.yaml': badImage });
    const out = tempDir();
    const build = await failure('build', app, '-d', out);
    expect(build.code).toBe(1);
    expect(build.stderr).toMatch(refused);
    expect(readdirSync(out).filter((f) => f.endsWith('.tgz'))).toEqual([]);
    const preflight = await failure('preflight', app, 'web');
    expect(preflight.code).toBe(1);
    expect(preflight.stdout).toMatch(refused);
  });

  it('is a problem of verify, at its line', async () => {
    const verify = await failure('verify', await tarballWith(badImage));
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain('verify: overrides/static/web.yaml:3:5 images.tags.web: image reference "repo::tag" is malformed');
  });
});
