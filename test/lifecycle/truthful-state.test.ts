/**
 * State that tells the truth, on the dev cluster TEST FIXTURE with the
 * default app: show and list after `--no-wait`, after a failed apply and
 * after an abort count progress from the releases and say what Flux is
 * still doing; an update killed half-way is resumed by update (apply says
 * so) with its post hooks and clean-up; remove refuses while a release is
 * suspended, resumes it under --force, and leaves no workload; delete
 * --purge deletes what delete otherwise keeps.
 */
import { describe, expect, it } from 'vitest';
import type { AppSummary, AppView } from '../../src/lifecycle/index.js';
import type { DevCluster } from '../support/dev-cluster/index.js';
import { APP, buildDefaultApp, expectAfterDependencies, flotilla, killAtFirstReady, useDevCluster, watchReleaseMoments, workloadsOf } from './support.js';

let cluster: DevCluster;
let v0: string;
let v1: string;
const cli = (...args: string[]) => flotilla(cluster.kubeconfigPath, args);
const show = async (): Promise<AppView> => JSON.parse((await cli('show', APP, '-o', 'json')).stdout) as AppView;
const HR = 'helm.toolkit.fluxcd.io/v2';
const REQUESTED_AT = 'reconcile.fluxcd.io/requestedAt';
const requestedAt = (name: string) =>
  (cluster.get(HR, 'HelmRelease', 'openstack', name)?.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.[REQUESTED_AT];

/** The view's progress is what its releases say: Ready ones counted, the one named as waited on not Ready. */
function expectProgressFromReleases(view: AppView): void {
  const ready = view.releases.filter((r) => r.state === 'ready');
  expect(view.running).toBe(false);
  expect(view.progress).toMatchObject({ ready: ready.length, total: view.releases.length });
  if (view.progress?.current) expect(ready.map((r) => r.name)).not.toContain(view.progress.current);
  else expect(ready.length).toBe(view.releases.length);
}

/**
 * show, again every 300 ms until `settled` holds of it or `timeoutMs` pass:
 * the state Flux converges to after an operation, not the moment after it
 * (on loaded cores Flux may not have said it yet). The caller asserts on
 * what it returns, so a state never reached fails there, naming it.
 */
async function showUntil(settled: (view: AppView) => boolean, timeoutMs = 120_000): Promise<AppView> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const view = await show();
    if (settled(view) || Date.now() > end) return view;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

const allReady = (view: AppView) => view.releases.every((r) => r.state === 'ready');

useDevCluster(
  { requeueDependencyMs: 250 },
  () => Promise.all([buildDefaultApp(), buildDefaultApp({ version: '25.03-1' })]),
  async (dev, built) => {
    cluster = dev;
    [v0, v1] = built;
    expect((await cli('upload', v0)).code).toBe(0);
  },
);

describe('state that tells the truth', () => {
  it('after --no-wait, show and list count progress from the releases, not from the run before', async () => {
    cluster.faults.defaultReadyDelayMs = 500;
    try {
      expect((await cli('apply', APP, '--no-wait')).code).toBe(0);
      const early = await show();
      expect(early.state).toBe('applying');
      expectProgressFromReleases(early);
      const done = await showUntil(allReady);
      expect(done.progress).toMatchObject({ ready: 12, total: 12, percent: 100 });
      const [listed] = (JSON.parse((await cli('list', '-o', 'json')).stdout) as { items: AppSummary[] }).items;
      expect(listed).toMatchObject({ name: APP, state: 'applying', progress: { ready: 12, percent: 100 } });
    } finally {
      cluster.faults.defaultReadyDelayMs = 0;
    }
    expect((await cli('apply', APP)).code).toBe(0);
  }, 240_000);

  it('writes each HelmRelease only once what it depends on is Ready for this apply (seen by a watch)', async () => {
    // New values for keystone and glance move no HelmRelease's generation: only the order of writes keeps glance behind keystone.
    await cli('override', 'set', APP, 'keystone', '--set', 'conf.keystone.DEFAULT.debug=true');
    await cli('override', 'set', APP, 'glance', '--set', 'conf.glance.DEFAULT.debug=true');
    const watch = watchReleaseMoments(cluster.kubeconfigPath, 'openstack');
    await watch.listed;
    expect((await cli('apply', APP)).code).toBe(0);
    expectAfterDependencies(await watch.done, 'requested');
  }, 240_000);

  it('after a failed apply, show names what Flux gave up on and counts what is Ready', async () => {
    await cli('override', 'set', APP, 'keystone', '--no-check', '--set', 'pod.replicas.api=many');
    try {
      const apply = await cli('apply', APP, '--timeout', '5m');
      expect(apply.code).toBe(1);
      // keystone's dependants, direct or through another, wait for it as Flux makes them wait: once Flux has looked at each.
      const dependants = ['cinder', 'clients', 'glance', 'horizon', 'neutron', 'nova', 'placement'];
      const gaveUp = /^keystone: Flux gave up — (Install|Upgrade)Failed: /;
      const waiting = /^(glance|placement|cinder|neutron|nova|horizon|clients): Flux is still reconciling — DependencyNotReady: /;
      const view = await showUntil(
        (v) =>
          gaveUp.test(v.flux[0] ?? '') &&
          v.flux.slice(1).every((line) => waiting.test(line)) &&
          dependants.every((name) => v.flux.some((line) => line.startsWith(`${name}: `))),
      );
      expect(view.state).toBe('apply-failed');
      expectProgressFromReleases(view);
      expect(view.progress?.current).toBe('keystone');
      expect(view.flux[0]).toMatch(gaveUp);
      for (const line of view.flux.slice(1)) expect(line).toMatch(waiting);
      expect(view.flux.map((line) => line.split(':')[0]).sort()).toEqual(['keystone', ...dependants].sort());
    } finally {
      await cli('override', 'delete', APP, 'keystone');
    }
    expect((await cli('apply', APP)).code).toBe(0);
  }, 240_000);

  it('override set warns about a key the chart does not know and refuses a value its schema forbids', async () => {
    const typo = await cli('override', 'set', APP, 'keystone', '--set', 'pod.replica.api=2');
    expect(typo.code).toBe(0);
    expect(typo.stderr).toContain(
      'warning: keystone: user overrides sets pod.replica, a key unknown to keystone/values.yaml and keystone/values.schema.json; did you mean pod.replicas?',
    );
    const strict = await cli('override', 'set', APP, 'keystone', '--strict', '--set', 'pod.replica.api=3');
    expect(strict.code).toBe(1);
    const invalid = await cli('override', 'set', APP, 'keystone', '--set', 'pod.replicas.api=many');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('flotilla: release keystone does not render with these overrides, so they were not stored:');
    expect(invalid.stderr).toContain("at '/pod/replicas/api': got string, want integer");
    // What the refused commands would have stored is not there: the typo'd value is.
    expect((await cli('override', 'show', APP, 'keystone', '-o', 'json')).stdout).toContain('"replica"');
    expect((await cli('override', 'delete', APP, 'keystone')).code).toBe(0);
    // A value the chart's schema marks secret (rabbitmq's Erlang cookie: writeOnly), whatever its key, is printed only when asked.
    const cookie = 'user-set-erlang-cookie-4711';
    const set = await cli('override', 'set', APP, 'rabbitmq', '--set', `endpoints.oslo_messaging.auth.erlang_cookie.value=${cookie}`, '-o', 'json');
    expect(set.code).toBe(0);
    expect(set.stdout).not.toContain(cookie);
    expect(set.stdout).toContain('<secret>');
    expect((await cli('override', 'show', APP, 'rabbitmq')).stdout).not.toContain(cookie);
    expect((await cli('override', 'show', APP, 'rabbitmq', '--show-secrets', '-o', 'yaml')).stdout).toContain(cookie);
    expect((await cli('override', 'delete', APP, 'rabbitmq')).code).toBe(0);
  }, 240_000);

  it('after abort, show says what Flux is still doing, and counts it when it is done', async () => {
    await cli('override', 'set', APP, 'nova', '--set', 'conf.nova.DEFAULT.debug=true');
    // Held until the test lets it go, however long the holder takes to see the abort (its next renewal) and stop.
    const slow = cluster.faults.slowRelease('nova', 600_000);
    const before = requestedAt('nova');
    const apply = cli('apply', APP);
    try {
      await cluster.waitFor(() => requestedAt('nova') !== before, 120_000);
      const abort = await cli('abort', APP);
      expect(abort.code).toBe(0);
      expect((await apply).code).toBe(1);
      const view = await show();
      expect(view.state).toBe('apply-failed');
      expect(view.history.at(-1)).toMatchObject({ operation: 'apply', result: 'aborted' });
      expectProgressFromReleases(view);
      expect(view.flux).toEqual([expect.stringMatching(/^nova: Flux is still reconciling/)]);
      slow.clear();
      const done = await showUntil(allReady);
      expect(done).toMatchObject({ state: 'apply-failed', progress: { ready: 12, percent: 100 }, flux: [] });
    } finally {
      slow.clear();
    }
    expect((await cli('apply', APP)).code).toBe(0);
  }, 240_000);

  it('an update killed half-way is resumed by update, with its post hooks and clean-up; apply says so', async () => {
    const slow = cluster.faults.slowRelease('nova', 4000);
    const said = await killAtFirstReady('update-child.ts', [cluster.kubeconfigPath, v1]);
    slow.clear();
    expect(await show(), `the update child said: ${said}`).toMatchObject({ state: 'updating', version: '25.03-1', previousVersion: '25.03-0' });
    const apply = await cli('apply', APP);
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain(
      `flotilla: ${APP}: the update from 25.03-0 to 25.03-1 did not finish (updating); finish it with flotilla update ${v1.split('/').at(-1)}`,
    );
    const update = await cli('update', v1);
    expect(update.code).toBe(0);
    expect(update.stderr).toContain('resuming the update from 25.03-0 to 25.03-1');
    expect(update.stderr).toContain('running update and apply post hooks');
    const view = await show();
    expect(view).toMatchObject({ state: 'applied', version: '25.03-1', previousVersion: null });
    // The refused apply closed the killed run's entry (it took the lock first) and added none of its own.
    expect(view.history.slice(-2).map((h) => [h.operation, h.result])).toEqual([
      ['update', 'killed'],
      ['update', 'succeeded'],
    ]);
    expect(cluster.get('v1', 'Secret', 'flotilla-system', `flotilla-bundle-${APP}-25.03-0`)).toBeUndefined();
  }, 240_000);

  it('remove refuses while a release is suspended; --force resumes it so Flux uninstalls it, and no workload remains', async () => {
    cluster.apply({ apiVersion: HR, kind: 'HelmRelease', metadata: { name: 'glance', namespace: 'openstack' }, spec: { suspend: true } });
    const refused = await cli('remove', APP);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('HelmRelease(s) openstack/glance are suspended');
    expect(refused.stderr).toContain('flux resume helmrelease glance -n openstack');
    const view = await show();
    expect(view.state).toBe('applied');
    expect(view.history.at(-1)).toMatchObject({ operation: 'remove', result: 'refused' });
    expect(cluster.get(HR, 'HelmRelease', 'openstack', 'glance')).toBeDefined();
    const forced = await cli('remove', APP, '--force');
    expect(forced.stderr).toContain('resuming the suspended HelmRelease openstack/glance so Flux uninstalls it');
    expect(forced.code).toBe(0);
    expect(workloadsOf(cluster, 'openstack')).toEqual([]);
  }, 240_000);

  it('delete --purge deletes the passwords and records delete otherwise keeps', async () => {
    const passwords = () => cluster.list('v1', 'Secret', 'openstack').filter((s) => (s.metadata as { name: string }).name.startsWith(`${APP}-password-`));
    expect(passwords().length).toBeGreaterThan(0);
    const deleted = await cli('delete', APP, '--purge');
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toMatch(new RegExp(`^${APP}: deleted\\npurged: .*Secret openstack/${APP}-password-`));
    expect(passwords()).toEqual([]);
  }, 240_000);
});
