/**
 * The real kubectl against the dev cluster TEST FIXTURE: api-resources,
 * apply --server-side, get, get -w, wait for Ready, delete.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevCluster, type DevCluster } from '../support/dev-cluster/index.js';

let cluster: DevCluster;
let work: string;
let env: NodeJS.ProcessEnv;
const kubectlBinary = process.env.FLOTILLA_KUBECTL!;
const helm = process.env.FLOTILLA_HELM!;

/** Runs kubectl (asynchronously: the fixture answers from this same process). */
function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlBinary, args, { env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => execFile(command, args, (error) => (error ? reject(error) : resolve())));
}

beforeAll(async () => {
  cluster = await startDevCluster();
  work = mkdtempSync(join(tmpdir(), 'flotilla-kubectl-test-'));
  env = { PATH: process.env.PATH, HOME: work, KUBECONFIG: cluster.kubeconfigPath, KUBECACHEDIR: join(work, 'cache') };
  await run(helm, ['create', join(work, 'demo')]);
  await run(helm, ['package', join(work, 'demo'), '--destination', work]);
  await run(helm, ['push', join(work, 'demo-0.1.0.tgz'), cluster.chartRepository!, '--plain-http']);
});

afterAll(async () => {
  await cluster?.stop();
});

const manifests = (release: string, values: string) => `apiVersion: v1
kind: Namespace
metadata:
  name: demo
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: charts
  namespace: demo
spec:
  type: oci
  url: ${cluster.chartRepository}
  insecure: true
  interval: 10m
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: ${release}
  namespace: demo
spec:
  interval: 10m
  chart:
    spec:
      chart: demo
      version: 0.1.0
      sourceRef: {kind: HelmRepository, name: charts}
  values: ${values}
`;

describe('dev cluster (test fixture): the real kubectl', () => {
  it('lists the served resources with api-resources, Flux kinds and short names included', async () => {
    const { code, stdout } = await kubectl('api-resources');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^helmreleases\s+hr\s+helm\.toolkit\.fluxcd\.io\/v2\s+true\s+HelmRelease$/m);
    expect(stdout).toMatch(/^helmrepositories\s+helmrepo\s+source\.toolkit\.fluxcd\.io\/v1\s+true\s+HelmRepository$/m);
    expect(stdout).toMatch(/^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
    expect(stdout).toMatch(/^leases\s+coordination\.k8s\.io\/v1\s+true\s+Lease$/m);
    // kubectl explain reads the OpenAPI v3 documents, with the Flux CRD's declared fields.
    const explained = await kubectl('explain', 'helmrelease.spec.upgrade');
    expect(explained.code).toBe(0);
    expect(explained.stdout).toContain('KIND:       HelmRelease');
    expect(explained.stdout).toMatch(/^\s+preserveValues\s+</m);
  });

  it('applies server-side, waits for Ready, gets with printer columns, and reports a conflict like a real server', async () => {
    writeFileSync(join(work, 'demo.yaml'), manifests('demo', '{replicaCount: 2}'));
    const applied = await kubectl('apply', '--server-side', '-f', join(work, 'demo.yaml'));
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toBe(
      'namespace/demo serverside-applied\nhelmrepository.source.toolkit.fluxcd.io/charts serverside-applied\nhelmrelease.helm.toolkit.fluxcd.io/demo serverside-applied\n',
    );
    const waited = await kubectl('wait', '-n', 'demo', '--for=condition=Ready', 'helmrelease/demo', '--timeout=30s');
    expect(waited).toMatchObject({ code: 0, stdout: 'helmrelease.helm.toolkit.fluxcd.io/demo condition met\n' });
    const table = await kubectl('get', 'hr', '-n', 'demo');
    expect(table.stdout).toMatch(/^NAME\s+AGE\s+READY\s+STATUS\n/);
    expect(table.stdout).toMatch(/^demo\s+\d+s\s+True\s+Helm install succeeded for release demo\/demo\.v1 with chart demo@0\.1\.0$/m);
    // The real helm reads the release the simulation stored, in Helm's own storage format.
    const listed = await new Promise<string>((resolve, reject) =>
      execFile(helm, ['list', '-n', 'demo', '-o', 'json'], { env }, (error, out) => (error ? reject(error) : resolve(out))),
    );
    expect(JSON.parse(listed)).toEqual([expect.objectContaining({ name: 'demo', namespace: 'demo', revision: '1', status: 'deployed', chart: 'demo-0.1.0' })]);
    const described = await kubectl('describe', 'helmrelease', 'demo', '-n', 'demo');
    expect(described.stdout).toMatch(
      /Normal\s+InstallSucceeded\s+\S+\s+helm-controller\s+Helm install succeeded for release demo\/demo\.v1 with chart demo@0\.1\.0/,
    );
    const deployment = JSON.parse((await kubectl('get', 'deployment', 'demo', '-n', 'demo', '-o', 'json')).stdout);
    expect(deployment.spec.replicas).toBe(2);
    expect(await kubectl('rollout', 'status', 'deployment/demo', '-n', 'demo', '--timeout=10s')).toMatchObject({
      code: 0,
      stdout: 'deployment "demo" successfully rolled out\n',
    });
    expect(await kubectl('scale', 'deployment/demo', '-n', 'demo', '--replicas=3')).toMatchObject({ code: 0, stdout: 'deployment.apps/demo scaled\n' });
    expect((cluster.get('apps/v1', 'Deployment', 'demo', 'demo')!.spec as { replicas: number }).replicas).toBe(3);
    expect(deployment.metadata.annotations['meta.helm.sh/release-name']).toBe('demo');
    // Another manager changing a field kubectl applied: kubectl's next apply conflicts, --force-conflicts takes it back.
    cluster.cluster.patch(
      cluster.cluster.typeOf('helm.toolkit.fluxcd.io/v2', 'HelmRelease'),
      'demo',
      'demo',
      'application/merge-patch+json',
      JSON.stringify({ spec: { values: { replicaCount: 5 } } }),
      { fieldManager: 'someone-else' },
    );
    const conflict = await kubectl('apply', '--server-side', '-f', join(work, 'demo.yaml'));
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "someone-else" using helm.toolkit.fluxcd.io/v2: .spec.values.replicaCount');
    const forced = await kubectl('apply', '--server-side', '--force-conflicts', '-f', join(work, 'demo.yaml'));
    expect(forced.code).toBe(0);
    await cluster.waitFor(() => cluster.releaseReady('demo', 'demo')?.reason === 'UpgradeSucceeded', 30_000);
  });

  it("refuses a HelmRelease field Flux does not declare, as kubectl's strict validation on a real cluster does", async () => {
    writeFileSync(
      join(work, 'typo.yaml'),
      manifests('typo', '{}').replace('  interval: 10m\n  chart:', '  interval: 10m\n  instal: {remediation: {retries: 1}}\n  chart:'),
    );
    const refused = await kubectl('apply', '--server-side', '-f', join(work, 'typo.yaml'));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'failed to create typed patch object (demo/typo; helm.toolkit.fluxcd.io/v2, Kind=HelmRelease): .spec.instal: field not declared in schema',
    );
    expect(cluster.get('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'demo', 'typo')).toBeUndefined();
    // Flux's own CRD checks: one of chart and chartRef, durations, required fields.
    writeFileSync(
      join(work, 'invalid.yaml'),
      manifests('invalid', '{}').replace('  interval: 10m\n  chart:', '  interval: 5 minutes\n  chartRef: {kind: OCIRepository, name: x}\n  chart:'),
    );
    const invalid = await kubectl('apply', '--server-side', '-f', join(work, 'invalid.yaml'));
    expect(invalid.code).toBe(1);
    // Schema errors first, then the CEL rules' (the API server runs the rules after the schema).
    expect(invalid.stderr).toContain(
      'The HelmRelease "invalid" is invalid: \n* spec.interval: Invalid value: "5 minutes": spec.interval in body should match \'^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$\'\n* spec: Invalid value: "object": either chart or chartRef must be set',
    );
    expect(cluster.get('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'demo', 'invalid')).toBeUndefined();
    // Without strict validation the server drops the field and warns.
    const warnings: string[] = [];
    const created = cluster.cluster.create(
      cluster.cluster.typeOf('helm.toolkit.fluxcd.io/v2', 'HelmRelease'),
      'demo',
      {
        apiVersion: 'helm.toolkit.fluxcd.io/v2',
        kind: 'HelmRelease',
        metadata: { name: 'lenient' },
        spec: {
          interval: '1m',
          suspend: true,
          chart: { spec: { chart: 'demo', sourceRef: { kind: 'HelmRepository', name: 'charts' } } },
          upgrade: { createNamespace: true },
        },
      },
      { fieldManager: 'test', warnings },
    );
    expect(warnings).toEqual(['unknown field "spec.upgrade.createNamespace"']);
    expect((created.spec as { upgrade: object }).upgrade).toEqual({});
  });

  it("creates namespaces, configmaps, secrets and service accounts with kubectl's typed create sub-commands (protobuf bodies)", async () => {
    expect(await kubectl('create', 'namespace', 'typed')).toMatchObject({ code: 0, stdout: 'namespace/typed created\n' });
    expect((await kubectl('create', 'configmap', 'cm', '-n', 'typed', '--from-literal=a=1', '--from-literal=b=two')).code).toBe(0);
    expect((await kubectl('create', 'secret', 'generic', 's', '-n', 'typed', '--from-literal=password=hunter2')).code).toBe(0);
    expect((await kubectl('create', 'serviceaccount', 'robot', '-n', 'typed')).code).toBe(0);
    expect(cluster.get('v1', 'ConfigMap', 'typed', 'cm')?.data).toEqual({ a: '1', b: 'two' });
    const secret = cluster.get('v1', 'Secret', 'typed', 's')!;
    expect(secret.type).toBe('Opaque');
    expect(Buffer.from(String((secret.data as Record<string, string>).password), 'base64').toString()).toBe('hunter2');
    expect(cluster.get('v1', 'ServiceAccount', 'typed', 'robot')).toBeDefined();
    const unsupported = await kubectl('create', 'deployment', 'd', '-n', 'typed', '--image=nginx');
    expect(unsupported.code).toBe(1);
    expect(unsupported.stderr).toContain('the body of the request was in an unknown format');
  });

  it('stores 1 MiB of Secret or ConfigMap data and a 63-character label value, and refuses more, as the real server does', async () => {
    await kubectl('create', 'namespace', 'sized');
    const file = (name: string, bytes: number) => {
      const path = join(work, name);
      writeFileSync(path, Buffer.alloc(bytes, 'x'));
      return path;
    };
    const limit = 1024 * 1024;
    expect(
      (
        await kubectl(
          'create',
          'secret',
          'generic',
          'fits',
          '-n',
          'sized',
          `--from-file=a=${file('half', limit / 2)}`,
          `--from-file=b=${file('other-half', limit / 2)}`,
        )
      ).code,
    ).toBe(0);
    expect((await kubectl('create', 'configmap', 'fits', '-n', 'sized', `--from-file=a=${file('whole', limit)}`)).code).toBe(0);
    const secret = await kubectl(
      'create',
      'secret',
      'generic',
      'over',
      '-n',
      'sized',
      `--from-file=a=${file('half', limit / 2)}`,
      `--from-file=b=${file('half-and-one', limit / 2 + 1)}`,
    );
    expect(secret).toMatchObject({ code: 1, stderr: expect.stringContaining('Secret "over" is invalid: data: Too long: may not be more than 1048576 bytes') });
    const configMap = await kubectl('create', 'configmap', 'over', '-n', 'sized', `--from-file=a=${file('one-more', limit + 1)}`);
    expect(configMap).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('ConfigMap "over" is invalid: []: Too long: may not be more than 1048576 bytes'),
    });
    expect(cluster.get('v1', 'Secret', 'sized', 'over')).toBeUndefined();
    // A label value as the real server takes it: at most 63 characters.
    expect((await kubectl('label', 'configmap', 'fits', '-n', 'sized', `app=${'a'.repeat(63)}`)).code).toBe(0);
    writeFileSync(
      join(work, 'labelled.yaml'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: labelled, namespace: sized, labels: {app: ${'a'.repeat(64)}}}\n`,
    );
    const label = await kubectl('apply', '--server-side', '-f', join(work, 'labelled.yaml'));
    expect(label).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`metadata.labels: Invalid value: "${'a'.repeat(64)}": must be no more than 63 characters`),
    });
  });

  it('survives the API going away in the middle of an apply; the re-run converges', async () => {
    writeFileSync(
      join(work, 'three.yaml'),
      ['a', 'b', 'c'].map((n) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: part-${n}, namespace: demo}\ndata: {part: ${n}}\n`).join('---\n'),
    );
    const drop = cluster.faults.dropConnections({ method: 'PATCH', path: '/configmaps/part-', skip: 1, times: Infinity });
    const broken = await kubectl('apply', '--server-side', '-f', join(work, 'three.yaml'));
    expect(broken.code).toBe(1);
    expect(cluster.get('v1', 'ConfigMap', 'demo', 'part-a')).toBeDefined();
    expect(cluster.get('v1', 'ConfigMap', 'demo', 'part-c')).toBeUndefined();
    drop.clear();
    expect((await kubectl('apply', '--server-side', '-f', join(work, 'three.yaml'))).code).toBe(0);
    expect(['a', 'b', 'c'].map((n) => cluster.get('v1', 'ConfigMap', 'demo', `part-${n}`)?.data)).toEqual([{ part: 'a' }, { part: 'b' }, { part: 'c' }]);
  });

  it('fails kubectl wait on a release that does not become Ready in time', async () => {
    const slow = cluster.faults.slowRelease('demo/slow', 60_000);
    writeFileSync(join(work, 'slow.yaml'), manifests('slow', '{}'));
    expect((await kubectl('apply', '--server-side', '-f', join(work, 'slow.yaml'))).code).toBe(0);
    const waited = await kubectl('wait', '-n', 'demo', '--for=condition=Ready', 'helmrelease/slow', '--timeout=1s');
    expect(waited.code).toBe(1);
    expect(waited.stderr).toContain('timed out waiting for the condition on helmreleases/slow');
    slow.clear();
  });

  it('streams changes with get -w, and deletes a HelmRelease through its finalizer', async () => {
    const watcher = spawn(kubectlBinary, ['get', 'configmaps', '-n', 'demo', '-w', '--output-watch-events'], { env });
    let output = '';
    watcher.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    while (!cluster.requests.some((r) => r.url.includes('/namespaces/demo/configmaps') && r.url.includes('watch=')))
      await new Promise((resolve) => setTimeout(resolve, 50));
    writeFileSync(join(work, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: watched, namespace: demo}\ndata: {a: "1"}\n');
    expect((await kubectl('apply', '--server-side', '-f', join(work, 'cm.yaml'))).code).toBe(0);
    expect((await kubectl('label', 'configmap', 'watched', '-n', 'demo', 'x=y')).code).toBe(0);
    const deleted = await kubectl('delete', 'configmap', 'watched', '-n', 'demo');
    expect(deleted.stdout).toContain('configmap "watched" deleted');
    await new Promise((resolve) => setTimeout(resolve, 300));
    watcher.kill();
    expect(output).toMatch(/^EVENT\s+NAME\s+DATA\s+AGE$|^EVENT\s+NAME\s+AGE$/m);
    expect(output).toMatch(/^ADDED\s+watched\s/m);
    expect(output).toMatch(/^MODIFIED\s+watched\s/m);
    expect(output).toMatch(/^DELETED\s+watched\s/m);

    const removed = await kubectl('delete', 'helmrelease', 'demo', '-n', 'demo', '--timeout=30s');
    expect(removed).toMatchObject({ code: 0 });
    expect(removed.stdout).toContain('helmrelease.helm.toolkit.fluxcd.io "demo" deleted');
    expect(cluster.get('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'demo', 'demo')).toBeUndefined();
    expect(cluster.get('apps/v1', 'Deployment', 'demo', 'demo')).toBeUndefined();
    const missing = await kubectl('get', 'hr', 'demo', '-n', 'demo');
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe('Error from server (NotFound): helmreleases.helm.toolkit.fluxcd.io "demo" not found');
  });
});
