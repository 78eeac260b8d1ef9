/**
 * End to end: the imported app built by `flotilla build` (buildApp) ships
 * the original StarlingX manifests — HelmReleases equal in every field with
 * the version of the shipped chart archive stamped over the placeholder —
 * the static overrides and metadata byte for byte, and one archive per chart.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type BuildResult } from '../../src/build/index.js';
import { readTarGzSafely } from '../../src/tarball/index.js';
import { loadChartArchive } from '../../src/charts/index.js';
import { parseYaml, toPlain, type PlainValue } from '../../src/yaml/index.js';
import { importStarlingxApp, VERSION_PLACEHOLDER } from '../../src/import/index.js';
import { tempDir } from '../support/app-fixture.js';
import { edit, listFiles, stxFixture, targetDir, type StxFixture } from './stx-fixture.js';

const plain = (text: string | Buffer, file = 'x.yaml'): PlainValue => {
  const root = parseYaml(text.toString(), file, { layer: 'test' }).root;
  return root ? toPlain(root) : null;
};

describe('import, then flotilla build', () => {
  let fixture: StxFixture;
  let built: BuildResult;
  let shipped: Map<string, Buffer>;

  beforeAll(async () => {
    fixture = await stxFixture('separate');
    const out = targetDir();
    await importStarlingxApp(fixture.dir, out, { charts: fixture.charts });
    built = await buildApp(out, { outDir: tempDir('flotilla-built-'), cacheDir: false });
    shipped = await readTarGzSafely(built.file);
  });

  it('ships every original manifest unchanged (HelmReleases stamped with the shipped chart version)', async () => {
    const originalDir = join(fixture.dir, 'fluxcd-manifests');
    const originals = listFiles(originalDir);
    const manifests = [...shipped.keys()].filter((p) => p.startsWith('fluxcd-manifests/')).map((p) => p.slice('fluxcd-manifests/'.length));
    expect(manifests.sort()).toEqual(originals);
    const versions = new Map<string, string>();
    for (const [path, bytes] of shipped) {
      if (path.startsWith('charts/')) {
        const chart = await loadChartArchive(bytes, path);
        versions.set(chart.name, chart.version);
        expect(path).toBe(`charts/${chart.name}-${chart.version}.tgz`);
      }
    }
    expect(Object.fromEntries(versions)).toEqual({ ingress: '0.1.7', 'mariadb-galera': '0.1.0', keystone: '0.3.1', glance: '0.4.2' });
    for (const file of originals) {
      const original = readFileSync(join(originalDir, file));
      const ours = shipped.get(`fluxcd-manifests/${file}`) as Buffer;
      if (file.endsWith('-overrides.yaml')) {
        expect(ours.equals(original), file).toBe(true);
      } else if (file.endsWith('helmrelease.yaml')) {
        const want = plain(original, file) as { spec: { chart: { spec: { chart: string; version: string } } } };
        const spec = want.spec.chart.spec;
        if (spec.version === VERSION_PLACEHOLDER) spec.version = versions.get(spec.chart) as string;
        expect(plain(ours, file), file).toEqual(want);
      } else if (file === 'base/helmrepository.yaml') {
        const want = plain(original, file) as { metadata: Record<string, unknown> };
        want.metadata.namespace = 'openstack'; // set by the top kustomization anyway
        expect(plain(ours, file), file).toEqual(want);
      } else {
        expect(plain(ours, file), file).toEqual(plain(original, file));
      }
    }
  });

  it('ships metadata.yaml as written', () => {
    expect(shipped.get('metadata.yaml')?.equals(readFileSync(join(fixture.dir, 'metadata.yaml')))).toBe(true);
    expect(built.file.endsWith('stx-demo-1.0-3.tgz')).toBe(true);
  });

  it('builds with the tokens the import lists once their values are given', async () => {
    const copy = await stxFixture('separate');
    const staticFile = 'fluxcd-manifests/glance/glance-static-overrides.yaml';
    edit(copy.dir, staticFile, /docker\.io(\/starlingx\/stx-glance:\S+)/, '"@IMAGE_PREFIX@$1"');
    const out = targetDir();
    const report = await importStarlingxApp(copy.dir, out, { charts: copy.charts });
    expect(report.warnings.map((w) => w.message)).toContainEqual(expect.stringContaining('uses build token @IMAGE_PREFIX@'));
    expect(report.images.skipped.map((s) => s.path)).toContain('images.tags.glance_api');
    expect(readFileSync(join(out, 'fluxcd', 'build.yaml'), 'utf8')).toContain('#   IMAGE_PREFIX: <value>');
    await expect(buildApp(out, { outDir: tempDir('flotilla-built-'), cacheDir: false })).rejects.toThrow(/@IMAGE_PREFIX@ has no value/);
    const result = await buildApp(out, { outDir: tempDir('flotilla-built-'), cacheDir: false, tokens: new Map([['IMAGE_PREFIX', 'docker.io']]) });
    const files = await readTarGzSafely(result.file);
    const withToken = readFileSync(join(copy.dir, staticFile), 'utf8');
    expect(withToken).toContain('glance_api: "@IMAGE_PREFIX@/starlingx/stx-glance:');
    expect(files.get(staticFile)?.toString('utf8')).toBe(withToken.replace('@IMAGE_PREFIX@', 'docker.io'));
  });
});
