/** The chart repository StarlingX supports: metadata helm_repo, default `starlingx`, refused when sysinv would refuse it. */
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { md5sumFile, readTarGzSafely, sha256sumFile, writeTarGz } from '../../src/tarball/index.js';
import { buildApp, UnsupportedHelmRepoError } from '../../src/build/index.js';
import { verifyBundle } from '../../src/verify/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

const METADATA = `app_name: demo\napp_version: 1.0-1\nsupported_k8s_version:\n  minimum: v1.29.0\n`;

async function repositoryOf(file: string): Promise<{ metadata: { name: string }; spec: { url: string } }> {
  const files = await readTarGzSafely(file);
  return load(files.get('fluxcd-manifests/base/helmrepository.yaml')!.toString()) as { metadata: { name: string }; spec: { url: string } };
}

describe('the HelmRepository of a build', () => {
  it('defaults to starlingx as sysinv does when metadata has no helm_repo', async () => {
    const result = await buildApp(writeApp({ 'fluxcd/metadata.yaml': METADATA }), { outDir: tempDir(), cacheDir: false });
    const repo = await repositoryOf(result.file);
    expect(repo.metadata.name).toBe('starlingx');
    expect(repo.spec.url).toBe('http://controller:8080/helm_charts/starlingx');
  });

  it('uses metadata helm_repo stx-platform', async () => {
    const result = await buildApp(writeApp({ 'fluxcd/metadata.yaml': `${METADATA}helm_repo: stx-platform\n` }), { outDir: tempDir(), cacheDir: false });
    expect((await repositoryOf(result.file)).spec.url).toBe('http://controller:8080/helm_charts/stx-platform');
  });

  it('refuses a helm_repo StarlingX does not serve, with the reason, before writing anything', async () => {
    const out = tempDir();
    const error = await buildApp(writeApp({ 'fluxcd/metadata.yaml': `${METADATA}helm_repo: demo-charts\n` }), { outDir: out }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedHelmRepoError);
    expect((error as Error).message).toBe(
      'metadata helm_repo "demo-charts" is not a chart repository StarlingX serves (starlingx, stx-platform): sysinv uploads the charts to helm_repo and would refuse the bundle',
    );
  });

  it('takes any Kubernetes object name for the HelmRepository, dots included, and refuses another', async () => {
    const named = (name: string) => writeApp({ 'fluxcd/build.yaml': `helmRepository:\n  name: ${name}\n  url: http://charts.example.org/starlingx\n` });
    const result = await buildApp(named('stx.charts'), { outDir: tempDir(), cacheDir: false });
    expect((await repositoryOf(result.file)).metadata.name).toBe('stx.charts');
    for (const name of ['Stx_Charts', 'stx..charts', `${'a'.repeat(254)}`]) {
      await expect(buildApp(named(name), { outDir: tempDir(), cacheDir: false })).rejects.toThrow(
        /fluxcd\/build\.yaml:2:3: error: expected a Kubernetes object name \(lower-case letters, digits, dashes and dots, at most 253 long\).* \(at helmRepository\.name\)$/m,
      );
    }
  });

  it('refuses a repository URL whose last segment sysinv does not accept', async () => {
    const app = writeApp({ 'fluxcd/build.yaml': 'helmRepository:\n  url: http://charts.example.org/demo\n' });
    const error = await buildApp(app, { outDir: tempDir() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedHelmRepoError);
    expect((error as Error).message).toContain(
      'fluxcd/build.yaml helmRepository.url http://charts.example.org/demo ends in "demo": sysinv accepts only a repository URL ending in one of starlingx, stx-platform',
    );
  });

  it('verify refuses a bundle whose HelmRepository URL names a repository StarlingX does not serve', async () => {
    const files = await readTarGzSafely((await buildApp(writeApp(), { outDir: tempDir(), cacheDir: false })).file);
    const repo = 'fluxcd-manifests/base/helmrepository.yaml';
    files.set(repo, Buffer.from(files.get(repo)!.toString().replace('helm_charts/starlingx', 'helm_charts/demo')));
    files.delete('checksum.md5');
    files.delete('checksum.sha256');
    const entries = [...files].map(([path, data]) => ({ path, data }));
    entries.push({ path: 'checksum.md5', data: Buffer.from(md5sumFile(entries)) }, { path: 'checksum.sha256', data: Buffer.from(sha256sumFile(entries)) });
    const file = join(tempDir(), 'demo-1.0-1.tgz');
    writeFileSync(file, writeTarGz(entries));
    expect((await verifyBundle(file)).problems).toEqual([
      'HelmRepository starlingx: url http://controller:8080/helm_charts/demo ends in "demo"; StarlingX\'s upload accepts only starlingx, stx-platform',
    ]);
  });
});
