/**
 * An apply whose objects the API server would refuse for their size is
 * refused before anything is written, on the dev cluster TEST FIXTURE
 * (which refuses a Secret over 1 MiB as a real server does): a release's
 * system overrides grown past the 1 MiB a Secret holds.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HELM_RELEASE_API } from '../../src/flux/index.js';
import { dataBytes } from '../../src/lifecycle/render.js';
import { tempDir } from '../support/app-fixture.js';
import type { DevCluster } from '../support/dev-cluster/index.js';
import { APP, buildDefaultApp, flotilla, useDevCluster } from './support.js';

let cluster: DevCluster;
let bundle: string;
const cli = (...args: string[]) => flotilla(cluster.kubeconfigPath, args);

useDevCluster(
  { requeueDependencyMs: 250 },
  () => buildDefaultApp(),
  (dev, built) => {
    [cluster, bundle] = [dev, built];
  },
);

describe('objects too large for the API server', () => {
  it('refuses an apply whose system overrides Secret would hold over 1 MiB, writing nothing and keeping the state; applies once they shrink', async () => {
    expect((await cli('upload', bundle)).code).toBe(0);
    const big = join(tempDir(), 'big.yaml');
    writeFileSync(big, `padding: ${'x'.repeat(1024 * 1024)}\n`);
    expect((await cli('override', 'set', APP, 'keystone', '-f', big)).code).toBe(0);

    const apply = await cli('apply', APP, '--no-wait');
    expect(apply.code).toBe(1);
    const errors = apply.stderr.split('\n').filter((line) => line.startsWith('flotilla: '));
    expect(errors).toEqual([
      expect.stringMatching(
        /^flotilla: the API server stores no more than 1\.0 MiB \(1048576 bytes\) in a Secret or ConfigMap; nothing was applied: Secret openstack\/keystone-system-overrides \(release keystone's system overrides\): 1\.0 MiB \(\d+ bytes\)$/,
      ),
    ]);
    // Nothing of the app's releases was written, and the app is still uploaded, as before the apply.
    expect(cluster.list(HELM_RELEASE_API, 'HelmRelease')).toEqual([]);
    expect(cluster.list('v1', 'Secret').filter((s) => (s.metadata as { name: string }).name.endsWith('-overrides'))).toEqual([]);
    expect(JSON.parse((await cli('list', '-o', 'json')).stdout)).toMatchObject({ kind: 'AppList', items: [{ name: APP, state: 'uploaded' }] });

    expect((await cli('override', 'delete', APP, 'keystone')).code).toBe(0);
    const again = await cli('apply', APP, '--no-wait');
    expect(again.code).toBe(0);
    expect(cluster.get('v1', 'Secret', 'openstack', 'keystone-system-overrides')).toBeDefined();
  });
});

describe('the data size the API server counts', () => {
  it("counts a Secret's data decoded and its stringData as text, a ConfigMap's data as text and its binaryData decoded", () => {
    const meta = { metadata: { name: 'x' } };
    const base64 = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');
    expect(dataBytes({ apiVersion: 'v1', kind: 'Secret', ...meta, data: { a: base64(1000), b: base64(24) }, stringData: { c: 'é'.repeat(10) } } as never)).toBe(
      1000 + 24 + 20,
    );
    expect(dataBytes({ apiVersion: 'v1', kind: 'ConfigMap', ...meta, data: { a: 'x'.repeat(300) }, binaryData: { b: base64(700) } } as never)).toBe(300 + 700);
    expect(dataBytes({ apiVersion: 'v1', kind: 'Service', ...meta, data: { a: 'x'.repeat(300) } } as never)).toBe(0);
  });
});
