/**
 * TEST FIXTURE — the flotilla dev cluster. Not Kubernetes, not Flux: a
 * stand-in for both, because no Kubernetes API server can be installed on
 * the machines flotilla is developed and tested on.
 *
 * It runs, on loopback only:
 * - an API server speaking the Kubernetes REST protocol (discovery, OpenAPI,
 *   CRUD, watch with resourceVersion and bookmarks, server-side apply with
 *   managedFields, status subresources, finalizers), good enough for the
 *   real kubectl and @kubernetes/client-node;
 * - a simulation of Flux's source- and helm-controller that renders charts
 *   with the real helm, and stand-ins for the workload controllers
 *   (Deployments and the like report themselves rolled out);
 * - Debian's docker-registry as the chart registry, and a folder served as a
 *   Helm HTTP chart repository.
 *
 * At start it records the registry as flotilla's default chart repository
 * (namespace `flotilla-system`, ConfigMap `flotilla-config`, key
 * `chartRepository`). See README.md, "Try it on the dev cluster".
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { ApiServer, type RequestRecord } from './api-server.js';
import { Cluster } from './cluster.js';
import { Faults } from './faults.js';
import { FLUX_CRDS } from './flux-crds.js';
import { FluxSimulation, readyCondition, type FluxTrace } from './flux.js';
import { serveFolder, type HttpRepo } from './http-repo.js';
import type { JsonObject } from './patch.js';
import { startWorkloadControllers } from './workloads.js';
import { startRegistry, type TestRegistry } from '../registry.js';

export { ApiError } from './status.js';
export type { Faults, FaultHandle, RequestFailure, RequestMatch, RenderFailure } from './faults.js';
export type { HttpRepo } from './http-repo.js';
export type { FluxTrace } from './flux.js';
export type { RequestRecord } from './api-server.js';
export type { JsonObject } from './patch.js';
export type { Cluster } from './cluster.js';

export const CONFIG_NAMESPACE = 'flotilla-system';
export const CONFIG_MAP = 'flotilla-config';
export const CONTEXT = 'flotilla-dev';

export interface DevClusterOptions {
  /** Where to write the kubeconfig (default: in the fixture's temp folder). */
  readonly kubeconfigPath?: string;
  /** Register the Flux CRDs and run the Flux simulation (default true; false: a cluster without Flux). */
  readonly flux?: boolean;
  /** Start Debian's docker-registry as the chart registry (default true). */
  readonly registry?: boolean;
  /** Milliseconds every release takes from rendered to Ready (default 0; see faults.slowRelease). */
  readonly defaultReadyDelayMs?: number;
  /** How often watches that allow bookmarks get one (default 60 s, as a real server). */
  readonly bookmarkIntervalMs?: number;
  /** Changes kept for watches to resume from; older resourceVersions get 410 Expired (default 10000). */
  readonly historySize?: number;
  /** helm processes the Flux simulation runs at once (default 4). */
  readonly concurrency?: number;
  /** Base of the Flux simulation's exponential backoff after a failed reconcile or a remediation (default 750 ms, helm-controller's). */
  readonly retryIntervalMs?: number;
  /** How often a HelmRelease waiting on a dependency checks it again (default 30000 ms, helm-controller's --requeue-dependency; set it short in tests). */
  readonly requeueDependencyMs?: number;
  /** The helm binary (default: $FLOTILLA_HELM, else .cache/tools/helm of this checkout). */
  readonly helm?: string;
  /** Told when the Flux simulation queues, starts and ends each render, and when it fetches a chart (benchmarks and tests see where time goes). */
  readonly trace?: (event: FluxTrace) => void;
}

export interface DevCluster {
  /** `http://127.0.0.1:PORT`: the API server. */
  readonly server: string;
  /** A kubeconfig with cluster, user and context `flotilla-dev` (the current context). */
  readonly kubeconfigPath: string;
  /** The chart registry (undefined with `registry: false`). */
  readonly registry: TestRegistry | undefined;
  /** `oci://127.0.0.1:PORT/charts`: the default chart repository recorded in flotilla-config. */
  readonly chartRepository: string | undefined;
  /** A folder served over HTTP on loopback as a Helm HTTP chart repository. */
  readonly httpRepo: HttpRepo;
  readonly faults: Faults;
  /** The fixture's cluster state, for inspection and seeding (same rules as the HTTP API). */
  readonly cluster: Cluster;
  /** Requests the API server answered (bounded, oldest first). */
  readonly requests: readonly RequestRecord[];
  /** An object, or undefined: `get('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'ns', 'name')`. */
  get(apiVersion: string, kind: string, namespace: string, name: string): JsonObject | undefined;
  /** Objects of a kind, in one namespace or all. */
  list(apiVersion: string, kind: string, namespace?: string): JsonObject[];
  /** Server-side applies an object (fieldManager `dev-cluster-test`, forced) and returns it. */
  apply(object: JsonObject): JsonObject;
  /** Packages a chart folder with the real helm (into the folder beside it) and pushes it to the registry; the archive's path. */
  pushChart(chartDir: string): string;
  /** The namespace and an OCI HelmRepository `name` in it over the registry (plain HTTP), as a test's releases take their charts from. */
  applyRegistrySource(namespace: string, name?: string): void;
  /** The Ready condition of a HelmRelease (undefined before the simulation set one). */
  releaseReady(namespace: string, name: string): { status: string; reason: string; message: string } | undefined;
  /** Resolves when `predicate` holds, checked on every change (rejects after `timeoutMs`, default 30 s). */
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves once the Flux simulation has nothing running or queued. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

const repoRoot = resolve(import.meta.dirname, '..', '..', '..');

export function kubeconfigFor(server: string): string {
  return [
    '# flotilla dev cluster: a TEST FIXTURE standing in for Kubernetes + Flux (not a real cluster)',
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${CONTEXT}`,
    '  cluster:',
    `    server: ${server}`,
    // Plain HTTP on loopback: @kubernetes/client-node accepts an http:// server only with this set.
    '    insecure-skip-tls-verify: true',
    'users:',
    `- name: ${CONTEXT}`,
    '  user:',
    '    token: dev-cluster-test-fixture',
    'contexts:',
    `- name: ${CONTEXT}`,
    '  context:',
    `    cluster: ${CONTEXT}`,
    `    user: ${CONTEXT}`,
    '    namespace: default',
    `current-context: ${CONTEXT}`,
    '',
  ].join('\n');
}

export async function startDevCluster(options: DevClusterOptions = {}): Promise<DevCluster> {
  const workDir = mkdtempSync(join(tmpdir(), 'flotilla-dev-cluster-'));
  const cleanups: Array<() => Promise<void> | void> = [() => rmSync(workDir, { recursive: true, force: true })];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  try {
    const cluster = new Cluster({ ...(options.historySize !== undefined ? { historySize: options.historySize } : {}) });
    let server: ApiServer | undefined;
    const faults = new Faults((downForMs) => server!.interrupt(downForMs));
    faults.defaultReadyDelayMs = options.defaultReadyDelayMs ?? 0;
    server = new ApiServer(cluster, faults, { ...(options.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: options.bookmarkIntervalMs } : {}) });
    const apiServer = server;
    const ns = cluster.type('', 'v1', 'namespaces');
    for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease', CONFIG_NAMESPACE]) {
      cluster.create(ns, '', { metadata: { name } }, { fieldManager: 'dev-cluster' });
    }
    const withFlux = options.flux ?? true;
    const helm = options.helm ?? process.env.FLOTILLA_HELM ?? join(repoRoot, '.cache', 'tools', 'helm');
    if (withFlux) {
      cluster.create(ns, '', { metadata: { name: 'flux-system' } }, { fieldManager: 'dev-cluster' });
      const crdType = cluster.type('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
      for (const crd of FLUX_CRDS) cluster.create(crdType, '', crd, { fieldManager: 'dev-cluster' });
    }
    const registry = options.registry === false ? undefined : await startRegistry();
    if (registry) cleanups.push(() => registry.stop());
    const repoDir = join(workDir, 'http-repo');
    mkdirSync(repoDir);
    const httpRepo = await serveFolder(repoDir);
    cleanups.push(() => httpRepo.close());
    const chartRepository = registry ? `oci://${registry.host}/charts` : undefined;
    cluster.create(
      cluster.type('', 'v1', 'configmaps'),
      CONFIG_NAMESPACE,
      {
        metadata: { name: CONFIG_MAP, labels: { 'app.kubernetes.io/managed-by': 'flotilla-dev-cluster' } },
        data: chartRepository ? { chartRepository, chartRepositoryPlainHttp: 'true' } : {},
      },
      { fieldManager: 'dev-cluster' },
    );
    cleanups.push(startWorkloadControllers(cluster));
    await apiServer.listen();
    cleanups.push(() => apiServer.close());
    const flux = withFlux
      ? new FluxSimulation(cluster, faults, {
          helm,
          workDir,
          ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
          ...(options.retryIntervalMs !== undefined ? { retryIntervalMs: options.retryIntervalMs } : {}),
          ...(options.requeueDependencyMs !== undefined ? { requeueDependencyMs: options.requeueDependencyMs } : {}),
          ...(options.trace ? { trace: options.trace } : {}),
        })
      : undefined;
    if (flux) {
      flux.start();
      cleanups.push(() => flux.stop());
    }
    const kubeconfigPath = options.kubeconfigPath ?? join(workDir, 'kubeconfig');
    mkdirSync(dirname(kubeconfigPath), { recursive: true });
    writeFileSync(kubeconfigPath, kubeconfigFor(apiServer.url), { mode: 0o600 });
    const typeOf = (apiVersion: string, kind: string) => cluster.typeOf(apiVersion, kind);
    const applyObject = (object: JsonObject): JsonObject => {
      const type = typeOf(String(object.apiVersion), String(object.kind));
      const meta = (object.metadata ?? {}) as { name?: string; namespace?: string };
      return cluster.apply(type, meta.namespace ?? (type.namespaced ? 'default' : ''), String(meta.name), JSON.stringify(object), {
        fieldManager: 'dev-cluster-test',
        force: true,
      });
    };
    return {
      server: apiServer.url,
      kubeconfigPath,
      registry,
      chartRepository,
      httpRepo: { dir: httpRepo.dir, url: httpRepo.url },
      faults,
      cluster,
      requests: apiServer.requests,
      get: (apiVersion, kind, namespace, name) => cluster.find(typeOf(apiVersion, kind), namespace, name),
      list: (apiVersion, kind, namespace) => cluster.list(typeOf(apiVersion, kind), namespace).items as JsonObject[],
      apply: applyObject,
      pushChart(chartDir) {
        const archive = execFileSync(helm, ['package', chartDir, '--destination', dirname(chartDir)], { encoding: 'utf8' })
          .trim()
          .split(' ')
          .pop()!;
        execFileSync(helm, ['push', archive, chartRepository!, '--plain-http'], { stdio: 'ignore' });
        return archive;
      },
      applyRegistrySource(namespace, name = 'registry') {
        applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
        applyObject({
          apiVersion: 'source.toolkit.fluxcd.io/v1',
          kind: 'HelmRepository',
          metadata: { name, namespace },
          spec: { type: 'oci', url: chartRepository!, insecure: true, interval: '10m' },
        });
      },
      releaseReady(namespace, name) {
        const hr = cluster.find(typeOf('helm.toolkit.fluxcd.io/v2', 'HelmRelease'), namespace, name);
        const ready = hr ? readyCondition(hr) : undefined;
        return ready ? { status: ready.status, reason: ready.reason, message: ready.message } : undefined;
      },
      waitFor(predicate, timeoutMs = 30_000) {
        if (predicate()) return Promise.resolve();
        return new Promise((resolvePromise, reject) => {
          const timer = setTimeout(() => {
            unsubscribe();
            reject(new Error(`dev cluster: condition not met within ${timeoutMs} ms`));
          }, timeoutMs);
          const unsubscribe = cluster.store.subscribe(() => {
            if (!predicate()) return;
            clearTimeout(timer);
            unsubscribe();
            resolvePromise();
          });
        });
      },
      settled: () => flux?.idle() ?? Promise.resolve(),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
