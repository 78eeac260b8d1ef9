/** A release in its own namespace is deployed there (HelmRelease and its Secrets), checked through real `kubectl kustomize` output. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { loadApp } from '../../src/app/index.js';
import { fluxManifestTree } from '../../src/flux/index.js';
import { kubectl } from '../../src/tools/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: { dependsOn?: { name: string; namespace: string }[]; chart?: { spec: { sourceRef: Record<string, string> } } };
}

async function kustomized(table: string): Promise<Obj[]> {
  const app = await loadApp(writeApp({ 'fluxcd/releases.yaml': table }));
  const tree = fluxManifestTree({
    releases: app.graph.waves.flat(),
    chartVersions: new Map([
      ['db', '0.1.0'],
      ['web', '0.1.0'],
    ]),
    repository: { name: 'starlingx', url: 'http://controller:8080/helm_charts/starlingx', interval: '1m', namespace: 'demo' },
    staticOverrides: new Map(),
    namespace: 'demo',
  });
  const dir = tempDir();
  for (const [path, text] of tree) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return loadAll((await kubectl(['kustomize', dir])).stdout) as Obj[];
}

const where = (objects: Obj[]) => objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).sort();

describe('namespaces', () => {
  it('deploys a release, and both its Secrets, in its own namespace; dependsOn names the dependency’s namespace', async () => {
    const objects = await kustomized(
      `defaults:\n  namespace: demo\nreleases:\n  - {name: db, chart: db, service: database, namespace: data}\n  - {name: web, chart: web, service: frontend, dependsOn: [db]}\n`,
    );
    expect(where(objects)).toEqual([
      'HelmRelease data/db',
      'HelmRelease demo/web',
      'HelmRepository demo/starlingx',
      'Secret data/db-static-overrides',
      'Secret data/db-system-overrides',
      'Secret demo/web-static-overrides',
      'Secret demo/web-system-overrides',
    ]);
    const web = objects.find((o) => o.metadata.name === 'web')!;
    expect(web.spec?.dependsOn).toEqual([{ name: 'db', namespace: 'data' }]);
    // The release outside the repository's namespace names it; the others keep StarlingX's plain sourceRef.
    expect(objects.find((o) => o.metadata.name === 'db')!.spec?.chart?.spec.sourceRef).toEqual({
      kind: 'HelmRepository',
      name: 'starlingx',
      namespace: 'demo',
    });
    expect(web.spec?.chart?.spec.sourceRef).toEqual({ kind: 'HelmRepository', name: 'starlingx' });
  });

  it('keeps StarlingX’s layout (namespace in the top kustomization) when every release shares the app’s namespace', async () => {
    const objects = await kustomized(
      `defaults:\n  namespace: demo\nreleases:\n  - {name: db, chart: db, service: database}\n  - {name: web, chart: web, service: frontend, dependsOn: [db]}\n`,
    );
    expect(new Set(objects.map((o) => o.metadata.namespace))).toEqual(new Set(['demo']));
  });

  it('keeps a dependency on another app’s HelmRelease as external, with a warning', async () => {
    const table = `defaults:\n  namespace: demo\nreleases:\n  - {name: db, chart: db, service: database}\n  - name: web\n    chart: web\n    service: frontend\n    dependsOn: [db, {name: cert-manager, namespace: cert-manager}]\n`;
    const app = await loadApp(writeApp({ 'fluxcd/releases.yaml': table }));
    expect(app.warnings.map((w) => w.message)).toContain(
      'release "web" depends on HelmRelease cert-manager/cert-manager, which this app does not deploy: Flux waits for it, flotilla does not (it must be installed by another app)',
    );
    expect(app.graph.byName.get('web')!.dependsOn).toEqual(['db']);
    const web = (await kustomized(table)).find((o) => o.metadata.name === 'web')!;
    expect(web.spec?.dependsOn).toEqual([
      { name: 'db', namespace: 'demo' },
      { name: 'cert-manager', namespace: 'cert-manager' },
    ]);
  });
});
