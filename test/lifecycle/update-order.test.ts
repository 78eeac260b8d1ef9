/**
 * Update order on the dev cluster TEST FIXTURE, seen by a watch of the
 * HelmReleases: an update that changes every release's spec writes a
 * dependant's spec only once each of its dependencies is Ready at its new
 * generation (helm-controller's dependency check); one that changes only
 * values asks a dependant to reconcile only once its dependencies have
 * handled the update's request and are Ready. Then remove: a release whose
 * uninstall leaves a workload behind (`helm.sh/resource-policy: keep`)
 * fails it, naming the object; once it is deleted, remove finishes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect, kubeCluster } from '../../src/kube/index.js';
import type { AppView } from '../../src/lifecycle/index.js';
import type { DevCluster } from '../support/dev-cluster/index.js';
import { APP, buildDefaultApp, expectAfterDependencies, flotilla, useDevCluster, watchReleaseMoments } from './support.js';

let cluster: DevCluster;
let v0: string;
let v1: string;
let v2: string;
const cli = (...args: string[]) => flotilla(cluster.kubeconfigPath, args);
const show = async (): Promise<AppView> => JSON.parse((await cli('show', APP, '-o', 'json')).stdout) as AppView;
const edit = (root: string, file: string, change: (text: string) => string) => writeFileSync(join(root, file), change(readFileSync(join(root, file), 'utf8')));

/** Every HelmRelease's spec changes (Flux's reconcile interval), so every generation moves. */
const newInterval = (root: string) => edit(root, 'fluxcd/releases.yaml', (t) => t.replace(/^ {2}interval: 1m$/m, '  interval: 2m'));
/** horizon 0.1.2: its Deployment asks Helm to keep it through an uninstall, as a chart may. */
const keptDashboard = (root: string) => {
  edit(root, 'charts/horizon/Chart.yaml', (t) => t.replace(/^version: .*$/m, 'version: 0.1.2'));
  edit(root, 'charts/horizon/templates/deployment-server.yaml', (t) =>
    t.replace(
      /\{\{ include "toolkit\.workload" (\(.*\)) \}\}/,
      (_, args: string) =>
        `{{ regexReplaceAll "(?m)^metadata:$" (include "toolkit.workload" ${args}) "metadata:\\n  annotations: {helm.sh/resource-policy: keep}" }}`,
    ),
  );
};

useDevCluster(
  { requeueDependencyMs: 250 },
  () =>
    Promise.all([
      buildDefaultApp(),
      buildDefaultApp({ version: '25.03-1', edit: (root) => (newInterval(root), keptDashboard(root)) }),
      buildDefaultApp({ version: '25.03-2', edit: (root) => (newInterval(root), keptDashboard(root)) }),
    ]),
  async (dev, built) => {
    cluster = dev;
    [v0, v1, v2] = built;
    expect((await cli('upload', v0)).code).toBe(0);
    expect((await cli('apply', APP)).code).toBe(0);
  },
);

describe('update order, seen by a watch of the HelmReleases', () => {
  it('writes a dependant’s new spec only once its dependencies are Ready at their new generation', async () => {
    const watch = watchReleaseMoments(cluster.kubeconfigPath, 'openstack');
    await watch.listed;
    expect((await cli('update', v1)).code).toBe(0);
    const moments = await watch.done;
    expectAfterDependencies(moments, 'specWritten');
    expectAfterDependencies(moments, 'requested');
  }, 240_000);

  it('with new values only (no generation moves), asks a dependant to reconcile only once its dependencies handled the update and are Ready', async () => {
    // New values for keystone and glance, carried over by the update: only their overrides Secrets change.
    expect((await cli('override', 'set', APP, 'keystone', '--set', 'conf.keystone.DEFAULT.debug=true')).code).toBe(0);
    expect((await cli('override', 'set', APP, 'glance', '--set', 'conf.glance.DEFAULT.debug=true')).code).toBe(0);
    const watch = watchReleaseMoments(cluster.kubeconfigPath, 'openstack');
    await watch.listed;
    expect((await cli('update', v2)).code).toBe(0);
    const moments = await watch.done;
    expect([...moments.values()].filter((m) => m.specWritten !== undefined)).toEqual([]);
    expectAfterDependencies(moments, 'requested');
  }, 240_000);
});

describe('remove leaves no workload behind', () => {
  it('fails when an uninstall leaves a workload, naming it; once it is deleted, remove finishes and says nothing remains', async () => {
    const remove = await cli('remove', APP);
    expect(remove.code).toBe(1);
    expect(remove.stderr).toContain(
      "every HelmRelease is gone, but Flux's uninstall left what they installed: Deployment openstack/horizon-server (HelmRelease openstack/horizon, kept by its helm.sh/resource-policy: keep annotation)",
    );
    expect(remove.stderr).toContain(`kubectl delete deployment horizon-server -n openstack), then run flotilla remove ${APP} again to finish`);
    const failed = await show();
    expect(failed.state).toBe('remove-failed');
    expect(failed.history.at(-1)).toMatchObject({
      operation: 'remove',
      result: 'failed',
      reason: expect.stringContaining('Deployment openstack/horizon-server'),
    });
    expect(cluster.list('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'openstack')).toEqual([]);

    // Run again while it is still there: the same failure, from the labels Flux put on it (Helm's storage went with the uninstall).
    const again = await cli('remove', APP);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Deployment openstack/horizon-server (HelmRelease openstack/horizon, kept by its helm.sh/resource-policy: keep annotation)');

    await kubeCluster(await connect({ kubeconfig: cluster.kubeconfigPath })).objects.delete({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'horizon-server', namespace: 'openstack' },
    });
    const done = await cli('remove', APP);
    expect(done.code).toBe(0);
    expect(done.stderr).toMatch(/no workload the releases installed remains/);
    expect((await show()).state).toBe('uploaded');
  }, 240_000);
});
