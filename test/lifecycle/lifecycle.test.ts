/**
 * The whole lifecycle of the default app against the dev cluster TEST
 * FIXTURE (API server + Flux simulation rendering with the real helm, the
 * real registry): upload, apply, show, overrides and re-apply, diff exit
 * codes, locks, a crash mid-apply, a refused remove, update and recovery,
 * remove, delete — and no password printed on the way.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { acquireLease, connect, kubeCluster, type KubeClient } from '../../src/kube/index.js';
import { applyApp, lockName, SYSTEM_NAMESPACE, type AppView } from '../../src/lifecycle/index.js';
import type { DevCluster } from '../support/dev-cluster/index.js';
import { APP, buildDefaultApp, flotilla, killAtFirstReady, ROOT, started, useDevCluster, workloadsOf } from './support.js';

let cluster: DevCluster;
let client: KubeClient;
let v0: string;
let v1: string;
let v2broken: string;
const cli = (...args: string[]) => flotilla(cluster.kubeconfigPath, args);
const show = async (): Promise<AppView> => JSON.parse((await cli('show', APP, '-o', 'json')).stdout) as AppView;
const secretText = (namespace: string, name: string, key: string): string => {
  const secret = cluster.get('v1', 'Secret', namespace, name) as { data?: Record<string, string> } | undefined;
  return Buffer.from(secret?.data?.[key] ?? '', 'base64').toString('utf8');
};

useDevCluster(
  { requeueDependencyMs: 250 },
  () =>
    Promise.all([
      buildDefaultApp(),
      buildDefaultApp({ version: '25.03-1' }),
      // A version with a keystone chart that cannot render.
      buildDefaultApp({
        version: '25.03-2',
        edit: (root) => {
          const chart = join(root, 'charts', 'keystone');
          writeFileSync(join(chart, 'Chart.yaml'), readFileSync(join(chart, 'Chart.yaml'), 'utf8').replace(/^version: .*$/m, 'version: 0.1.1'));
          writeFileSync(join(chart, 'templates', 'broken.yaml'), '{{ fail "keystone 0.1.1 cannot render" }}\n');
        },
      }),
    ]),
  async (dev, built) => {
    cluster = dev;
    client = await connect({ kubeconfig: cluster.kubeconfigPath });
    [v0, v1, v2broken] = built;
  },
);

describe('the default app on the dev cluster', () => {
  it('uploads, applies and shows every release Ready', async () => {
    const upload = await cli('upload', v0);
    expect(upload.stderr + upload.stdout).toContain(`${APP} 25.03-0: uploaded (charts in ${cluster.chartRepository})`);
    expect(upload.code).toBe(0);
    const apply = await cli('apply', APP, '--timeout', '5m');
    expect(apply.stderr).toContain('all 12 release(s) ready');
    expect(apply.code).toBe(0);
    const view = await show();
    expect(view).toMatchObject({ name: APP, version: '25.03-0', state: 'applied', progress: { ready: 12, total: 12, percent: 100 } });
    expect(view.releases).toHaveLength(12);
    for (const release of view.releases) expect(release).toMatchObject({ ready: true, reason: expect.stringMatching(/Succeeded$/) });
    expect(view.history.map((h) => [h.operation, h.result])).toEqual([
      ['upload', 'succeeded'],
      ['apply', 'succeeded'],
    ]);
    const repo = cluster.get('source.toolkit.fluxcd.io/v1', 'HelmRepository', 'openstack', 'starlingx') as { spec: Record<string, unknown> };
    expect(repo.spec).toMatchObject({ url: cluster.chartRepository, type: 'oci', insecure: true });
  });

  it('diff says no change (exit 0), then an override change (exit 1), and fails above 1', async () => {
    const same = await cli('diff', APP);
    expect(same).toMatchObject({ code: 0, stdout: `${APP}: no changes\n` });
    expect((await cli('override', 'set', APP, 'keystone', '--set', 'conf.keystone.DEFAULT.debug=true')).code).toBe(0);
    const changed = await cli('diff', APP, '-o', 'json');
    expect(changed.code).toBe(1);
    const report = JSON.parse(changed.stdout) as { releases: { name: string; change: string; values: unknown[]; objects: { object: string }[] }[] };
    const keystone = report.releases.find((r) => r.name === 'keystone');
    expect(keystone?.values).toEqual([{ path: 'conf.keystone.DEFAULT.debug', after: true }]);
    expect(keystone?.objects.length).toBeGreaterThan(0);
    expect(report.releases.filter((r) => r.change !== 'unchanged').map((r) => r.name)).toEqual(['keystone']);
    const missing = await cli('diff', 'no-such-app');
    expect(missing.code).toBeGreaterThan(1);
    expect(missing.stderr).toBe('flotilla: no app "no-such-app" in this cluster; upload it first (flotilla upload BUNDLE)\n');
  });

  it('applies the override change: the user layer reaches the system overrides Secret', async () => {
    const apply = await cli('apply', APP);
    expect(apply.code).toBe(0);
    expect(secretText('openstack', 'keystone-system-overrides', 'keystone-system-overrides.yaml')).toMatch(/debug: true/);
    expect((await cli('diff', APP)).code).toBe(0);
  });

  it('waits through an attempt Flux retries (retries: 3) and ends applied, saying which attempt', async () => {
    expect((await cli('override', 'set', APP, 'glance', '--set', 'conf.glance.DEFAULT.debug=true')).code).toBe(0);
    // A failure after Helm recorded the release (a failed wait or hook): counted against the retries, remediated, retried.
    const fault = cluster.faults.failRelease('openstack/glance', { times: 1, message: 'injected: glance fails once' });
    try {
      const apply = await cli('apply', APP, '--timeout', '5m');
      expect(apply.stderr).toContain(
        'upgrading glance: attempt 2 of 4, last: Helm upgrade failed for release openstack/osh-openstack-glance with chart glance@',
      );
      expect(apply.code).toBe(0);
      expect(fault.hits).toBe(1);
      expect((await show()).state).toBe('applied');
    } finally {
      fault.clear();
    }
  });

  it('never prints a password: not in show, diff, override show or the apply log', async () => {
    const password = secretText('openstack', `${APP}-password-mariadb-root`, 'password');
    expect(password.length).toBeGreaterThanOrEqual(16);
    // The password does reach the release, through its system overrides Secret.
    expect(secretText('openstack', 'mariadb-system-overrides', 'mariadb-system-overrides.yaml')).toContain(password);
    await cli('override', 'set', APP, 'mariadb', '--set', 'conf.tuning.max_connections=500');
    const outputs = await Promise.all([
      cli('show', APP),
      cli('show', APP, '-o', 'json'),
      cli('diff', APP),
      cli('diff', APP, '-o', 'json'),
      cli('override', 'show', APP, 'mariadb'),
      cli('apply', APP),
    ]);
    for (const output of outputs) {
      expect(output.stdout + output.stderr).not.toContain(password);
    }
    expect(outputs[3]?.code).toBe(1);
    expect(outputs[5]?.code).toBe(0);
    await cli('override', 'delete', APP, 'mariadb');
  });

  it('never prints a password the user set either, unless --show-secrets asks', async () => {
    const chosen = 'UserChosen-Pw-4242';
    const set = await cli('override', 'set', APP, 'mariadb', '--set', `endpoints.oslo_db.auth.admin.password=${chosen}`);
    try {
      expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: '' });
      const outputs = await Promise.all([
        cli('diff', APP),
        cli('diff', APP, '-o', 'json'),
        cli('override', 'show', APP, 'mariadb'),
        cli('show', APP, '-o', 'json'),
      ]);
      for (const output of outputs) expect(output.stdout + output.stderr).not.toContain(chosen);
      expect(set.stdout).not.toContain(chosen);
      expect(outputs[0]?.stdout).toContain('endpoints.oslo_db.auth.admin.password: "<secret>" → "<secret>"');
      expect((await cli('override', 'show', APP, 'mariadb', '--show-secrets')).stdout).toContain(chosen);
      expect((await cli('diff', APP, '--show-secrets')).stdout).toContain(chosen);
    } finally {
      await cli('override', 'delete', APP, 'mariadb');
    }
  });

  it('leaves no readable password under $TMPDIR when an apply is stopped (SIGINT) or killed (SIGKILL)', async () => {
    const password = secretText('openstack', `${APP}-password-mariadb-root`, 'password');
    expect(password.length).toBeGreaterThanOrEqual(16);
    for (const signal of ['SIGINT', 'SIGKILL'] as const) {
      const tmp = mkdtempSync(join(tmpdir(), 'flotilla-killed-apply-'));
      try {
        const child = started(
          spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'lifecycle', 'apply-child.ts'), cluster.kubeconfigPath, APP], {
            cwd: ROOT,
            env: { ...process.env, TMPDIR: tmp },
            stdio: ['ignore', 'pipe', 'pipe'],
          }),
        );
        const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
        let stoppedAt: string | undefined;
        // Stopped right after the objects were rendered, before they are written: when the manifests folder exists.
        for await (const line of createInterface(child.stdout)) {
          const event = JSON.parse(line) as { type: string; message?: string };
          if (event.type === 'step' && event.message?.startsWith('server-side apply')) {
            stoppedAt = event.message;
            child.kill(signal);
            break;
          }
        }
        await exited;
        expect(stoppedAt, signal).toBeDefined();
        const files = readdirSync(tmp, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
        // SIGKILL leaves the kustomize folder behind (the next run sweeps it): it holds the app's files, and no password.
        if (signal === 'SIGKILL') expect(files.map((e) => e.name)).toContain('mariadb-system-overrides.yaml');
        const holding = files.filter((e) => readFileSync(join(e.parentPath, e.name)).includes(password)).map((e) => join(e.parentPath, e.name));
        expect(holding, signal).toEqual([]);
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
      // The stopped run's 2 s lock lapses; the next apply takes it over.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect((await applyApp(kubeCluster(client), APP, {})).state).toBe('applied');
    }
  });

  it("fails fast on a bad override, with Helm's message and the layer that set the value", async () => {
    // --no-check: override set itself would refuse the value (truthful-state.test.ts); here the apply meets it.
    await cli('override', 'set', APP, 'keystone', '--no-check', '--reuse-values', '--set', 'pod.replicas.api=many');
    try {
      const apply = await cli('apply', APP, '--timeout', '10m');
      expect(apply.code).toBe(1);
      expect(apply.stderr).toContain('flotilla: release keystone failed: UpgradeFailed:');
      expect(apply.stderr).toContain("at '/pod/replicas/api': got string, want integer");
      expect(apply.stderr).toContain(`pod.replicas.api = "many" set by user (flotilla override show ${APP} keystone)`);
      const view = await show();
      expect(view.state).toBe('apply-failed');
      expect(view.history.at(-1)).toMatchObject({ operation: 'apply', result: 'failed', reason: expect.stringContaining('release keystone failed') });
      // Flux keeps retrying (remediation) after flotilla reported the failure: not Ready either way.
      expect(view.releases.find((r) => r.name === 'keystone')?.ready).not.toBe(true);
    } finally {
      await cli('override', 'set', APP, 'keystone', '--set', 'conf.keystone.DEFAULT.debug=true');
    }
    expect((await cli('apply', APP)).code).toBe(0);
  });

  it('refuses a second operation while one holds the lock, naming the holder and since when', async () => {
    const held = await acquireLease(client, { namespace: SYSTEM_NAMESPACE, name: lockName(APP), operation: 'apply', holder: 'alice@ops pid 42' });
    try {
      const apply = await cli('apply', APP);
      expect(apply.code).toBe(1);
      expect(apply.stderr).toMatch(new RegExp(`^flotilla: ${lockName(APP)} is locked by alice@ops pid 42 \\(apply\\) since \\d{4}-\\d\\d-\\d\\dT`));
    } finally {
      await held.release();
    }
  });

  it('takes over a lock whose holder stopped renewing it', async () => {
    const past = new Date(Date.now() - 60_000).toISOString();
    cluster.apply({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: lockName(APP), namespace: SYSTEM_NAMESPACE, annotations: { 'flotilla.starlingx.io/operation': 'apply' } },
      spec: { holderIdentity: 'bob@gone pid 7', leaseDurationSeconds: 2, acquireTime: past, renewTime: past },
    });
    const apply = await cli('apply', APP);
    expect(apply.code).toBe(0);
    expect(apply.stderr).toContain('warning: took over the expired lock of bob@gone pid 7 (apply); its run is gone');
  });

  it('finishes an apply killed half-way on the next run', async () => {
    await cli('override', 'set', APP, 'glance', '--set', 'conf.glance.DEFAULT.debug=true');
    const slow = cluster.faults.slowRelease('nova', 4000);
    await killAtFirstReady('apply-child.ts', [cluster.kubeconfigPath, APP]);
    slow.clear();
    expect((await show()).state).toBe('applying');
    // The next run watches the killed run's 2 s lock stay unrenewed for 2 s on its own clock, takes it over and converges.
    const record = await applyApp(kubeCluster(client), APP, {});
    expect(record.state).toBe('applied');
    const view = await show();
    expect(view.releases.every((r) => r.ready === true)).toBe(true);
    expect(view.history.slice(-2).map((h) => [h.operation, h.result ?? 'unfinished'])).toEqual([
      ['apply', 'killed'],
      ['apply', 'succeeded'],
    ]);
    expect(view.history.at(-2)?.reason).toMatch(/^its run \(crashing-run\) ended without finishing; last seen \d{4}-\d\d-\d\dT/);
    expect(secretText('openstack', 'glance-system-overrides', 'glance-system-overrides.yaml')).toMatch(/debug: true/);
  });

  it("refuses to remove while nova reports compute instances, with the plugin's reason", async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${APP}-records`, namespace: 'openstack' },
      data: { 'nova.instances': '["vm-1"]' },
    });
    const remove = await cli('remove', APP);
    expect(remove.code).toBe(1);
    expect(remove.stderr).toContain('1 compute instance(s) still exist (vm-1); delete or migrate them first');
    const view = await show();
    expect(view.state).toBe('applied');
    expect(view.history.at(-1)).toMatchObject({ operation: 'remove', result: 'refused' });
    expect(view.releases.every((r) => r.ready === true)).toBe(true);
    cluster.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${APP}-records`, namespace: 'openstack' }, data: { 'nova.instances': '[]' } });
  });

  it('updates to a new version, carrying the user overrides', async () => {
    const update = await cli('update', v1);
    expect(update.code).toBe(0);
    const view = await show();
    expect(view).toMatchObject({ version: '25.03-1', state: 'applied', previousVersion: null });
    expect(view.history.at(-1)).toMatchObject({ operation: 'update', version: '25.03-1', result: 'succeeded', reason: 'updated from 25.03-0' });
    expect((await cli('override', 'show', APP, 'keystone', '-o', 'json')).stdout).toContain('"debug": true');
  });

  it('recovers to the old version when an update fails, and says why', async () => {
    const update = await cli('update', v2broken);
    expect(update.code).toBe(1);
    expect(update.stderr).toContain(`flotilla: update of ${APP} to 25.03-2 failed: release keystone failed`);
    expect(update.stderr).toContain(`recovered: ${APP} is back at 25.03-1, applied`);
    const view = await show();
    expect(view).toMatchObject({ version: '25.03-1', state: 'applied' });
    expect(view.history.slice(-2)).toMatchObject([
      { operation: 'update', version: '25.03-2', result: 'failed', reason: expect.stringContaining('keystone 0.1.1 cannot render') },
      { operation: 'recover', version: '25.03-1', result: 'recovered', reason: expect.stringContaining('after the update to 25.03-2 failed') },
    ]);
    expect(view.releases.every((r) => r.ready === true)).toBe(true);
  });

  it('removes the releases in reverse dependency order, then deletes the app', async () => {
    const remove = await cli('remove', APP);
    expect(remove.code).toBe(0);
    const order = [...remove.stderr.matchAll(/deleting HelmRelease openstack\/(\S+)/g)].map((m) => m[1] as string);
    expect(order.indexOf('nova')).toBeLessThan(order.indexOf('keystone'));
    expect(order.indexOf('keystone')).toBeLessThan(order.indexOf('mariadb'));
    expect(cluster.list('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'openstack')).toEqual([]);
    // Checked, and said: no workload the releases installed is left.
    expect(workloadsOf(cluster, 'openstack')).toEqual([]);
    expect(Number(/no workload the releases installed remains \((\d+) objects of their Helm manifests checked\)/.exec(remove.stderr)?.[1])).toBeGreaterThan(12);
    expect((await show()).history.at(-1)).toMatchObject({ operation: 'remove', result: 'succeeded' });
    expect((await show()).state).toBe('uploaded');
    expect((await cli('delete', APP)).code).toBe(0);
    expect(JSON.parse((await cli('list', '-o', 'json')).stdout)).toEqual({ apiVersion: 'flotilla/v1', kind: 'AppList', items: [] });
    expect(cluster.list('v1', 'Secret', SYSTEM_NAMESPACE).map((s) => (s as { metadata: { name: string } }).metadata.name)).toEqual([]);
  });
});
