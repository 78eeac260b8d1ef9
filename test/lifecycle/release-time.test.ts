/**
 * Each release's own time (schedule.ts), on the dev cluster TEST FIXTURE
 * with the real helm: a release is given its time from when it is written,
 * so a chain of slow releases, each within its own time, is waited for to
 * the end however long the chain takes; a release past its own time fails
 * with its name and what Flux last said of it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APP_LABEL, connect, kubeCluster, serverSideApply, type KubeClient, type KubeObject } from '../../src/kube/index.js';
import { ReleaseFailedError } from '../../src/lifecycle/index.js';
import { REQUESTED_AT } from '../../src/lifecycle/readiness.js';
import { waitForReleases, type ReleaseKey } from '../../src/lifecycle/releases.js';
import { tempDir } from '../support/app-fixture.js';
import type { DevCluster } from '../support/dev-cluster/index.js';
import { useDevCluster } from './support.js';

const NS = 'timed';
const APP = 'timed-app';
/** Slower than nothing, well within both the release's own time and its Helm timeout. */
const SLOW_MS = 4000;
const OWN_TIME_MS = 2 * SLOW_MS;
let cluster: DevCluster;
let client: KubeClient;

const helmRelease = (name: string, token: string, dependsOn: string[] = []): KubeObject => ({
  apiVersion: 'helm.toolkit.fluxcd.io/v2',
  kind: 'HelmRelease',
  metadata: { name, namespace: NS, labels: { [APP_LABEL]: APP }, annotations: { [REQUESTED_AT]: token } },
  spec: {
    interval: '10m',
    timeout: '1m',
    chart: { spec: { chart: 'slow', version: '1.0.0', sourceRef: { kind: 'HelmRepository', name: 'registry' } } },
    ...(dependsOn.length > 0 ? { dependsOn: dependsOn.map((d) => ({ name: d })) } : {}),
  },
});

/** Writes a chain of releases, each depending on the one before, each once the one before is Ready (as an apply does), and waits for them with OWN_TIME_MS each. */
async function applyChain(names: readonly string[], token: string): Promise<void> {
  const written = new Map<string, number>();
  const write = async (index: number) => {
    const name = names[index]!;
    await serverSideApply(client, [helmRelease(name, token, index > 0 ? [names[index - 1]!] : [])], { force: true });
    written.set(name, Date.now());
  };
  await write(0);
  let writing: Promise<void> = Promise.resolve();
  await waitForReleases(
    kubeCluster(client).objects,
    names.map((name): ReleaseKey => ({ name, namespace: NS })),
    {
      appName: APP,
      token,
      timeoutMs: 120_000,
      writtenAt: (release) => written.get(release.name),
      releaseTimeMs: () => OWN_TIME_MS,
      onReady: (release) => {
        const next = names.indexOf(release.name) + 1;
        if (next < names.length) writing = writing.then(() => write(next));
      },
    },
  );
  await writing;
}

useDevCluster(
  { requeueDependencyMs: 100 },
  async () => undefined,
  async (dev) => {
    cluster = dev;
    client = await connect({ kubeconfig: cluster.kubeconfigPath });
    const chart = join(tempDir('flotilla-release-time-'), 'slow');
    mkdirSync(join(chart, 'templates'), { recursive: true });
    writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: slow\nversion: 1.0.0\n');
    writeFileSync(join(chart, 'templates', 'config.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n');
    cluster.pushChart(chart);
    cluster.applyRegistrySource(NS);
    // The chart pulled once before the cases: what they time is the releases alone.
    await applyChain(['warm'], 'warm-up');
  },
  120_000,
);

describe("a release's own time", () => {
  it("counts from when the release is written: a chain longer than one release's time, each release within its own, is waited for to the end", async () => {
    const slow = ['a', 'b', 'c'].map((name) => cluster.faults.slowRelease(`${NS}/${name}`, SLOW_MS));
    try {
      // The chain takes at least 3 × SLOW_MS, more than OWN_TIME_MS: counted from the start of the wait, c would fail.
      await applyChain(['a', 'b', 'c'], 'chain-1');
      expect(cluster.releaseReady(NS, 'c')?.status).toBe('True');
    } finally {
      for (const fault of slow) fault.clear();
    }
  });

  it('fails a release past its own time with its name and what Flux last said of it', async () => {
    const slow = cluster.faults.slowRelease(`${NS}/e`, 3 * SLOW_MS);
    try {
      const failure = await applyChain(['d', 'e'], 'chain-2').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ReleaseFailedError);
      expect(failure).toMatchObject({ release: 'e', reason: 'Timeout' });
      expect((failure as Error).message).toMatch(
        /not Ready within its own time \(8s: .*\); Flux last said: Progressing: Running 'install' action with timeout of 1m0s/,
      );
    } finally {
      slow.clear();
    }
  });
});
