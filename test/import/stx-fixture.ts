/**
 * The StarlingX-layout fixture (test/fixtures/stx-app) copied into a temp
 * folder, with the charts of archive-sources/ packaged into real
 * `<chart>-<version>.tgz` archives by `helm package` (nothing binary is
 * committed). Tests edit their copy freely.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll } from 'vitest';
import { writeTarGz } from '../../src/tarball/index.js';
import { helm } from '../../src/tools/index.js';
import { tempDir } from '../support/app-fixture.js';

export const FIXTURE = resolve(import.meta.dirname, '..', 'fixtures', 'stx-app');

export interface StxFixture {
  /** The StarlingX app folder (metadata.yaml, fluxcd-manifests/, charts/ with chart sources). */
  readonly dir: string;
  /** A folder outside the app holding the packaged archives. */
  readonly packaged: string;
  /** What to pass as `charts`: the sources, then the archives. */
  readonly charts: readonly string[];
}

let packagedOnce: Promise<string> | undefined;
const cleanups: string[] = [];
afterAll(() => {
  for (const dir of cleanups.splice(0)) rmSync(dir, { recursive: true, force: true });
  packagedOnce = undefined;
});

/** Packages archive-sources/* once per test file (helm package -u vendors glance's file:// helm-toolkit). */
function packagedArchives(): Promise<string> {
  packagedOnce ??= (async () => {
    const work = tempDir('flotilla-stx-pack-');
    cleanups.push(work);
    // Copy the fixture so `helm package -u` (which writes Chart.lock and charts/) never touches the repository.
    cpSync(FIXTURE, join(work, 'app'), { recursive: true });
    const out = join(work, 'packaged');
    mkdirSync(out);
    const env = { HELM_CONFIG_HOME: join(work, 'helm'), HELM_CACHE_HOME: join(work, 'helm'), HELM_DATA_HOME: join(work, 'helm') };
    for (const chart of readdirSync(join(work, 'app', 'archive-sources')).sort()) {
      if (!existsSync(join(work, 'app', 'archive-sources', chart, 'Chart.yaml'))) continue;
      await helm(['package', '--dependency-update', join(work, 'app', 'archive-sources', chart), '--destination', out], { env });
    }
    return out;
  })();
  return packagedOnce;
}

/**
 * A fresh copy of the fixture. `archives`: `separate` keeps the archives in
 * their own folder (pass `charts`); `in-charts` puts them into the app's
 * charts/ next to the sources, so the default chart location finds everything.
 */
export async function stxFixture(archives: 'separate' | 'in-charts' = 'separate'): Promise<StxFixture> {
  const packagedDir = await packagedArchives();
  const root = tempDir('flotilla-stx-');
  const dir = join(root, 'stx-demo');
  cpSync(FIXTURE, dir, { recursive: true });
  rmSync(join(dir, 'archive-sources'), { recursive: true });
  const packaged = join(root, 'packaged');
  cpSync(packagedDir, packaged, { recursive: true });
  if (archives === 'in-charts') {
    for (const file of readdirSync(packaged)) cpSync(join(packaged, file), join(dir, 'charts', file));
  }
  return { dir, packaged, charts: [join(dir, 'charts'), packaged] };
}

/** A fresh, empty-to-be APP_DIR path next to the fixture copy. */
export function targetDir(): string {
  return join(tempDir('flotilla-imported-'), 'app');
}

/** Every file below `dir`, relative and sorted. */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push(relative(dir, full).split('\\').join('/'));
    }
  };
  if (existsSync(dir)) walk(dir);
  return out.sort();
}

/** Replaces `from` with `to` in a file of the fixture copy (the text must be there). */
export function edit(dir: string, file: string, from: string | RegExp, to: string): void {
  const path = join(dir, file);
  const text = readFileSync(path, 'utf8');
  const next = text.replace(from, to);
  if (next === text) throw new Error(`edit of ${file}: ${String(from)} not found`);
  writeFileSync(path, next);
}

export function write(dir: string, file: string, text: string | Buffer): void {
  mkdirSync(dirname(join(dir, file)), { recursive: true });
  writeFileSync(join(dir, file), text);
}

/** The fixture as a StarlingX application tarball: metadata.yaml, charts/*.tgz, fluxcd-manifests/. */
export async function stxTarball(): Promise<string> {
  const fixture = await stxFixture('separate');
  const entries: { path: string; data: Buffer }[] = [];
  entries.push({ path: 'metadata.yaml', data: readFileSync(join(fixture.dir, 'metadata.yaml')) });
  for (const file of listFiles(join(fixture.dir, 'fluxcd-manifests'))) {
    entries.push({ path: `fluxcd-manifests/${file}`, data: readFileSync(join(fixture.dir, 'fluxcd-manifests', file)) });
  }
  // Source charts are packaged too: a StarlingX tarball ships archives only.
  const env = {
    HELM_CONFIG_HOME: join(fixture.packaged, '..', 'helm'),
    HELM_CACHE_HOME: join(fixture.packaged, '..', 'helm'),
    HELM_DATA_HOME: join(fixture.packaged, '..', 'helm'),
  };
  for (const chart of ['ingress', 'keystone']) {
    await helm(['package', '--dependency-update', join(fixture.dir, 'charts', chart), '--destination', fixture.packaged], { env });
  }
  for (const file of readdirSync(fixture.packaged).sort()) entries.push({ path: `charts/${file}`, data: readFileSync(join(fixture.packaged, file)) });
  const tarball = join(fixture.dir, '..', 'stx-demo-1.0-3.tgz');
  writeFileSync(tarball, writeTarGz(entries));
  return tarball;
}
