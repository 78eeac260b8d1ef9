/**
 * The dev cluster TEST FIXTURE held to two real clients at once: the real
 * kubectl (server-side apply, get -w, wait, explain, diff, patch, auth can-i)
 * and the official Python client (Debian's python3-kubernetes: list, watch
 * from a resourceVersion, create, replace with a stale resourceVersion,
 * custom objects). Each check compares what the client saw with what the
 * fixture stored, so a client reading the protocol differently fails here.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevCluster, type DevCluster, type JsonObject } from '../support/dev-cluster/index.js';
import { ensurePythonKubernetes } from '../support/python-kubernetes.js';

let cluster: DevCluster;
let work: string;
let env: NodeJS.ProcessEnv;
let python: string;
const kubectlBinary = process.env.FLOTILLA_KUBECTL!;

function run(command: string, args: string[], timeout = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  // Asynchronously: the fixture answers from this same process.
  return new Promise((resolve) => {
    execFile(command, args, { env, timeout, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}
const kubectl = (...args: string[]) => run(kubectlBinary, args);

beforeAll(async () => {
  python = ensurePythonKubernetes();
  cluster = await startDevCluster({ registry: false });
  work = mkdtempSync(join(tmpdir(), 'flotilla-conformance-'));
  env = { PATH: process.env.PATH, HOME: work, KUBECONFIG: cluster.kubeconfigPath, KUBECACHEDIR: join(work, 'cache') };
});

afterAll(async () => {
  await cluster?.stop();
});

/** What the Python client does and sees, printed as one JSON document. */
const PYTHON_CLIENT = String.raw`
import json, sys
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

config.load_kube_config(config_file=sys.argv[1])
ns = sys.argv[2]
v1 = client.CoreV1Api()
co = client.CustomObjectsApi()
out = {}
cm = lambda o: {'name': o.metadata.name, 'resourceVersion': o.metadata.resource_version, 'data': o.data}

v1.create_namespace({'metadata': {'name': ns}})
v1.create_namespaced_config_map(ns, {'metadata': {'name': 'a'}, 'data': {'k': '1'}})
listed = v1.list_namespaced_config_map(ns)
start = listed.metadata.resource_version
out['list'] = {'resourceVersion': start, 'items': [cm(i) for i in listed.items]}

v1.create_namespaced_config_map(ns, {'metadata': {'name': 'b'}, 'data': {'k': '2'}})
v1.patch_namespaced_config_map('a', ns, {'data': {'k': '3'}})
v1.delete_namespaced_config_map('b', ns)
events = []
w = watch.Watch()
for event in w.stream(v1.list_namespaced_config_map, ns, resource_version=start, timeout_seconds=5):
    events.append(dict(cm(event['object']), type=event['type']))
    if len(events) == 3:
        w.stop()
out['watch'] = events

current = v1.read_namespaced_config_map('a', ns)
stale = current.metadata.resource_version
current.data = {'k': '4'}
out['replaced'] = cm(v1.replace_namespaced_config_map('a', ns, current))
current.data = {'k': '5'}
current.metadata.resource_version = stale
try:
    v1.replace_namespaced_config_map('a', ns, current)
    out['conflict'] = None
except ApiException as error:
    out['conflict'] = {'status': error.status, 'body': json.loads(error.body)}
out['final'] = cm(v1.read_namespaced_config_map('a', ns))

group, version, plural = 'helm.toolkit.fluxcd.io', 'v2', 'helmreleases'
release = {'apiVersion': group + '/' + version, 'kind': 'HelmRelease', 'metadata': {'name': 'py-hr'},
           'spec': {'interval': '10m', 'suspend': True, 'chart': {'spec': {'chart': 'demo', 'sourceRef': {'kind': 'HelmRepository', 'name': 'charts'}}}}}
created = co.create_namespaced_custom_object(group, version, ns, plural, release)
hr_events = []
w = watch.Watch()
for event in w.stream(co.list_namespaced_custom_object, group, version, ns, plural, resource_version=created['metadata']['resourceVersion'], timeout_seconds=5):
    hr_events.append({'type': event['type'], 'resourceVersion': event['object']['metadata']['resourceVersion'], 'observedGeneration': event['object'].get('status', {}).get('observedGeneration')})
    if event['object'].get('status', {}).get('observedGeneration') == 1:
        w.stop()
out['customWatch'] = hr_events
got = co.get_namespaced_custom_object(group, version, ns, plural, 'py-hr')
got['spec']['maxHistory'] = 3
out['customReplaced'] = co.replace_namespaced_custom_object(group, version, ns, plural, 'py-hr', got)
out['customList'] = [i['metadata']['name'] for i in co.list_namespaced_custom_object(group, version, ns, plural)['items']]
bad = dict(release, metadata={'name': 'py-bad'}, spec=dict(release['spec'], releaseName='r' * 64))
try:
    co.create_namespaced_custom_object(group, version, ns, plural, bad)
    out['customInvalid'] = None
except ApiException as error:
    out['customInvalid'] = {'status': error.status, 'body': json.loads(error.body)}
print(json.dumps(out))
`;

interface SeenConfigMap {
  name: string;
  resourceVersion: string;
  data: Record<string, string> | null;
}

describe('dev cluster (test fixture): conformance with real clients', () => {
  it('agrees with the official Python client (python3-kubernetes): list, watch from a resourceVersion (watch=True), create, stale replace → 409, custom objects', async () => {
    const script = join(work, 'client.py');
    writeFileSync(script, PYTHON_CLIENT);
    const result = await run(python, [script, cluster.kubeconfigPath, 'py']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const seen = JSON.parse(result.stdout) as {
      list: { resourceVersion: string; items: SeenConfigMap[] };
      watch: Array<SeenConfigMap & { type: string }>;
      replaced: SeenConfigMap;
      conflict: { status: number; body: JsonObject } | null;
      final: SeenConfigMap;
      customWatch: Array<{ type: string; resourceVersion: string; observedGeneration: number | null }>;
      customReplaced: JsonObject & { metadata: { generation: number; resourceVersion: string }; spec: JsonObject };
      customList: string[];
      customInvalid: { status: number; body: JsonObject } | null;
    };
    const store = cluster.cluster.store;
    /** The fixture's own record of each configmap change in the namespace after `after`. */
    const stored = (after: number) =>
      store
        .changesSince(Math.max(after, store.oldestResumable))!
        .filter((c) => c.resource === '/configmaps' && c.namespace === 'py')
        .map((c) => ({
          type: c.type,
          name: c.name,
          resourceVersion: String(c.resourceVersion),
          data: (c.object.data as Record<string, string> | undefined) ?? null,
        }));
    const added = stored(0).find((c) => c.name === 'a')!;
    expect(seen.list.items).toEqual([{ name: 'a', resourceVersion: added.resourceVersion, data: { k: '1' } }]);
    // The watch resumed from the list's resourceVersion and saw exactly what the fixture stored after it, in order.
    expect(seen.watch).toEqual(stored(Number(seen.list.resourceVersion)).slice(0, 3));
    expect(seen.watch.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED b', 'MODIFIED a', 'DELETED b']);
    expect(seen.conflict).toMatchObject({
      status: 409,
      body: {
        kind: 'Status',
        reason: 'Conflict',
        code: 409,
        message: 'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
      },
    });
    const a = cluster.get('v1', 'ConfigMap', 'py', 'a')!;
    expect(seen.final).toEqual({ name: 'a', resourceVersion: (a.metadata as { resourceVersion: string }).resourceVersion, data: a.data });
    expect(seen.final).toEqual(seen.replaced);
    expect(seen.final.data).toEqual({ k: '4' });
    // Custom objects: the watch saw the simulation observe the suspended release; the replace bumped the generation.
    expect(seen.customWatch.at(-1)).toMatchObject({ type: 'MODIFIED', observedGeneration: 1 });
    const numbers = seen.customWatch.map((e) => Number(e.resourceVersion));
    expect(numbers).toEqual([...numbers].sort((x, y) => x - y));
    const hr = cluster.get('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'py', 'py-hr')!;
    expect(seen.customReplaced.spec).toEqual(hr.spec);
    expect(seen.customReplaced.metadata.generation).toBe(2);
    expect(seen.customList).toEqual(['py-hr']);
    expect(seen.customInvalid).toMatchObject({
      status: 422,
      body: { reason: 'Invalid', message: 'HelmRelease.helm.toolkit.fluxcd.io "py-bad" is invalid: spec.releaseName: Too long: may not be longer than 53' },
    });
    expect(cluster.get('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'py', 'py-bad')).toBeUndefined();
  });

  it('agrees with the real kubectl: apply --server-side, get -w, wait, explain, diff, patch, auth can-i', async () => {
    const manifest = (maxHistory: number) => `apiVersion: v1
kind: Namespace
metadata:
  name: kc
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web
  namespace: kc
spec:
  interval: 10m
  suspend: true
  maxHistory: ${maxHistory}
  chart:
    spec:
      chart: web
      sourceRef: {kind: HelmRepository, name: charts}
`;
    writeFileSync(join(work, 'web.yaml'), manifest(2));
    expect(await kubectl('apply', '--server-side', '-f', join(work, 'web.yaml'))).toMatchObject({ code: 0 });
    const stored = () =>
      cluster.get('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'kc', 'web') as JsonObject & {
        metadata: { generation: number; resourceVersion: string; managedFields: Array<{ manager: string }> };
        spec: JsonObject;
      };
    expect(stored().spec).toMatchObject({ maxHistory: 2, chart: { spec: { version: '*', reconcileStrategy: 'ChartVersion' } } });
    expect(stored().metadata.managedFields.map((f) => f.manager)).toContain('kubectl');
    // wait: until the simulation has observed the generation.
    expect(await kubectl('wait', 'helmrelease/web', '-n', 'kc', '--for=jsonpath={.status.observedGeneration}=1', '--timeout=20s')).toMatchObject({ code: 0 });

    // get -w: the events kubectl prints are the changes the fixture stored, in order.
    const watcher = spawn(
      kubectlBinary,
      [
        'get',
        'helmrelease',
        'web',
        '-n',
        'kc',
        '-w',
        '--output-watch-events',
        '-o',
        'jsonpath={.type} {.object.metadata.resourceVersion} {.object.spec.maxHistory}{"\\n"}',
      ],
      { env },
    );
    let printed = '';
    watcher.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    await cluster.waitFor(() => printed.includes('ADDED'), 20_000).catch(() => undefined);
    while (!printed.includes('ADDED')) await new Promise((resolve) => setTimeout(resolve, 50));

    // diff: nothing to show for the stored manifest (exit 0), the change for an edited one (exit 1), nothing stored.
    expect(await kubectl('diff', '--server-side', '-f', join(work, 'web.yaml'))).toMatchObject({ code: 0, stdout: '' });
    writeFileSync(join(work, 'web.yaml'), manifest(4));
    const diff = await kubectl('diff', '--server-side', '-f', join(work, 'web.yaml'));
    expect(diff.code).toBe(1);
    expect(diff.stdout).toMatch(/^-\s+maxHistory: 2$/m);
    expect(diff.stdout).toMatch(/^\+\s+maxHistory: 4$/m);
    expect(stored().spec.maxHistory).toBe(2);

    // patch (merge): stored, and refused with the API server's message when Flux's schema refuses it.
    expect(await kubectl('patch', 'helmrelease', 'web', '-n', 'kc', '--type', 'merge', '-p', '{"spec":{"maxHistory":7}}')).toMatchObject({ code: 0 });
    expect(stored().spec.maxHistory).toBe(7);
    const refused = await kubectl(
      'patch',
      'helmrelease',
      'web',
      '-n',
      'kc',
      '--type',
      'merge',
      '-p',
      '{"spec":{"upgrade":{"remediation":{"strategy":"bogus"}}}}',
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'The HelmRelease "web" is invalid: spec.upgrade.remediation.strategy: Unsupported value: "bogus": supported values: "rollback", "uninstall"',
    );
    await cluster.waitFor(() => printed.trim().split('\n').length >= 2, 10_000).catch(() => undefined);
    watcher.kill();
    const lines = printed
      .trim()
      .split('\n')
      .map((line) => line.split(' '));
    const history = cluster.cluster.store
      .changesSince(cluster.cluster.store.oldestResumable)!
      .filter((c) => c.resource === 'helm.toolkit.fluxcd.io/helmreleases' && c.name === 'web');
    // Every event kubectl printed is one the fixture stored, with the resourceVersion and spec it stored, in order.
    for (const [type, resourceVersion, maxHistory] of lines) {
      const change = history.find((c) => String(c.resourceVersion) === resourceVersion);
      expect(change && [change.type === 'ADDED' ? 'ADDED' : type, String((change.object.spec as JsonObject).maxHistory)]).toEqual([type, maxHistory]);
    }
    expect(lines.at(-1)).toEqual(['MODIFIED', stored().metadata.resourceVersion, '7']);

    // explain: Flux's fields, from the fixture's OpenAPI v3.
    const explained = await kubectl('explain', 'helmrelease.spec');
    expect(explained.code).toBe(0);
    for (const field of [
      'chart\t<Object>',
      'dependsOn\t<[]Object>',
      'interval\t<string> -required-',
      'maxHistory\t<integer>',
      'releaseName\t<string>',
      'suspend\t<boolean>',
      'upgrade\t<Object>',
      'valuesFrom\t<[]Object>',
      'values\t<Object>',
    ]) {
      expect(explained.stdout).toContain(`  ${field}`);
    }
    const strategy = await kubectl('explain', 'helmrelease.spec.upgrade.remediation.strategy');
    expect(strategy.stdout).toMatch(/ENUM:\s+rollback\s+uninstall/);

    // auth can-i: the fixture authorizes everything (no RBAC), as an API server with AlwaysAllow.
    const canI = await kubectl('auth', 'can-i', 'create', 'helmreleases', '-n', 'kc');
    expect(canI.stderr).toBe('');
    expect(canI).toMatchObject({ code: 0, stdout: 'yes\n' });
  });
});
