/**
 * Lifecycle test support: the repository's default app built as tarballs
 * (at its own version or another), and the CLI run against the dev cluster
 * TEST FIXTURE the way a user runs it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { connect, watchUntil, type KubeObject } from '../../src/kube/index.js';
import { tempDir } from '../support/app-fixture.js';
import { startDevCluster, type DevCluster, type DevClusterOptions } from '../support/dev-cluster/index.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const APP = 'flotilla-openstack';
const APP_PARTS = ['charts', 'fluxcd', 'overrides', 'plugins', 'policies'];

/** The default app built as a tarball; `version` replaces app_version, `edit` changes files of the copy first. */
export async function buildDefaultApp(options: { version?: string; edit?: (root: string) => void } = {}): Promise<string> {
  const root = tempDir('flotilla-lifecycle-app-');
  for (const part of APP_PARTS) cpSync(join(ROOT, part), join(root, part), { recursive: true });
  if (options.version) {
    const file = join(root, 'fluxcd', 'metadata.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^app_version: .*$/m, `app_version: ${options.version}`));
  }
  options.edit?.(root);
  return (await buildApp(root, { outDir: tempDir('flotilla-lifecycle-out-'), cacheDir: false })).file;
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Children a test started that still run. */
const running = new Set<ChildProcess>();

/** Notes a child a test started, so that `stopStarted` ends it if the test does not wait for it (a failure, a time-out). */
export function started<T extends ChildProcess>(child: T): T {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/**
 * Ends every child a test started that still runs (call it in afterEach):
 * SIGTERM, as a user's Ctrl-C, so an operation gives its lock back; SIGKILL
 * for one still there after 10 s. No operation outlives its test.
 */
export async function stopStarted(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      const exited = new Promise<void>((done) => (child.exitCode !== null || child.signalCode !== null ? done() : child.once('exit', () => done())));
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(kill);
    }),
  );
}

/** Runs the shipped CLI (dist/cli/flotilla.cjs; `npm test` builds it) with KUBECONFIG set. */
export function flotilla(kubeconfig: string, args: readonly string[]): Promise<CliResult> {
  return new Promise((done) => {
    started(
      execFile(
        process.execPath,
        [join(ROOT, 'dist', 'cli', 'flotilla.cjs'), ...args],
        { env: { ...process.env, KUBECONFIG: kubeconfig }, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          done({ code, stdout, stderr });
        },
      ),
    );
  });
}

/**
 * Runs an operation in a child (test/lifecycle/<script>) and kills it with
 * SIGKILL at its first `release-ready` event: a run that dies half-way, as
 * kill -9 leaves it. Resolves with what the child said on stderr.
 */
export async function killAtFirstReady(script: string, args: readonly string[]): Promise<string> {
  const child = started(
    spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'lifecycle', script), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  const exited = new Promise<void>((done) => child.on('exit', () => done()));
  let said = '';
  child.stderr.on('data', (chunk: Buffer) => (said += chunk.toString('utf8')));
  for await (const line of createInterface(child.stdout)) {
    if ((JSON.parse(line) as { type: string }).type === 'release-ready') {
      child.kill('SIGKILL');
      break;
    }
  }
  await exited;
  return said;
}

/**
 * The set-up every dev-cluster test file shares: before its tests, a dev
 * cluster started while `prepare` runs (building the tarballs it needs),
 * then `ready` given both (the file keeps them, uploads, connects); after
 * each test the children it started are stopped; after all, the cluster.
 */
export function useDevCluster<T>(
  options: DevClusterOptions,
  prepare: () => Promise<T>,
  ready: (cluster: DevCluster, prepared: T) => void | Promise<void>,
  timeoutMs = 300_000,
): void {
  let cluster: DevCluster | undefined;
  beforeAll(async () => {
    const [started, prepared] = await Promise.all([startDevCluster(options).then((c) => (cluster = c)), prepare()]);
    await ready(started, prepared);
  }, timeoutMs);
  afterEach(stopStarted);
  afterAll(async () => {
    await stopStarted();
    await cluster?.stop();
  });
}

const HELM_RELEASE = 'helm.toolkit.fluxcd.io/v2';
const REQUESTED_AT = 'reconcile.fluxcd.io/requestedAt';

type WatchedRelease = KubeObject & {
  spec?: { dependsOn?: { name: string }[] };
  status?: { lastHandledReconcileAt?: string; observedGeneration?: number; conditions?: { type: string; status: string }[] };
};

/**
 * When, in the order a watch saw them, each HelmRelease's spec was written
 * (its generation moved), it was asked to reconcile (a new requestedAt) and
 * it was Ready for that request as helm-controller's dependency check sees
 * it (the request handled, Ready=True, observedGeneration == generation).
 */
export interface ReleaseMoments {
  specWritten?: number;
  requested?: number;
  ready?: number;
  dependsOn: string[];
}

/**
 * Watches the HelmReleases of `namespace` through an operation: `listed`
 * resolves once the watch has seen them as they were before (start the
 * operation then), `done` with each release's moments once every one is
 * Ready for the operation.
 */
export function watchReleaseMoments(kubeconfig: string, namespace: string): { listed: Promise<void>; done: Promise<Map<string, ReleaseMoments>> } {
  const before = new Map<string, { generation?: number; token?: string }>();
  const moments = new Map<string, ReleaseMoments>();
  let seen = 0;
  let listed!: () => void;
  const isListed = new Promise<void>((resolve) => (listed = resolve));
  const done = connect({ kubeconfig }).then((client) =>
    watchUntil<WatchedRelease, Map<string, ReleaseMoments>>(
      client,
      { apiVersion: HELM_RELEASE, kind: 'HelmRelease', namespace },
      (objects, change) => {
        if (change.type === 'LIST') {
          for (const o of objects.values()) {
            before.set(o.metadata.name, { generation: o.metadata.generation, token: o.metadata.annotations?.[REQUESTED_AT] });
            moments.set(o.metadata.name, { dependsOn: [] });
          }
          listed();
          return undefined;
        }
        const o = change.object!;
        const was = before.get(o.metadata.name);
        const at = moments.get(o.metadata.name);
        if (!was || !at) return undefined;
        at.dependsOn = (o.spec?.dependsOn ?? []).map((d) => d.name);
        const token = o.metadata.annotations?.[REQUESTED_AT];
        const requested = token !== was.token;
        if (at.specWritten === undefined && (o.metadata.generation ?? 0) > (was.generation ?? 0)) at.specWritten = seen++;
        if (at.requested === undefined && requested) at.requested = seen++;
        const ready =
          requested &&
          o.status?.lastHandledReconcileAt === token &&
          o.status?.observedGeneration === o.metadata.generation &&
          o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        if (at.ready === undefined && ready) at.ready = seen++;
        return [...moments.values()].every((m) => m.ready !== undefined) ? moments : undefined;
      },
      { timeoutMs: 280_000, waitingFor: `every HelmRelease in ${namespace} Ready for the operation` },
    ),
  );
  // Until the caller awaits it, a failure must not go unhandled.
  done.catch(() => listed());
  return { listed: isListed, done };
}

/**
 * No release's `moment` (its spec written, or its request) came before each
 * of its dependencies was Ready for the operation; and every release had
 * that moment, so the order was tested, not assumed.
 */
export function expectAfterDependencies(moments: ReadonlyMap<string, ReleaseMoments>, moment: 'specWritten' | 'requested'): void {
  const story = [...moments].map(([name, m]) => `${name}: ${JSON.stringify(m)}`).join('; ');
  for (const [name, m] of moments) {
    expect(m[moment], `${name} ${moment}: ${story}`).toBeDefined();
    for (const dependency of m.dependsOn)
      expect(m[moment]!, `${name} ${moment} after ${dependency} Ready: ${story}`).toBeGreaterThan(moments.get(dependency)?.ready ?? Infinity);
  }
}

/** Workloads (as `Kind namespace/name`) helm-controller installed for a HelmRelease of `namespace`: what must be gone after remove. */
export function workloadsOf(cluster: DevCluster, namespace: string): string[] {
  const kinds = [
    ['apps/v1', 'Deployment'],
    ['apps/v1', 'StatefulSet'],
    ['apps/v1', 'DaemonSet'],
    ['batch/v1', 'Job'],
    ['batch/v1', 'CronJob'],
    ['v1', 'Service'],
  ] as const;
  return kinds.flatMap(([apiVersion, kind]) =>
    cluster
      .list(apiVersion, kind)
      .map((o) => o.metadata as { name: string; namespace?: string; labels?: Record<string, string> })
      .filter((m) => m.labels?.['helm.toolkit.fluxcd.io/namespace'] === namespace)
      .map((m) => `${kind} ${m.namespace}/${m.name}`),
  );
}
