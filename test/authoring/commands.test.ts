/**
 * Issue 13 items 5 and 6: helm/kubectl conventions (-o, -d, APP_DIR, flags
 * that do nothing refused, numbers checked) and the commands authors reach
 * for (template, --set/-f, selection, --kube-version, --explain --history).
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { failure, flotilla } from '../support/cli.js';

const run = promisify(execFile);
const helmBin = process.env.FLOTILLA_HELM ?? 'helm';

let app: string;
let bundle: string;
beforeAll(async () => {
  app = writeApp();
  const out = tempDir();
  const built = JSON.parse((await flotilla('build', app, '-d', out, '-o', 'json')).stdout) as { file: string; charts: { name: string }[] };
  bundle = built.file;
  expect(built.charts.map((c) => c.name).sort()).toEqual(['db', 'web']);
});

describe('-o json on every command that prints data', () => {
  it('parses', async () => {
    const json = async (...args: string[]) => JSON.parse((await flotilla(...args, '-o', 'json')).stdout) as unknown;
    const v1 = { apiVersion: 'flotilla/v1' };
    expect(await json('releases', app)).toMatchObject({
      ...v1,
      kind: 'ReleaseList',
      items: expect.arrayContaining([expect.objectContaining({ name: 'web', wave: 2, dependsOn: ['db'], enabled: true })]),
    });
    expect(await json('overrides', app, 'web')).toMatchObject({ ...v1, kind: 'SystemOverrides', release: 'web', values: { conf: { mode: 'modern' } } });
    expect(await json('overrides', app, 'web', '--explain')).toMatchObject({
      kind: 'ValueOrigins',
      items: expect.arrayContaining([expect.objectContaining({ path: 'conf.mode', layer: 'template' })]),
    });
    expect(await json('preflight', app)).toMatchObject({
      kind: 'PreflightReport',
      items: [expect.objectContaining({ release: 'db', ok: true }), expect.objectContaining({ release: 'web', ok: true })],
    });
    expect(await json('verify', bundle)).toMatchObject({ kind: 'VerifyReport', ok: true, problems: [] });
    expect(await json('inspect', bundle)).toMatchObject({ kind: 'BundleInspection', app: 'demo' });
    expect(await json('plugin', 'list', app)).toEqual({ ...v1, kind: 'PluginList', items: [] });
    expect(await json('policy', 'lint', app)).toEqual({ ...v1, kind: 'PolicyFindings', items: [] });
    const files = join(tempDir(), 'policy.yaml');
    writeFileSync(files, '"admin": "role:admin"\n"get": "rule:admin"\n');
    expect(await json('policy', 'check', files, '--action', 'get', '--roles', 'admin')).toMatchObject({ kind: 'PolicyDecision', action: 'get', allowed: true });
    expect(await json('policy', 'matrix', files, '--roles', 'admin,member')).toMatchObject({
      kind: 'PolicyMatrix',
      items: expect.arrayContaining([{ scope: expect.any(String), action: 'get', cells: { admin: 'yes', member: 'no' } }]),
    });
    const yaml = (await flotilla('releases', app, '-o', 'yaml')).stdout;
    expect(yaml).toMatch(/^apiVersion: flotilla\/v1\nkind: ReleaseList\nitems:\n  - wave: 1\n    name: db\n/);
  });

  it('refuses an unknown format, flags that do nothing, and bad numbers, as usage errors', async () => {
    for (const args of [
      ['releases', app, '-o', 'xml'],
      ['overrides', app, 'web', '--all'],
      ['overrides', app, 'web', '--history'],
      ['build', app, '-d', tempDir(), '--bump-changed'],
      ['preflight', app, '-j', '0'],
      ['preflight', app, '-j', 'two'],
      ['preflight', app, '--set', 'novalue'],
    ]) {
      const e = await failure(...args);
      expect(e.code, args.join(' ')).toBe(2);
      expect(e.stdout, args.join(' ')).toBe('');
    }
    expect((await failure('overrides', app, 'web', '--all')).stderr).toBe('flotilla: --all does nothing without --explain\n');
  });
});

describe('flotilla template', () => {
  it('prints what helm template prints with the same values', async () => {
    const ours = (await flotilla('template', app, 'web')).stdout;
    // the same by hand: helm template with the static, then the system overrides
    const work = tempDir();
    const system = join(work, 'system.yaml');
    writeFileSync(system, (await flotilla('overrides', app, 'web', '-o', 'values')).stdout);
    await run(helmBin, ['dependency', 'build', join(app, 'charts/web')]);
    const { stdout: theirs } = await run(helmBin, [
      'template',
      'demo-web',
      join(app, 'charts/web'),
      '--namespace',
      'demo',
      '--kube-version',
      'v1.29.0',
      '-f',
      join(app, 'overrides/static/web.yaml'),
      '-f',
      system,
    ]);
    expect(ours).toBe(theirs);
    expect(ours).toContain('kind: Deployment');
  });

  it('selects releases by name or -l, writes --output-dir as helm does, and takes --set/-f', async () => {
    const infra = (await flotilla('template', app, '-l', 'group=infra')).stdout;
    expect(infra).toContain('name: demo-db\n');
    expect(infra).not.toContain('demo-web');
    const out = tempDir();
    await flotilla('template', app, 'web', '--output-dir', out);
    expect(readdirSync(join(out, 'web', 'web', 'templates')).sort()).toEqual(['configmap.yaml', 'deployment.yaml']);
    const values = join(tempDir(), 'more.yaml');
    writeFileSync(values, 'pod:\n  replicas: 5\n');
    const set = (await flotilla('template', app, 'web', '-f', values, '--set', 'conf.banner=from-set')).stdout;
    expect(set).toContain('replicas: 5');
    expect(set).toContain('banner: "from-set"');
    const deployment = readFileSync(join(out, 'web', 'web', 'templates', 'deployment.yaml'), 'utf8');
    expect(deployment).toContain('replicas: 2');
  });

  it('--kube-version refuses a chart whose kubeVersion constraint fails (default: metadata minimum)', async () => {
    const strict = writeApp({
      'charts/web/Chart.yaml': `apiVersion: v2\nname: web\nversion: 0.1.0\nkubeVersion: ">= 1.31.0-0"\ndependencies:\n  - name: lib\n    version: 0.1.0\n    repository: file://../lib\n`,
    });
    const e = await failure('template', strict, 'web');
    expect(e.code).toBe(1);
    expect(e.stderr).toMatch(/web: .*kubeVersion.*incompatible with Kubernetes v1\.29\.0/);
    expect((await flotilla('template', strict, 'web', '--kube-version', '1.31.2')).stdout).toContain('kind: Deployment');
    const pre = await failure('preflight', strict, '--kube-version', '1.30.0');
    expect(pre.stdout).toMatch(/FAIL\s+web/);
  });
});

describe('--set and -f in --explain, and --history', () => {
  it('shows the command-line layers above the deployment spec, and every layer that set a value', async () => {
    const values = join(tempDir(), 'extra.yaml');
    writeFileSync(values, 'conf:\n  banner: from-file\n');
    const explained = (await flotilla('overrides', app, 'web', '--explain', '-f', values, '--set', 'pod.replicas=7', '--set-string', 'conf.port=80')).stdout;
    expect(explained).toMatch(/^conf\.banner\s+"from-file"\s+-f \S+extra\.yaml\s+\S+extra\.yaml:2:3$/m);
    expect(explained).toMatch(/^pod\.replicas\s+7\s+--set\s+--set pod\.replicas=7$/m);
    expect(explained).toMatch(/^conf\.port\s+"80"\s+--set-string\s+--set-string conf\.port=80$/m);
    const history = (await flotilla('overrides', app, 'web', '--explain', '--history', '--set', 'pod.replicas=7')).stdout;
    expect(history).toMatch(/^pod\.replicas\s+2\s+common\.groups\.apps\s+overrides\/deployment\.yaml:17:11\s+overridden$/m);
    expect(history).toMatch(/^pod\.replicas\s+7\s+--set\s+--set pod\.replicas=7\s+wins$/m);
  });
});
