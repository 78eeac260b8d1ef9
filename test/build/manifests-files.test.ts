/** fluxcd/manifests/: files shipped as they are into fluxcd-manifests/ (extra resources, patch files), never over a generated one. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { readTarGzSafely } from '../../src/tarball/index.js';
import { parseYamlStream } from '../../src/yaml/index.js';
import { kubectl } from '../../src/tools/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

const TABLE = `defaults:\n  namespace: demo\nreleases:\n  - {name: db, chart: db, service: database}\n  - name: web\n    chart: web\n    service: frontend\n    dependsOn: [db]\n    kustomization:\n      resources: [web-pdb.yaml]\n      patches:\n        - path: web-timeout.yaml\n`;
const PDB = 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\nspec:\n  maxUnavailable: 1\n';
const PATCH = 'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\nspec:\n  timeout: 45m\n';

describe('fluxcd/manifests/', () => {
  it('ships its files next to the generated ones; kustomize builds the extra resource and applies the patch file', async () => {
    const app = writeApp({ 'fluxcd/releases.yaml': TABLE, 'fluxcd/manifests/web/web-pdb.yaml': PDB, 'fluxcd/manifests/web/web-timeout.yaml': PATCH });
    const files = await readTarGzSafely((await buildApp(app, { outDir: tempDir(), cacheDir: false })).file);
    expect(files.get('fluxcd-manifests/web/web-pdb.yaml')?.toString()).toBe(PDB);
    const dir = tempDir();
    for (const [path, data] of files) {
      if (!path.startsWith('fluxcd-manifests/')) continue;
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), data);
    }
    const objects = parseYamlStream((await kubectl(['kustomize', join(dir, 'fluxcd-manifests')])).stdout, 'kustomize') as {
      kind: string;
      metadata: { name: string; namespace: string };
      spec: { timeout?: string };
    }[];
    expect(objects.find((o) => o.kind === 'PodDisruptionBudget')?.metadata).toEqual({ name: 'web', namespace: 'demo' });
    expect(objects.find((o) => o.kind === 'HelmRelease' && o.metadata.name === 'web')?.spec.timeout).toBe('45m');
  });

  it('refuses a file that would replace a generated one', async () => {
    const app = writeApp({ 'fluxcd/manifests/web/helmrelease.yaml': PATCH });
    await expect(buildApp(app, { outDir: tempDir() })).rejects.toThrow(
      'fluxcd/manifests/web/helmrelease.yaml would replace the generated fluxcd-manifests/web/helmrelease.yaml; flotilla writes that file itself',
    );
  });
});
