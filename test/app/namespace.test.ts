/**
 * The app's namespace (metadata `flotilla.namespace`): where the app's own
 * objects live — the HelmRepository every HelmRelease names, generated
 * passwords, plugin records — explicit when set, by default the namespace
 * most releases use. Read back from the built tarball with GNU tar.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { loadApp } from '../../src/app/index.js';
import { buildApp } from '../../src/build/index.js';
import { baseApp, tempDir, writeApp } from '../support/app-fixture.js';

const TWO_NAMESPACES = `releases:
  - {name: db, chart: db, service: database, namespace: data}
  - {name: web, chart: web, service: frontend, namespace: front, dependsOn: [db]}
`;
const metadata = (extra: string) => `${baseApp()['fluxcd/metadata.yaml']}${extra}`;

/** The namespaces the built tarball's Flux tree gives the HelmRepository and each HelmRelease's source. */
async function builtNamespaces(app: string): Promise<{ repository: unknown; sources: unknown[] }> {
  const built = await buildApp(app, { outDir: tempDir(), cacheDir: false });
  const out = tempDir();
  execFileSync('tar', ['-xzf', built.file, '-C', out]);
  const base = load(readFileSync(join(out, 'fluxcd-manifests/base/kustomization.yaml'), 'utf8')) as { namespace?: string };
  const sources = ['db', 'web'].map(
    (r) =>
      (load(readFileSync(join(out, 'fluxcd-manifests', r, 'helmrelease.yaml'), 'utf8')) as { spec: { chart: { spec: { sourceRef: { namespace?: string } } } } })
        .spec.chart.spec.sourceRef.namespace,
  );
  return { repository: base.namespace, sources };
}

describe("the app's namespace", () => {
  it('is metadata flotilla.namespace when set, even one no release uses', async () => {
    const app = writeApp({ 'fluxcd/releases.yaml': TWO_NAMESPACES, 'fluxcd/metadata.yaml': metadata('flotilla:\n  namespace: shop-system\n') });
    expect((await loadApp(app)).namespace).toBe('shop-system');
    expect(await builtNamespaces(app)).toEqual({ repository: 'shop-system', sources: ['shop-system', 'shop-system'] });
  }, 60_000);

  it('defaults to the namespace most releases use (ties: the first by name)', async () => {
    expect((await loadApp(writeApp())).namespace).toBe('demo');
    const tie = writeApp({ 'fluxcd/releases.yaml': TWO_NAMESPACES });
    expect((await loadApp(tie)).namespace).toBe('data');
    // db lives there, so its HelmRelease names the repository without a namespace.
    expect(await builtNamespaces(tie)).toEqual({ repository: 'data', sources: [undefined, 'data'] });
  }, 60_000);

  it('refuses a name that is not a namespace, saying what is expected', async () => {
    const app = writeApp({ 'fluxcd/metadata.yaml': metadata('flotilla:\n  namespace: Shop_System\n') });
    await expect(loadApp(app)).rejects.toThrow(/fluxcd\/metadata\.yaml:7:3: error: expected the namespace of the app's own objects: a DNS-1123 label/);
  });
});
