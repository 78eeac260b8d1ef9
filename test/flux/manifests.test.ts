import { describe, expect, it } from 'vitest';
import { loadApp } from '../../src/app/index.js';
import { fluxManifestTree, helmReleaseManifest } from '../../src/flux/index.js';
import { writeApp } from '../support/app-fixture.js';

const releases = (table: string) => writeApp({ 'fluxcd/releases.yaml': table });

describe('HelmRelease generation', () => {
  it('passes Flux install/upgrade fields and unmodelled spec fields through, and stamps the chart version', async () => {
    const app = await loadApp(
      releases(`releases:
  - name: db
    chart: db
    service: database
    namespace: data
    interval: 5m
    install: {crds: CreateReplace, createNamespace: true, remediation: {retries: 3}}
    upgrade: {cleanupOnFail: true, remediation: {retries: -1, strategy: uninstall, remediateLastFailure: true}}
    helmReleaseSpec:
      driftDetection: {mode: warn}
      maxHistory: 5
  - {name: web, chart: web, service: frontend, namespace: data, dependsOn: [db], labels: {tier: front}, group: apps}
`),
    );
    const db = helmReleaseManifest(app.graph.byName.get('db')!, { chartVersion: '1.2.3', repository: 'stx' });
    expect(db.spec).toEqual({
      releaseName: 'db',
      chart: { spec: { chart: 'db', version: '1.2.3', sourceRef: { kind: 'HelmRepository', name: 'stx' } } },
      interval: '5m',
      timeout: '5m',
      test: { enable: false },
      driftDetection: { mode: 'warn' },
      maxHistory: 5,
      install: { disableHooks: false, disableWait: false, crds: 'CreateReplace', createNamespace: true, remediation: { retries: 3 } },
      upgrade: { disableHooks: false, disableWait: false, cleanupOnFail: true, remediation: { retries: -1, strategy: 'uninstall', remediateLastFailure: true } },
      valuesFrom: [
        { kind: 'Secret', name: 'db-static-overrides', valuesKey: 'db-static-overrides.yaml' },
        { kind: 'Secret', name: 'db-system-overrides', valuesKey: 'db-system-overrides.yaml' },
      ],
    });
    const web = helmReleaseManifest(app.graph.byName.get('web')!, { chartVersion: '0.1.0', repository: 'stx' });
    expect(web.metadata).toEqual({ name: 'web', labels: { chart_group: 'apps', tier: 'front' } });
    expect(web.spec.dependsOn).toEqual([{ name: 'db', namespace: 'data' }]);
  });

  it('refuses a misspelt install field and a generated field in helmReleaseSpec', async () => {
    await expect(loadApp(releases(`releases:\n  - {name: db, chart: db, install: {createNamespce: true}}\n`))).rejects.toThrow(
      /releases\.yaml:2:\d+: error: unknown key "createNamespce"/,
    );
    await expect(loadApp(releases(`releases:\n  - name: db\n    chart: db\n    helmReleaseSpec: {valuesFrom: []}\n`))).rejects.toThrow(
      /expected a map of HelmRelease spec fields flotilla does not generate/,
    );
  });

  it('lays out fluxcd-manifests with base first and both overrides Secrets per release', async () => {
    const app = await loadApp(writeApp());
    const tree = fluxManifestTree({
      releases: app.releases,
      chartVersions: new Map([
        ['db', '0.1.0'],
        ['web', '0.1.0'],
      ]),
      repository: { name: 'demo', url: 'http://charts.example.org', interval: '1m', namespace: 'demo' },
      staticOverrides: new Map([['web', '# kept\nx: 1\n']]),
      namespace: 'demo',
    });
    expect([...tree.keys()]).toEqual([
      'kustomization.yaml',
      'base/kustomization.yaml',
      'base/helmrepository.yaml',
      'db/helmrelease.yaml',
      'db/kustomization.yaml',
      'db/db-static-overrides.yaml',
      'db/db-system-overrides.yaml',
      'web/helmrelease.yaml',
      'web/kustomization.yaml',
      'web/web-static-overrides.yaml',
      'web/web-system-overrides.yaml',
    ]);
    expect(tree.get('web/web-static-overrides.yaml')).toBe('# kept\nx: 1\n');
    expect(tree.get('web/kustomization.yaml')).toContain('disableNameSuffixHash: true');
  });
});
