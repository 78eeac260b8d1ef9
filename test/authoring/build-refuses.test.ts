/**
 * Issue 13 item 1: `build` (and `verify` of a tarball) refuse what any other
 * command refuses, short of running helm.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { verifyBundle } from '../../src/verify/index.js';
import { md5sumFile, readTarGzSafely, sha256sumFile, writeTarGz } from '../../src/tarball/index.js';
import { chartPlugin } from '../plugins/fixtures.js';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { failure, flotilla } from '../support/cli.js';

async function buildError(changes: Record<string, string | null>): Promise<string> {
  const out = tempDir();
  const e = await failure('build', writeApp(changes), '-d', out);
  expect(e.code).toBe(1);
  expect(readdirSync(out).filter((f) => f.endsWith('.tgz'))).toEqual([]); // nothing shipped
  return e.stderr;
}

describe('build refuses what other commands refuse', () => {
  it('invalid YAML in a static override, at its line', async () => {
    const stderr = await buildError({ 'overrides/static/web.yaml': 'conf:\n  banner: [unclosed\n' });
    expect(stderr).toMatch(/overrides\/static\/web\.yaml:\d+:\d+: error: release "web": invalid YAML/);
  });

  it('!append in a static override (Helm cannot read it)', async () => {
    const stderr = await buildError({ 'overrides/static/web.yaml': 'list: !append [c]\n' });
    expect(stderr).toContain('overrides/static/web.yaml:1:1: error: release "web": !append is only allowed in values layers above the static overrides');
  });

  it('a template that does not render, for a release the spec does not enable', async () => {
    const stderr = await buildError({ 'overrides/templates/db.yaml.hbs': 'a: {{main.nosuch}}\n' });
    expect(stderr).toMatch(/overrides\/templates\/db\.yaml\.hbs:1:\d+: error: release "db": "main\.nosuch" is not set \(templates are strict\)/);
  });

  it('a build that reuses an earlier check (same inputs) still refuses once a file changed', async () => {
    const app = writeApp();
    const out = tempDir();
    await flotilla('build', app, '-d', out);
    await flotilla('build', app, '-d', out); // the check is reused: nothing changed
    writeFileSync(join(app, 'overrides/templates/web.yaml.hbs'), 'conf:\n  a: {{main.nosuch}}\n');
    const e = await failure('build', app, '-d', out);
    expect(e.stderr).toContain('overrides/templates/web.yaml.hbs:2:8: error: release "web": "main.nosuch" is not set');
  });

  it('two layers that clash, under --strict (without it, a warning: the higher layer wins as in Helm)', async () => {
    const app = writeApp({ 'overrides/static/web.yaml': 'conf: just-a-string\n' });
    const built = await flotilla('build', app, '-d', tempDir());
    expect(built.stderr).toContain(
      'overrides/templates/web.yaml.hbs:1:1: warning: release "web": type clash at conf: static (overrides/static/web.yaml:1:1) sets a string, but template (overrides/templates/web.yaml.hbs:1:1) sets a map; the higher layer wins, as in Helm',
    );
    const out = tempDir();
    const e = await failure('build', app, '-d', out, '--strict');
    expect(e.code).toBe(1);
    expect(e.stderr).toContain(
      'overrides/templates/web.yaml.hbs:1:1: error: release "web": type clash at conf: static (overrides/static/web.yaml:1:1) sets a string, but template (overrides/templates/web.yaml.hbs:1:1) sets a map; refused: values are strict',
    );
    expect(readdirSync(out).filter((f) => f.endsWith('.tgz'))).toEqual([]);
  });

  it('a plugin for a chart no release uses, at its `chart` line, with the nearest chart', async () => {
    const source = chartPlugin('wbe');
    const stderr = await buildError({ 'plugins/010_wbe.ts': source });
    expect(stderr).toContain(`plugin wbe (plugins/010_wbe.ts:${lineOf(source, "readonly chart = 'wbe'")}): chart: no chart "wbe"; did you mean "web"?`);
  });

  it('a plugin naming a release that does not exist, at its `release` line, with the nearest release', async () => {
    const source = chartPlugin('web', "  override readonly release = 'wbe';");
    const stderr = await buildError({ 'plugins/010_web.ts': source });
    expect(lineOf(source, "readonly release = 'wbe'")).toBeGreaterThan(lineOf(source, "readonly chart = 'web'"));
    expect(stderr).toContain(`plugin web (plugins/010_web.ts:${lineOf(source, "readonly release = 'wbe'")}): release: no release "wbe"; did you mean "web"?`);
  });

  it('a chart whose Chart.yaml name differs fails in releases and preflight as in build', async () => {
    const app = writeApp({ 'charts/web/Chart.yaml': 'apiVersion: v2\nname: webapp\nversion: 0.1.0\n' });
    for (const command of ['releases', 'preflight', 'build']) {
      // build's output (and its cache) goes to a temp folder, not the folder the tests run in
      const e = await failure(command, app, ...(command === 'build' ? ['-d', tempDir()] : []));
      expect(e.code, command).toBe(1);
      expect(e.stderr, command).toContain('fluxcd/releases.yaml:11:5: error: release "web" names chart "web", but charts/web/Chart.yaml says "webapp"');
    }
  });
});

describe('build reads each Chart.yaml once', () => {
  it('a Chart.yaml field Helm refuses is named at its line, as the app names its other files', async () => {
    const stderr = await buildError({ 'charts/web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 1.0\n' });
    // The tree the app parsed (app-relative, as every other file of the app is named), not the file read again.
    expect(stderr).toBe('flotilla: charts/web/Chart.yaml:3:1: version: 1.0 is a YAML number, not a string (Helm would read it as "1"); quote it: "1.0"\n');
  });
});

describe('verify refuses a tarball whose values cannot be computed', () => {
  it('a static override made invalid after the build is a problem, not "verified"', async () => {
    const built = await buildApp(writeApp(), { outDir: tempDir(), cacheDir: false });
    const files = await readTarGzSafely(built.file);
    files.set('app/overrides/static/web.yaml', Buffer.from('conf: [unclosed\n'));
    files.delete('checksum.md5');
    files.delete('checksum.sha256');
    const entries = [...files].map(([path, data]) => ({ path, data }));
    const broken = join(tempDir(), 'demo-1.0-1.tgz');
    writeFileSync(
      broken,
      writeTarGz([...entries, { path: 'checksum.md5', data: md5sumFile(entries) }, { path: 'checksum.sha256', data: sha256sumFile(entries) }]),
    );
    const report = await verifyBundle(broken);
    expect(report.ok).toBe(false);
    expect(report.problems.join('\n')).toMatch(/overrides\/static\/web\.yaml:\d+:\d+: error: release "web": invalid YAML/);
    await expect(flotilla('verify', broken)).rejects.toMatchObject({ code: 1 });
  });
});

/** The 1-based line of a plugin source holding `text`. */
function lineOf(source: string, text: string): number {
  return source.split('\n').findIndex((l) => l.includes(text)) + 1;
}
