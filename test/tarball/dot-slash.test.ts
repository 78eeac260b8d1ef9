/**
 * Application tarballs as StarlingX reads and writes them: `tar czf app.tgz .`
 * names every entry `./…` and writes the `./` folder first. sysinv registers a
 * bundle by `tarfile.getmember("./metadata.yaml")`. verify, inspect and import
 * accept both that form and the plain one.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { extractTarGzSafely, readTarGzSafely, writeTarGz } from '../../src/tarball/index.js';
import { importStarlingxApp } from '../../src/import/index.js';
import { inspectBundle, verifyBundle } from '../../src/verify/index.js';
import { stxFixture, targetDir } from '../import/stx-fixture.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

const run = promisify(execFile);

/** GNU tar's member names, in archive order. */
async function members(file: string): Promise<string[]> {
  return (await run('tar', ['tzf', file])).stdout.split('\n').filter((l) => l !== '');
}

/** Repacks a folder the way StarlingX's build does: `tar czf app.tgz .` inside it. */
async function tarDot(dir: string, file: string): Promise<string> {
  await run('tar', ['czf', file, '.'], { cwd: dir });
  return file;
}

describe('flotilla build writes entries as StarlingX does', () => {
  let built: string;
  beforeAll(async () => {
    built = (await buildApp(writeApp(), { outDir: tempDir(), cacheDir: false })).file;
  });

  it('./-prefixed, the ./ folder first, each folder before its files', async () => {
    const names = await members(built);
    expect(names[0]).toBe('./');
    expect(names.every((n) => n.startsWith('./'))).toBe(true);
    expect(names).toContain('./metadata.yaml');
    expect(names.indexOf('./charts/')).toBeLessThan(names.indexOf('./charts/db-0.1.0.tgz'));
    expect(names.indexOf('./fluxcd-manifests/web/')).toBeLessThan(names.indexOf('./fluxcd-manifests/web/helmrelease.yaml'));
  });

  it('is registered as sysinv reads it: Python tarfile.getmember("./metadata.yaml")', async () => {
    const script =
      'import sys, tarfile\nwith tarfile.open(sys.argv[1]) as t:\n    m = t.getmember("./metadata.yaml")\n    print(m.name, m.isfile(), t.extractfile(m).read().decode().splitlines()[0])';
    const { stdout } = await run('python3', ['-c', script, built]);
    expect(stdout.trim()).toBe('./metadata.yaml True app_name: demo');
  });

  it('verify, inspect and the safe reader take it and the plain form alike', async () => {
    const files = await readTarGzSafely(built);
    expect(files.has('metadata.yaml')).toBe(true);
    const plain = join(tempDir(), 'demo-1.0-1.tgz');
    writeFileSync(plain, writeTarGz([...files].map(([path, data]) => ({ path, data }))));
    expect((await members(plain)).some((n) => n.startsWith('./'))).toBe(false);
    for (const file of [built, plain]) expect((await verifyBundle(file)).problems, file).toEqual([]);
    expect(await inspectBundle(plain)).toEqual(await inspectBundle(built));
  });
});

describe('bundles packed with tar czf app.tgz . (./-prefixed entries)', () => {
  let built: string;
  let repacked: string;

  beforeAll(async () => {
    built = (await buildApp(writeApp(), { outDir: tempDir(), cacheDir: false })).file;
    const dir = tempDir();
    await extractTarGzSafely(built, dir);
    repacked = await tarDot(dir, join(tempDir(), 'demo-1.0-1.tgz'));
  });

  it('the repacked bundle has ./-prefixed members, the ./ folder first', async () => {
    const names = await members(repacked);
    expect(names[0]).toBe('./');
    expect(names).toContain('./metadata.yaml');
    expect(names.every((n) => n.startsWith('./'))).toBe(true);
  });

  it('verify accepts it as it accepts the plain form', async () => {
    const report = await verifyBundle(repacked);
    expect(report.problems).toEqual([]);
  });

  it('inspect reads it', async () => {
    const [plain, dotted] = await Promise.all([inspectBundle(built), inspectBundle(repacked)]);
    expect(dotted).toEqual(plain);
  });

  it('import reads a StarlingX application tarball packed with tar czf .', async () => {
    const fixture = await stxFixture('separate');
    const staging = tempDir();
    await run('cp', ['-r', join(fixture.dir, 'metadata.yaml'), join(fixture.dir, 'fluxcd-manifests'), staging]);
    mkdirSync(join(staging, 'charts'));
    for (const file of readdirSync(fixture.packaged)) await run('cp', [join(fixture.packaged, file), join(staging, 'charts')]);
    // The fixture's ingress and keystone are chart folders: package them as StarlingX ships charts.
    const env = {
      ...process.env,
      HELM_CONFIG_HOME: join(staging, '..', 'h'),
      HELM_CACHE_HOME: join(staging, '..', 'h'),
      HELM_DATA_HOME: join(staging, '..', 'h'),
    };
    const helm = process.env.FLOTILLA_HELM ?? 'helm';
    for (const chart of ['ingress', 'keystone'])
      await run(helm, ['package', '--dependency-update', join(fixture.dir, 'charts', chart), '--destination', join(staging, 'charts')], { env });
    const tarball = await tarDot(staging, join(tempDir(), 'stx-demo-1.0-3.tgz'));
    expect((await members(tarball))[0]).toBe('./');
    const report = await importStarlingxApp(tarball, targetDir());
    expect(report.releases.map((r) => r.name)).toEqual(['ingress', 'mariadb', 'keystone', 'glance']);
  });
});
