/** The CLI as a user runs it: output shapes and exit codes of releases and overrides. */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { writeApp } from '../support/app-fixture.js';

const run = promisify(execFile);
const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');
const flotilla = (...args: string[]) => run(process.execPath, [cli, ...args]);
const failure = (...args: string[]) =>
  flotilla(...args).then(
    () => expect.fail('expected a non-zero exit'),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );

describe('flotilla releases', () => {
  it('prints the releases in apply waves with what the spec enables', async () => {
    const { stdout } = await flotilla('releases', writeApp({ 'overrides/deployment.yaml': 'main:\n  release: "2.0"\nfeatures:\n  services: [database]\n' }));
    expect(stdout).toMatch(/^WAVE\s+RELEASE\s+CHART\s+SERVICE\s+GROUP\s+NAMESPACE\s+HELM RELEASE\s+DEPENDS ON\s+ENABLED$/m);
    expect(stdout).toMatch(/^1\s+db\s+db\s+database\s+infra\s+demo\s+demo-db\s+-\s+yes$/m);
    expect(stdout).toMatch(/^2\s+web\s+web\s+frontend\s+apps\s+demo\s+demo-web\s+db\s+no$/m);
    expect(stdout).toContain('2 releases in 2 waves; 1 enabled by the spec (release 2.0)');
  });

  it("lists a dependency on another app's HelmRelease as external, with its namespace", async () => {
    const table =
      'defaults:\n  namespace: demo\nreleases:\n  - {name: db, chart: db, service: database}\n  - {name: web, chart: web, service: frontend, dependsOn: [db, {name: cert-manager, namespace: cert-manager}]}\n';
    const { stdout } = await flotilla('releases', writeApp({ 'fluxcd/releases.yaml': table }));
    expect(stdout).toMatch(/^2\s+web\s+web\s+frontend\s+-\s+demo\s+web\s+db,cert-manager\/cert-manager \(external\)\s+yes$/m);
  });

  it('exits 1 with the error and its place on a bad app', async () => {
    const e = await failure('releases', writeApp({ 'fluxcd/releases.yaml': 'releases:\n  - {name: db, chart: db, dependsOn: [db]}\n' }));
    expect(e.code).toBe(1);
    expect(e.stderr).toBe('flotilla: fluxcd/releases.yaml:2:5: dependency cycle between releases: db → db\n');
  });
});

describe('flotilla overrides', () => {
  it('prints the system overrides as YAML or JSON, by release or chart name', async () => {
    const app = writeApp();
    const yaml = (await flotilla('overrides', app, 'web')).stdout;
    expect(yaml).toContain('  host: web.example.org\n');
    expect(yaml).not.toContain('greeting'); // static overrides are not system overrides
    const json = JSON.parse((await flotilla('overrides', app, 'web', '--output', 'json')).stdout) as { values: { conf: { mode: string } } };
    expect(json.values.conf.mode).toBe('modern');
  });

  it('explains each value with its layer and file:line, and tries another spec with --deployment', async () => {
    const app = writeApp();
    const { stdout } = await flotilla('overrides', app, 'web', '--explain');
    expect(stdout).toMatch(/^PATH\s+VALUE\s+LAYER\s+SET AT$/m);
    expect(stdout).toMatch(/^conf\.mode\s+"modern"\s+template\s+overrides\/templates\/web\.yaml\.hbs:4:3$/m);
    expect(stdout).toMatch(/^pod\.replicas\s+2\s+common\.groups\.apps\s+overrides\/deployment\.yaml:17:11$/m);
    expect(stdout).toMatch(/values from 5 layers: /);
    const json = JSON.parse((await flotilla('overrides', app, 'web', '--explain', '--all', '--output', 'json')).stdout) as {
      items: { path: string; layer: string }[];
    };
    expect(json.items.find((l) => l.path === 'conf.greeting')?.layer).toBe('static');
    const older = writeApp({ 'other.yaml': 'main:\n  release: "1.0"\n  domain: example.org\nfeatures:\n  services: [frontend]\n' });
    const { stdout: classic } = await run(process.execPath, [cli, 'overrides', older, 'web', '--deployment', 'other.yaml', '--output', 'json'], { cwd: older });
    expect((JSON.parse(classic) as { values: { conf: { mode: string } } }).values.conf.mode).toBe('classic');
  });

  it('names the releases when asked for an unknown one', async () => {
    const e = await failure('overrides', writeApp(), 'wbe');
    expect(e.code).toBe(1);
    expect(e.stderr).toBe('flotilla: no release "wbe"; did you mean "web"? (releases: db, web)\n');
  });
});

describe('the library entry', () => {
  it('exports the operations the CLI runs', async () => {
    const flotillaModule = await import('flotilla');
    for (const name of [
      'loadApp',
      'computeReleaseValues',
      'preflight',
      'buildApp',
      'watchApp',
      'verifyBundle',
      'inspectBundle',
      'importStarlingxApp',
      'signBundleFile',
      'loadAppPlugins',
      'editOverrides',
      'bumpToRelease',
      'bumpField',
      'listImages',
      'pinImages',
      'checkPins',
      'bumpVersions',
      'writeChanges',
    ]) {
      expect(typeof (flotillaModule as Record<string, unknown>)[name], name).toBe('function');
    }
  });
});
