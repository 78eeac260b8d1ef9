/**
 * The lifecycle paths beyond the main walk-through, on the dev cluster TEST
 * FIXTURE with the real helm: charts delivered to a Helm HTTP repository,
 * an apply mode of the kustomize operator, `abort` through the CLI, an
 * update refused by `from_versions`, releases only the old version had
 * (kept by a recovery, removed by a successful update), and an update that
 * fails under `update_failure_no_rollback`.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockName, SYSTEM_NAMESPACE, type AppView } from '../../src/lifecycle/index.js';
import type { DevCluster } from '../support/dev-cluster/index.js';
import { APP, buildDefaultApp, flotilla, ROOT, started, useDevCluster, type CliResult } from './support.js';

let cluster: DevCluster;
const bundles: Record<string, string> = {};
const cli = (...args: string[]) => flotilla(cluster.kubeconfigPath, args);
const show = async (): Promise<AppView> => JSON.parse((await cli('show', APP, '-o', 'json')).stdout) as AppView;
const helmReleases = () =>
  cluster
    .list('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'openstack')
    .map((r) => (r as { metadata: { name: string } }).metadata.name)
    .sort();
const ALL = ['cinder', 'clients', 'glance', 'horizon', 'keystone', 'mariadb', 'memcached', 'neutron', 'nova', 'ovn', 'placement', 'rabbitmq'];

/** A full (not partial) mode `lean` without the dashboard and the clients. */
const KUSTOMIZE_OPERATOR = `import { KustomizeOperator, type ReleaseRef } from 'flotilla/plugin';
export default class Modes extends KustomizeOperator {
  override readonly modes = ['lean'];
  override isEnabled(release: ReleaseRef, mode: string): boolean {
    return mode !== 'lean' || !['horizon', 'clients'].includes(release.name);
  }
  override isPartial(): boolean {
    return false;
  }
}
`;

const edit = (root: string, file: string, change: (text: string) => string) => writeFileSync(join(root, file), change(readFileSync(join(root, file), 'utf8')));
const withModes = (root: string) => writeFileSync(join(root, 'plugins', '005_modes.ts'), KUSTOMIZE_OPERATOR);
const withoutDashboard = (root: string) =>
  edit(root, 'overrides/deployment.yaml', (t) =>
    t.replace(
      'services: [identity, image, block-storage, compute, networking, dashboard, clients]',
      'services: [identity, image, block-storage, compute, networking, clients]',
    ),
  );
/** keystone at a chart version that cannot render. */
const brokenKeystone = (version: string) => (root: string) => {
  edit(root, 'charts/keystone/Chart.yaml', (t) => t.replace(/^version: .*$/m, `version: ${version}`));
  writeFileSync(join(root, 'charts', 'keystone', 'templates', 'broken.yaml'), `{{ fail "keystone ${version} cannot render" }}\n`);
};

useDevCluster(
  { requeueDependencyMs: 250 },
  () =>
    Promise.all([
      buildDefaultApp({ edit: withModes }),
      // Accepts updates from 24.09 only.
      buildDefaultApp({ version: '25.03-1', edit: (root) => edit(root, 'fluxcd/metadata.yaml', (t) => t.replace('    - "^25\\\\.03-[0-9]+$"\n', '')) }),
      buildDefaultApp({ version: '25.03-2', edit: (root) => (withoutDashboard(root), brokenKeystone('0.1.1')(root)) }),
      // Does not keep user overrides.
      buildDefaultApp({
        version: '25.03-3',
        edit: (root) => (
          withoutDashboard(root),
          edit(root, 'fluxcd/metadata.yaml', (t) => t.replace('maintain_user_overrides: true', 'maintain_user_overrides: false'))
        ),
      }),
      buildDefaultApp({
        version: '25.03-4',
        edit: (root) => (
          withoutDashboard(root),
          brokenKeystone('0.1.2')(root),
          edit(root, 'fluxcd/metadata.yaml', (t) => t.replace('update_failure_no_rollback: false', 'update_failure_no_rollback: true'))
        ),
      }),
    ]),
  (dev, built) => {
    cluster = dev;
    [bundles.modes, bundles.onlyFrom2409, bundles.brokenNoDashboard, bundles.noDashboard, bundles.brokenNoRollback] = built;
  },
);

describe('lifecycle gaps on the dev cluster', () => {
  it('delivers the charts to a Helm HTTP repository: index.yaml and archives in its folder, the HelmRepository of type default', async () => {
    const upload = await cli('upload', bundles.modes!, '--chart-repo', cluster.httpRepo.url, '--chart-repo-dir', cluster.httpRepo.dir);
    expect(upload).toMatchObject({ code: 0, stdout: `${APP} 25.03-0: uploaded (charts in ${cluster.httpRepo.url})\n` });
    const index = readFileSync(join(cluster.httpRepo.dir, 'index.yaml'), 'utf8');
    for (const chart of ALL) expect(index).toContain(`${chart}:`);
    expect(existsSync(join(cluster.httpRepo.dir, 'keystone-0.1.0.tgz'))).toBe(true);
    const apply = await cli('apply', APP, '--timeout', '5m');
    expect(apply.stderr).toContain('all 12 release(s) ready');
    expect(apply.code).toBe(0);
    const repo = cluster.get('source.toolkit.fluxcd.io/v1', 'HelmRepository', 'openstack', 'starlingx') as { spec: Record<string, unknown> };
    expect(repo.spec.url).toBe(cluster.httpRepo.url);
    expect(repo.spec.type ?? 'default').toBe('default');
    expect(repo.spec.insecure).toBeUndefined();
    expect((await show()).releases.every((r) => r.ready === true)).toBe(true);
  });

  it('applies a mode of the kustomize operator: the releases it turns off are removed after the apply', async () => {
    const lean = await cli('apply', APP, '--mode', 'lean');
    expect(lean.code).toBe(0);
    expect(lean.stderr).toContain('removing horizon: the plan no longer has it');
    expect(helmReleases()).toEqual(ALL.filter((r) => r !== 'horizon' && r !== 'clients'));
    expect(await show()).toMatchObject({ state: 'applied', mode: 'lean', progress: { ready: 10, total: 10 } });
    // A mode the app does not know: a usage error before any hook runs, the state as it was.
    const unknown = await cli('apply', APP, '--mode', 'upgrade');
    expect(unknown).toMatchObject({ code: 2, stderr: 'flotilla: unknown apply mode "upgrade"; this app knows: normal, lean\n' });
    expect(await show()).toMatchObject({ state: 'applied', mode: 'lean' });
    expect((await cli('apply', APP, '--mode', 'normal')).code).toBe(0);
    expect(helmReleases()).toEqual(ALL);
  });

  it('draws the progress bar on a terminal and ends with a clean final line', async () => {
    // util-linux script(1) runs the CLI on a pseudo-terminal and copies what it drew to stdout.
    const command = [process.execPath, join(ROOT, 'dist', 'cli', 'flotilla.cjs'), 'apply', APP].map((a) => `'${a}'`).join(' ');
    const drawn = await new Promise<string>((done, fail) =>
      started(
        execFile('script', ['-qec', command, '/dev/null'], { env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath } }, (error, stdout) =>
          error ? fail(error) : done(stdout),
        ),
      ),
    );
    const bars = [...drawn.matchAll(/\r\x1b\[K\[([#.]{24})\] (\d+)\/12 ready(?:, waiting for (\w+))? \(\d+s\)/g)];
    expect(bars.length).toBeGreaterThan(1);
    expect(bars.some((b) => b[3] !== undefined)).toBe(true);
    expect(bars.at(-1)?.[2]).toBe('12');
    // No plain per-release lines on a terminal; the last bar is erased, then only whole lines follow, the outcome last.
    expect(drawn).not.toMatch(/release \w+ ready \(/);
    const end = drawn.slice(drawn.lastIndexOf('\x1b[K'));
    expect(end).toMatch(/^\x1b\[K(?:[^\r\n\x1b]+\r\n)+$/);
    expect(end.endsWith(`\r\n${APP} 25.03-0: applied\r\n`)).toBe(true);
  });

  it('aborts an apply in progress through the CLI: state and history say so, the lock is released', async () => {
    await cli('override', 'set', APP, 'glance', '--set', 'conf.glance.DEFAULT.debug=true');
    const slow = cluster.faults.slowRelease('glance', 30_000);
    try {
      const child = started(
        spawn(process.execPath, [join(ROOT, 'dist', 'cli', 'flotilla.cjs'), 'apply', APP], {
          env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath },
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const applied = new Promise<CliResult>((done) => child.on('close', (code) => done({ code: code ?? -1, stdout: '', stderr })));
      await cluster.waitFor(() => cluster.get('coordination.k8s.io/v1', 'Lease', SYSTEM_NAMESPACE, lockName(APP)) !== undefined, 60_000);
      const abort = await cli('abort', APP);
      expect(abort).toMatchObject({ code: 0, stdout: expect.stringMatching(new RegExp(`^${APP}: asked \\S+@\\S+ pid \\d+ \\(apply\\) to stop\\n$`)) });
      const result = await applied;
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/flotilla: [^\n]*abort/);
      const view = await show();
      expect(view.state).toBe('apply-failed');
      expect(view.history.at(-1)).toMatchObject({ operation: 'apply', result: 'aborted', reason: expect.stringContaining('abort') });
      expect(cluster.get('coordination.k8s.io/v1', 'Lease', SYSTEM_NAMESPACE, lockName(APP))).toBeUndefined();
    } finally {
      slow.clear();
    }
    expect((await cli('apply', APP)).code).toBe(0);
  }, 120_000);

  it('fails at once on a suspended release instead of taking its old Ready for this apply', async () => {
    const suspend = (suspended: boolean) =>
      cluster.apply({
        apiVersion: 'helm.toolkit.fluxcd.io/v2',
        kind: 'HelmRelease',
        metadata: { name: 'keystone', namespace: 'openstack' },
        spec: { suspend: suspended },
      });
    suspend(true);
    try {
      await cli('override', 'set', APP, 'keystone', '--set', 'conf.keystone.DEFAULT.debug=true');
      const apply = await cli('apply', APP, '--timeout', '5m');
      expect(apply.code).toBe(1);
      expect(apply.stderr).toContain(
        'flotilla: release keystone failed: Suspended: spec.suspend is true: Flux ignores this apply until the release is resumed (flux resume helmrelease keystone -n openstack)',
      );
      expect((await show()).history.at(-1)).toMatchObject({ operation: 'apply', result: 'failed', reason: expect.stringContaining('Suspended') });
    } finally {
      suspend(false);
    }
    expect((await cli('apply', APP)).code).toBe(0);
    expect(cluster.releaseReady('openstack', 'keystone')?.status).toBe('True');
  });

  it('refuses an update from a version the new bundle does not accept (from_versions), changing nothing', async () => {
    const before = await show();
    const stored = cluster.list('v1', 'Secret', SYSTEM_NAMESPACE).map((s) => (s as { metadata: { name: string } }).metadata.name);
    const update = await cli('update', bundles.onlyFrom2409!);
    expect(update).toMatchObject({ code: 1, stdout: '' });
    expect(update.stderr).toBe(
      `flotilla: ${APP} 25.03-1 may update only from versions matching ^24\\.09-[0-9]+$ (upgrades.from_versions); the cluster has 25.03-0\n`,
    );
    expect(await show()).toEqual(before);
    expect(cluster.list('v1', 'Secret', SYSTEM_NAMESPACE).map((s) => (s as { metadata: { name: string } }).metadata.name)).toEqual(stored);
  });

  it('keeps the releases only the old version has when a failed update is recovered', async () => {
    const update = await cli('update', bundles.brokenNoDashboard!);
    expect(update.code).toBe(1);
    expect(update.stderr).toContain(`recovered: ${APP} is back at 25.03-0, applied`);
    expect(helmReleases()).toEqual(ALL);
    const view = await show();
    expect(view).toMatchObject({ version: '25.03-0', state: 'applied' });
    expect(view.releases.every((r) => r.ready === true)).toBe(true);
  });

  it('refuses an update to a version that does not keep user overrides, naming the charts whose overrides it would drop, changing nothing', async () => {
    const before = await show();
    const refused = await cli('update', bundles.noDashboard!);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe(
      `flotilla: ${APP} 25.03-3 does not keep user overrides (maintain_user_overrides is false): the update would drop those of glance, keystone (flotilla override show ${APP} CHART); to update without them: --drop-user-overrides\n`,
    );
    expect(await show()).toEqual(before);
    expect((await cli('override', 'show', APP, 'keystone', '-o', 'json')).stdout).toContain('"debug": true');
  });

  it('with --drop-user-overrides, updates without them, and removes the releases the new version no longer has', async () => {
    const update = await cli('update', bundles.noDashboard!, '--drop-user-overrides');
    expect(update.code).toBe(0);
    expect(update.stderr).toContain('removing horizon: the plan no longer has it');
    expect(helmReleases()).toEqual(ALL.filter((r) => r !== 'horizon'));
    expect(cluster.get('v1', 'Secret', 'openstack', 'horizon-system-overrides')).toBeUndefined();
    const view = await show();
    expect(view).toMatchObject({ version: '25.03-3', state: 'applied' });
    expect(view.history.at(-1)).toMatchObject({ operation: 'update', result: 'succeeded', reason: 'updated from 25.03-0' });
    expect((await cli('override', 'show', APP, 'keystone', '-o', 'json')).stdout).not.toContain('debug');
  });

  it('leaves a failed update failed on the new version under update_failure_no_rollback, and says why', async () => {
    const update = await cli('update', bundles.brokenNoRollback!);
    expect(update.code).toBe(1);
    expect(update.stderr).toContain(`flotilla: update of ${APP} to 25.03-4 failed: release keystone failed`);
    expect(update.stderr).toContain('not recovered to 25.03-3: the new version sets update_failure_no_rollback');
    expect(update.stderr).not.toContain('recovering');
    const view = await show();
    expect(view).toMatchObject({ version: '25.03-4', state: 'apply-failed' });
    expect(view.history.at(-1)).toMatchObject({
      operation: 'update',
      version: '25.03-4',
      result: 'failed',
      reason: expect.stringContaining('not recovered to 25.03-3 (update_failure_no_rollback)'),
    });
    expect(view.history.some((h) => h.operation === 'recover' && h.version === '25.03-3')).toBe(false);
    expect(view.releases.find((r) => r.name === 'keystone')?.ready).not.toBe(true);
  });
});
