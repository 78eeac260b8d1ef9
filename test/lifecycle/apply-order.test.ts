/**
 * The order of an apply's writes, on the dev cluster TEST FIXTURE with the
 * shipped CLI, read from the store's changes in resourceVersion order (no
 * clock): the source before any HelmRelease; each HelmRelease after the
 * overrides Secrets it reads its values from, each Secret written once; and
 * each HelmRelease only once every release it depends on is Ready.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { tempDir } from '../support/app-fixture.js';
import { startDevCluster, type DevCluster } from '../support/dev-cluster/index.js';
import { flotilla } from './support.js';

/** Three tiers: a dependant of two, one of a dependant, one on its own; names out of dependency order. */
const RELEASES: readonly { name: string; dependsOn: readonly string[] }[] = [
  { name: 'zdb', dependsOn: [] },
  { name: 'yqueue', dependsOn: [] },
  { name: 'identity', dependsOn: ['zdb', 'yqueue'] },
  { name: 'compute', dependsOn: ['identity', 'zdb'] },
  { name: 'dashboard', dependsOn: ['compute'] },
  { name: 'alone', dependsOn: [] },
];

function writeApp(dir: string): void {
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  for (const r of RELEASES) {
    write(`charts/${r.name}/Chart.yaml`, `apiVersion: v2\nname: ${r.name}\nversion: 0.1.0\n`);
    write(`charts/${r.name}/values.yaml`, `images:\n  tags:\n    ${r.name}_api: example/${r.name}:1\n`);
    write(
      `charts/${r.name}/templates/configmap.yaml`,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-etc\ndata:\n  image: {{ .Values.images.tags.${r.name}_api | quote }}\n`,
    );
  }
  const table = RELEASES.map(
    (r) => `  - name: ${r.name}\n    chart: ${r.name}\n    service: ${r.name}\n${r.dependsOn.length > 0 ? `    dependsOn: [${r.dependsOn.join(', ')}]\n` : ''}`,
  ).join('');
  write('fluxcd/metadata.yaml', 'app_name: ordered\napp_version: 1.0-0\nsupported_k8s_version:\n  minimum: v1.29.0\n');
  write('fluxcd/releases.yaml', `defaults:\n  namespace: ordered\nreleases:\n${table}`);
  write('overrides/deployment.yaml', `main:\n  release: "2025.1"\nfeatures:\n  services: [${RELEASES.map((r) => r.name).join(', ')}]\n`);
  write(
    'overrides/versions/2025.1.yaml',
    `release: "2025.1"\nimages:\n${RELEASES.map((r) => `  ${r.name}_api: docker.io/example/${r.name}:2025.1`).join('\n')}\n`,
  );
  write('overrides/versions/images.yaml', `${RELEASES.map((r) => `${r.name}_api:\n  ${r.name}: images.tags.${r.name}_api`).join('\n')}\n`);
}

interface Change {
  readonly rv: number;
  readonly type: string;
  readonly resource: string;
  readonly name: string;
  readonly ready: boolean;
}

let cluster: DevCluster;
const changes: Change[] = [];

beforeAll(async () => {
  const app = tempDir('flotilla-apply-order-app-');
  writeApp(app);
  const built = await buildApp(app, { outDir: tempDir('flotilla-apply-order-out-'), cacheDir: false });
  cluster = await startDevCluster();
  const upload = await flotilla(cluster.kubeconfigPath, ['upload', built.file]);
  expect(upload.code, upload.stderr).toBe(0);
  cluster.cluster.store.subscribe((change) => {
    if (change.type === 'DELETED' || change.namespace !== 'ordered') return;
    const conditions = (change.object.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    const ready = conditions.some((c) => c.type === 'Ready' && c.status === 'True');
    changes.push({ rv: change.resourceVersion, type: change.type, resource: change.resource, name: change.name, ready });
  });
  const apply = await flotilla(cluster.kubeconfigPath, ['apply', 'ordered']);
  expect(apply.code, apply.stderr).toBe(0);
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('the writes of an apply', () => {
  const first = (resource: string, name: string, ready = false) =>
    changes.filter((c) => c.resource === resource && c.name === name && (!ready || c.ready)).sort((a, b) => a.rv - b.rv)[0]?.rv ?? Infinity;
  const written = (name: string) => first('helm.toolkit.fluxcd.io/helmreleases', name);
  const readyAt = (name: string) => first('helm.toolkit.fluxcd.io/helmreleases', name, true);

  it('writes every HelmRelease, each after the source', () => {
    const source = first('source.toolkit.fluxcd.io/helmrepositories', 'starlingx');
    expect(source).toBeLessThan(Infinity);
    for (const r of RELEASES) {
      expect(written(r.name), r.name).toBeLessThan(Infinity);
      expect(written(r.name), r.name).toBeGreaterThan(source);
    }
  });

  it('writes each overrides Secret once, before the HelmRelease that reads it', () => {
    for (const r of RELEASES) {
      for (const kind of ['static', 'system']) {
        const secret = changes.filter((c) => c.resource === '/secrets' && c.name === `${r.name}-${kind}-overrides`);
        expect(
          secret.map((c) => c.type),
          `${r.name}-${kind}-overrides`,
        ).toEqual(['ADDED']);
        expect(secret[0]!.rv, `${r.name}-${kind}-overrides`).toBeLessThan(written(r.name));
      }
    }
  });

  it('writes each HelmRelease only once every release it depends on is Ready', () => {
    for (const r of RELEASES) for (const dep of r.dependsOn) expect(readyAt(dep), `${r.name} after ${dep}`).toBeLessThan(written(r.name));
    // The releases depending on nothing are written together, before any of them is Ready.
    const roots = RELEASES.filter((r) => r.dependsOn.length === 0).map((r) => r.name);
    for (const root of roots) expect(written(root)).toBeLessThan(Math.min(...roots.map(readyAt)));
  });
});
