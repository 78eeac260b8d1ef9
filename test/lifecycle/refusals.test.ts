/**
 * What the lifecycle refuses before it changes anything, on the dev cluster
 * TEST FIXTURE without Flux: a cluster that has no Flux, a tampered tarball,
 * bad flags.
 */
import { generateKeyPairSync } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTarGzSafelySync, signBundleFile, writeTarGz } from '../../src/tarball/index.js';
import { SYSTEM_NAMESPACE } from '../../src/lifecycle/index.js';
import { tempDir } from '../support/app-fixture.js';
import type { DevCluster } from '../support/dev-cluster/index.js';
import { APP, buildDefaultApp, flotilla, useDevCluster } from './support.js';

let cluster: DevCluster;
let bundle: string;
const cli = (...args: string[]) => flotilla(cluster.kubeconfigPath, args);

useDevCluster(
  { flux: false },
  () => buildDefaultApp(),
  (dev, built) => {
    [cluster, bundle] = [dev, built];
  },
);

describe('refusals', () => {
  it('says so when the cluster has no Flux', async () => {
    const apply = await cli('apply', APP);
    expect(apply).toMatchObject({
      code: 1,
      stderr:
        'flotilla: this cluster has no Flux: helmreleases.helm.toolkit.fluxcd.io (helm.toolkit.fluxcd.io/v2) is not served by context flotilla-dev; install Flux (helm-controller and source-controller) first\n',
    });
  });

  it('refuses a tampered tarball at upload and records nothing', async () => {
    const files = readTarGzSafelySync(readFileSync(bundle));
    const entry = 'fluxcd-manifests/keystone/helmrelease.yaml';
    files.set(entry, Buffer.from(files.get(entry)!.toString('utf8').replace('timeout: 30m', 'timeout: 90m')));
    const tampered = join(tempDir(), `${APP}-25.03-0.tgz`);
    writeFileSync(tampered, writeTarGz([...files].map(([path, data]) => ({ path, data }))));
    const upload = await cli('upload', tampered);
    expect(upload.code).toBe(1);
    expect(upload.stderr).toContain(`flotilla: Application-upload rejected: ${APP}-25.03-0.tgz:`);
    expect(upload.stderr).toContain(entry);
    expect(JSON.parse((await cli('list', '-o', 'json')).stdout)).toEqual({ apiVersion: 'flotilla/v1', kind: 'AppList', items: [] });
    expect(cluster.list('v1', 'Secret', SYSTEM_NAMESPACE)).toEqual([]);
  });

  it('uploads a tarball stored in a registry (flotilla push), verified like a file', async () => {
    const ref = `oci://${cluster.registry!.host}/apps/${APP}:25.03-0`;
    const { OciClient, pushBundle } = await import('../../src/oci/index.js');
    await pushBundle(new OciClient(), bundle, ref);
    const upload = await cli('upload', ref);
    expect(upload.stderr).toBe('delivering the charts to ' + cluster.chartRepository + '\n');
    expect(upload).toMatchObject({ code: 0, stdout: `${APP} 25.03-0: uploaded (charts in ${cluster.chartRepository})\n` });
    expect(JSON.parse((await cli('list', '-o', 'json')).stdout)).toEqual({
      apiVersion: 'flotilla/v1',
      kind: 'AppList',
      items: [{ name: APP, version: '25.03-0', state: 'uploaded', progress: { ready: 0, total: 12, percent: 0 }, running: false }],
    });
    expect((await cli('delete', APP)).code).toBe(0);
  });

  it('requires a valid signature when the cluster has a signing key', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const config = cluster.get('v1', 'ConfigMap', SYSTEM_NAMESPACE, 'flotilla-config') as { data: Record<string, string> };
    cluster.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'flotilla-config', namespace: SYSTEM_NAMESPACE },
      data: { ...config.data, signingKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() },
    });
    try {
      const unsigned = await cli('upload', bundle);
      expect(unsigned.code).toBe(1);
      expect(unsigned.stderr).toContain('checksum.sha256.sig is missing: the tarball is not signed');
      const signed = join(tempDir(), `${APP}-25.03-0.tgz`);
      copyFileSync(bundle, signed);
      await signBundleFile(signed, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
      expect((await cli('upload', signed)).code).toBe(0);
      expect((await cli('delete', APP)).code).toBe(0);
    } finally {
      cluster.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'flotilla-config', namespace: SYSTEM_NAMESPACE }, data: config.data });
    }
  });

  it('exits 2 on bad usage, naming the flag', async () => {
    expect(await cli('apply', APP, '--timeout', 'soon')).toMatchObject({
      code: 2,
      stderr: 'flotilla: --timeout soon: expected a duration such as 30m, 1h or 90s\n',
    });
    expect(await cli('show', APP, '-o', 'xml')).toMatchObject({
      code: 2,
      stderr: "flotilla: option '-o, --output <FORMAT>' argument 'xml' is invalid. Allowed choices are table, json, yaml. (see --help)\n",
    });
    expect(await cli('upload', bundle, '--chart-repo', 'ftp://x/y')).toMatchObject({
      code: 2,
      stderr: 'flotilla: --chart-repo ftp://x/y: expected oci://HOST/PATH or http(s)://HOST/PATH\n',
    });
    expect(await cli('apply', APP, '--context', 'prod')).toMatchObject({ code: 2, stderr: expect.stringContaining('no context "prod" in $KUBECONFIG') });
    expect((await cli('apply')).code).toBe(2);
    expect((await cli('override', 'set', APP, 'keystone', '--reuse-values', '--reset-values')).code).toBe(2);
  });
});
