/**
 * What the import cannot represent faithfully is an error naming the file
 * and line, and nothing is written; harmless differences are warnings and
 * the import goes on (its self-check then proves the HelmRelease still
 * comes out the same, Flux defaults written explicitly).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadApp } from '../../src/app/index.js';
import { formatDiagnostic } from '../../src/diagnostics/index.js';
import { importStarlingxApp, ImportRejectedError, type ImportReport } from '../../src/import/index.js';
import { edit, stxFixture, targetDir, write, type StxFixture } from './stx-fixture.js';

const HR = (release: string) => `fluxcd-manifests/${release}/helmrelease.yaml`;
const KUST = (release: string) => `fluxcd-manifests/${release}/kustomization.yaml`;

/** 1-based line of the first line of `file` containing `needle`. */
function lineOf(f: StxFixture, file: string, needle: string): number {
  const lines = readFileSync(join(f.dir, file), 'utf8').split('\n');
  const index = lines.findIndex((l) => l.includes(needle));
  if (index < 0) throw new Error(`${needle} not in ${file}`);
  return index + 1;
}

async function rejected(f: StxFixture): Promise<{ error: ImportRejectedError; out: string; lines: string[] }> {
  const out = targetDir();
  const error = await importStarlingxApp(f.dir, out, { charts: f.charts }).then(
    () => {
      throw new Error('import succeeded');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportRejectedError);
  expect(existsSync(out), 'nothing is written').toBe(false);
  const e = error as ImportRejectedError;
  return { error: e, out, lines: e.diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic) };
}

async function accepted(f: StxFixture): Promise<{ report: ImportReport; out: string; warnings: string[] }> {
  const out = targetDir();
  const report = await importStarlingxApp(f.dir, out, { charts: f.charts });
  return { report, out, warnings: report.warnings.map(formatDiagnostic) };
}

describe('import refuses what it cannot represent, at file:line', () => {
  it('spec.chartRef instead of spec.chart', async () => {
    const f = await stxFixture();
    edit(f.dir, HR('ingress'), /  chart:\n    spec:\n(.*\n){5}/, '  chartRef:\n    kind: OCIRepository\n    name: ingress\n');
    const { lines } = await rejected(f);
    expect(lines).toEqual([
      `${HR('ingress')}:${lineOf(f, HR('ingress'), 'chartRef')}:3: error: spec.chartRef cannot be imported: flotilla ships the charts in the app and points spec.chart at its HelmRepository (at spec.chartRef)`,
    ]);
  });

  it('overrides Secrets not named <release>-static-overrides / -system-overrides', async () => {
    const f = await stxFixture();
    edit(f.dir, KUST('keystone'), '  - name: keystone-static-overrides', '  - name: keystone-static');
    const { lines } = await rejected(f);
    const line = lineOf(f, KUST('keystone'), 'name: keystone-static');
    expect(lines).toContainEqual(
      `${KUST('keystone')}:${line}:5: error: Secret "keystone-static" cannot be imported: flotilla generates exactly keystone-static-overrides and keystone-system-overrides (the overrides Secrets are named after the release) (at secretGenerator[0])`,
    );
    expect(lines).toContainEqual(expect.stringContaining('secretGenerator does not generate keystone-static-overrides'));
  });

  it('a release folder resource that is a folder or a remote URL (files are carried)', async () => {
    const f = await stxFixture();
    edit(f.dir, KUST('mariadb'), '  - helmrelease.yaml\n', '  - helmrelease.yaml\n  - backups\n  - https://example.org/cronjob.yaml\n');
    write(f.dir, 'fluxcd-manifests/mariadb/backups/kustomization.yaml', 'resources: []\n');
    const { lines } = await rejected(f);
    const at = (needle: string) => `${KUST('mariadb')}:${lineOf(f, KUST('mariadb'), needle)}:5`;
    expect(lines).toEqual([
      `${at('backups')}: error: resource "backups" cannot be imported: flotilla ships the files of a release folder, not folders or remote resources`,
      `${at('https://')}: error: resource "https://example.org/cronjob.yaml" cannot be imported: flotilla ships the files of a release folder, not folders or remote resources`,
    ]);
  });

  it('a second document in helmrelease.yaml', async () => {
    const f = await stxFixture();
    edit(f.dir, HR('ingress'), /$/, '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n');
    const { lines } = await rejected(f);
    expect(lines).toEqual([`${HR('ingress')}:${lineOf(f, HR('ingress'), '---')}:1: error: holds 2 YAML documents; only one is allowed here`]);
  });

  it('valuesFrom other than static then system Secret', async () => {
    const f = await stxFixture();
    edit(
      f.dir,
      HR('glance'),
      '      valuesKey: glance-system-overrides.yaml\n',
      '      valuesKey: glance-system-overrides.yaml\n      targetPath: conf\n    - kind: ConfigMap\n      name: site-values\n',
    );
    edit(f.dir, HR('keystone'), '      valuesKey: keystone-static-overrides.yaml\n', '');
    const { lines } = await rejected(f);
    expect(lines.join('\n')).toContain(
      `${HR('glance')}:${lineOf(f, HR('glance'), 'name: glance-system-overrides') - 1}:7: error: spec.valuesFrom[1]: targetPath cannot be imported`,
    );
    expect(lines.join('\n')).toContain('spec.valuesFrom[2]: an extra values source ({"kind":"ConfigMap","name":"site-values"})');
    expect(lines.join('\n')).toContain(
      `${HR('keystone')}:${lineOf(f, HR('keystone'), 'name: keystone-static-overrides') - 1}:7: error: spec.valuesFrom[0]: valuesKey is missing (Flux would read values.yaml)`,
    );
  });

  it('metadata.name different from its folder, an old apiVersion, a hash-suffixed secretGenerator', async () => {
    const f = await stxFixture();
    edit(f.dir, HR('ingress'), '  name: ingress\n', '  name: nginx-ingress\n');
    edit(f.dir, HR('keystone'), 'apiVersion: "helm.toolkit.fluxcd.io/v2"', 'apiVersion: helm.toolkit.fluxcd.io/v2beta1');
    edit(f.dir, KUST('glance'), 'generatorOptions:\n  disableNameSuffixHash: true\n', '');
    const { lines } = await rejected(f);
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^${HR('ingress')}:4:3: error: metadata.name "nginx-ingress" differs from its folder "ingress"`)),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^${HR('keystone')}:1:1: error: apiVersion "helm.toolkit.fluxcd.io/v2beta1" cannot be imported`)),
    );
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${KUST('glance')}:1:1: error: generatorOptions.disableNameSuffixHash must be true`)));
  });

  it('list-edit tags in static overrides (Helm gets the file as written)', async () => {
    const f = await stxFixture();
    edit(f.dir, 'fluxcd-manifests/glance/glance-static-overrides.yaml', 'storage: pvc', 'storage: pvc\nbackends: !append [rbd]');
    const { lines } = await rejected(f);
    expect(lines).toEqual([
      'fluxcd-manifests/glance/glance-static-overrides.yaml:7:1: error: !append is only allowed in values layers above the static overrides',
    ]);
  });

  it('a dependency cycle', async () => {
    const f = await stxFixture();
    edit(f.dir, HR('ingress'), '  valuesFrom:\n', '  dependsOn:\n    - name: glance\n      namespace: openstack\n  valuesFrom:\n');
    const { lines } = await rejected(f);
    expect(lines).toEqual([`${HR('ingress')}:1:1: error: dependency cycle between releases: ingress → glance → keystone → ingress`]);
  });

  it('a chart that is not found, or not in the version the HelmRelease asks for', async () => {
    const f = await stxFixture();
    edit(f.dir, HR('glance'), 'version: 0.4.2', 'version: 0.4.3');
    rmSync(join(f.dir, 'charts', 'ingress'), { recursive: true });
    const { lines } = await rejected(f);
    expect(lines).toEqual([
      `${HR('ingress')}:12:7: error: chart ingress (release ingress) not found in ${f.charts.join(', ')}: expected a folder whose Chart.yaml names it, or ingress-<version>.tgz`,
      `${HR('glance')}:12:7: error: release glance asks for chart glance version 0.4.3, but only ${join(f.packaged, 'glance-0.4.2.tgz')} (0.4.2) was found`,
    ]);
  });

  it('a chart found twice', async () => {
    const f = await stxFixture('in-charts');
    const { lines } = await rejected({ ...f, charts: [join(f.dir, 'charts'), f.packaged] });
    expect(lines).toEqual([
      `${HR('mariadb')}:14:7: error: chart mariadb-galera is found 2 times (${join(f.dir, 'charts', 'mariadb-galera-0.1.0.tgz')} (0.1.0), ${join(f.packaged, 'mariadb-galera-0.1.0.tgz')} (0.1.0)); keep one, or pass only the folder to use with --charts`,
      `${HR('glance')}:12:7: error: chart glance is found 2 times (${join(f.dir, 'charts', 'glance-0.4.2.tgz')} (0.4.2), ${join(f.packaged, 'glance-0.4.2.tgz')} (0.4.2)); keep one, or pass only the folder to use with --charts`,
    ]);
  });

  it('a base with two repositories, a HelmRepository field Flux does not have', async () => {
    const f = await stxFixture();
    edit(f.dir, 'fluxcd-manifests/base/kustomization.yaml', /$/, '  - mirror.yaml\n');
    write(
      f.dir,
      'fluxcd-manifests/base/mirror.yaml',
      'apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: mirror\nspec:\n  url: https://charts.example.org\n',
    );
    expect((await rejected(f)).lines).toEqual([
      'fluxcd-manifests/base/mirror.yaml:1:1: error: base/ holds 2 HelmRepositories (starlingx, mirror); flotilla points every release at one',
    ]);
    const typo = await stxFixture();
    edit(typo.dir, 'fluxcd-manifests/base/helmrepository.yaml', '  interval: 1m', '  intervall: 1m');
    expect((await rejected(typo)).lines).toEqual([
      'fluxcd-manifests/base/helmrepository.yaml:7:3: error: unknown key "intervall"; did you mean "interval"? (at spec.intervall)',
    ]);
  });
});

describe('import warns about harmless differences and goes on', () => {
  it('writes left-out Flux defaults explicitly, drops metadata.namespace and status, fills dependsOn namespaces and the default releaseName', async () => {
    const f = await stxFixture();
    edit(f.dir, HR('keystone'), '  test:\n    enable: false\n', '');
    edit(f.dir, HR('keystone'), '    disableHooks: false\n    disableWait: true\n', '    disableWait: true\n');
    edit(f.dir, HR('keystone'), '  timeout: 30m\n', '');
    edit(f.dir, HR('keystone'), '  releaseName: osh-openstack-keystone\n', '');
    edit(f.dir, HR('keystone'), '    - name: ingress\n      namespace: openstack\n', '    - name: ingress\n');
    edit(f.dir, HR('keystone'), '  name: keystone\n', '  name: keystone\n  namespace: openstack\n');
    edit(f.dir, HR('keystone'), /$/, 'status:\n  observedGeneration: 3\n');
    const { report, out, warnings } = await accepted(f);
    const file = HR('keystone');
    expect(warnings).toEqual([
      `${file}:${lineOf(f, file, 'status:')}:1: warning: status is not imported (the cluster writes it) (at status)`,
      `${file}:5:3: warning: metadata.namespace is not written: the kustomization sets the namespace (openstack) (at metadata.namespace)`,
      `${file}:1:1: warning: Flux defaults written explicitly (same behaviour): upgrade.disableHooks: false, dependsOn ingress: namespace openstack, releaseName: keystone, timeout: 5m, test.enable: false`,
    ]);
    const app = await loadApp(out);
    expect(app.graph.byName.get('keystone')).toMatchObject({ releaseName: 'keystone', timeout: '5m', upgrade: { disableHooks: false, disableWait: true } });
    expect(report.releases.every((r) => r.enabled)).toBe(true);
  });

  it('turns off releases of metadata disabled_charts and those depending on them, so loadApp still accepts the app', async () => {
    const f = await stxFixture();
    edit(f.dir, 'metadata.yaml', 'class: optional\n', 'class: optional\ndisabled_charts:\n  - keystone\n');
    const { report, out, warnings } = await accepted(f);
    expect(warnings).toEqual([
      'fluxcd-manifests/kustomization.yaml:9:5: warning: release keystone is not turned on by the imported deployment spec: chart keystone is in metadata disabled_charts',
      'fluxcd-manifests/kustomization.yaml:10:5: warning: release glance is not turned on by the imported deployment spec: depends on keystone, whose chart is in metadata disabled_charts',
    ]);
    expect(report.releases.filter((r) => r.enabled).map((r) => r.name)).toEqual(['ingress', 'mariadb']);
    const app = await loadApp(out);
    expect(app.enabled.map((r) => r.name)).toEqual(['ingress', 'mariadb']);
    expect(readFileSync(join(out, 'overrides', 'deployment.yaml'), 'utf8')).toContain('#   glance: depends on keystone');
  });

  it('says when the build will list the folders in another order, and which shipped charts no release uses', async () => {
    const f = await stxFixture('in-charts');
    edit(
      f.dir,
      'fluxcd-manifests/kustomization.yaml',
      '  - ingress\n  - mariadb\n  - keystone\n  - glance\n',
      '  - glance\n  - keystone\n  - mariadb\n  - ingress\n',
    );
    write(f.dir, 'charts/unused/Chart.yaml', 'apiVersion: v2\nname: unused\nversion: 1.0.0\n');
    const out = targetDir();
    const report = await importStarlingxApp(f.dir, out);
    expect(report.warnings.map(formatDiagnostic)).toEqual([
      "fluxcd-manifests/kustomization.yaml:7:5: warning: flotilla build lists the release folders in apply order (ingress, mariadb, keystone, glance); the release table keeps this file's order (kustomize output order only, Flux follows dependsOn)",
      `warning: chart ${join(f.dir, 'charts', 'unused')} is not used by any release (nor as a dependency): not imported`,
    ]);
    const app = await loadApp(out);
    expect(app.releases.map((r) => r.name)).toEqual(['glance', 'keystone', 'mariadb', 'ingress']);
  });

  it('says which release folders the top kustomization does not list', async () => {
    const f = await stxFixture();
    edit(f.dir, 'fluxcd-manifests/kustomization.yaml', '  - glance\n', '');
    const { report, warnings } = await accepted(f);
    expect(warnings).toEqual([
      'fluxcd-manifests/kustomization.yaml:1:1: warning: release folder glance/ is not listed in resources: not imported (StarlingX does not deploy it either)',
    ]);
    expect(report.releases.map((r) => r.name)).toEqual(['ingress', 'mariadb', 'keystone']);
  });

  it('says the packaged system overrides are not imported, and a helm_repo that is not the base repository', async () => {
    const f = await stxFixture();
    write(f.dir, 'fluxcd-manifests/ingress/ingress-system-overrides.yaml', 'pod:\n  replicas:\n    ingress: 3\n');
    edit(f.dir, 'metadata.yaml', 'helm_repo: starlingx', 'helm_repo: stx-platform');
    const { warnings } = await accepted(f);
    expect(warnings).toEqual([
      'fluxcd-manifests/ingress/ingress-system-overrides.yaml:1:1: warning: the packaged system overrides are not imported: flotilla computes them at apply time (layers 2–8); move values meant to ship into the static overrides',
      'fluxcd-manifests/base/helmrepository.yaml:1:1: warning: metadata helm_repo "stx-platform" differs from the HelmRepository "starlingx" of base/; fluxcd/build.yaml names the latter',
    ]);
  });
});
