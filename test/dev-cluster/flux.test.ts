/**
 * The dev cluster TEST FIXTURE's Flux simulation: charts pushed with the
 * real `helm push` to the real registry (and one served from the HTTP
 * repository), rendered with the real helm, through to Ready.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevCluster, type DevCluster, type FluxTrace, type JsonObject } from '../support/dev-cluster/index.js';

let cluster: DevCluster;
/** What the simulation traced: renders queued, started, ended, charts fetched from a registry. */
const traces: FluxTrace[] = [];
const helm = process.env.FLOTILLA_HELM!;
const NS = 'apps';
type Obj = JsonObject & {
  metadata: { name: string; generation?: number; finalizers?: string[]; labels?: Record<string, string>; annotations?: Record<string, string> };
  status?: Record<string, unknown>;
};

/** A small chart: a ConfigMap showing the values it got, a Deployment needing image.tag, an optional extra ConfigMap. */
function writeChart(root: string, name: string, version: string): string {
  const dir = join(root, `${name}-${version}`, name);
  mkdirSync(join(dir, 'templates'), { recursive: true });
  writeFileSync(join(dir, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: ${version}\nappVersion: "${version}"\n`);
  writeFileSync(join(dir, 'values.yaml'), 'replicas: 1\nimage:\n  repository: example/app\n  tag: "1.0"\nextra: true\n');
  writeFileSync(
    join(dir, 'templates', 'values.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-values\ndata:\n  values.json: {{ toJson .Values | quote }}\n',
  );
  writeFileSync(
    join(dir, 'templates', 'deployment.yaml'),
    [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: {{ .Release.Name }}',
      'spec:',
      '  replicas: {{ .Values.replicas }}',
      '  selector: {matchLabels: {app: {{ .Release.Name }}}}',
      '  template:',
      '    metadata: {labels: {app: {{ .Release.Name }}}}',
      '    spec:',
      '      containers:',
      '      - name: app',
      '        image: "{{ .Values.image.repository }}:{{ required "image.tag is required" .Values.image.tag }}"',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'templates', 'extra.yaml'),
    '{{- if .Values.extra }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\n{{- end }}\n',
  );
  return dir;
}

function packageChart(dir: string, into: string): string {
  const out = execFileSync(helm, ['package', dir, '--destination', into], { encoding: 'utf8' });
  return out.trim().split(' ').pop()!;
}

const hr = (name: string, spec: JsonObject): JsonObject => ({
  apiVersion: 'helm.toolkit.fluxcd.io/v2',
  kind: 'HelmRelease',
  metadata: { name, namespace: NS },
  spec: { interval: '10m', chart: { spec: { chart: 'app', version: '1.0.0', sourceRef: { kind: 'HelmRepository', name: 'registry' } } }, ...spec },
});

const release = (name: string) => cluster.get('helm.toolkit.fluxcd.io/v2', 'HelmRelease', NS, name) as Obj | undefined;
const ready = (name: string) => cluster.releaseReady(NS, name);
const renderedValues = (releaseName: string) =>
  JSON.parse(String((cluster.get('v1', 'ConfigMap', NS, `${releaseName}-values`)?.data as Record<string, string>)['values.json']));
/** Reasons Flux reports while it waits (Ready=False or Unknown, not a verdict). */
const WAITING = ['Progressing', 'HelmChartNotReady', 'SourceNotReady', 'DependencyNotReady'];
const waitReady = (name: string, status: 'True' | 'False' = 'True') =>
  cluster.waitFor(() => {
    const r = release(name);
    const c = ready(name);
    // Failures before the release action leave observedGeneration alone, as helm-controller does.
    return c?.status === status && (status === 'False' || r?.status?.observedGeneration === r?.metadata.generation) && !WAITING.includes(c.reason);
  }, 30_000);

beforeAll(async () => {
  cluster = await startDevCluster({ retryIntervalMs: 50, requeueDependencyMs: 200, trace: (event) => traces.push(event) });
  const work = mkdtempSync(join(tmpdir(), 'flotilla-flux-test-'));
  for (const version of ['1.0.0', '1.1.0']) cluster.pushChart(writeChart(work, 'app', version));
  packageChart(writeChart(work, 'web', '2.0.0'), cluster.httpRepo.dir);
  execFileSync(helm, ['repo', 'index', cluster.httpRepo.dir, '--url', cluster.httpRepo.url]);
  cluster.applyRegistrySource(NS);
  cluster.apply({
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'HelmRepository',
    metadata: { name: 'http', namespace: NS },
    spec: { url: cluster.httpRepo.url, interval: '10m' },
  });
});

afterAll(async () => {
  await cluster?.stop();
});

describe('dev cluster (test fixture): Flux simulation', () => {
  it("records the registry as flotilla's default chart repository", () => {
    expect(cluster.get('v1', 'ConfigMap', 'flotilla-system', 'flotilla-config')?.data).toEqual({
      chartRepository: cluster.chartRepository,
      chartRepositoryPlainHttp: 'true',
    });
    expect(cluster.chartRepository).toMatch(/^oci:\/\/127\.0\.0\.1:\d+\/charts$/);
  });

  it("installs a chart from the OCI registry through to Ready, storing the rendered objects, Helm's release Secret and the status history", async () => {
    cluster.apply(hr('first', { values: { replicas: 2 }, commonMetadata: { labels: { team: 'flotilla' } } }));
    await waitReady('first');
    const first = release('first')!;
    expect(ready('first')).toEqual({
      status: 'True',
      reason: 'InstallSucceeded',
      message: `Helm install succeeded for release ${NS}/first.v1 with chart app@1.0.0`,
    });
    expect(first.metadata.finalizers).toEqual(['finalizers.fluxcd.io']);
    expect(first.status).toMatchObject({
      observedGeneration: 1,
      lastAttemptedRevision: '1.0.0',
      lastAttemptedReleaseAction: 'install',
      helmChart: `${NS}/${NS}-first`,
    });
    expect(first.status!.history).toEqual([
      expect.objectContaining({
        name: 'first',
        namespace: NS,
        version: 1,
        status: 'deployed',
        chartName: 'app',
        chartVersion: '1.0.0',
        configDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      }),
    ]);
    const deployment = cluster.get('apps/v1', 'Deployment', NS, 'first') as Obj & { spec: { replicas: number }; status: { readyReplicas: number } };
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.status.readyReplicas).toBe(2);
    expect(deployment.metadata.labels).toMatchObject({
      'app.kubernetes.io/managed-by': 'Helm',
      'helm.toolkit.fluxcd.io/name': 'first',
      'helm.toolkit.fluxcd.io/namespace': NS,
      team: 'flotilla',
    });
    expect(deployment.metadata.annotations).toMatchObject({ 'meta.helm.sh/release-name': 'first', 'meta.helm.sh/release-namespace': NS });
    const secret = cluster.get('v1', 'Secret', NS, 'sh.helm.release.v1.first.v1') as Obj & { type: string };
    expect(secret.type).toBe('helm.sh/release.v1');
    expect(secret.metadata.labels).toMatchObject({ owner: 'helm', name: 'first', status: 'deployed', version: '1' });
    expect(cluster.get('source.toolkit.fluxcd.io/v1', 'HelmChart', NS, `${NS}-first`)?.status).toMatchObject({ artifact: { revision: '1.0.0' } });
    // An OCI HelmRepository is a static object in source-controller v1: no status to wait for.
    expect(cluster.get('source.toolkit.fluxcd.io/v1', 'HelmRepository', NS, 'registry')?.status).toBeUndefined();
  });

  it('upgrades on a spec change: new revision, pruned objects, superseded history', async () => {
    cluster.apply(
      hr('first', {
        values: { replicas: 3, extra: false },
        chart: { spec: { chart: 'app', version: '1.1.0', sourceRef: { kind: 'HelmRepository', name: 'registry' } } },
      }),
    );
    await waitReady('first');
    expect(ready('first')).toMatchObject({ reason: 'UpgradeSucceeded', message: `Helm upgrade succeeded for release ${NS}/first.v2 with chart app@1.1.0` });
    const history = release('first')!.status!.history as Array<{ version: number; status: string; chartVersion: string }>;
    expect(history.map((h) => [h.version, h.status, h.chartVersion])).toEqual([
      [2, 'deployed', '1.1.0'],
      [1, 'superseded', '1.0.0'],
    ]);
    expect(cluster.get('v1', 'ConfigMap', NS, 'first-extra')).toBeUndefined();
    expect(cluster.get('v1', 'Secret', NS, 'sh.helm.release.v1.first.v1')?.metadata).toMatchObject({ labels: { status: 'superseded' } });
  });

  it('reinstalls under a new target namespace, uninstalling the old release first', async () => {
    cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'elsewhere' } });
    cluster.apply(hr('moved', {}));
    await waitReady('moved');
    expect(cluster.get('apps/v1', 'Deployment', NS, 'moved')).toBeDefined();
    cluster.apply(hr('moved', { targetNamespace: 'elsewhere' }));
    await waitReady('moved');
    expect(ready('moved')?.message).toBe('Helm install succeeded for release elsewhere/elsewhere-moved.v1 with chart app@1.0.0');
    expect(cluster.get('apps/v1', 'Deployment', 'elsewhere', 'elsewhere-moved')).toBeDefined();
    expect(cluster.get('apps/v1', 'Deployment', NS, 'moved')).toBeUndefined();
    expect(cluster.get('v1', 'Secret', NS, 'sh.helm.release.v1.moved.v1')).toBeUndefined();
  });

  it('installs a chart from the Helm HTTP repository', async () => {
    cluster.apply(hr('web', { chart: { spec: { chart: 'web', version: '2.x', sourceRef: { kind: 'HelmRepository', name: 'http' } } } }));
    await waitReady('web');
    expect(ready('web')?.message).toBe(`Helm install succeeded for release ${NS}/web.v1 with chart web@2.0.0`);
    expect(cluster.get('source.toolkit.fluxcd.io/v1', 'HelmRepository', NS, 'http')?.status).toMatchObject({
      artifact: { revision: expect.stringMatching(/^sha256:/) },
    });
  });

  it("reports a render failure as Ready=False with helm's own message, stores no release, does not count it, retries with backoff without stalling, and recovers once the values are fixed", async () => {
    cluster.apply(hr('broken', { values: { image: { tag: '' } } }));
    await waitReady('broken', 'False');
    const failed = ready('broken')!;
    expect(failed.reason).toBe('InstallFailed');
    expect(failed.message).toMatch(
      new RegExp(
        `^Helm install failed for release ${NS}/broken with chart app@1.0.0: .*execution error at \\(app/templates/deployment.yaml:13:\\d+\\): image.tag is required`,
      ),
    );
    // Retried (status.failures counts every attempt) but never counted against install retries, never Stalled.
    await cluster.waitFor(() => Number(release('broken')!.status!.failures) >= 3, 10_000);
    const status = release('broken')!.status!;
    expect(status.installFailures).toBeUndefined();
    expect(status.history).toBeUndefined();
    expect(status.observedGeneration).toBeUndefined();
    expect((status.conditions as Array<{ type: string }>).map((c) => c.type)).not.toContain('Stalled');
    expect(cluster.list('v1', 'Secret', NS).filter((s) => (s.metadata as { name: string }).name.startsWith('sh.helm.release.v1.broken.'))).toEqual([]);
    expect(cluster.get('apps/v1', 'Deployment', NS, 'broken')).toBeUndefined();
    cluster.apply(hr('broken', { values: { image: { tag: '2.0' } } }));
    await waitReady('broken');
    expect(ready('broken')?.reason).toBe('InstallSucceeded');
  });

  it("keeps an upgrade's render failure on Ready once the spec is reverted to the deployed release (in sync: no action, as helm-controller does), and upgrades only when forceAt equals a new requestedAt", async () => {
    const kept = (values: JsonObject, annotations: Record<string, string> = {}) =>
      cluster.apply({ ...hr('kept', { values }), metadata: { name: 'kept', namespace: NS, annotations } });
    kept({ replicas: 1 });
    await waitReady('kept');
    kept({ image: { tag: '' } });
    await waitReady('kept', 'False');
    kept({ replicas: 1 });
    await cluster.waitFor(() => release('kept')!.status!.observedGeneration === release('kept')!.metadata.generation, 30_000);
    // Helm runs revision 1, as asked; Released (and so Ready) still carries the failure: fluxcd/helm-controller#1362.
    expect(ready('kept')).toMatchObject({ status: 'False', reason: 'UpgradeFailed' });
    expect(release('kept')!.status!.history).toEqual([
      expect.objectContaining({ version: 1, status: 'deployed', configDigest: release('kept')!.status!.lastAttemptedConfigDigest }),
    ]);
    // forceAt alone wakes nothing (helm-controller's predicates watch requestedAt); with a requestedAt of another value it is no force.
    kept({ replicas: 1 }, { 'reconcile.fluxcd.io/forceAt': 'f1' });
    await cluster.settled();
    kept({ replicas: 1 }, { 'reconcile.fluxcd.io/forceAt': 'f1', 'reconcile.fluxcd.io/requestedAt': 'r1' });
    await cluster.waitFor(() => release('kept')!.status!.lastHandledReconcileAt === 'r1', 30_000);
    expect(ready('kept')).toMatchObject({ status: 'False', reason: 'UpgradeFailed' });
    expect(release('kept')!.status!.lastHandledForceAt).toBeUndefined();
    kept({ replicas: 1 }, { 'reconcile.fluxcd.io/forceAt': 'f2', 'reconcile.fluxcd.io/requestedAt': 'f2' });
    await cluster.waitFor(() => release('kept')!.status!.lastHandledReconcileAt === 'f2', 30_000);
    expect(ready('kept')).toMatchObject({ status: 'True', reason: 'UpgradeSucceeded' });
    expect(release('kept')!.status).toMatchObject({
      lastHandledForceAt: 'f2',
      history: [expect.objectContaining({ version: 2, status: 'deployed' }), expect.objectContaining({ version: 1, status: 'superseded' })],
    });
  });

  it('remediates a failed install by uninstalling it (Ready=False UninstallSucceeded), retries per install.remediation.retries, and keeps the count after success', async () => {
    const fault = cluster.faults.failRelease(`${NS}/retried`, { message: 'boom', times: 1 });
    const readyReasons: string[] = [];
    const unsubscribe = cluster.cluster.store.subscribe((change) => {
      const condition =
        change.name === 'retried' && change.resource === 'helm.toolkit.fluxcd.io/helmreleases'
          ? (change.object.status as { conditions?: Array<{ type: string; status: string; reason: string }> } | undefined)?.conditions?.find(
              (c) => c.type === 'Ready',
            )
          : undefined;
      if (condition && readyReasons.at(-1) !== `${condition.status} ${condition.reason}`) readyReasons.push(`${condition.status} ${condition.reason}`);
    });
    cluster.apply(hr('retried', { install: { remediation: { retries: 2 } } }));
    await waitReady('retried');
    unsubscribe();
    expect(fault.hits).toBe(1);
    // Before: waiting for the chart (SourceNotReady), then "reconciliation in progress".
    expect(readyReasons.slice(-5)).toEqual([
      'Unknown Progressing',
      'False InstallFailed',
      'False UninstallSucceeded',
      'Unknown Progressing',
      'True InstallSucceeded',
    ]);
    // helm-controller's default strategy does not reset the count on success.
    expect(release('retried')!.status).toMatchObject({ installFailures: 1, failures: 1 });
    expect((release('retried')!.status!.conditions as Array<{ type: string }>).map((c) => c.type).sort()).toEqual(['Ready', 'Released']);
  });

  it('sets Reconciling, not Ready=Unknown, while it checks an in-sync release, and writes nothing new when nothing changed', async () => {
    cluster.apply(hr('steady', {}));
    await waitReady('steady');
    const seen: string[] = [];
    const unsubscribe = cluster.cluster.store.subscribe((change) => {
      if (change.name !== 'steady' || change.resource !== 'helm.toolkit.fluxcd.io/helmreleases') return;
      const conditions = (change.object.status as { conditions?: Array<{ type: string; status: string; reason: string; message: string }> }).conditions ?? [];
      seen.push(
        conditions
          .map((c) => `${c.type}=${c.status} ${c.reason}`)
          .sort()
          .join(', '),
      );
    });
    cluster.apply({ ...hr('steady', {}), metadata: { name: 'steady', namespace: NS, annotations: { 'reconcile.fluxcd.io/requestedAt': 'again' } } });
    await cluster.waitFor(() => release('steady')!.status!.lastHandledReconcileAt === 'again', 10_000);
    unsubscribe();
    expect(seen).toContain('Ready=True InstallSucceeded, Reconciling=True Progressing, Released=True InstallSucceeded');
    expect(seen.at(-1)).toBe('Ready=True InstallSucceeded, Released=True InstallSucceeded');
    expect(seen.join('\n')).not.toContain('Ready=Unknown');
  });

  it('installs a release only once each dependency is Ready, saying which one it waits for; its chart is pulled meanwhile', async () => {
    const slow = cluster.faults.slowRelease(`${NS}/base`, 600);
    let baseReadyAt = 0;
    const baseReady = cluster.waitFor(() => (ready('base')?.status === 'True' ? (baseReadyAt ||= Date.now()) > 0 : false), 10_000);
    cluster.apply(hr('base', {}));
    cluster.apply(hr('top', { dependsOn: [{ name: 'base' }] }));
    await cluster.waitFor(() => ready('base')?.message.startsWith("Running 'install'") ?? false, 10_000);
    expect(ready('base')).toMatchObject({ status: 'Unknown', reason: 'Progressing', message: "Running 'install' action with timeout of 5m0s" });
    await cluster.waitFor(() => ready('top')?.reason === 'DependencyNotReady', 10_000);
    expect(ready('top')).toMatchObject({ status: 'False', message: `dependency '${NS}/base' is not ready` });
    // helm-controller makes the HelmChart before it checks dependsOn: source-controller pulls while base installs.
    const topChart = () => cluster.get('source.toolkit.fluxcd.io/v1', 'HelmChart', NS, `${NS}-top`) as Obj | undefined;
    await cluster.waitFor(() => (topChart()?.status?.artifact ?? undefined) !== undefined, 10_000);
    expect(ready('base')?.status).not.toBe('True');
    expect(release('top')?.status?.helmChart).toBe(`${NS}/${NS}-top`);
    await waitReady('top');
    await baseReady;
    const renderStarted = traces.find((t) => t.name === 'top' && t.phase === 'render-start')?.at;
    expect(renderStarted).toBeGreaterThanOrEqual(baseReadyAt);
    expect(slow.hits).toBe(1);
    slow.clear();
  });

  it('fetches a chart version once for all the HelmCharts that ask for it', async () => {
    const work = mkdtempSync(join(tmpdir(), 'flotilla-flux-twins-'));
    cluster.pushChart(writeChart(work, 'app', '1.2.0'));
    const twin = (name: string) => hr(name, { chart: { spec: { chart: 'app', version: '1.2.0', sourceRef: { kind: 'HelmRepository', name: 'registry' } } } });
    cluster.apply(twin('twin-a'));
    cluster.apply(twin('twin-b'));
    await waitReady('twin-a');
    await waitReady('twin-b');
    const fetched = traces.filter((t) => t.phase === 'chart-fetched' && [`${NS}-twin-a`, `${NS}-twin-b`].includes(t.name));
    expect(fetched).toHaveLength(1);
    const digest = (name: string) =>
      ((cluster.get('source.toolkit.fluxcd.io/v1', 'HelmChart', NS, `${NS}-${name}`) as Obj).status!.artifact as { digest: string }).digest;
    expect(digest('twin-a')).toBe(digest('twin-b'));
  });

  it('merges valuesFrom in order (ConfigMap, Secret, targetPath, optional missing) and inline values last', async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'layer1', namespace: NS },
      data: { 'values.yaml': 'a: cm\nb: cm\nc: cm\nnested: {x: 1, y: 1}\n' },
    });
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'layer2', namespace: NS },
      data: { custom: Buffer.from('b: secret\nnested: {y: 2}\n').toString('base64') },
    });
    cluster.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'layer3', namespace: NS }, data: { replicas: '4' } });
    cluster.apply(
      hr('layered', {
        valuesFrom: [
          { kind: 'ConfigMap', name: 'layer1' },
          { kind: 'Secret', name: 'layer2', valuesKey: 'custom' },
          { kind: 'ConfigMap', name: 'layer3', valuesKey: 'replicas', targetPath: 'replicas' },
          { kind: 'ConfigMap', name: 'absent', optional: true },
        ],
        values: { a: 'inline' },
      }),
    );
    await waitReady('layered');
    expect(renderedValues('layered')).toMatchObject({ a: 'inline', b: 'secret', c: 'cm', nested: { x: 1, y: 2 }, replicas: 4 });
    cluster.apply(hr('missing-values', { valuesFrom: [{ kind: 'ConfigMap', name: 'absent' }] }));
    await waitReady('missing-values', 'False');
    expect(ready('missing-values')).toMatchObject({
      reason: 'ValuesError',
      message: `could not resolve ConfigMap chart values reference '${NS}/absent' with key 'values.yaml': configmaps "absent" not found`,
    });
  });

  it('picks up a changed valuesFrom source at the next spec.interval, as helm-controller does', async () => {
    cluster.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ticking', namespace: NS }, data: { 'values.yaml': 'replicas: 1\n' } });
    cluster.apply(hr('ticking', { interval: '1s', valuesFrom: [{ kind: 'ConfigMap', name: 'ticking' }] }));
    await waitReady('ticking');
    cluster.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ticking', namespace: NS }, data: { 'values.yaml': 'replicas: 5\n' } });
    await cluster.waitFor(() => ready('ticking')?.reason === 'UpgradeSucceeded', 15_000);
    expect(renderedValues('ticking').replicas).toBe(5);
    // In sync, the interval reconciles neither re-render nor touch the chart's status.
    const seen: string[] = [];
    const unsubscribe = cluster.cluster.store.subscribe((change) => {
      if (change.name === `${NS}-ticking` || change.name.startsWith('sh.helm.release.v1.ticking.'))
        seen.push(`${change.type} ${change.resource}/${change.name}`);
    });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    unsubscribe();
    expect(seen).toEqual([]);
    cluster.apply(hr('ticking', { interval: '1s', suspend: true, valuesFrom: [{ kind: 'ConfigMap', name: 'ticking' }] }));
  });

  it('leaves a suspended release alone, and reconciles again on reconcile.fluxcd.io/requestedAt', async () => {
    cluster.apply(hr('paused', { suspend: true }));
    await cluster.settled();
    // Suspended: the generation is observed, nothing else happens.
    expect(release('paused')!.status).toEqual({ observedGeneration: 1 });
    const before = release('first')!.status!.lastHandledReconcileAt;
    cluster.apply({
      ...hr('first', {
        values: { replicas: 3, extra: false },
        chart: { spec: { chart: 'app', version: '1.1.0', sourceRef: { kind: 'HelmRepository', name: 'registry' } } },
      }),
      metadata: { name: 'first', namespace: NS, annotations: { 'reconcile.fluxcd.io/requestedAt': 'now-1' } },
    });
    await cluster.waitFor(() => release('first')!.status!.lastHandledReconcileAt === 'now-1', 10_000);
    expect(before).toBeUndefined();
  });

  it('rolls back a failed upgrade (Ready=False RollbackSucceeded), retries it per upgrade.remediation with backoff, and stalls once retries run out', async () => {
    cluster.apply(hr('rolled', { upgrade: { remediation: { retries: 1 } } }));
    await waitReady('rolled');
    const once = cluster.faults.failRelease(`${NS}/rolled`, { message: 'transient failure', times: 1 });
    cluster.apply(hr('rolled', { upgrade: { remediation: { retries: 1 } }, values: { replicas: 2 } }));
    await cluster.waitFor(() => ready('rolled')?.reason === 'RollbackSucceeded', 10_000);
    expect(ready('rolled')).toMatchObject({ status: 'False', message: `Helm rollback to previous release ${NS}/rolled.v1 with chart app@1.0.0 succeeded` });
    expect(release('rolled')!.status!.observedGeneration).toBe(1);
    await waitReady('rolled');
    expect(once.hits).toBe(1);
    expect(ready('rolled')?.reason).toBe('UpgradeSucceeded');
    const statuses = (release('rolled')!.status!.history as Array<{ status: string }>).map((h) => h.status);
    expect(statuses[0]).toBe('deployed');
    expect(statuses).toContain('failed');
    const always = cluster.faults.failRelease(`${NS}/rolled`, { message: 'permanent failure' });
    cluster.apply(hr('rolled', { upgrade: { remediation: { retries: 1 } }, values: { replicas: 3 } }));
    await cluster.waitFor(
      () => (release('rolled')!.status!.conditions as Array<{ type: string; reason: string }> | undefined)?.some((c) => c.type === 'Stalled') ?? false,
      20_000,
    );
    const conditions = release('rolled')!.status!.conditions as Array<{ type: string; status: string; reason: string; message: string }>;
    expect(conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'RollbackSucceeded' });
    expect(conditions.find((c) => c.type === 'Released')).toMatchObject({
      status: 'False',
      reason: 'UpgradeFailed',
      message: `Helm upgrade failed for release ${NS}/rolled with chart app@1.0.0: permanent failure`,
    });
    expect(conditions.find((c) => c.type === 'Stalled')).toMatchObject({ reason: 'RetriesExceeded', message: 'Failed to upgrade after 2 attempt(s)' });
    expect(conditions.find((c) => c.type === 'Reconciling')).toBeUndefined();
    // Out of retries is terminal: the generation is observed.
    expect(release('rolled')!.status!.observedGeneration).toBe(release('rolled')!.metadata.generation);
    expect(always.hits).toBe(2);
    // Rolled back: the objects are the last good revision's.
    expect((cluster.get('apps/v1', 'Deployment', NS, 'rolled') as Obj & { spec: { replicas: number } }).spec.replicas).toBe(2);
    always.clear();
  });

  it('holds a release until its dependency is Ready for its current generation, polling every requeueDependencyMs (a status change alone wakes nothing)', async () => {
    cluster.apply(hr('dep', { suspend: true }));
    await cluster.waitFor(() => release('dep')?.status?.observedGeneration === 1, 10_000);
    cluster.apply(hr('dep', { suspend: true, values: { replicas: 2 } }));
    await cluster.waitFor(() => release('dep')?.status?.observedGeneration === 2, 10_000);
    const hrType = cluster.cluster.type('helm.toolkit.fluxcd.io', 'v2', 'helmreleases');
    const setStatus = (observedGeneration: number) => {
      const current = cluster.cluster.get(hrType, NS, 'dep');
      const condition = {
        type: 'Ready',
        status: 'True',
        reason: 'UpgradeSucceeded',
        message: 'set by the test',
        lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      };
      cluster.cluster.update(hrType, NS, 'dep', { ...current, status: { observedGeneration, conditions: [condition] } }, { fieldManager: 'test' }, 'status');
    };
    setStatus(1);
    cluster.apply(hr('dependant', { dependsOn: [{ name: 'dep' }] }));
    await cluster.waitFor(() => ready('dependant')?.reason === 'DependencyNotReady', 10_000);
    expect(ready('dependant')?.message).toBe(`dependency '${NS}/dep' is not ready`);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(ready('dependant')?.reason).toBe('DependencyNotReady');
    setStatus(2);
    await waitReady('dependant');
    expect(ready('dependant')?.reason).toBe('InstallSucceeded');
  });

  it("refuses to take over an object another owner made when install.disableTakeOwnership is set, with Helm's message", async () => {
    cluster.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owned-values', namespace: NS }, data: { mine: 'yes' } });
    cluster.apply(hr('owned', { install: { disableTakeOwnership: true } }));
    await waitReady('owned', 'False');
    expect(ready('owned')?.message).toBe(
      `Helm install failed for release ${NS}/owned with chart app@1.0.0: rendered manifests contain a resource that already exists. Unable to continue with install: ConfigMap "owned-values" in namespace "${NS}" exists and cannot be imported into the current release: invalid ownership metadata; label validation error: missing key "app.kubernetes.io/managed-by": must be set to "Helm"; annotation validation error: missing key "meta.helm.sh/release-name": must be set to "owned"; annotation validation error: missing key "meta.helm.sh/release-namespace": must be set to "${NS}"`,
    );
    expect(cluster.get('v1', 'ConfigMap', NS, 'owned-values')?.data).toEqual({ mine: 'yes' });
  });

  it('fails an install whose release stays not ready past its timeout', async () => {
    const slow = cluster.faults.slowRelease(`${NS}/late`, 60_000);
    cluster.apply(hr('late', { timeout: '1s' }));
    await waitReady('late', 'False');
    expect(ready('late')).toMatchObject({
      reason: 'InstallFailed',
      message: `Helm install failed for release ${NS}/late with chart app@1.0.0: context deadline exceeded`,
    });
    slow.clear();
  });

  it('waits for a HelmRepository created after its HelmRelease', async () => {
    cluster.apply(hr('early', { chart: { spec: { chart: 'app', version: '1.0.0', sourceRef: { kind: 'HelmRepository', name: 'late-repo' } } } }));
    await cluster.waitFor(() => ready('early')?.message.includes('failed to get source') ?? false, 10_000);
    expect(ready('early')).toMatchObject({
      reason: 'SourceNotReady',
      message: `HelmChart '${NS}/${NS}-early' is not ready: failed to get source: helmrepositories.source.toolkit.fluxcd.io "late-repo" not found`,
    });
    cluster.apply({
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'HelmRepository',
      metadata: { name: 'late-repo', namespace: NS },
      spec: { type: 'oci', url: cluster.chartRepository!, insecure: true, interval: '10m' },
    });
    await waitReady('early');
  });

  it('pulls a chart version pushed after its HelmRelease, retrying with back-off', async () => {
    cluster.apply(hr('unpublished', { chart: { spec: { chart: 'app', version: '3.0.0', sourceRef: { kind: 'HelmRepository', name: 'registry' } } } }));
    await cluster.waitFor(() => ready('unpublished')?.message.includes('chart pull error') ?? false, 10_000);
    expect(ready('unpublished')?.reason).toBe('SourceNotReady');
    const work = mkdtempSync(join(tmpdir(), 'flotilla-flux-late-'));
    cluster.pushChart(writeChart(work, 'app', '3.0.0'));
    await waitReady('unpublished');
    expect(ready('unpublished')?.message).toBe(`Helm install succeeded for release ${NS}/unpublished.v1 with chart app@3.0.0`);
  });

  it('takes a chart from an OCIRepository through chartRef', async () => {
    cluster.apply({
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'OCIRepository',
      metadata: { name: 'app-oci', namespace: NS },
      spec: {
        url: `${cluster.chartRepository}/app`,
        ref: { tag: '1.1.0' },
        insecure: true,
        interval: '10m',
        layerSelector: { mediaType: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip', operation: 'copy' },
      },
    });
    cluster.apply({
      apiVersion: 'helm.toolkit.fluxcd.io/v2',
      kind: 'HelmRelease',
      metadata: { name: 'by-ref', namespace: NS },
      spec: { interval: '10m', chartRef: { kind: 'OCIRepository', name: 'app-oci' } },
    });
    await waitReady('by-ref');
    expect(ready('by-ref')?.message).toBe(`Helm install succeeded for release ${NS}/by-ref.v1 with chart app@1.1.0`);
    expect(cluster.get('source.toolkit.fluxcd.io/v1', 'OCIRepository', NS, 'app-oci')?.status).toMatchObject({
      artifact: { revision: expect.stringMatching(/^1\.1\.0@sha256:[0-9a-f]{64}$/) },
    });
  });

  it('empties a deleted namespace of its releases: each uninstalls through its finalizer, then the namespace goes', async () => {
    cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    cluster.apply({
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'HelmRepository',
      metadata: { name: 'registry', namespace: 'doomed' },
      spec: { type: 'oci', url: cluster.chartRepository!, insecure: true, interval: '10m' },
    });
    cluster.apply({ ...hr('gone', {}), metadata: { name: 'gone', namespace: 'doomed' } });
    await cluster.waitFor(() => cluster.releaseReady('doomed', 'gone')?.status === 'True', 30_000);
    cluster.cluster.delete(cluster.cluster.typeOf('v1', 'Namespace'), '', 'doomed');
    await cluster.waitFor(() => cluster.get('v1', 'Namespace', '', 'doomed') === undefined, 30_000);
    expect(cluster.list('apps/v1', 'Deployment', 'doomed')).toEqual([]);
  });

  it('uninstalls through its finalizer on deletion: rendered objects and release Secrets go, then the HelmRelease', async () => {
    const type = cluster.cluster.typeOf('helm.toolkit.fluxcd.io/v2', 'HelmRelease');
    cluster.cluster.delete(type, NS, 'web');
    await cluster.waitFor(() => release('web') === undefined, 10_000);
    expect(cluster.get('apps/v1', 'Deployment', NS, 'web')).toBeUndefined();
    expect(cluster.list('v1', 'Secret', NS).filter((s) => (s.metadata as Obj['metadata']).labels?.name === 'web')).toEqual([]);
    expect(cluster.get('source.toolkit.fluxcd.io/v1', 'HelmChart', NS, `${NS}-web`)).toBeUndefined();
  });
});
