import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { readTarGzSafely, writeTarGz } from '../../src/tarball/index.js';
import { buildApp } from '../../src/build/index.js';
import { inspectBundle, verifyBundle } from '../../src/verify/index.js';
import { rawTarGz, type RawEntry } from '../tarball/raw-tar.js';
import { baseApp, tempDir, writeApp } from '../support/app-fixture.js';
import { tarballVariant } from './variant.js';

const run = promisify(execFile);
const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');

let good: string;
let goodFiles: Map<string, Buffer>;

beforeAll(async () => {
  good = (await buildApp(writeApp(), { outDir: tempDir() })).file;
  goodFiles = await readTarGzSafely(good);
});

const variant = (change: (files: Map<string, Buffer>) => void, options: { keepChecksums?: boolean } = {}): string => tarballVariant(goodFiles, change, options);

function hostile(entries: RawEntry[]): string {
  const file = join(tempDir(), 'demo-1.0-1.tgz');
  const base = [...goodFiles].slice(0, 3).map(([name, data]) => ({ name, data }));
  writeFileSync(file, rawTarGz([...base, ...entries]));
  return file;
}

describe('flotilla verify', () => {
  it('accepts a freshly built tarball', async () => {
    const report = await verifyBundle(good);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('refuses a tampered file with the checksum line that caught it', async () => {
    const report = await verifyBundle(
      variant((f) => f.set('fluxcd-manifests/web/web-static-overrides.yaml', Buffer.from('conf: {banner: evil}\n')), { keepChecksums: true }),
    );
    expect(report.ok).toBe(false);
    expect(report.problems).toContainEqual(
      expect.stringMatching(
        /^checksum\.sha256:\d+: fluxcd-manifests\/web\/web-static-overrides\.yaml checksum mismatch \(expected [0-9a-f]{64}, got [0-9a-f]{64}\)$/,
      ),
    );
    expect(report.problems).toContainEqual(expect.stringMatching(/^checksum\.md5:\d+: fluxcd-manifests\/web\/web-static-overrides\.yaml checksum mismatch/));
  });

  it('refuses a file added after the checksums were made, and a missing checksum file', async () => {
    const added = await verifyBundle(variant((f) => f.set('app/overrides/extra.yaml', Buffer.from('x: 1\n')), { keepChecksums: true }));
    expect(added.problems).toContain('app/overrides/extra.yaml is not listed in checksum.sha256');
    const noMd5 = await verifyBundle(variant((f) => f.delete('checksum.md5'), { keepChecksums: true }));
    expect(noMd5.problems).toContain('checksum.md5 is missing');
  });

  it('checks the layout, the metadata, and each HelmRelease against the shipped charts', async () => {
    const report = await verifyBundle(
      variant((f) => {
        f.delete('plugins/manifest.json');
        f.set('metadata.yaml', Buffer.from('app_name: demo\napp_version: 1.0-1\nsupported_k8s_version: {minimum: "1.x"}\n'));
        f.set(
          'fluxcd-manifests/web/helmrelease.yaml',
          Buffer.from(f.get('fluxcd-manifests/web/helmrelease.yaml')!.toString().replace('version: 0.1.0', 'version: 0.2.0')),
        );
        f.set('stray.txt', Buffer.from('?'));
      }),
    );
    expect(report.problems).toEqual(
      expect.arrayContaining([
        'missing plugins/manifest.json',
        'metadata.yaml:3:25: error: expected a Kubernetes version major.minor[.patch], e.g. v1.29.2, got "1.x" (at supported_k8s_version.minimum)',
        'fluxcd-manifests/web/helmrelease.yaml: chart version 0.2.0 differs from the shipped charts/web-0.1.0.tgz (0.1.0)',
        'unexpected entry stray.txt (an application tarball holds metadata.yaml, charts, fluxcd-manifests, plugins, app, checksum.md5, checksum.sha256, checksum.sha256.sig)',
      ]),
    );
  });

  it("checks every shipped Flux object against flotilla's schema of the Flux API, at its line", async () => {
    const report = await verifyBundle(
      variant((f) => {
        const hr = f.get('fluxcd-manifests/web/helmrelease.yaml')!.toString();
        f.set('fluxcd-manifests/web/helmrelease.yaml', Buffer.from(hr.replace('  upgrade:\n', '  upgrade:\n    createNamespace: true\n')));
        f.set(
          'fluxcd-manifests/base/helmrepository.yaml',
          Buffer.from(f.get('fluxcd-manifests/base/helmrepository.yaml')!.toString().replace('interval: 1m', 'interval: 1 minute')),
        );
      }),
    );
    const line = (file: string, text: string) =>
      goodFiles
        .get(file)!
        .toString()
        .split('\n')
        .findIndex((l) => l.includes(text)) + 1;
    expect(report.problems).toEqual(
      expect.arrayContaining([
        `fluxcd-manifests/web/helmrelease.yaml:${line('fluxcd-manifests/web/helmrelease.yaml', '  upgrade:') + 1}:5: error: unknown key "createNamespace" (at spec.upgrade.createNamespace)`,
        `fluxcd-manifests/base/helmrepository.yaml:${line('fluxcd-manifests/base/helmrepository.yaml', 'interval:')}:3: error: expected a Flux duration such as 30m, 1h or 90s, got "1 minute" (at spec.interval)`,
      ]),
    );
  });

  it('checks the Flux objects against the Flux version the shipped release table declares', async () => {
    // A HelmRelease field of helm-controller v1.6.0, built by an app that declares the newest Flux.
    const releases = `${baseApp()['fluxcd/releases.yaml']}    helmReleaseSpec: {postRenderStrategy: separate}\nfluxVersion: latest\n`;
    const latest = (await buildApp(writeApp({ 'fluxcd/releases.yaml': releases }), { outDir: tempDir() })).file;
    expect((await verifyBundle(latest)).problems).toEqual([]);
    // The same objects, shipped by a table that declares StarlingX's Flux: refused, naming both versions.
    const files = await readTarGzSafely(latest);
    const starlingx = tarballVariant(files, (f) => f.set('app/fluxcd/releases.yaml', Buffer.from(releases.replace('fluxVersion: latest\n', ''))));
    const line =
      files
        .get('fluxcd-manifests/web/helmrelease.yaml')!
        .toString()
        .split('\n')
        .findIndex((l) => l.includes('postRenderStrategy')) + 1;
    expect((await verifyBundle(starlingx)).problems).toEqual([
      `fluxcd-manifests/web/helmrelease.yaml:${line}:3: error: field spec.postRenderStrategy exists from helm-controller v1.6.0; this app targets helm-controller v1.5.3 (fluxVersion: starlingx) (at spec.postRenderStrategy)`,
    ]);
  });

  it('runs kubectl kustomize and helm lint on what ships', async () => {
    const noSecret = await verifyBundle(variant((f) => f.delete('fluxcd-manifests/db/db-system-overrides.yaml')));
    // A file the kustomization names but the tarball lacks is named before kustomize runs.
    expect(noSecret.problems).toEqual(['fluxcd-manifests/db/kustomization.yaml: secretGenerator[1].files[0] "db-system-overrides.yaml" is not in the tarball']);
    const unknownField = await verifyBundle(
      variant((f) => f.set('fluxcd-manifests/db/kustomization.yaml', Buffer.from(`${f.get('fluxcd-manifests/db/kustomization.yaml')}bogusField: 1\n`))),
    );
    expect(unknownField.problems).toContainEqual(expect.stringMatching(/^fluxcd-manifests does not build with kubectl kustomize: .*bogusField/));
    const badYaml = await verifyBundle(
      variant((f) =>
        f.set('fluxcd-manifests/db/helmrelease.yaml', Buffer.from('apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: db\n')),
      ),
    );
    expect(badYaml.problems).toContainEqual(expect.stringMatching(/^fluxcd-manifests\/db\/helmrelease\.yaml:4:1: invalid YAML: /));
    const brokenChart = await verifyBundle(
      variant((f) =>
        f.set(
          'charts/db-0.1.0.tgz',
          writeTarGz([
            { path: 'db/Chart.yaml', data: 'apiVersion: v2\nname: db\nversion: 0.1.0\n' },
            { path: 'db/templates/x.yaml', data: '{{ .Values.a.b.c }\n' },
          ]),
        ),
      ),
    );
    expect(brokenChart.problems).toContainEqual(
      expect.stringMatching(/^charts\/db-0\.1\.0\.tgz: helm lint failed: \[ERROR\] templates\/: parse error at \(db\/templates\/x\.yaml:1\)/),
    );
  });

  it('refuses charts that reference no container image', async () => {
    const noImages = writeApp({
      'charts/web/values.yaml': 'pod:\n  replicas: 1\nconf: {}\nlist: []\nimages: {tags: {}}\n',
      'charts/db/values.yaml': 'pod:\n  replicas: 1\nconf: {}\n',
      'overrides/versions/1.0.yaml': 'release: "1.0"\nimages: {}\nserviceDefaults:\n  modern: false\n',
      'overrides/versions/2.0.yaml': 'release: "2.0"\nimages: {}\nserviceDefaults:\n  modern: true\n',
      'overrides/versions/images.yaml': '{}\n',
      'charts/web/templates/deployment.yaml': null,
      'charts/db/templates/deployment.yaml': null,
    });
    const report = await verifyBundle((await buildApp(noImages, { outDir: tempDir() })).file);
    expect(report.problems).toEqual(['the charts reference no container images']);
  });

  const marker = join(tmpdir(), `flotilla-escape-${process.pid}`);
  it.each<[string, RawEntry[], RegExp]>([
    ['a .. entry', [{ name: `../../../../../..${marker}`, data: 'x' }], /entry ".*flotilla-escape.*": .*\.\./],
    ['an absolute path', [{ name: `${marker}`, data: 'x' }], /absolute/],
    ['a symlink', [{ name: 'charts/link.tgz', type: '2', linkname: '/etc/passwd' }], /symbolic link/],
    ['a hard link', [{ name: 'charts/hard.tgz', type: '1', linkname: 'metadata.yaml' }], /hard link/],
    ['a device', [{ name: 'dev', type: '3' }], /device/],
    ['a FIFO', [{ name: 'fifo', type: '6' }], /FIFO|fifo|pipe/i],
    [
      'a duplicate name',
      [
        { name: 'app/dup.yaml', data: 'a' },
        { name: 'app/./dup.yaml', data: 'b' },
      ],
      /duplicate|more than once/i,
    ],
  ])('refuses a tarball with %s before writing anything', async (_, entries, message) => {
    const report = await verifyBundle(hostile(entries));
    expect(report.ok).toBe(false);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatch(/^archive rejected \(demo-1\.0-1\.tgz\): /);
    expect(report.problems[0]).toMatch(message);
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses too many entries and a truncated or non-gzip file', async () => {
    const many = hostile(Array.from({ length: 20_001 }, (_, i) => ({ name: `app/f${i}`, data: '' })));
    expect((await verifyBundle(many)).problems[0]).toMatch(/entries|entry count|too many/i);
    const notGzip = join(tempDir(), 'x.tgz');
    writeFileSync(notGzip, 'this is not a tarball');
    expect((await verifyBundle(notGzip)).problems[0]).toMatch(/^archive rejected \(x\.tgz\): .*gzip/i);
    const bad = join(tempDir(), 'x.zip');
    writeFileSync(bad, 'PK');
    expect((await verifyBundle(bad)).problems).toEqual(['x.zip: an application tarball must end in .tgz or .tar.gz']);
  });

  it('prints one line per problem and exits 1 (CLI)', async () => {
    const ok = await run(process.execPath, [cli, 'verify', good]);
    expect(ok.stdout.trim()).toMatch(new RegExp(`^plugins: (none|ran in the plugin process .*)\n${good.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: verified$`));
    const tampered = variant((f) => f.set('app/overrides/deployment.yaml', Buffer.from('main: {release: "2.0"}\n')), { keepChecksums: true });
    const failed = (await run(process.execPath, [cli, 'verify', tampered]).catch((e: unknown) => e)) as { code: number; stdout: string };
    expect(failed.code).toBe(1);
    expect(failed.stdout.split('\n').filter((l) => l.startsWith('verify: '))).toHaveLength(2);
  });
});

describe('flotilla inspect', () => {
  it('lists the app, charts, releases with dependsOn, and every image', async () => {
    const report = await inspectBundle(good);
    expect(report.app).toBe('demo');
    expect(report.version).toBe('1.0-1');
    expect(report.charts.map((c) => `${c.name}@${c.version}`)).toEqual(['db@0.1.0', 'web@0.1.0']);
    expect(report.releases.map((r) => [r.name, r.chart, r.version, r.dependsOn])).toEqual([
      ['db', 'db', '0.1.0', []],
      ['web', 'web', '0.1.0', ['db']],
    ]);
    const refs = new Set(report.images.map((i) => i.reference));
    expect([...refs].sort()).toEqual([
      'docker.io/library/mariadb:10.6',
      'docker.io/library/mariadb:11.4',
      'docker.io/library/nginx:1.24',
      'docker.io/library/nginx:1.27',
      'example/db:0',
      'example/web:0',
    ]);
    const { stdout } = await run(process.execPath, [cli, 'inspect', good]);
    expect(stdout).toMatch(/^web\s+demo\s+demo-web\s+web@0\.1\.0\s+db$/m);
  });
});
