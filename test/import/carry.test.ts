/**
 * Import never refuses valid input: a StarlingX app using kustomization
 * fields beyond resources/secretGenerator, HelmRelease fields flotilla does
 * not model, extra HelmRepository fields, two releases of one chart with
 * their own static overrides, and a dependsOn on another app's HelmRelease is
 * imported, and `flotilla build` ships HelmReleases and kustomizations equal
 * to the originals field for field.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadApp, type App } from '../../src/app/index.js';
import { buildApp } from '../../src/build/index.js';
import { readTarGzSafely, writeTarGz } from '../../src/tarball/index.js';
import { editOverrides, parseAssignment } from '../../src/edit/index.js';
import { verifyBundle } from '../../src/verify/index.js';
import { formatDiagnostic } from '../../src/diagnostics/index.js';
import { parseYaml, toPlain, type PlainValue } from '../../src/yaml/index.js';
import { importStarlingxApp, VERSION_PLACEHOLDER, type ImportReport } from '../../src/import/index.js';
import { kubectl } from '../../src/tools/index.js';
import { tempDir } from '../support/app-fixture.js';
import { edit, listFiles, stxFixture, targetDir, write, type StxFixture } from './stx-fixture.js';

const plain = (text: string | Buffer, file = 'x.yaml'): PlainValue => {
  const root = parseYaml(text.toString(), file, { layer: 'test' }).root;
  return root ? toPlain(root) : null;
};
const M = 'fluxcd-manifests';
/** The versions of the fixture's charts (the archives shipped). */
const CHART_VERSIONS: Record<string, string> = { ingress: '0.1.7', 'mariadb-galera': '0.1.0', keystone: '0.3.1', glance: '0.4.2' };

/** The fixture, rewritten to use what real StarlingX apps use. */
function enrich(f: StxFixture): void {
  // Top kustomization: labels and annotations for everything, an inline patch.
  edit(
    f.dir,
    `${M}/kustomization.yaml`,
    /$/,
    [
      'commonLabels:',
      '  app.starlingx.io/app: stx-demo',
      'labels:',
      '  - pairs: {team: cloud}',
      '    includeSelectors: false',
      'commonAnnotations:',
      '  owner: platform-team',
      '',
    ].join('\n'),
  );
  edit(f.dir, `${M}/kustomization.yaml`, '  - keystone\n', '  - keystone\n  - keystone-public\n');
  edit(f.dir, `${M}/base/kustomization.yaml`, /$/, 'commonLabels:\n  app.starlingx.io/source: charts\n');
  // The HelmRepository with fields beyond url and interval.
  edit(f.dir, `${M}/base/helmrepository.yaml`, '  interval: 1m\n', '  interval: 1m\n  timeout: 60s\n  passCredentials: false\n');
  edit(f.dir, `${M}/base/helmrepository.yaml`, '  name: starlingx\n', '  name: starlingx\n  labels:\n    app.starlingx.io/component: platform\n');
  // A release folder kustomization with a patch of its own.
  edit(
    f.dir,
    `${M}/mariadb/kustomization.yaml`,
    /$/,
    'patches:\n  - target:\n      kind: HelmRelease\n      name: mariadb\n    patch: |-\n      - op: replace\n        path: /spec/suspend\n        value: false\n',
  );
  // An extra resource in a release folder, and a patch read from a file of the folder.
  edit(f.dir, `${M}/ingress/kustomization.yaml`, '  - helmrelease.yaml\n', '  - helmrelease.yaml\n  - ingress-class.yaml\n');
  write(
    f.dir,
    `${M}/ingress/ingress-class.yaml`,
    "# The cluster's ingress class, shipped with the app.\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: nginx-openstack\nspec:\n  controller: k8s.io/ingress-nginx\n",
  );
  edit(f.dir, `${M}/mariadb/kustomization.yaml`, 'patches:\n', 'patches:\n  - path: timeout-patch.yaml\n');
  write(
    f.dir,
    `${M}/mariadb/timeout-patch.yaml`,
    'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: mariadb\nspec:\n  timeout: 50m\n',
  );
  // HelmRelease fields flotilla does not model.
  const hr = `${M}/keystone/helmrelease.yaml`;
  edit(f.dir, hr, '  labels:\n', '  annotations:\n    meta.helm.sh/owner: keystone-team\n  labels:\n');
  edit(f.dir, hr, '        name: starlingx\n', '        name: starlingx\n      valuesFiles:\n        - values.yaml\n      reconcileStrategy: ChartVersion\n');
  edit(f.dir, hr, '    remediation:\n      retries: -1\n', '    remediation:\n      retries: -1\n    crds: CreateReplace\n    createNamespace: true\n');
  edit(f.dir, hr, '    disableWait: true\n', '    disableWait: true\n    force: true\n    cleanupOnFail: true\n    serverSideApply: auto\n');
  edit(
    f.dir,
    hr,
    '  dependsOn:\n',
    [
      '  driftDetection:',
      '    mode: enabled',
      '    ignore:',
      '      - paths: [/spec/replicas]',
      '        target: {kind: Deployment}',
      '  postRenderers:',
      '    - kustomize:',
      '        patches:',
      '          - target: {kind: Deployment, name: keystone-api}',
      '            patch: |',
      '              - op: add',
      '                path: /metadata/annotations/example.org~1checked',
      '                value: "true"',
      '  dependsOn:',
      '    - name: cert-manager',
      '      namespace: cert-manager',
      '',
    ].join('\n'),
  );
  // A second release of the keystone chart, with static overrides of its own.
  const copy = (file: string) =>
    readFileSync(join(f.dir, M, 'keystone', file), 'utf8')
      .replaceAll('keystone-static-overrides', 'keystone-public-static-overrides')
      .replaceAll('keystone-system-overrides', 'keystone-public-system-overrides');
  write(f.dir, `${M}/keystone-public/kustomization.yaml`, copy('kustomization.yaml'));
  write(
    f.dir,
    `${M}/keystone-public/helmrelease.yaml`,
    copy('helmrelease.yaml').replace('  name: keystone\n', '  name: keystone-public\n').replace('osh-openstack-keystone', 'osh-openstack-keystone-public'),
  );
  write(
    f.dir,
    `${M}/keystone-public/keystone-public-static-overrides.yaml`,
    '# The public endpoint.\nendpoints:\n  identity:\n    port:\n      api:\n        public: 443\n',
  );
  write(f.dir, `${M}/keystone-public/keystone-public-system-overrides.yaml`, '');
}

describe('import carries every field, and the build reproduces it', () => {
  let fixture: StxFixture;
  let out: string;
  let report: ImportReport;
  let app: App;
  let shipped: Map<string, Buffer>;

  beforeAll(async () => {
    fixture = await stxFixture('separate');
    enrich(fixture);
    out = targetDir();
    report = await importStarlingxApp(fixture.dir, out, { charts: fixture.charts });
    app = await loadApp(out);
    shipped = await readTarGzSafely((await buildApp(out, { outDir: tempDir('flotilla-built-'), cacheDir: false })).file);
  });

  it('imports, warning only about the external dependency and the charts whose releases differ', () => {
    expect(report.warnings.map(formatDiagnostic)).toEqual([
      expect.stringMatching(
        /^fluxcd-manifests\/keystone\/helmrelease\.yaml:\d+:7: warning: dependsOn cert-manager\/cert-manager is not a release of this app: kept as an external dependency/,
      ),
      expect.stringMatching(
        /^fluxcd-manifests\/keystone-public\/helmrelease\.yaml:\d+:7: warning: dependsOn cert-manager\/cert-manager is not a release of this app/,
      ),
      expect.stringMatching(/warning: releases of chart keystone have static overrides of their own: its images stay in them/),
    ]);
    expect(app.warnings.map((w) => w.message)).toEqual(
      ['keystone', 'keystone-public'].map(
        (r) =>
          `release "${r}" depends on HelmRelease cert-manager/cert-manager, which this app does not deploy: Flux waits for it, flotilla does not (it must be installed by another app)`,
      ),
    );
    expect(app.releases.map((r) => [r.name, r.chart, r.staticOverrides])).toEqual([
      ['ingress', 'ingress', 'overrides/static/ingress.yaml'],
      ['mariadb', 'mariadb-galera', 'overrides/static/mariadb-galera.yaml'],
      ['keystone', 'keystone', 'overrides/static/keystone.yaml'],
      ['keystone-public', 'keystone', 'overrides/static/keystone-public.yaml'],
      ['glance', 'glance', 'overrides/static/glance.yaml'],
    ]);
    expect(app.graph.byName.get('keystone')!.dependsOn).toEqual(['ingress', 'mariadb']);
    expect(app.graph.byName.get('ingress')!.kustomization).toEqual({ resources: ['ingress-class.yaml'] });
  });

  it('ships every original manifest field for field: HelmReleases, kustomizations, the HelmRepository, static overrides byte for byte', () => {
    const originalDir = join(fixture.dir, M);
    const originals = listFiles(originalDir);
    expect(
      [...shipped.keys()]
        .filter((p) => p.startsWith(`${M}/`))
        .map((p) => p.slice(M.length + 1))
        .sort(),
    ).toEqual(originals);

    for (const file of originals) {
      const original = readFileSync(join(originalDir, file));
      const ours = shipped.get(`${M}/${file}`)!;
      if (file.endsWith('-overrides.yaml')) {
        expect(ours.equals(original), file).toBe(true);
        continue;
      }
      const want = plain(original, file) as Record<string, Record<string, unknown>>;
      if (file.endsWith('helmrelease.yaml')) {
        const chart = (want.spec!.chart as { spec: { version: string } }).spec;
        if (chart.version === VERSION_PLACEHOLDER) chart.version = CHART_VERSIONS[(chart as unknown as { chart: string }).chart]!;
      }
      // kustomize puts base/ in the top namespace; flotilla also writes it in place.
      if (file === 'base/helmrepository.yaml') want.metadata!.namespace = 'openstack';
      expect(plain(ours, file), file).toEqual(want);
    }
  });

  it('overrides set edits the static overrides of a release that has its own', async () => {
    const change = await editOverrides({ appDir: out, chart: 'keystone-public', set: [parseAssignment('endpoints.identity.port.api.public=8443')] });
    expect(change.file).toBe('overrides/static/keystone-public.yaml');
    expect(change.after).toContain('public: 8443');
    expect((await editOverrides({ appDir: out, chart: 'keystone', set: [parseAssignment('conf.keystone.DEFAULT.debug=true')] })).file).toBe(
      'overrides/static/keystone.yaml',
    );
  });

  it('verify accepts the build, noting the extra resource', async () => {
    const dir = tempDir();
    const file = join(dir, 'stx-demo-1.0-3.tgz');
    writeFileSync(
      file,
      writeTarGz(
        [...shipped].map(([path, data]) => ({ path, data })),
        { dotRoot: true },
      ),
    );
    const report = await verifyBundle(file);
    expect(report.problems).toEqual([]);
    expect(report.warnings).toContain('fluxcd-manifests also yields IngressClass nginx-openstack (an extra resource of the app)');
  });

  it('builds with kubectl kustomize into the objects the original builds into', async () => {
    const dir = tempDir();
    for (const [path, data] of shipped) if (path.startsWith(`${M}/`)) write(dir, path, data);
    const ours = loadAll((await kubectl(['kustomize', join(dir, M)])).stdout);
    const theirs = (loadAll((await kubectl(['kustomize', join(fixture.dir, M)])).stdout) as Record<string, Record<string, Record<string, unknown>>>[]).map(
      (o) => {
        if (o.kind === ('HelmRelease' as unknown)) {
          const chart = (o.spec!.chart as { spec: { version: string; chart: string } }).spec;
          if (chart.version === VERSION_PLACEHOLDER) chart.version = CHART_VERSIONS[chart.chart]!;
        }
        return o;
      },
    );
    expect(ours).toEqual(theirs);
  });
});
