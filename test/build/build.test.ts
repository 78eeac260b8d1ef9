import { execFile } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { load, loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { extractTarGzSafely, readTarGzSafely } from '../../src/tarball/index.js';
import { buildApp, ChartVersionError, UnresolvedTokenError } from '../../src/build/index.js';
import { helm, kubectl } from '../../src/tools/index.js';
import { tempDir, touchAll, writeApp } from '../support/app-fixture.js';

const run = promisify(execFile);

/** Every path below `dir`, sorted. */
function listTree(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).sort();
}

describe('flotilla build', () => {
  it('writes the StarlingX layout, and helm, kubectl kustomize, md5sum and sha256sum accept it', async () => {
    const out = tempDir();
    const result = await buildApp(writeApp(), { outDir: out });
    expect(result.file).toBe(join(out, 'demo-1.0-1.tgz'));
    const files = await readTarGzSafely(result.file);
    const names = [...files.keys()];
    expect(names).toEqual([...names].sort());
    for (const expected of [
      'metadata.yaml',
      'charts/db-0.1.0.tgz',
      'charts/web-0.1.0.tgz',
      'fluxcd-manifests/kustomization.yaml',
      'fluxcd-manifests/base/kustomization.yaml',
      'fluxcd-manifests/base/helmrepository.yaml',
      'fluxcd-manifests/web/helmrelease.yaml',
      'fluxcd-manifests/web/kustomization.yaml',
      'fluxcd-manifests/web/web-static-overrides.yaml',
      'fluxcd-manifests/web/web-system-overrides.yaml',
      'plugins/manifest.json',
      'app/fluxcd/releases.yaml',
      'app/overrides/deployment.yaml',
      'app/overrides/versions/2.0.yaml',
      'app/overrides/templates/web.yaml.hbs',
      'checksum.md5',
      'checksum.sha256',
    ]) {
      expect(names).toContain(expected);
    }
    // the library chart is vendored into the charts, not shipped as a release
    expect(names.filter((n) => n.startsWith('charts/'))).toEqual(['charts/db-0.1.0.tgz', 'charts/web-0.1.0.tgz']);
    // static overrides ship as written, comments included; system overrides are filled at apply time
    expect(files.get('fluxcd-manifests/web/web-static-overrides.yaml')?.toString()).toContain('# replaced by the service layer');
    expect(files.get('fluxcd-manifests/web/web-system-overrides.yaml')?.toString()).toBe('');

    const dir = tempDir();
    await extractTarGzSafely(result.file, dir);
    await run('md5sum', ['-c', '--quiet', 'checksum.md5'], { cwd: dir });
    await run('sha256sum', ['-c', '--quiet', 'checksum.sha256'], { cwd: dir });

    for (const chart of ['db-0.1.0.tgz', 'web-0.1.0.tgz']) {
      const archive = join(dir, 'charts', chart);
      await helm(['lint', archive]);
      const rendered = loadAll((await helm(['template', 'x', archive])).stdout) as { kind: string }[];
      expect(rendered.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Deployment']);
      expect((await helm(['show', 'chart', archive])).stdout).toMatch(/^name: (db|web)$/m);
    }

    const objects = loadAll((await kubectl(['kustomize', join(dir, 'fluxcd-manifests')])).stdout) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string; namespace: string };
      spec?: Record<string, unknown>;
    }[];
    expect(objects.map((o) => `${o.apiVersion} ${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual([
      'helm.toolkit.fluxcd.io/v2 HelmRelease demo/db',
      'helm.toolkit.fluxcd.io/v2 HelmRelease demo/web',
      'source.toolkit.fluxcd.io/v1 HelmRepository demo/starlingx',
      'v1 Secret demo/db-static-overrides',
      'v1 Secret demo/db-system-overrides',
      'v1 Secret demo/web-static-overrides',
      'v1 Secret demo/web-system-overrides',
    ]);
    const web = objects.find((o) => o.kind === 'HelmRelease' && o.metadata.name === 'web');
    expect(web?.spec).toEqual({
      releaseName: 'demo-web',
      chart: { spec: { chart: 'web', version: '0.1.0', sourceRef: { kind: 'HelmRepository', name: 'starlingx' } } },
      interval: '1m',
      timeout: '10m',
      test: { enable: false },
      install: { disableHooks: false, disableWait: false },
      upgrade: { disableHooks: false, disableWait: false },
      dependsOn: [{ name: 'db', namespace: 'demo' }],
      valuesFrom: [
        { kind: 'Secret', name: 'web-static-overrides', valuesKey: 'web-static-overrides.yaml' },
        { kind: 'Secret', name: 'web-system-overrides', valuesKey: 'web-system-overrides.yaml' },
      ],
    });
    // the top kustomization lists base first, then releases in apply order
    expect((load(files.get('fluxcd-manifests/kustomization.yaml')!.toString()) as { resources: string[] }).resources).toEqual(['base', 'db', 'web']);
  });

  it('refuses an output or cache folder inside what it reads (a source folder, a chart), writing nothing', async () => {
    const app = writeApp({
      'fluxcd/releases.yaml':
        'releases:\n  - {name: db, chart: db, service: database, group: infra, path: vendor/db}\n  - {name: web, chart: web, service: frontend, group: apps}\n',
    });
    cpSync(join(app, 'charts/db'), join(app, 'vendor/db'), { recursive: true });
    cpSync(join(app, 'charts/lib'), join(app, 'vendor/lib'), { recursive: true }); // its file:// library
    rmSync(join(app, 'charts/db'), { recursive: true });
    const before = listTree(app);
    for (const [outDir, inside] of [
      ['overrides/static', 'overrides'],
      ['charts', 'charts'],
      ['charts/web/out', 'charts'],
      ['vendor/db', 'vendor/db'],
    ]) {
      await expect(buildApp(app, { outDir: join(app, outDir) }), outDir).rejects.toThrow(
        `the output folder is inside the app's ${inside}/, which the build reads`,
      );
    }
    await expect(buildApp(app, { outDir: tempDir(), cacheDir: join(app, 'plugins/.cache') })).rejects.toThrow("the cache folder is inside the app's plugins/");
    const link = join(tempDir(), 'looks-elsewhere');
    symlinkSync(join(app, 'overrides'), link);
    await expect(buildApp(app, { outDir: join(link, 'out') })).rejects.toThrow("the output folder is inside the app's overrides/");
    expect(listTree(app)).toEqual(before);
    // `..` after a link is read as text, where the check looked and where the tarball goes alike: the folder is made there too.
    const parent = tempDir();
    symlinkSync(join(app, 'overrides', 'static'), join(parent, 'into-the-app'));
    const built = await buildApp(app, { outDir: `${parent}/into-the-app/../out` });
    expect(built.file).toBe(join(parent, 'out', 'demo-1.0-1.tgz'));
    expect(readdirSync(join(parent, 'out'))).toContain('demo-1.0-1.tgz');
    expect(listTree(app)).toEqual(before);
    // The app's own folder (`build -d .` in it), or a folder of its own beside the sources, is where a tarball may go.
    await buildApp(app, { outDir: app });
    await buildApp(app, { outDir: join(app, 'out') });
  });

  it('is byte-reproducible: a fresh copy with every file time changed gives the same sha256', async () => {
    const source = writeApp();
    const first = await buildApp(source, { outDir: tempDir(), cacheDir: false });
    const copy = join(tempDir(), 'elsewhere', 'app');
    cpSync(source, copy, { recursive: true });
    touchAll(copy, new Date('2031-05-06T07:08:09Z'));
    const second = await buildApp(copy, { outDir: tempDir(), cacheDir: false });
    expect(second.sha256).toBe(first.sha256);
    expect(readFileSync(second.file).equals(readFileSync(first.file))).toBe(true);
    expect(statSync(first.file).size).toBe(first.size);
  });

  it('reuses archives whose content did not change', async () => {
    const source = writeApp();
    const out = tempDir();
    const first = await buildApp(source, { outDir: out });
    expect(first.charts.map((c) => c.reused)).toEqual([false, false]);
    writeFileSync(join(source, 'charts/web/values.yaml'), `${readFileSync(join(source, 'charts/web/values.yaml'), 'utf8')}extra: 1\n`);
    const second = await buildApp(source, { outDir: out });
    expect(second.charts.map((c) => [c.name, c.reused])).toEqual([
      ['db', true],
      ['web', false],
    ]);
    const third = await buildApp(source, { outDir: out, cacheDir: false });
    expect(third.sha256).toBe(second.sha256);
  });

  it('writes the same bytes incrementally as cold, whatever changed and whatever happened to the previous tarball', async () => {
    const source = writeApp();
    const out = tempDir();
    const cold = async () => readFileSync((await buildApp(source, { outDir: tempDir(), cacheDir: false })).file);
    const first = await buildApp(source, { outDir: out });
    expect(readFileSync(first.file).equals(await cold())).toBe(true);
    const edits: [string, () => void][] = [
      [
        'a static override',
        () => writeFileSync(join(source, 'overrides/static/web.yaml'), `${readFileSync(join(source, 'overrides/static/web.yaml'), 'utf8')}extra: 1\n`),
      ],
      ['a chart', () => writeFileSync(join(source, 'charts/db/values.yaml'), `${readFileSync(join(source, 'charts/db/values.yaml'), 'utf8')}extra: 2\n`)],
      ['the shared library', () => writeFileSync(join(source, 'charts/lib/templates/_more.tpl'), '{{- define "lib.more" -}}more{{- end -}}\n')],
      ['the previous tarball (deleted)', () => rmSync(first.file)],
      [
        'the previous tarball (one byte changed)',
        () => {
          const bytes = readFileSync(first.file);
          bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
          writeFileSync(first.file, bytes);
        },
      ],
    ];
    for (const [what, edit] of edits) {
      edit();
      const incremental = await buildApp(source, { outDir: out });
      expect(readFileSync(incremental.file).equals(await cold()), `after editing ${what}`).toBe(true);
      if (what === 'a static override') expect(incremental.charts.every((c) => c.reused)).toBe(true);
      if (what.startsWith('the previous tarball')) expect(incremental.charts.some((c) => c.reused)).toBe(false);
    }
  });

  it('never reuses a stale archive: a same-size edit right after a build is packaged again', async () => {
    const source = writeApp();
    const out = tempDir();
    await buildApp(source, { outDir: out });
    const values = join(source, 'charts/web/values.yaml');
    const text = readFileSync(values, 'utf8');
    writeFileSync(values, text.replace('replicas: 1', 'replicas: 7')); // same size, same second
    const second = await buildApp(source, { outDir: out });
    expect(second.charts.find((c) => c.name === 'web')?.reused).toBe(false);
    const files = await readTarGzSafely(second.file);
    const web = await readTarGzSafely(files.get('charts/web-0.1.0.tgz')!);
    expect(web.get('web/values.yaml')?.toString()).toContain('replicas: 7');
  });

  it('reuses the plugin bundle only while the plugin sources are unchanged', async () => {
    const plugin = (value: string) =>
      `import { ChartPlugin } from 'flotilla/plugin';\nexport default class Web extends ChartPlugin {\n  chart = 'web';\n  getOverrides() {\n    return { conf: { from: '${value}' } };\n  }\n}\n`;
    const source = writeApp({ 'plugins/010_web.ts': plugin('one') });
    const out = tempDir();
    const entry = async (file: string) => (await readTarGzSafely(file)).get('plugins/plugins.mjs')!.toString();
    const first = await entry((await buildApp(source, { outDir: out })).file);
    expect(first).toContain('from: "one"');
    expect(await entry((await buildApp(source, { outDir: out })).file)).toBe(first);
    writeFileSync(join(source, 'plugins/010_web.ts'), plugin('two'));
    expect(await entry((await buildApp(source, { outDir: out })).file)).toContain('from: "two"');
  });

  it('substitutes build-time tokens from fluxcd/build.yaml and --token, refusing one left without a value', async () => {
    const source = writeApp({
      'fluxcd/build.yaml': `tokens:\n  IMAGE_PREFIX: registry.example.org\n  OS: debian\nhelmRepository:\n  name: stx\n  url: http://charts.example.org/stx-platform\n`,
      'overrides/static/web.yaml': `# the image prefix is filled at build time\nimages:\n  tags:\n    web: "@IMAGE_PREFIX@/web:@OS@-1"\n`,
    });
    const result = await buildApp(source, { outDir: tempDir(), tokens: new Map([['OS', 'ubuntu']]) });
    const files = await readTarGzSafely(result.file);
    expect(files.get('fluxcd-manifests/web/web-static-overrides.yaml')?.toString()).toBe(
      '# the image prefix is filled at build time\nimages:\n  tags:\n    web: "registry.example.org/web:ubuntu-1"\n',
    );
    expect(files.get('app/overrides/static/web.yaml')?.toString()).toContain('registry.example.org/web:ubuntu-1');
    expect(files.get('fluxcd-manifests/base/helmrepository.yaml')?.toString()).toContain('url: http://charts.example.org/stx-platform');

    const missing = await buildApp(
      writeApp({ 'overrides/versions/2.0.yaml': `release: "2.0"\nimages:\n  web: "@IMAGE_PREFIX@/nginx:1.27"\n  db: docker.io/library/mariadb:11.4\n` }),
      { outDir: tempDir() },
    ).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(UnresolvedTokenError);
    expect((missing as Error).message).toBe(
      'overrides/versions/2.0.yaml:3:9: build token @IMAGE_PREFIX@ has no value; set it under "tokens:" in fluxcd/build.yaml or pass --token IMAGE_PREFIX=VALUE',
    );
  });

  it('refuses a chart whose content changed without a new version, naming the files; --bump-changed bumps it', async () => {
    const source = writeApp();
    const previous = await buildApp(source, { outDir: tempDir() });
    writeFileSync(join(source, 'charts/web/templates/extra.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n');
    writeFileSync(join(source, 'charts/lib/templates/_more.tpl'), '{{- define "lib.more" -}}{{- end -}}\n');
    const error = await buildApp(source, { outDir: tempDir(), against: previous.file }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChartVersionError);
    expect((error as Error).message).toBe(
      'charts changed without a new version (against demo-1.0-1.tgz); bump them or build with --bump-changed:\n' +
        '  db 0.1.0: changed charts/lib/templates/_more.tpl\n' +
        '  web 0.1.0: changed charts/lib/templates/_more.tpl, templates/extra.yaml',
    );

    const bumped = await buildApp(source, { outDir: tempDir(), against: previous.file, bumpChanged: true });
    expect([...bumped.bumped]).toEqual([
      ['db', ['0.1.0', '0.1.1']],
      ['web', ['0.1.0', '0.1.1']],
    ]);
    expect(readFileSync(join(source, 'charts/web/Chart.yaml'), 'utf8')).toContain('version: 0.1.1');
    const files = await readTarGzSafely(bumped.file);
    expect(files.has('charts/web-0.1.1.tgz')).toBe(true);
    expect(files.get('fluxcd-manifests/web/helmrelease.yaml')?.toString()).toContain('version: 0.1.1');
    // and now it is consistent with the previous release
    await expect(buildApp(source, { outDir: tempDir(), against: bumped.file })).resolves.toBeDefined();
  });

  it('checks against a chart repository index.yaml by archive digest', async () => {
    const source = writeApp();
    const previous = await buildApp(source, { outDir: tempDir(), cacheDir: false });
    const index = join(tempDir(), 'index.yaml');
    const entry = (c: (typeof previous.charts)[number]) => `  ${c.name}:\n  - name: ${c.name}\n    version: ${c.version}\n    digest: ${c.sha256}\n`;
    writeFileSync(index, `apiVersion: v1\nentries:\n${previous.charts.map(entry).join('')}`);
    await expect(buildApp(source, { outDir: tempDir(), against: index })).resolves.toBeDefined();
    writeFileSync(join(source, 'charts/db/values.yaml'), 'changed: true\n');
    await expect(buildApp(source, { outDir: tempDir(), against: index })).rejects.toThrow('  db 0.1.0: archive digest differs from the index');
  });
});
