/**
 * An apply whose objects the API server would refuse for their size is
 * refused before anything is written, on the dev cluster TEST FIXTURE
 * (which refuses a Secret over 1 MiB as a real server does): a release's
 * system overrides grown past the 1 MiB a Secret holds.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELM_RELEASE_API } from '../../src/flux/index.js';
import { tempDir } from '../support/app-fixture.js';
import { startDevCluster, type DevCluster } from '../support/dev-cluster/index.js';
import { APP, buildDefaultApp, flotilla } from './support.js';

let cluster: DevCluster;
let bundle: string;
const cli = (...args: string[]) => flotilla(cluster.kubeconfigPath, args);

beforeAll(async () => {
  [cluster, bundle] = await Promise.all([startDevCluster(), buildDefaultApp()]);
}, 240_000);

afterAll(async () => {
  await cluster?.stop();
});

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
    expect(JSON.parse((await cli('list', '-o', 'json')).stdout)).toMatchObject([{ name: APP, state: 'uploaded' }]);

    expect((await cli('override', 'delete', APP, 'keystone')).code).toBe(0);
    const again = await cli('apply', APP, '--no-wait');
    expect(again.code).toBe(0);
    expect(cluster.get('v1', 'Secret', 'openstack', 'keystone-system-overrides')).toBeDefined();
  });
});
