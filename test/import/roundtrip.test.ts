/**
 * The "done when": an app imported from the StarlingX-layout fixture,
 * loaded with loadApp and generated again with src/flux, reproduces every
 * original manifest (HelmReleases equal in every field, the chart version
 * stamped where the original has the placeholder), the static overrides and
 * metadata byte for byte, and charts Helm renders the same.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadApp, type App } from '../../src/app/index.js';
import { loadChart, stageChart } from '../../src/charts/index.js';
import { parseYaml, toPlain, type PlainValue } from '../../src/yaml/index.js';
import { fluxManifestTree } from '../../src/flux/index.js';
import { importStarlingxApp, VERSION_PLACEHOLDER, type ImportReport } from '../../src/import/index.js';
import { helm } from '../../src/tools/index.js';
import { computeReleaseValues } from '../../src/values/index.js';
import { tempDir } from '../support/app-fixture.js';
import { listFiles, stxFixture, stxTarball, targetDir, type StxFixture } from './stx-fixture.js';

const plain = (text: string, file = 'x.yaml'): PlainValue => {
  const root = parseYaml(text, file, { layer: 'test' }).root;
  return root ? toPlain(root) : null;
};
const read = (...parts: string[]) => readFileSync(join(...parts), 'utf8');

/** fluxcd-manifests/ as flotilla generates it from the imported app. */
async function regenerate(app: App, appDir: string): Promise<Map<string, string>> {
  const chartVersions = new Map<string, string>();
  for (const r of app.releases) chartVersions.set(r.chart, (await loadChart(app.path(r.chartPath))).version);
  const build = plain(read(appDir, 'fluxcd', 'build.yaml')) as { helmRepository: { name: string; url: string; interval: string } };
  const table = plain(read(appDir, 'fluxcd', 'releases.yaml')) as { defaults: { namespace: string } };
  return fluxManifestTree({
    releases: app.releases,
    chartVersions,
    repository: { ...build.helmRepository, namespace: table.defaults.namespace },
    staticOverrides: new Map(app.releases.map((r) => [r.name, read(appDir, 'overrides', 'static', `${r.chart}.yaml`)])),
    namespace: table.defaults.namespace,
  });
}

/** Compares every file of the original fluxcd-manifests/ with its regenerated twin. */
function expectSameManifests(originalDir: string, generated: Map<string, string>, versions: Record<string, string>): void {
  const originals = listFiles(originalDir);
  expect([...generated.keys()].sort()).toEqual(originals);
  for (const file of originals) {
    const original = read(originalDir, file);
    const ours = generated.get(file) as string;
    if (file.endsWith('-static-overrides.yaml')) {
      expect(ours, file).toBe(original); // byte for byte, comments included
    } else if (file.endsWith('-system-overrides.yaml')) {
      expect(ours, file).toBe('');
      expect(original, file).toBe('');
    } else if (file.endsWith('helmrelease.yaml')) {
      const want = plain(original, file) as { metadata: { name: string }; spec: { chart: { spec: { version: string } } } };
      const release = want.metadata.name;
      if (want.spec.chart.spec.version === VERSION_PLACEHOLDER) want.spec.chart.spec.version = versions[release] as string;
      expect(plain(ours, file), file).toEqual(want);
    } else if (file === 'base/helmrepository.yaml') {
      // The top kustomization sets the namespace of every resource; flotilla also writes it in place.
      const want = plain(original, file) as { metadata: Record<string, unknown> };
      want.metadata.namespace = 'openstack';
      expect(plain(ours, file), file).toEqual(want);
    } else {
      expect(plain(ours, file), file).toEqual(plain(original, file));
    }
  }
}

describe('import round trip (directory source, archives in a separate --charts folder)', () => {
  let fixture: StxFixture;
  let out: string;
  let report: ImportReport;
  let app: App;

  beforeAll(async () => {
    fixture = await stxFixture('separate');
    out = targetDir();
    report = await importStarlingxApp(fixture.dir, out, { charts: fixture.charts });
    app = await loadApp(out);
  });

  it('loads with loadApp, every release enabled, in the folder order of the top kustomization', () => {
    expect(app.releases.map((r) => r.name)).toEqual(['ingress', 'mariadb', 'keystone', 'glance']);
    expect(app.enabled.map((r) => r.name)).toEqual(['ingress', 'mariadb', 'keystone', 'glance']);
    expect(app.warnings).toEqual([]);
    expect(report.releases.map((r) => [r.name, r.chart, r.chartVersion, r.enabled])).toEqual([
      ['ingress', 'ingress', '0.1.7', true],
      ['mariadb', 'mariadb-galera', '0.1.0', true],
      ['keystone', 'keystone', '0.3.1', true],
      ['glance', 'glance', '0.4.2', true],
    ]);
    expect(report.warnings).toEqual([]);
  });

  it('regenerates every file of fluxcd-manifests/: HelmReleases equal in every field, static overrides byte for byte', async () => {
    const versions = Object.fromEntries(report.releases.map((r) => [r.name, r.chartVersion]));
    expectSameManifests(join(fixture.dir, 'fluxcd-manifests'), await regenerate(app, out), versions);
  });

  it('keeps metadata.yaml as written, comments included', () => {
    expect(read(out, 'fluxcd', 'metadata.yaml')).toBe(read(fixture.dir, 'metadata.yaml'));
    expect(app.metadata.appName).toBe('stx-demo');
    expect(app.metadata.helmRepo).toBe('starlingx');
  });

  it('maps the HelmRelease fields onto the release table', () => {
    const mariadb = app.graph.byName.get('mariadb')!;
    expect(mariadb).toMatchObject({
      chart: 'mariadb-galera',
      chartPath: 'charts/mariadb-galera',
      service: 'mariadb',
      group: 'openstack-mariadb',
      namespace: 'openstack',
      releaseName: 'osh-openstack-mariadb',
      dependsOn: ['ingress'],
      timeout: '45m',
      interval: '5m',
      install: { disableHooks: false, disableWait: false, remediation: { retries: 3 } },
      upgrade: { disableHooks: false, disableWait: false, remediation: { retries: 3, strategy: 'rollback' } },
      labels: { 'app.starlingx.io/component': 'platform' },
      helmReleaseSpec: { driftDetection: { mode: 'warn' } },
    });
    expect(app.graph.byName.get('glance')).toMatchObject({
      releaseName: 'stx-glance',
      install: { disableHooks: true, disableWait: false },
      helmReleaseSpec: { maxHistory: 5, uninstall: { keepHistory: false, timeout: '10m' } },
    });
    expect(app.graph.waves.map((w) => w.map((r) => r.name))).toEqual([['ingress'], ['mariadb'], ['keystone'], ['glance']]);
  });

  it('writes the chart sources: copied folders, unpacked archives, the shared library as a sibling', () => {
    const charts = listFiles(join(out, 'charts'));
    expect(charts).toContain('ingress/Chart.yaml');
    expect(charts).toContain('keystone/templates/configmap.yaml');
    expect(charts).toContain('helm-toolkit/templates/_labels.tpl');
    expect(charts).not.toContain('helm-toolkit/NOTES.md'); // .helmignore'd: Helm never packages it
    expect(charts).toContain('mariadb-galera/values.yaml');
    expect(charts).toContain('glance/charts/helm-toolkit-0.2.5.tgz'); // vendored as `helm dependency build` leaves it
    expect(report.libraries).toEqual(['helm-toolkit']);
    expect(read(out, 'charts', 'keystone', 'Chart.yaml')).toBe(read(fixture.dir, 'charts', 'keystone', 'Chart.yaml'));
    expect(report.charts.map((c) => [c.name, c.kind])).toEqual([
      ['ingress', 'directory'],
      ['mariadb-galera', 'archive'],
      ['keystone', 'directory'],
      ['glance', 'archive'],
    ]);
  });

  it('renders every imported chart with helm exactly like the original chart', async () => {
    const originals: Record<string, string> = {
      ingress: join(fixture.dir, 'charts', 'ingress'),
      keystone: join(fixture.dir, 'charts', 'keystone'),
      'mariadb-galera': join(fixture.packaged, 'mariadb-galera-0.1.0.tgz'),
      glance: join(fixture.packaged, 'glance-0.4.2.tgz'),
    };
    // Both staged the way preflight renders a chart (dependencies vendored as folders).
    const stage = async (path: string) => stageChart(await loadChart(path), join(tempDir('flotilla-stage-'), 'chart'));
    for (const release of app.releases) {
      const values = join(fixture.dir, 'fluxcd-manifests', release.name, `${release.name}-static-overrides.yaml`);
      const args = (chart: string) => ['template', release.releaseName, chart, '--namespace', release.namespace, '-f', values];
      const ours = await helm(args(await stage(app.path(release.chartPath))));
      const theirs = await helm(args(await stage(originals[release.chart] as string)));
      expect(ours.stdout, release.name).toBe(theirs.stdout);
      expect(ours.stdout).toContain('kind: ConfigMap');
    }
  });

  it('harvests pinned images.tags into the catalog without changing what Helm sees', async () => {
    expect(app.target.release).toBe('imported');
    expect(Object.fromEntries([...app.target.images].map(([k, v]) => [k, v.reference]))).toMatchObject({
      dep_check: 'quay.io/airshipit/kubernetes-entrypoint:v1.0.0',
      'mariadb-galera.dep_check': 'quay.io/airshipit/kubernetes-entrypoint:v1.0.1',
      keystone_api: 'docker.io/starlingx/stx-keystone:master-debian-stable-20250101T000000Z.0',
    });
    expect(app.catalog.targets.get('dep_check')?.map((t) => t.chart)).toEqual(['ingress', 'keystone', 'glance']);
    expect(report.images.skipped.map((s) => `${s.chart} ${s.path}`)).toEqual([
      'mariadb-galera images.tags.mariadb',
      'mariadb-galera images.tags.prometheus_mysql_exporter',
      'keystone images.tags.rally.test',
    ]);
    expect(read(out, 'overrides', 'versions', 'images.yaml')).toContain('images.tags.mariadb: uses the floating tag "latest"');
    // What Helm gets: static overrides, then system overrides on top. The catalog only repeats what static sets.
    for (const release of app.releases) {
      const values = await computeReleaseValues(app, release);
      const merged = helmMerge(values.staticOverrides, values.systemOverrides);
      expect(merged, release.name).toEqual(values.staticOverrides);
      expect(values.staticOverrides, release.name).toEqual(plain(read(out, 'overrides', 'static', `${release.chart}.yaml`)));
    }
  });
});

/** Helm's rule: maps merge, everything else from `over` replaces. */
function helmMerge(under: PlainValue, over: PlainValue): PlainValue {
  const isMap = (v: PlainValue): v is Record<string, PlainValue> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isMap(under) || !isMap(over)) return over === undefined ? under : over;
  const out: Record<string, PlainValue> = { ...under };
  for (const [k, v] of Object.entries(over)) out[k] = k in under ? helmMerge(under[k] as PlainValue, v) : v;
  return out;
}

describe('import round trip from other layouts', () => {
  it('finds sources and archives in the default <STX_APP_DIR>/charts', async () => {
    const fixture = await stxFixture('in-charts');
    const out = targetDir();
    const report = await importStarlingxApp(fixture.dir, out);
    const app = await loadApp(out);
    const versions = Object.fromEntries(report.releases.map((r) => [r.name, r.chartVersion]));
    expectSameManifests(join(fixture.dir, 'fluxcd-manifests'), await regenerate(app, out), versions);
  });

  it('imports a StarlingX application tarball directly (charts/*.tgz read in memory)', async () => {
    const tarball = await stxTarball();
    const out = targetDir();
    const report = await importStarlingxApp(tarball, out);
    expect(report.charts.every((c) => c.kind === 'archive')).toBe(true);
    expect(report.charts.map((c) => c.from)).toContain('stx-demo-1.0-3.tgz#charts/keystone-0.3.1.tgz');
    const app = await loadApp(out);
    const fixture = join(tarball, '..', 'stx-demo');
    const versions = Object.fromEntries(report.releases.map((r) => [r.name, r.chartVersion]));
    expectSameManifests(join(fixture, 'fluxcd-manifests'), await regenerate(app, out), versions);
    // Packaged keystone carries helm-toolkit inside: vendored, no sibling library needed.
    expect(report.libraries).toEqual([]);
    expect(listFiles(join(out, 'charts', 'keystone'))).toContain('charts/helm-toolkit-0.2.5.tgz');
  });

  it('two imports of the same source write identical trees', async () => {
    const fixture = await stxFixture('separate');
    const a = targetDir();
    const b = targetDir();
    await importStarlingxApp(fixture.dir, a, { charts: fixture.charts });
    await importStarlingxApp(fixture.dir, b, { charts: fixture.charts });
    const files = listFiles(a);
    expect(listFiles(b)).toEqual(files);
    for (const f of files) expect(readFileSync(join(b, f)).equals(readFileSync(join(a, f))), f).toBe(true);
  });
});
