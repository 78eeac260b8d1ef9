/**
 * The staged update on the dev cluster TEST FIXTURE (docs/versions.md,
 * "Staged update"), on a small app of five one-Deployment charts whose
 * update phases are database (db) → messaging (mq, whose image no release
 * changes) → cache (a release the spec leaves off) → control-plane (the
 * rest: api) → dataplane (compute, and api's agent image). What Flux is
 * asked to do is read from a watch of the HelmReleases: every change of a
 * release's reconcile request, with the phase its token names.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { connect, recordSecretName, watchUntil, type KubeClient, type KubeObject } from '../../src/kube/index.js';
import { HELM_RELEASE_API } from '../../src/flux/index.js';
import { SYSTEM_NAMESPACE, type AppView } from '../../src/lifecycle/index.js';
import { decodeRecord, type AppRecord } from '../../src/lifecycle/record.js';
import { tempDir, writeFiles, type Files } from '../support/app-fixture.js';
import type { DevCluster } from '../support/dev-cluster/index.js';
import { flotilla, ROOT, useDevCluster } from './support.js';

const APP = 'phased';
const NAMESPACE = 'phased';
/** Image fields by chart: each a Deployment of its own. */
const CHARTS: Record<string, readonly string[]> = { db: ['db'], mq: ['mq'], cache: ['cache'], api: ['api', 'api_agent'], compute: ['compute'] };

function chart(name: string, fields: readonly string[]): Files {
  return {
    [`charts/${name}/Chart.yaml`]: `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`,
    [`charts/${name}/values.yaml`]: `images:\n  tags:\n${fields.map((f) => `    ${f}: example.org/${f}:0\n`).join('')}`,
    ...Object.fromEntries(
      fields.map((field) => [
        `charts/${name}/templates/${field}.yaml`,
        `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}-${field.replace('_', '-')}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: ${field.replace('_', '-')}}\n  template:\n    metadata:\n      labels: {app: ${field.replace('_', '-')}}\n    spec:\n      containers:\n        - name: main\n          image: {{ .Values.images.tags.${field} }}\n`,
      ]),
    ),
  };
}

/** The app at version 1.0-N, its spec targeting catalog release N.0; mq's image is the same in every release. */
async function buildPhased(n: number): Promise<string> {
  const fields = Object.values(CHARTS).flat();
  const catalog = (r: number) =>
    `release: "${r}.0"\nimages:\n${fields.map((f) => `  ${f}: example.org/${f.replace('_', '-')}:${f === 'mq' ? 1 : r}\n`).join('')}`;
  const files: Files = {
    'fluxcd/metadata.yaml': `app_name: ${APP}\napp_version: 1.0-${n}\nsupported_k8s_version:\n  minimum: v1.29.0\nmaintain_user_overrides: true\n`,
    'fluxcd/releases.yaml': `defaults:
  namespace: ${NAMESPACE}
  releaseNamePrefix: ph-
  timeout: 2m
releases:
  - {name: db, chart: db, service: database}
  - {name: mq, chart: mq, service: messaging}
  - {name: cache, chart: cache, service: cache}
  - {name: api, chart: api, service: api, dependsOn: [db, mq]}
  - {name: compute, chart: compute, service: compute, dependsOn: [api]}
updatePhases:
  - {name: database, releases: [db]}
  - {name: messaging, releases: [mq]}
  - {name: cache, releases: [cache]}
  - {name: control-plane, rest: true}
  - {name: dataplane, releases: [compute], images: [api_agent]}
`,
    'overrides/deployment.yaml': `main:\n  release: "${n}.0"\nfeatures:\n  services: [database, messaging, api, compute]\n`,
    'overrides/versions/images.yaml': Object.entries(CHARTS)
      .flatMap(([name, fs]) => fs.map((f) => `${f}:\n  ${name}: images.tags.${f}\n`))
      .join(''),
    ...Object.fromEntries([1, 2, 3, 4].map((r) => [`overrides/versions/${r}.0.yaml`, catalog(r)])),
    ...Object.entries(CHARTS).reduce<Files>((all, [name, fs]) => ({ ...all, ...chart(name, fs) }), {}),
  };
  const root = writeFiles(tempDir('flotilla-phased-app-'), files);
  return (await buildApp(root, { outDir: tempDir('flotilla-phased-out-'), cacheDir: false })).file;
}

let cluster: DevCluster;
let client: KubeClient;
const bundles: string[] = [];
const cli = (...args: string[]) => flotilla(cluster.kubeconfigPath, args);
const show = async (): Promise<AppView> => JSON.parse((await cli('show', APP, '-o', 'json')).stdout) as AppView;
const record = (): AppRecord => {
  const secret = cluster.get('v1', 'Secret', SYSTEM_NAMESPACE, recordSecretName(APP)) as { data: { record: string } };
  return decodeRecord(Buffer.from(secret.data.record, 'base64').toString('utf8'), 'record');
};
/** The image each Deployment of the app runs now, by Deployment name. */
const images = (): Record<string, string> =>
  Object.fromEntries(
    cluster
      .list('apps/v1', 'Deployment', NAMESPACE)
      .map((d) => d as { metadata: { name: string }; spec: { template: { spec: { containers: { image: string }[] } } } })
      .map((d) => [d.metadata.name.replace(/^ph-/, ''), d.spec.template.spec.containers[0]?.image ?? ''])
      .sort(),
  );

/**
 * Watches the app's HelmReleases while `during` runs: each new reconcile
 * request a release is given, as `release@phase` in the order the API
 * server saw them.
 */
async function writesDuring<T>(during: () => Promise<T>): Promise<{ result: T; writes: string[] }> {
  const writes: string[] = [];
  const seen = new Map<string, string>();
  const stop = new AbortController();
  let listed = false;
  let onListed: () => void = () => undefined;
  const firstList = new Promise<void>((done) => (onListed = done));
  const watching = watchUntil<KubeObject, true>(
    client,
    { apiVersion: HELM_RELEASE_API, kind: 'HelmRelease', namespace: NAMESPACE },
    (objects, change) => {
      for (const object of change.object ? [change.object] : [...objects.values()]) {
        const token = object.metadata.annotations?.['reconcile.fluxcd.io/requestedAt'] ?? '';
        if (seen.get(object.metadata.name) === token) continue;
        // What the first list shows was there before: only later requests count.
        if (listed) writes.push(`${object.metadata.name}@${token.split(' ')[1] ?? ''}`);
        seen.set(object.metadata.name, token);
      }
      listed = true;
      onListed();
      return undefined;
    },
    { signal: stop.signal, waitingFor: 'the HelmReleases to change' },
  ).catch(() => undefined);
  await firstList;
  try {
    const result = await during();
    return { result, writes };
  } finally {
    stop.abort();
    await watching;
  }
}

useDevCluster(
  { requeueDependencyMs: 250 },
  () => Promise.all([buildPhased(1), buildPhased(2), buildPhased(3), buildPhased(4)]),
  async (dev, built) => {
    cluster = dev;
    client = await connect({ kubeconfig: cluster.kubeconfigPath });
    bundles.push(...built);
  },
);

describe('staged update on the dev cluster', () => {
  it('installs without phases (nothing deployed yet) and records the deployed release at the end', async () => {
    expect((await cli('upload', bundles[0]!)).code).toBe(0);
    const { result: apply, writes } = await writesDuring(() => cli('apply', APP));
    expect(apply).toMatchObject({ code: 0, stdout: `${APP} 1.0-1: applied\n` });
    expect(apply.stderr).not.toContain('phase ');
    expect(writes.sort()).toEqual(['api@', 'compute@', 'db@', 'mq@']);
    expect(record().versions).toMatchObject({ target: '1.0', deployed: '1.0' });
    expect(record().versions?.phase).toBeUndefined();
    expect(images()).toEqual({
      'api-api': 'example.org/api:1',
      'api-api-agent': 'example.org/api-agent:1',
      'compute-compute': 'example.org/compute:1',
      'db-db': 'example.org/db:1',
      'mq-mq': 'example.org/mq:1',
    });
  });

  it('updates phase by phase: a phase with nothing to change and one whose releases are off skipped; a held data plane waits for continue; deployed set only at the end', async () => {
    const { result: update, writes } = await writesDuring(() => cli('update', bundles[1]!, '--hold', 'dataplane'));
    expect(update.stdout).toBe(`${APP} 1.0-2: applied (held before update phase dataplane: flotilla version continue ${APP} --phase dataplane)\n`);
    expect(update.code).toBe(0);
    expect(update.stderr).toContain('phase messaging: skipped (nothing to change: its releases run what it would write, Ready)');
    expect(update.stderr).toContain('phase cache: skipped (none of its releases is enabled)');
    // Held: the update is not over, its post hooks wait for the go.
    expect(update.stderr).not.toContain('post hooks');
    expect(writes).toEqual(['db@database', 'api@control-plane']);
    // The data plane's images are the ones it ran: compute untouched, api's agent held back while api itself moved on.
    expect(images()).toEqual({
      'api-api': 'example.org/api:2',
      'api-api-agent': 'example.org/api-agent:1',
      'compute-compute': 'example.org/compute:1',
      'db-db': 'example.org/db:2',
      'mq-mq': 'example.org/mq:1',
    });
    expect(await show()).toMatchObject({ state: 'applied', phase: 'dataplane', held: 'dataplane' });
    expect(JSON.parse((await cli('version', 'status', APP, '-o', 'json')).stdout)).toMatchObject({
      target: '2.0',
      deployed: '1.0',
      phase: 'dataplane',
      held: 'dataplane',
    });
    expect((await cli('show', APP)).stdout).toContain(`phase:     dataplane (held: flotilla version continue ${APP} --phase dataplane)`);
    expect(record().versions).toMatchObject({ target: '2.0', deployed: '1.0', phase: 'dataplane', held: 'dataplane' });
    // Applying again keeps the hold: the phases before it have nothing to change.
    const again = await writesDuring(() => cli('apply', APP));
    expect(again.writes).toEqual([]);
    expect(again.result.stdout).toContain('held before update phase dataplane');

    const typo = await cli('apply', APP, '--hold', 'datapalne');
    expect(typo).toMatchObject({
      code: 2,
      stderr:
        'flotilla: --hold datapalne: no update phase "datapalne"; did you mean "dataplane"? (update phases: cache, control-plane, database, dataplane, messaging)\n',
    });
    expect((await show()).history.at(-1)).toMatchObject({ operation: 'apply', result: 'refused' });
    const refused = await cli('version', 'continue', APP, '--phase', 'database');
    expect(refused).toMatchObject({ code: 2, stderr: `flotilla: ${APP}: update phase database is not held (held: dataplane); nothing to continue\n` });
    const { result: go, writes: dataplane } = await writesDuring(() => cli('version', 'continue', APP, '--phase', 'dataplane'));
    expect(go).toMatchObject({ code: 0, stdout: `${APP} 1.0-2: applied\n` });
    // The go finishes the update as an update: its own hooks run around the apply's.
    expect(go.stderr).toContain('running update and apply post hooks');
    expect((await show()).history.at(-1)).toMatchObject({ operation: 'update', result: 'succeeded' });
    expect(dataplane.sort()).toEqual(['api@dataplane', 'compute@dataplane']);
    expect(images()).toEqual({
      'api-api': 'example.org/api:2',
      'api-api-agent': 'example.org/api-agent:2',
      'compute-compute': 'example.org/compute:2',
      'db-db': 'example.org/db:2',
      'mq-mq': 'example.org/mq:1',
    });
    expect(record().versions).toMatchObject({ target: '2.0', deployed: '2.0', holdAt: [] });
    expect(record().versions?.phase).toBeUndefined();
    expect(await show()).toMatchObject({ phase: null, held: null });
  });

  it('resumes an update killed with SIGKILL in the data-plane phase at that phase: the phases before it are not written again', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'lifecycle', 'update-child.ts'), cluster.kubeconfigPath, bundles[2]!], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((done) => child.on('exit', () => done()));
    const steps: string[] = [];
    for await (const line of createInterface(child.stdout)) {
      const event = JSON.parse(line) as { type: string; message?: string };
      if (event.type === 'step' && event.message?.startsWith('phase ')) steps.push(event.message.split(':')[0] ?? '');
      if (event.type === 'step' && event.message?.startsWith('phase dataplane:')) {
        child.kill('SIGKILL');
        break;
      }
    }
    await exited;
    expect(steps).toEqual(['phase database', 'phase messaging', 'phase cache', 'phase control-plane', 'phase dataplane']);
    expect(record()).toMatchObject({ state: 'updating', versions: { deployed: '2.0', phase: 'dataplane' } });
    const { result: resumed, writes } = await writesDuring(() => cli('update', bundles[2]!));
    expect(resumed).toMatchObject({ code: 0, stdout: `${APP} 1.0-3: applied\n` });
    expect(resumed.stderr).toContain('phase database: skipped (nothing to change');
    expect(resumed.stderr).toContain('phase control-plane: skipped (nothing to change');
    expect(writes.sort()).toEqual(['api@dataplane', 'compute@dataplane']);
    expect(images()).toEqual({
      'api-api': 'example.org/api:3',
      'api-api-agent': 'example.org/api-agent:3',
      'compute-compute': 'example.org/compute:3',
      'db-db': 'example.org/db:3',
      'mq-mq': 'example.org/mq:1',
    });
    expect(record().versions).toMatchObject({ deployed: '3.0' });
    expect((await show()).history.slice(-2).map((h) => [h.operation, h.result])).toEqual([
      ['update', 'killed'],
      ['update', 'succeeded'],
    ]);
  }, 120_000);

  it("stops at a failing phase with the release and Flux's message; the recovery writes back only the phases that changed", async () => {
    const failing = cluster.faults.failRender('api', { message: 'api cannot render at 4.0', valuesContaining: 'example.org/api:4' });
    try {
      const { result: update, writes } = await writesDuring(() => cli('update', bundles[3]!));
      expect(update.code).toBe(1);
      expect(update.stderr).toMatch(
        /update phase control-plane: release api failed: \w+: [^\n]*api cannot render at 4\.0[^\n]*; the later phases were not started\nrecovered: phased is back at 1\.0-3, applied/,
      );
      // The update stopped at control-plane; the recovery put back database and control-plane, and skipped the data plane it never changed.
      // api, reverted to the config it runs, is in sync for Flux but keeps its failed upgrade on Ready (helm-controller#1362):
      // it is asked once for a forced upgrade (docs/lifecycle.md, the readiness table), which renders its old config again.
      expect(writes).toEqual(['db@database', 'api@control-plane', 'db@database', 'api@control-plane', 'api@control-plane-forced']);
      expect(update.stderr).toMatch(/phase dataplane: skipped \(nothing to change[^\n]*\n[^]*recovered/);
      expect(images()).toEqual({
        'api-api': 'example.org/api:3',
        'api-api-agent': 'example.org/api-agent:3',
        'compute-compute': 'example.org/compute:3',
        'db-db': 'example.org/db:3',
        'mq-mq': 'example.org/mq:1',
      });
      expect(record().versions).toMatchObject({ target: '3.0', deployed: '3.0', holdAt: [] });
      expect(record().versions?.phase).toBeUndefined();
    } finally {
      failing.clear();
    }
  }, 120_000);

  it('stages an apply after the operator set a new target; a failing phase stops it there: nothing of the later phases changed, deployed stays, show and version status name the phase', async () => {
    expect(await cli('version', 'target', APP, '4.0')).toMatchObject({ code: 0 });
    // Phases cannot be written without waiting on each: refused before anything is written.
    const noWait = await writesDuring(() => cli('apply', APP, '--no-wait'));
    expect(noWait.result).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('runs in update phases, each waited on before the next (docs/versions.md); run it without --no-wait'),
    });
    expect(noWait.writes).toEqual([]);
    expect(record()).toMatchObject({ state: 'applied', versions: { deployed: '3.0' } });
    const failing = cluster.faults.failRender('api', { message: 'api cannot render at 4.0', valuesContaining: 'example.org/api:4' });
    try {
      const { result: apply, writes } = await writesDuring(() => cli('apply', APP));
      expect(apply.code).toBe(1);
      expect(apply.stderr).toMatch(
        /update phase control-plane: release api failed: \w+: [^\n]*api cannot render at 4\.0[^\n]*; the later phases were not started\n$/,
      );
      expect(writes).toEqual(['db@database', 'api@control-plane']);
      // compute and api's agent run what they ran; db, in the phase before, moved on.
      expect(images()).toMatchObject({ 'api-api-agent': 'example.org/api-agent:3', 'compute-compute': 'example.org/compute:3', 'db-db': 'example.org/db:4' });
      expect(record()).toMatchObject({ state: 'apply-failed', versions: { target: '4.0', deployed: '3.0', phase: 'control-plane' } });
      expect(await show()).toMatchObject({ phase: 'control-plane', held: null });
      expect(JSON.parse((await cli('version', 'status', APP, '-o', 'json')).stdout)).toMatchObject({ target: '4.0', deployed: '3.0', phase: 'control-plane' });
    } finally {
      failing.clear();
    }
    // Fixed, the next apply goes on from the phase that failed.
    const { result: again, writes } = await writesDuring(() => cli('apply', APP));
    expect(again).toMatchObject({ code: 0, stdout: `${APP} 1.0-3: applied\n` });
    expect(again.stderr).toContain('phase database: skipped (nothing to change');
    expect(writes).toEqual(['api@control-plane', 'api@dataplane', 'compute@dataplane']);
    expect(record().versions).toMatchObject({ target: '4.0', deployed: '4.0' });
  }, 120_000);
});
