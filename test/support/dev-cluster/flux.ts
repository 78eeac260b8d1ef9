/**
 * TEST FIXTURE (dev cluster): a simulation of Flux's source-controller and
 * helm-controller, driven by the store's change events (no polling loops).
 *
 * - HelmRepository: `default` type fetches index.yaml (loopback only) and
 *   becomes Ready with an artifact; `oci` type stays static (empty status,
 *   no Ready condition), as in source-controller v1.
 * - HelmChart (created per HelmRelease from `spec.chart` at the start of
 *   every reconcile, before dependsOn is checked, as helm-controller does,
 *   so a waiting release's chart is pulled while its dependencies install)
 *   and OCIRepository: the chart is pulled with the real helm, or, for an
 *   exact version from a plain-HTTP OCI registry, in-process over the
 *   distribution API (./oci-pull.ts), as source-controller pulls; one pull
 *   per chart content (manifest digest, or index revision and version).
 * - HelmRelease: honours suspend, dependsOn, valuesFrom (in order, then
 *   inline values), renders with the real `helm template`, stores the
 *   objects with Helm's labels and annotations and a Helm release Secret
 *   (`sh.helm.release.v1.NAME.vN`, Helm's storage format), prunes objects an
 *   upgrade dropped, and moves status as helm-controller v1.x does
 *   (`reconcileHelmRelease`): Reconciling, Ready, Released, Remediated and
 *   Stalled with Flux's reasons and Helm's error text, status.history,
 *   failure counters, remediation (uninstall, rollback) with backoff, a
 *   dependency polled every requeueDependencyMs; and uninstalls through the
 *   `finalizers.fluxcd.io` finalizer.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { load, loadAll } from 'js-yaml';
import type { Cluster } from './cluster.js';
import { KUBE_VERSION } from './discovery.js';
import type { Faults } from './faults.js';
import { Helm, HelmError, type ChartMetadata } from './helm.js';
import { pullOciChart, resolveOciChart, sha256 } from './oci-pull.js';
import { HelmReleaseStorage } from './helm-storage.js';
import { clone, deepEqual, isObject, type Json, type JsonObject } from './patch.js';
import { apiVersionOf, type ResourceType } from './resources.js';
import { ApiError } from './status.js';
import { metaOf, now, type StoredChange } from './store.js';

export const FLUX_FINALIZER = 'finalizers.fluxcd.io';
const MANAGER = 'helm-controller';
const SOURCE_MANAGER = 'source-controller';
const REQUESTED_AT = 'reconcile.fluxcd.io/requestedAt';
const FORCE_AT = 'reconcile.fluxcd.io/forceAt';
const RESET_AT = 'reconcile.fluxcd.io/resetAt';
const WATCH_LABEL = 'reconcile.fluxcd.io/watch';

const HR = { group: 'helm.toolkit.fluxcd.io', version: 'v2', plural: 'helmreleases' };
const HELM_REPO = { group: 'source.toolkit.fluxcd.io', version: 'v1', plural: 'helmrepositories' };
const HELM_CHART = { group: 'source.toolkit.fluxcd.io', version: 'v1', plural: 'helmcharts' };
const OCI_REPO = { group: 'source.toolkit.fluxcd.io', version: 'v1', plural: 'ocirepositories' };

interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

interface Snapshot {
  name: string;
  namespace: string;
  version: number;
  status: string;
  chartName: string;
  chartVersion: string;
  appVersion?: string;
  configDigest: string;
  digest: string;
  firstDeployed: string;
  lastDeployed: string;
}

interface Artifact {
  path: string;
  url: string;
  revision: string;
  digest: string;
  lastUpdateTime: string;
  size: number;
}

interface Reference {
  kind: string;
  name: string;
  namespace: string;
}

interface InventoryEntry {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  /** `helm.sh/resource-policy: keep` in the manifest: Helm's uninstall and upgrade leave it. */
  kept: boolean;
}

type ReleaseAction = 'install' | 'upgrade' | 'rollback' | 'uninstall';

interface ReleaseTarget {
  releaseName: string;
  targetNamespace: string;
  storageNamespace: string;
}

interface ActionOutcome {
  ok: boolean;
  /** Whether Helm recorded a release (a failure before that stores nothing and is not counted). */
  stored: boolean;
  message: string;
  maxHistory: number;
  snapshot?: Snapshot;
}

interface RemediationOutcome {
  reason: string;
  message: string;
  snapshot?: Snapshot;
}

/** spec.install.remediation or spec.upgrade.remediation, with helm-controller's defaults and the failure count it is judged on. */
class Remediation {
  readonly retries: number;
  readonly failures: number;
  readonly strategy: string;
  readonly remediateLastFailure: boolean;

  constructor(spec: JsonObject, status: JsonObject, action: 'install' | 'upgrade') {
    const actionSpec = isObject(spec[action]) ? (spec[action] as JsonObject) : {};
    const remediation = isObject(actionSpec.remediation) ? actionSpec.remediation : {};
    this.retries = typeof remediation.retries === 'number' ? remediation.retries : 0;
    this.failures = Number(status[`${action}Failures`] ?? 0);
    this.strategy = action === 'install' ? 'uninstall' : String(remediation.strategy ?? 'rollback');
    // Install: only when asked. Upgrade: by default when there are retries.
    this.remediateLastFailure =
      typeof remediation.remediateLastFailure === 'boolean' ? remediation.remediateLastFailure : action === 'upgrade' && this.retries > 0;
  }

  /** `retries: N` is N+1 attempts; negative is unlimited. */
  get exhausted(): boolean {
    return this.retries >= 0 && this.failures > this.retries;
  }
}

/** helm-controller's conditions.Set: replaces a condition of the same type in place, else appends. */
function setCondition(conditions: Condition[], condition: Condition): Condition[] {
  const at = conditions.findIndex((c) => c.type === condition.type);
  if (at < 0) return [...conditions, condition];
  return conditions.map((c, i) => (i === at ? { ...c, ...condition } : c));
}

/**
 * helm-controller's summarize: Ready copies the first present of
 * Remediated, TestSuccess, Released — False whatever Remediated says (a
 * remediated release is a failed one); Ready=True clears Stalled.
 */
function summarize(conditions: Condition[]): Condition[] {
  const source = ['Remediated', 'TestSuccess', 'Released'].map((type) => conditions.find((c) => c.type === type)).find((c) => c !== undefined);
  if (!source) return conditions;
  const ready: Condition = { type: 'Ready', status: source.type === 'Remediated' ? 'False' : source.status, reason: source.reason, message: source.message };
  const result = setCondition(conditions, ready);
  return ready.status === 'True' ? result.filter((c) => c.type !== 'Stalled') : result;
}

/** helm-controller's ClearFailures: the counts go (they are omitted when zero). */
function clearFailures(status: JsonObject): void {
  delete status.failures;
  delete status.installFailures;
  delete status.upgradeFailures;
}

export interface FluxOptions {
  readonly helm: string;
  readonly workDir: string;
  /** helm processes run at once (helm-controller's --concurrent; default 4). */
  readonly concurrency?: number;
  /** Base of the exponential backoff after a failed reconcile or a remediation (controller-runtime's rate limiter: 750 ms, doubling, up to 15 min). */
  readonly retryIntervalMs?: number;
  /** How often a release waiting on a dependency checks it again (helm-controller's --requeue-dependency: 30 s). */
  readonly requeueDependencyMs?: number;
  /** Told when a release's render waits for a helm slot, starts and ends, and when a chart is fetched (benchmarks and tests see where time goes). */
  readonly trace?: (event: FluxTrace) => void;
}

export interface FluxTrace {
  /** The HelmRelease, or for `chart-fetched` the HelmChart whose reconcile fetched the chart. */
  readonly namespace: string;
  readonly name: string;
  /** `chart-fetched`: a chart's content came from the registry (not from what was pulled before). */
  readonly phase: 'render-queued' | 'render-start' | 'render-end' | 'chart-fetched';
  /** Date.now() when it happened. */
  readonly at: number;
}

/** Charts pulled in-process at once, in the order their HelmCharts appeared: source-controller's --concurrent default. */
const SOURCE_CONCURRENCY = 2;

/** A chart version that names one version (not a range). */
const EXACT_VERSION = /^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Why a reconcile stops with Ready=False: Flux's reason and message. */
class ReconcileFailure extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** helm-controller's `--set`-style parse of a targetPath value: true/false/null/integers are typed. */
function setAtPath(target: JsonObject, path: string, raw: string): void {
  const segments = path.split(/(?<!\\)\./).map((s) => s.replace(/\\\./g, '.'));
  const typed: Json = raw === 'true' ? true : raw === 'false' ? false : raw === 'null' ? null : /^-?(0|[1-9]\d*)$/.test(raw) ? Number(raw) : raw;
  let node = target;
  segments.forEach((segment, index) => {
    const m = /^(.*)\[(\d+)\]$/.exec(segment);
    const key = m ? m[1]! : segment;
    if (index === segments.length - 1 && !m) {
      node[key] = typed;
      return;
    }
    if (m) {
      const list = Array.isArray(node[key]) ? (node[key] as Json[]) : [];
      node[key] = list;
      const at = Number(m[2]);
      if (index === segments.length - 1) {
        list[at] = typed;
        return;
      }
      if (!isObject(list[at])) list[at] = {};
      node = list[at] as JsonObject;
      return;
    }
    if (!isObject(node[key])) node[key] = {};
    node = node[key] as JsonObject;
  });
}

/** Helm's value merge: maps merge, everything else replaces. */
function mergeValues(base: JsonObject, over: JsonObject): JsonObject {
  const result: JsonObject = { ...base };
  for (const [key, value] of Object.entries(over)) {
    result[key] = isObject(value) && isObject(result[key]) ? mergeValues(result[key] as JsonObject, value) : clone(value);
  }
  return result;
}

const conditionsOf = (object: JsonObject): Condition[] =>
  isObject(object.status) && Array.isArray(object.status.conditions) ? (object.status.conditions as unknown as Condition[]) : [];

export const readyCondition = (object: JsonObject): Condition | undefined => conditionsOf(object).find((c) => c.type === 'Ready');

/** Ready=True for the object's current generation. */
const isReady = (object: JsonObject): boolean => {
  const ready = readyCondition(object);
  const status = isObject(object.status) ? object.status : {};
  return ready?.status === 'True' && (status.observedGeneration === undefined || status.observedGeneration === metaOf(object).generation);
};

/** One queue per object: a change while it reconciles runs it once more afterwards. */
class Queue {
  private readonly running = new Set<string>();
  private readonly again = new Set<string>();
  private readonly waiting: Array<() => void> = [];
  private active = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  enqueue(key: string, work: () => Promise<void>): void {
    if (this.running.has(key)) {
      this.again.add(key);
      return;
    }
    this.running.add(key);
    void (async () => {
      try {
        // A controller's workqueue: the reconcile starts after the change that asked for it reached every watcher,
        // never inside the store's notification (its writes would reach watches before that change).
        await new Promise((resolve) => setImmediate(resolve));
        do {
          this.again.delete(key);
          await work().catch(() => undefined);
        } while (this.again.has(key));
      } finally {
        this.running.delete(key);
        if (this.running.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
      }
    })();
  }

  /** Runs `work` when fewer than `limit` tasks it limits are running, in the order they asked. */
  async limited<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await work();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }

  idle(): Promise<void> {
    return this.running.size === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}

export class FluxSimulation {
  private readonly helm: Helm;
  private readonly storage: HelmReleaseStorage;
  private readonly queue: Queue;
  /** Slots for in-process chart pulls (source-controller's workers); helm pulls take helm slots. */
  private readonly sourceSlots: Queue;
  private readonly artifacts: string;
  private unsubscribe: () => void = () => undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly cluster: Cluster,
    private readonly faults: Faults,
    private readonly options: FluxOptions,
  ) {
    this.helm = new Helm(options.helm, options.workDir);
    this.storage = new HelmReleaseStorage(cluster, MANAGER);
    this.queue = new Queue(options.concurrency ?? 4);
    this.sourceSlots = new Queue(SOURCE_CONCURRENCY);
    this.artifacts = join(options.workDir, 'artifacts');
    mkdirSync(this.artifacts, { recursive: true });
  }

  start(): void {
    this.unsubscribe = this.cluster.store.subscribe((change) => this.onChange(change));
    // Objects stored before the simulation started are reconciled too.
    for (const [resource, kind] of [
      [HELM_REPO, 'HelmRepository'],
      [OCI_REPO, 'OCIRepository'],
      [HELM_CHART, 'HelmChart'],
      [HR, 'HelmRelease'],
    ] as const) {
      const type = this.type(resource);
      if (!type) continue;
      for (const object of this.cluster.list(type, undefined).items as JsonObject[]) this.schedule(kind, object);
    }
  }

  stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    for (const timer of this.timers) clearTimeout(timer);
    for (const timer of this.intervals.values()) clearTimeout(timer);
    for (const { timer } of this.requeues.values()) clearTimeout(timer);
    return this.helm.close();
  }

  /** Resolves once no reconcile is running or queued. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  private type(resource: { group: string; version: string; plural: string }): ResourceType | undefined {
    return this.cluster.types.get(resource.group, resource.version, resource.plural);
  }

  private schedule(kind: string, object: JsonObject): void {
    if (this.stopped) return;
    const meta = metaOf(object);
    const key = `${kind}/${meta.namespace}/${meta.name}`;
    const [ns, name] = [meta.namespace ?? '', meta.name];
    const work: Record<string, () => Promise<void>> = {
      HelmRepository: () => this.reconcileHelmRepository(ns, name),
      OCIRepository: () => this.reconcileOciRepository(ns, name),
      HelmChart: () => this.reconcileHelmChart(ns, name),
    };
    this.queue.enqueue(key, async () => {
      if (kind === 'HelmRelease') {
        const after = await this.reconcileHelmRelease(ns, name);
        if (after !== undefined) this.requeue(key, kind, ns, name, after);
        return;
      }
      await work[kind]!();
      this.requeueAfterInterval(key, kind, ns, name);
    });
  }

  /**
   * The object is reconciled again after `delayMs`, as a controller's
   * workqueue requeues it: one pending requeue per object, the earliest wins.
   */
  private requeue(key: string, kind: string, namespace: string, name: string, delayMs: number): void {
    if (this.stopped) return;
    const at = Date.now() + delayMs;
    const pending = this.requeues.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const resource = { HelmRepository: HELM_REPO, OCIRepository: OCI_REPO, HelmChart: HELM_CHART, HelmRelease: HR }[kind]!;
    const timer = setTimeout(() => {
      this.requeues.delete(key);
      const current = this.find(resource, namespace, name);
      if (current) this.schedule(kind, current);
    }, delayMs);
    timer.unref();
    this.requeues.set(key, { timer, at });
  }

  private readonly requeues = new Map<string, { timer: NodeJS.Timeout; at: number }>();

  /** Objects are reconciled again every spec.interval, as the controllers requeue them (an idle timer, not a loop). */
  private requeueAfterInterval(key: string, kind: string, namespace: string, name: string): void {
    clearTimeout(this.intervals.get(key));
    this.intervals.delete(key);
    const resource = { HelmRepository: HELM_REPO, OCIRepository: OCI_REPO, HelmChart: HELM_CHART, HelmRelease: HR }[kind]!;
    const object = this.find(resource, namespace, name);
    if (!object || this.stopped || metaOf(object).deletionTimestamp) return;
    const spec = isObject(object.spec) ? object.spec : {};
    if (spec.suspend === true || typeof spec.interval !== 'string') return;
    const timer = setTimeout(() => {
      this.intervals.delete(key);
      const current = this.find(resource, namespace, name);
      if (current) this.schedule(kind, current);
    }, parseDuration(spec.interval));
    timer.unref();
    this.intervals.set(key, timer);
  }

  private readonly intervals = new Map<string, NodeJS.Timeout>();

  /**
   * What makes an object worth reconciling: new, new generation, a requested
   * reconcile, deletion — helm-controller's predicates (GenerationChanged or
   * ReconcileRequested: only requestedAt; a forceAt or resetAt alone wakes nothing).
   */
  private wantsReconcile(change: StoredChange): boolean {
    if (change.type === 'DELETED') return false;
    if (change.type === 'ADDED' || !change.previous) return true;
    const [before, after] = [metaOf(change.previous), metaOf(change.object)];
    const annotation = (m: typeof before, key: string) => m.annotations?.[key];
    return (
      before.generation !== after.generation ||
      annotation(before, REQUESTED_AT) !== annotation(after, REQUESTED_AT) ||
      (!before.deletionTimestamp && after.deletionTimestamp !== undefined)
    );
  }

  private onChange(change: StoredChange): void {
    const kindOf: Record<string, string> = {
      'helm.toolkit.fluxcd.io/helmreleases': 'HelmRelease',
      'source.toolkit.fluxcd.io/helmrepositories': 'HelmRepository',
      'source.toolkit.fluxcd.io/helmcharts': 'HelmChart',
      'source.toolkit.fluxcd.io/ocirepositories': 'OCIRepository',
    };
    const kind = kindOf[change.resource];
    if (kind && this.wantsReconcile(change)) this.schedule(kind, change.object);
    if (!kind && change.type !== 'DELETED' && (change.resource === '/configmaps' || change.resource === '/secrets')) {
      if (metaOf(change.object).labels?.[WATCH_LABEL] === 'Enabled') this.valuesSourceChanged(change);
      return;
    }
    if (!kind || change.type === 'DELETED') return;
    // A source or release whose readiness or artifact changed wakes the objects waiting on it; so does a
    // HelmRepository appearing or changing its spec (an OCI one has no status to change).
    const after = change.object;
    const before = change.previous ?? { metadata: {} };
    const artifactOf = (o: JsonObject) => (isObject(o.status) ? o.status.artifact : undefined);
    const changed =
      !deepEqual(readyCondition(before)?.status, readyCondition(after)?.status) ||
      !deepEqual(artifactOf(before), artifactOf(after)) ||
      (kind === 'HelmRepository' && metaOf(before).generation !== metaOf(after).generation);
    if (!changed) return;
    const ref = `${change.namespace}/${change.name}`;
    // helm-controller does not watch a release's dependencies: a waiting release polls them every requeueDependencyMs.
    if (kind === 'HelmRelease') return;
    if (kind === 'HelmRepository') {
      for (const chart of this.list(HELM_CHART)) {
        const source = this.chartSource(chart);
        if (source.kind === 'HelmRepository' && `${source.namespace}/${source.name}` === ref) this.schedule('HelmChart', chart);
      }
    } else {
      const labels = metaOf(after).labels ?? {};
      for (const hr of this.releases()) {
        const hrMeta = metaOf(hr);
        const chartRef = this.chartRefOf(hr);
        const owner =
          kind === 'HelmChart' && labels['helm.toolkit.fluxcd.io/name'] === hrMeta.name && labels['helm.toolkit.fluxcd.io/namespace'] === hrMeta.namespace;
        if (owner || (chartRef && chartRef.kind === kind && `${chartRef.namespace}/${chartRef.name}` === ref)) this.schedule('HelmRelease', hr);
      }
    }
  }

  private valuesSourceChanged(change: StoredChange): void {
    const kind = change.resource === '/configmaps' ? 'ConfigMap' : 'Secret';
    for (const hr of this.releases()) {
      if (metaOf(hr).namespace !== change.namespace) continue;
      const spec = isObject(hr.spec) ? hr.spec : {};
      const refs = Array.isArray(spec.valuesFrom) ? spec.valuesFrom.filter(isObject) : [];
      if (refs.some((r) => r.kind === kind && r.name === change.name)) this.schedule('HelmRelease', hr);
    }
  }

  /** The stored objects, not copied: event routing only reads them. */
  private list(resource: { group: string; version: string; plural: string }): readonly JsonObject[] {
    const type = this.type(resource);
    return type ? this.cluster.peekAll(type) : [];
  }

  private releases(): readonly JsonObject[] {
    return this.list(HR);
  }

  private find(resource: { group: string; version: string; plural: string }, namespace: string, name: string): JsonObject | undefined {
    const type = this.type(resource);
    return type ? this.cluster.find(type, namespace, name) : undefined;
  }

  // ---- status writes ---------------------------------------------------------

  /** Merges `status` into the object's status through the status subresource (no-op when unchanged). */
  private writeStatus(
    resource: { group: string; version: string; plural: string },
    namespace: string,
    name: string,
    status: JsonObject,
    manager: string,
  ): void {
    const type = this.type(resource);
    // Read without a copy: only the update below writes, from a new object.
    const current = type ? this.cluster.peek(type, namespace, name) : undefined;
    if (!type || !current) return;
    // A HelmRelease's status is written whole (fields helm-controller clears go); the sources' statuses are merged.
    const next = resource === HR ? { ...status } : { ...(isObject(current.status) ? current.status : {}), ...status };
    if (Array.isArray(next.conditions)) next.conditions = this.stampConditions(current, next.conditions as unknown as Condition[]) as unknown as Json;
    if (deepEqual(next, current.status)) return;
    try {
      this.cluster.update(
        type,
        namespace,
        name,
        { ...current, apiVersion: apiVersionOf(type), kind: type.kind, status: next },
        { fieldManager: manager },
        'status',
      );
    } catch (error) {
      if (error instanceof ApiError && (error.code === 404 || error.code === 409)) return;
      throw error;
    }
  }

  /** Keeps lastTransitionTime when a condition's status did not change. */
  private stampConditions(current: JsonObject, conditions: Condition[]): Condition[] {
    const before = conditionsOf(current);
    const generation = metaOf(current).generation;
    return conditions.map((c) => {
      const old = before.find((b) => b.type === c.type);
      return {
        ...c,
        ...(generation !== undefined ? { observedGeneration: generation } : {}),
        lastTransitionTime: old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now(),
      };
    });
  }

  // ---- sources ----------------------------------------------------------------

  private checkLoopback(url: string): void {
    const host = new URL(url.replace(/^oci:/, 'http:')).hostname;
    if (!LOOPBACK.has(host)) {
      throw new ReconcileFailure('URLInvalid', `the dev cluster test fixture fetches charts from loopback only (127.0.0.1, localhost, ::1), not ${host}`);
    }
  }

  /** The artifact for a pulled chart; the source's current one when nothing changed (so its status stays put). */
  private storeArtifact(source: JsonObject, kind: string, file: string, revision: string): Artifact {
    const meta = metaOf(source);
    const path = `${kind}/${meta.namespace}/${meta.name}/${file.split('/').pop()}`;
    const digest = sha256(readFileSync(file));
    const current = isObject(source.status) && isObject(source.status.artifact) ? (source.status.artifact as unknown as Artifact) : undefined;
    if (current && current.path === path && current.digest === digest && current.revision === revision) return current;
    return { path, url: `http://source-controller.flux-system.svc.cluster.local./${path}`, revision, digest, lastUpdateTime: now(), size: statSync(file).size };
  }

  private async reconcileHelmRepository(namespace: string, name: string): Promise<void> {
    const repo = this.find(HELM_REPO, namespace, name);
    if (!repo || metaOf(repo).deletionTimestamp) return;
    const spec = isObject(repo.spec) ? repo.spec : {};
    if (spec.suspend === true) return;
    const generation = metaOf(repo).generation;
    const url = String(spec.url ?? '');
    try {
      this.checkLoopback(url);
      if (spec.type === 'oci') {
        // source-controller v1 keeps an OCI HelmRepository static: an empty status, no Ready condition;
        // HelmCharts read its URL when they pull.
        const type = this.type(HELM_REPO)!;
        if (isObject(repo.status) && Object.keys(repo.status).length > 0)
          this.cluster.update(type, namespace, name, { ...repo, status: {} }, { fieldManager: SOURCE_MANAGER }, 'status');
        return;
      }
      const indexUrl = `${url.replace(/\/+$/, '')}/index.yaml`;
      let text: string;
      try {
        const response = await fetch(indexUrl);
        if (!response.ok) throw new Error(`failed to fetch ${indexUrl} : ${response.status} ${response.statusText}`);
        text = await response.text();
        const index = load(text);
        if (!isObject(index) || !isObject(index.entries)) throw new Error('no API version specified');
      } catch (error) {
        throw new ReconcileFailure('IndexationFailed', `failed to fetch Helm repository index: ${(error as Error).message}`);
      }
      this.succeeded('HelmRepository', namespace, name);
      const revision = sha256(text);
      const current = isObject(repo.status) && isObject(repo.status.artifact) ? (repo.status.artifact as unknown as Artifact) : undefined;
      const artifact: Artifact =
        current?.revision === revision
          ? current
          : {
              path: `helmrepository/${namespace}/${name}/index-${revision.slice(7)}.yaml`,
              url: `http://source-controller.flux-system.svc.cluster.local./helmrepository/${namespace}/${name}/index.yaml`,
              revision,
              digest: revision,
              lastUpdateTime: now(),
              size: text.length,
            };
      this.writeStatus(
        HELM_REPO,
        namespace,
        name,
        {
          observedGeneration: generation!,
          url: artifact.url,
          artifact: artifact as unknown as Json,
          conditions: [
            { type: 'Ready', status: 'True', reason: 'Succeeded', message: `stored artifact: revision '${revision}'` },
            { type: 'ArtifactInStorage', status: 'True', reason: 'Succeeded', message: `stored artifact: revision '${revision}'` },
          ] as unknown as Json,
        },
        SOURCE_MANAGER,
      );
    } catch (error) {
      const failure = error instanceof ReconcileFailure ? error : new ReconcileFailure('Failed', (error as Error).message);
      this.writeStatus(
        HELM_REPO,
        namespace,
        name,
        {
          observedGeneration: generation!,
          conditions: [
            { type: 'Ready', status: 'False', reason: failure.reason, message: failure.message },
            { type: 'FetchFailed', status: 'True', reason: failure.reason, message: failure.message },
          ] as unknown as Json,
        },
        SOURCE_MANAGER,
      );
      this.backOff('HelmRepository', repo);
    }
  }

  private chartSource(chart: JsonObject): Reference {
    const spec = isObject(chart.spec) ? chart.spec : {};
    const ref = isObject(spec.sourceRef) ? spec.sourceRef : {};
    return { kind: String(ref.kind ?? 'HelmRepository'), name: String(ref.name ?? ''), namespace: metaOf(chart).namespace ?? '' };
  }

  private chartRefOf(hr: JsonObject): Reference | undefined {
    const spec = isObject(hr.spec) ? hr.spec : {};
    if (!isObject(spec.chartRef)) return undefined;
    return {
      kind: String(spec.chartRef.kind ?? ''),
      name: String(spec.chartRef.name ?? ''),
      namespace: String(spec.chartRef.namespace ?? metaOf(hr).namespace ?? ''),
    };
  }

  private async reconcileHelmChart(namespace: string, name: string): Promise<void> {
    const chart = this.find(HELM_CHART, namespace, name);
    if (!chart || metaOf(chart).deletionTimestamp) return;
    const spec = isObject(chart.spec) ? chart.spec : {};
    if (spec.suspend === true) return;
    const generation = metaOf(chart).generation!;
    const source = this.chartSource(chart);
    const fail = (reason: string, message: string) => {
      this.writeStatus(
        HELM_CHART,
        namespace,
        name,
        {
          observedGeneration: generation,
          conditions: [
            { type: 'Ready', status: 'False', reason, message },
            { type: 'FetchFailed', status: 'True', reason, message },
          ] as unknown as Json,
        },
        SOURCE_MANAGER,
      );
      this.backOff('HelmChart', chart);
    };
    if (source.kind !== 'HelmRepository')
      return void fail('SourceUnavailable', `unsupported source kind '${source.kind}': the dev cluster test fixture serves charts from HelmRepository sources`);
    const repo = this.find(HELM_REPO, source.namespace, source.name);
    if (!repo) return void fail('SourceUnavailable', `failed to get source: helmrepositories.source.toolkit.fluxcd.io "${source.name}" not found`);
    const repoSpec = isObject(repo.spec) ? repo.spec : {};
    if (repoSpec.type !== 'oci' && !isReady(repo)) return void fail('SourceUnavailable', `HelmRepository '${source.namespace}/${source.name}' is not ready`);
    const url = String(repoSpec.url ?? '').replace(/\/+$/, '');
    const chartName = String(spec.chart ?? '');
    const version = String(spec.version ?? '*');
    try {
      const destination = join(this.artifacts, 'pulled');
      let pull: Promise<string>;
      if (repoSpec.type === 'oci' && repoSpec.insecure === true && EXACT_VERSION.test(version)) {
        // An exact version over plain HTTP is pulled in-process (as source-controller does, without a helm process):
        // 80 charts pulled at once must not take the helm slots the renders need. The manifest, fetched once, names the content.
        pull = this.sourceSlots.limited(async () => {
          const manifest = await resolveOciChart(`${url}/${chartName}`, version);
          return this.pullOnce(`oci ${url}/${chartName}@${manifest.digest}`, namespace, name, () => pullOciChart(manifest, destination));
        });
      } else {
        pull = this.pullOnce(await this.pullCacheKey(repo, url, chartName, version), namespace, name, () =>
          this.queue.limited(() =>
            repoSpec.type === 'oci'
              ? this.helm.pull({ chart: `${url}/${chartName}`, version, plainHttp: repoSpec.insecure === true }, destination)
              : this.helm.pull({ chart: chartName, repoUrl: url, version }, destination),
          ),
        );
      }
      const file = await pull;
      const metadata = await this.helm.metadata(file);
      const artifact = this.storeArtifact(chart, 'helmchart', file, metadata.version);
      this.artifactFiles.set(artifact.path, file);
      this.succeeded('HelmChart', namespace, name);
      const message = `pulled '${metadata.name}' chart with version '${metadata.version}'`;
      this.writeStatus(
        HELM_CHART,
        namespace,
        name,
        {
          observedGeneration: generation,
          observedChartName: metadata.name,
          observedSourceArtifactRevision: (isObject(repo.status) && isObject(repo.status.artifact) ? repo.status.artifact.revision : '') ?? '',
          url: artifact.url,
          artifact: artifact as unknown as Json,
          conditions: [
            { type: 'Ready', status: 'True', reason: 'ChartPullSucceeded', message },
            { type: 'ArtifactInStorage', status: 'True', reason: 'ChartPullSucceeded', message },
          ] as unknown as Json,
        },
        SOURCE_MANAGER,
      );
    } catch (error) {
      fail('ChartPullError', `chart pull error: ${(error as Error).message}`);
    }
  }

  /** Pulled chart archives by what identifies their content, so HelmCharts of one chart share one pull. */
  private readonly pulled = new Map<string, Promise<string>>();

  /**
   * The archive pulled for `key`, pulling it (traced as fetched for the
   * HelmChart `namespace/name`) unless it is (being) pulled already; without a key, always pulls.
   */
  private pullOnce(key: string | undefined, namespace: string, name: string, pull: () => Promise<string>): Promise<string> {
    const known = key ? this.pulled.get(key) : undefined;
    if (known) return known;
    this.options.trace?.({ namespace, name, phase: 'chart-fetched', at: Date.now() });
    const started = pull();
    if (key) {
      this.pulled.set(key, started);
      // A failed pull is not remembered: the next reconcile tries again.
      started.catch(() => this.pulled.delete(key));
    }
    return started;
  }

  /**
   * What identifies a chart helm pulls without pulling it: for an OCI
   * repository and an exact version, the manifest digest the registry answers
   * to a HEAD; for an HTTP repository, the index revision with the version
   * asked for. Undefined when nothing cheap identifies it (then helm pulls).
   */
  private async pullCacheKey(repo: JsonObject, url: string, chart: string, version: string): Promise<string | undefined> {
    const spec = isObject(repo.spec) ? repo.spec : {};
    if (spec.type !== 'oci') {
      const artifact = isObject(repo.status) && isObject(repo.status.artifact) ? repo.status.artifact : undefined;
      return artifact ? `http ${url} ${chart} ${version} ${String(artifact.revision)}` : undefined;
    }
    if (!EXACT_VERSION.test(version)) return undefined;
    const location = new URL(`${url.replace(/^oci:\/\//, spec.insecure === true ? 'http://' : 'https://')}/${chart}`);
    try {
      const response = await fetch(`${location.origin}/v2${location.pathname}/manifests/${version.replace(/\+/g, '_')}`, {
        method: 'HEAD',
        headers: { Accept: 'application/vnd.oci.image.manifest.v1+json' },
      });
      const digest = response.ok ? response.headers.get('docker-content-digest') : null;
      return digest ? `oci ${url}/${chart}@${digest}` : undefined;
    } catch {
      return undefined;
    }
  }

  private async reconcileOciRepository(namespace: string, name: string): Promise<void> {
    const repo = this.find(OCI_REPO, namespace, name);
    if (!repo || metaOf(repo).deletionTimestamp) return;
    const spec = isObject(repo.spec) ? repo.spec : {};
    if (spec.suspend === true) return;
    const generation = metaOf(repo).generation!;
    const ref = isObject(spec.ref) ? spec.ref : {};
    const url = String(spec.url ?? '');
    try {
      this.checkLoopback(url);
      const chart = typeof ref.digest === 'string' ? `${url}@${ref.digest}` : url;
      const version = typeof ref.tag === 'string' ? ref.tag : typeof ref.semver === 'string' ? ref.semver : undefined;
      const file = await this.queue.limited(() =>
        this.helm.pull({ chart, ...(version ? { version } : {}), plainHttp: spec.insecure === true }, join(this.artifacts, 'ocirepository', namespace, name)),
      );
      const metadata = await this.helm.metadata(file);
      const digest = sha256(readFileSync(file));
      this.succeeded('OCIRepository', namespace, name);
      const artifact = this.storeArtifact(repo, 'ocirepository', file, `${metadata.version}@${digest}`);
      this.artifactFiles.set(artifact.path, file);
      const message = `stored artifact for digest '${artifact.revision}'`;
      this.writeStatus(
        OCI_REPO,
        namespace,
        name,
        {
          observedGeneration: generation,
          url: artifact.url,
          artifact: artifact as unknown as Json,
          conditions: [
            { type: 'Ready', status: 'True', reason: 'Succeeded', message },
            { type: 'ArtifactInStorage', status: 'True', reason: 'Succeeded', message },
          ] as unknown as Json,
        },
        SOURCE_MANAGER,
      );
    } catch (error) {
      const message = error instanceof ReconcileFailure ? error.message : `failed to pull artifact from '${url}': ${(error as Error).message}`;
      this.writeStatus(
        OCI_REPO,
        namespace,
        name,
        {
          observedGeneration: generation,
          conditions: [
            { type: 'Ready', status: 'False', reason: error instanceof ReconcileFailure ? error.reason : 'OCIArtifactPullFailed', message },
          ] as unknown as Json,
        },
        SOURCE_MANAGER,
      );
      this.backOff('OCIRepository', repo);
    }
  }

  /** Artifact path → the chart archive on disk. */
  private readonly artifactFiles = new Map<string, string>();

  // ---- releases ---------------------------------------------------------------

  private dependencies(hr: JsonObject): Reference[] {
    const spec = isObject(hr.spec) ? hr.spec : {};
    const deps = Array.isArray(spec.dependsOn) ? spec.dependsOn.filter(isObject) : [];
    return deps.map((d) => ({ kind: 'HelmRelease', name: String(d.name ?? ''), namespace: String(d.namespace ?? metaOf(hr).namespace ?? '') }));
  }

  private releaseName(hr: JsonObject): { releaseName: string; targetNamespace: string; storageNamespace: string } {
    const spec = isObject(hr.spec) ? hr.spec : {};
    const meta = metaOf(hr);
    const targetNamespace = typeof spec.targetNamespace === 'string' && spec.targetNamespace ? spec.targetNamespace : meta.namespace!;
    let releaseName =
      typeof spec.releaseName === 'string' && spec.releaseName
        ? spec.releaseName
        : typeof spec.targetNamespace === 'string' && spec.targetNamespace
          ? `${spec.targetNamespace}-${meta.name}`
          : meta.name;
    if (releaseName.length > 53) {
      // helm-controller shortens long names: the first 40 characters, a dash and a 12-character hash.
      releaseName = `${releaseName.slice(0, 40)}-${createHash('sha256').update(releaseName).digest('hex').slice(0, 12)}`;
    }
    const storageNamespace = typeof spec.storageNamespace === 'string' && spec.storageNamespace ? spec.storageNamespace : meta.namespace!;
    return { releaseName, targetNamespace, storageNamespace };
  }

  /** valuesFrom in order (ConfigMap/Secret, valuesKey, targetPath, optional), then inline values on top. */
  private composeValues(hr: JsonObject): JsonObject {
    const spec = isObject(hr.spec) ? hr.spec : {};
    const namespace = metaOf(hr).namespace!;
    let result: JsonObject = {};
    const refs = Array.isArray(spec.valuesFrom) ? spec.valuesFrom.filter(isObject) : [];
    for (const ref of refs) {
      const kind = String(ref.kind ?? '');
      const name = String(ref.name ?? '');
      const key = typeof ref.valuesKey === 'string' && ref.valuesKey ? ref.valuesKey : 'values.yaml';
      const what = `${kind} '${namespace}/${name}'`;
      if (kind !== 'ConfigMap' && kind !== 'Secret') throw new ReconcileFailure('ValuesError', `unsupported ValuesReference kind '${kind}'`);
      const type = this.cluster.types.get('', 'v1', kind === 'ConfigMap' ? 'configmaps' : 'secrets')!;
      const source = this.cluster.find(type, namespace, name);
      if (!source) {
        if (ref.optional === true) continue;
        throw new ReconcileFailure(
          'ValuesError',
          `could not resolve ${kind} chart values reference '${namespace}/${name}' with key '${key}': ${kind === 'ConfigMap' ? 'configmaps' : 'secrets'} "${name}" not found`,
        );
      }
      const data = isObject(source.data) ? source.data : {};
      const raw = data[key];
      if (typeof raw !== 'string') {
        if (ref.optional === true) continue;
        throw new ReconcileFailure('ValuesError', `missing key '${key}' in ${what}`);
      }
      const text = kind === 'Secret' ? Buffer.from(raw, 'base64').toString('utf8') : raw;
      if (typeof ref.targetPath === 'string' && ref.targetPath) {
        setAtPath(result, ref.targetPath, text.trim());
        continue;
      }
      let parsed: unknown;
      try {
        parsed = load(text) ?? {};
      } catch (error) {
        throw new ReconcileFailure('ValuesError', `unable to read values from key '${key}' in ${what}: ${(error as Error).message.split('\n')[0]}`);
      }
      if (!isObject(parsed)) throw new ReconcileFailure('ValuesError', `unable to read values from key '${key}' in ${what}: not a map`);
      result = mergeValues(result, parsed);
    }
    return isObject(spec.values) ? mergeValues(result, spec.values) : result;
  }

  /**
   * Creates or updates the HelmChart made from spec.chart; returns its
   * `namespace/name` (undefined with a chartRef). helm-controller does this
   * at the start of every reconcile, before it checks dependsOn, so
   * source-controller pulls a waiting release's chart while its
   * dependencies install.
   */
  private reconcileChartTemplate(hr: JsonObject): string | undefined {
    const meta = metaOf(hr);
    const spec = isObject(hr.spec) ? hr.spec : {};
    if (this.chartRefOf(hr)) return undefined;
    if (!isObject(spec.chart) || !isObject(spec.chart.spec)) throw new ReconcileFailure('InitFailed', 'spec.chart or spec.chartRef is required');
    const template = spec.chart.spec;
    const sourceRef = isObject(template.sourceRef) ? template.sourceRef : {};
    const chartNamespace = String(sourceRef.namespace ?? meta.namespace);
    const chartName = `${meta.namespace}-${meta.name}`;
    const desired = {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'HelmChart',
      metadata: {
        name: chartName,
        namespace: chartNamespace,
        labels: { 'helm.toolkit.fluxcd.io/name': meta.name, 'helm.toolkit.fluxcd.io/namespace': meta.namespace! },
      },
      spec: {
        chart: template.chart ?? '',
        version: template.version ?? '*',
        sourceRef: { kind: sourceRef.kind ?? 'HelmRepository', name: sourceRef.name ?? '' },
        interval: template.interval ?? spec.interval ?? '10m',
        reconcileStrategy: template.reconcileStrategy ?? 'ChartVersion',
        ...(Array.isArray(template.valuesFiles) ? { valuesFiles: template.valuesFiles } : {}),
      },
    };
    try {
      this.cluster.apply(this.type(HELM_CHART)!, chartNamespace, chartName, JSON.stringify(desired), { fieldManager: MANAGER, force: true });
    } catch (error) {
      throw new ReconcileFailure('ArtifactFailed', `could not create HelmChart '${chartNamespace}/${chartName}': ${(error as Error).message}`);
    }
    return `${chartNamespace}/${chartName}`;
  }

  /** The chart archive for a release, from its chartRef or its HelmChart, in the simulated source-controller's storage; fails while the source is not ready. */
  private chartArtifact(hr: JsonObject, helmChart: string | undefined): string {
    const chartRef = this.chartRefOf(hr);
    let source: JsonObject | undefined;
    let label: string;
    if (chartRef) {
      const resource = chartRef.kind === 'OCIRepository' ? OCI_REPO : chartRef.kind === 'HelmChart' ? HELM_CHART : undefined;
      if (!resource) throw new ReconcileFailure('ArtifactFailed', `unsupported chartRef kind '${chartRef.kind}'`);
      label = `${chartRef.kind} '${chartRef.namespace}/${chartRef.name}'`;
      source = this.find(resource, chartRef.namespace, chartRef.name);
      if (!source)
        throw new ReconcileFailure('ArtifactFailed', `could not get Source object: ${resource.plural}.${resource.group} "${chartRef.name}" not found`);
    } else {
      const [namespace, name] = (helmChart ?? '/').split('/') as [string, string];
      label = `HelmChart '${helmChart}'`;
      source = this.find(HELM_CHART, namespace, name);
      if (!source) throw new ReconcileFailure('ArtifactFailed', `could not get HelmChart object: helmcharts.source.toolkit.fluxcd.io "${name}" not found`);
    }
    const artifact = isObject(source.status) && isObject(source.status.artifact) ? source.status.artifact : undefined;
    if (!isReady(source) || !artifact) {
      // helm-controller waits for the source's next event; the message says why it is waiting.
      const ready = readyCondition(source);
      const why = ready?.status === 'False' ? ready.message : 'latest generation of object has not been reconciled';
      throw new ReconcileFailure('SourceNotReady', `${label} is not ready: ${why}`);
    }
    const file = this.artifactFiles.get(String(artifact.path));
    if (!file) throw new ReconcileFailure('ArtifactFailed', `${label} is not ready: artifact not found in storage`);
    return file;
  }

  /**
   * One helm-controller reconcile of a HelmRelease, in its order: finalizer,
   * suspend, Reconciling=True "Fulfilling prerequisites", dependsOn (each
   * Ready=True for its current generation), source, values, failure counts
   * reset on a new generation, chart or values, lastAttempted*, then the
   * atomic release loop (./flux.ts `nextAction`): one action per release
   * state, each kind at most once, stopping after a remediation. Returns
   * when to reconcile again (ms), undefined for never (stalled, suspended,
   * gone): the requeue interval after success, `requeueDependencyMs` while
   * a dependency is not ready, exponential backoff after an error or a
   * remediation. observedGeneration is written only on success, when
   * stalled and when suspended.
   */
  private async reconcileHelmRelease(namespace: string, name: string): Promise<number | undefined> {
    const hrType = this.type(HR);
    if (!hrType) return undefined;
    let hr = this.cluster.find(hrType, namespace, name);
    if (!hr) return undefined;
    const meta = metaOf(hr);
    const spec = isObject(hr.spec) ? hr.spec : {};
    if (meta.deletionTimestamp) {
      await this.finalizeRelease(hrType, hr);
      return undefined;
    }
    if (!meta.finalizers?.includes(FLUX_FINALIZER)) {
      hr = this.cluster.patch(
        hrType,
        namespace,
        name,
        'application/json-patch+json',
        JSON.stringify([
          { op: 'add', path: meta.finalizers ? '/metadata/finalizers/-' : '/metadata/finalizers', value: meta.finalizers ? FLUX_FINALIZER : [FLUX_FINALIZER] },
        ]),
        { fieldManager: MANAGER },
      );
    }
    const key = `HelmRelease/${namespace}/${name}`;
    const generation = metaOf(hr).generation!;
    const annotations = metaOf(hr).annotations ?? {};
    const handled: JsonObject = {};
    if (annotations[REQUESTED_AT]) handled.lastHandledReconcileAt = annotations[REQUESTED_AT];
    /**
     * A force or reset request is handled when its annotation equals requestedAt and was not handled before
     * (helm-controller's handleRequest); it is marked handled where it is read, past dependencies, source and values.
     */
    const request = (annotation: string, field: 'lastHandledForceAt' | 'lastHandledResetAt'): boolean => {
      const at = annotations[annotation];
      if (at === undefined || at !== annotations[REQUESTED_AT] || status[field] === at) return false;
      status[field] = at;
      return true;
    };
    const status: JsonObject = isObject(hr.status) ? clone(hr.status) : {};
    if (spec.suspend === true) {
      this.writeStatus(HR, namespace, name, { ...status, ...handled, observedGeneration: generation }, MANAGER);
      return undefined;
    }
    let conditions = conditionsOf(hr).map((c) => ({ ...c }));
    const set = (type: string, value: Condition['status'], reason: string, message: string) => {
      conditions = setCondition(conditions, { type, status: value, reason, message });
    };
    const drop = (...types: string[]) => {
      conditions = conditions.filter((c) => !types.includes(c.type));
    };
    const get = (type: string) => conditions.find((c) => c.type === type);
    /** conditions.MarkReconciling: Reconciling=True, and a Stalled from before goes. */
    const reconciling = (reason: string, message: string) => {
      drop('Stalled');
      set('Reconciling', 'True', reason, message);
    };
    let history = Array.isArray(status.history) ? (status.history as unknown as Snapshot[]) : [];
    /** Writes the status; the end of a reconcile (`final`) also records the requests it handled, as helm-controller's last patch does. */
    const persist = (extra: JsonObject = {}, final = true) => {
      const whole: JsonObject = { ...status, ...(final ? handled : {}), ...extra, conditions: conditions as unknown as Json };
      if (history.length > 0) whole.history = history as unknown as Json;
      else delete whole.history;
      this.writeStatus(HR, namespace, name, whole, MANAGER);
    };
    /** A Ready=False left by a prerequisite that now holds becomes Unknown, as helm-controller marks it. */
    const clearStale = (...reasons: string[]) => {
      const ready = get('Ready');
      if (ready?.status === 'False' && reasons.includes(ready.reason)) set('Ready', 'Unknown', 'Progressing', 'reconciliation in progress');
    };
    /** A failure before any Helm action: Ready=False with Flux's reason, retried after `after` ms. */
    const notReady = (reason: string, message: string, after: number) => {
      set('Ready', 'False', reason, message);
      persist();
      return after;
    };
    const interval = parseDuration(String(spec.interval ?? ''));
    reconciling('Progressing', 'Fulfilling prerequisites');
    persist({}, false);
    let helmChart: string | undefined;
    let file: string;
    let values: JsonObject;
    let chart: ChartMetadata;
    try {
      helmChart = this.reconcileChartTemplate(hr);
      if (helmChart) status.helmChart = helmChart;
      for (const dep of this.dependencies(hr)) {
        // Read uncached, as helm-controller does: Ready=True is not enough, it must be for the dependency's current generation.
        const other = this.cluster.peek(hrType, dep.namespace, dep.name);
        const otherStatus = other && isObject(other.status) ? other.status : {};
        if (!other)
          return notReady(
            'DependencyNotReady',
            `unable to get '${dep.namespace}/${dep.name}' dependency: helmreleases.helm.toolkit.fluxcd.io "${dep.name}" not found`,
            this.requeueDependencyMs,
          );
        if (otherStatus.observedGeneration !== metaOf(other).generation || readyCondition(other)?.status !== 'True') {
          return notReady('DependencyNotReady', `dependency '${dep.namespace}/${dep.name}' is not ready`, this.requeueDependencyMs);
        }
      }
      clearStale('DependencyNotReady');
      file = this.chartArtifact(hr, helmChart);
      clearStale('ArtifactFailed', 'SourceNotReady');
      values = this.composeValues(hr);
      clearStale('ValuesError');
      chart = await this.helm.metadata(file).catch((error: unknown) => {
        throw new ReconcileFailure('ArtifactFailed', `Could not load chart: ${(error as Error).message}`);
      });
    } catch (error) {
      if (error instanceof ApiError && error.code === 404) return undefined;
      const failure = error instanceof ReconcileFailure ? error : new ReconcileFailure('ReconcileError', (error as Error).message);
      if (failure.reason === 'ValuesError') this.recordEvent(hr, 'Warning', 'ValuesError', failure.message);
      // A source not ready is waited for (its change wakes the release, else the next interval); the rest backs off.
      return notReady(failure.reason, failure.message, failure.reason === 'SourceNotReady' ? interval : this.backoff(key));
    }
    const configDigest = sha256(JSON.stringify(values));
    const target = this.releaseName(hr);
    const latest = history[0];
    if (latest && (latest.name !== target.releaseName || latest.namespace !== target.targetNamespace)) {
      // A new release name or target namespace is a new release: the old one is uninstalled first, as helm-controller does.
      const oldStorage = typeof status.storageNamespace === 'string' ? status.storageNamespace : namespace;
      const old = this.storage.list(oldStorage, latest.name)[0];
      if (old) this.uninstall(this.inventory(old.manifest, latest.namespace));
      this.storage.remove(oldStorage, latest.name);
      history = [];
      clearFailures(status);
    }
    status.storageNamespace = target.storageNamespace;
    const resetRequested = request(RESET_AT, 'lastHandledResetAt');
    if (
      resetRequested ||
      status.lastAttemptedGeneration !== generation ||
      status.lastAttemptedRevision !== chart.version ||
      status.lastAttemptedConfigDigest !== configDigest
    ) {
      clearFailures(status);
    }
    Object.assign(status, { lastAttemptedGeneration: generation, lastAttemptedRevision: chart.version, lastAttemptedConfigDigest: configDigest });
    const forced = request(FORCE_AT, 'lastHandledForceAt');
    const remediation = (action: 'install' | 'upgrade') => new Remediation(spec, status, action);
    const stall = (action: 'install' | 'upgrade') => {
      set('Stalled', 'True', 'RetriesExceeded', `Failed to ${action} after ${remediation(action).failures} attempt(s)`);
      drop('Reconciling');
      persist({ observedGeneration: generation });
      return undefined;
    };
    const performed = new Set<'release' | 'remediate'>();
    for (;;) {
      const active: 'install' | 'upgrade' = status.lastAttemptedReleaseAction === 'install' ? 'install' : 'upgrade';
      const state = this.releaseState(target, history, chart, configDigest);
      let next: ReleaseAction | undefined;
      if (state === 'in-sync') {
        if (forced && !performed.has('release')) next = 'upgrade';
        else if (get('Remediated')?.status === 'True') {
          // In sync after a rollback to what is now wanted: Released replaces Remediated.
          drop('Remediated');
          set(
            'Released',
            'True',
            'UpgradeSucceeded',
            `Helm upgrade succeeded for release ${history[0]!.namespace}/${history[0]!.name}.v${history[0]!.version} with chart ${history[0]!.chartName}@${history[0]!.chartVersion}`,
          );
        }
      } else if (state === 'absent') {
        if (remediation('install').exhausted && !forced) return stall('install');
        next = 'install';
      } else if (state === 'unmanaged' || state === 'out-of-sync') {
        if (state === 'out-of-sync' && remediation('upgrade').exhausted && !forced) return stall('upgrade');
        if (state === 'unmanaged') history = [];
        next = 'upgrade';
      } else {
        // Failed: the remediation of the action that failed decides; no failure counted means the config changed since.
        const failedAction = remediation(active);
        if (failedAction.failures <= 0 || forced) next = 'upgrade';
        else if (failedAction.exhausted && !failedAction.remediateLastFailure) return stall(active);
        else next = failedAction.strategy === 'uninstall' ? 'uninstall' : 'rollback';
      }
      if (next === undefined) {
        drop('Reconciling');
        conditions = summarize(conditions);
        persist({ observedGeneration: generation });
        this.forget(key);
        return interval;
      }
      const kind = next === 'install' || next === 'upgrade' ? 'release' : 'remediate';
      if (performed.has(kind)) {
        if (!remediation(active).exhausted) {
          reconciling('ProgressingWithRetry', get('Ready')?.message ?? '');
          persist();
          return this.backoff(key);
        }
        drop('Reconciling');
        persist({ observedGeneration: generation });
        return interval;
      }
      const running = `Running '${next}' action with timeout of ${formatDuration(this.actionTimeout(spec, next))}`;
      reconciling('Progressing', running);
      if (kind === 'release') set('Ready', 'Unknown', 'Progressing', running);
      persist({}, false);
      if (next === 'install' || next === 'upgrade') {
        status.lastAttemptedReleaseAction = next;
        drop('TestSuccess', 'Remediated');
        const outcome = await this.releaseAction(hr, next, target, values, file, chart, configDigest);
        if (outcome.snapshot)
          history = [outcome.snapshot, ...history.map((s) => (outcome.ok && s.status === 'deployed' ? { ...s, status: 'superseded' } : s))].slice(
            0,
            outcome.maxHistory,
          );
        const reason = next === 'install' ? (outcome.ok ? 'InstallSucceeded' : 'InstallFailed') : outcome.ok ? 'UpgradeSucceeded' : 'UpgradeFailed';
        set('Released', outcome.ok ? 'True' : 'False', reason, outcome.message);
        conditions = summarize(conditions);
        this.recordEvent(hr, outcome.ok ? 'Normal' : 'Warning', reason, outcome.message);
        if (!outcome.ok) {
          status.failures = Number(status.failures ?? 0) + 1;
          if (!outcome.stored) {
            // Nothing reached Helm's storage (values, schema, render, ownership): not counted, retried with backoff, never stalled.
            persist();
            return this.backoff(key);
          }
          status[`${next}Failures`] = Number(status[`${next}Failures`] ?? 0) + 1;
        }
      } else {
        const done =
          next === 'rollback'
            ? this.rollbackRemediation({ namespace, name }, target, typeof spec.maxHistory === 'number' ? spec.maxHistory : 5)
            : this.uninstallRemediation(target, history);
        if (done.snapshot) history = [done.snapshot, ...history.map((s) => (s.status === 'deployed' ? { ...s, status: 'superseded' } : s))];
        set('Remediated', 'True', done.reason, done.message);
        conditions = summarize(conditions);
        this.recordEvent(hr, 'Normal', done.reason, done.message);
        if (!remediation(active).exhausted) {
          reconciling('ProgressingWithRetry', get('Ready')?.message ?? '');
          persist();
          return this.backoff(key);
        }
        return stall(active);
      }
      performed.add(kind);
      persist({}, false);
    }
  }

  /** Where the Helm release stands against what is wanted (helm-controller's DetermineReleaseState, without tests and drift). */
  private releaseState(
    target: ReleaseTarget,
    history: Snapshot[],
    chart: ChartMetadata,
    configDigest: string,
  ): 'absent' | 'unmanaged' | 'failed' | 'out-of-sync' | 'in-sync' {
    const latest = this.storage.list(target.storageNamespace, target.releaseName)[0];
    if (!latest) return 'absent';
    const observed = history[0];
    if (!observed || observed.version !== latest.version) return 'unmanaged';
    if (latest.info.status === 'failed') return 'failed';
    if (latest.chart.metadata.name !== chart.name || latest.chart.metadata.version !== chart.version || observed.configDigest !== configDigest)
      return 'out-of-sync';
    return 'in-sync';
  }

  /** The timeout of an action: its own, else spec.timeout, else 5m. */
  private actionTimeout(spec: JsonObject, action: ReleaseAction): number {
    const own = { install: 'install', upgrade: 'upgrade', rollback: 'rollback', uninstall: 'uninstall' }[action];
    const actionSpec = isObject(spec[own]) ? (spec[own] as JsonObject) : {};
    return parseDuration(String(actionSpec.timeout ?? spec.timeout ?? '5m'));
  }

  /**
   * One Helm install or upgrade. A failure before Helm records the release
   * (render, values schema, ownership conflict) stores nothing; one after
   * (applying the objects, waiting for them) stores a failed revision.
   */
  private async releaseAction(
    hr: JsonObject,
    action: 'install' | 'upgrade',
    target: ReleaseTarget,
    values: JsonObject,
    chartFile: string,
    chart: ChartMetadata,
    configDigest: string,
  ): Promise<ActionOutcome> {
    const meta = metaOf(hr);
    const [namespace, name] = [meta.namespace!, meta.name];
    const spec = isObject(hr.spec) ? hr.spec : {};
    const { releaseName, targetNamespace, storageNamespace } = target;
    const releases = this.storage.list(storageNamespace, releaseName);
    const deployed = releases.find((r) => r.info.status === 'deployed');
    const actionSpec = isObject(spec[action]) ? (spec[action] as JsonObject) : {};
    const timeoutMs = this.actionTimeout(spec, action);
    const chartLabel = `${chart.name}@${chart.version}`;
    const releaseRef = `${targetNamespace}/${releaseName}`;
    const revision = (releases[0]?.version ?? 0) + 1;
    const maxHistory = typeof spec.maxHistory === 'number' ? spec.maxHistory : 5;
    const started = now();
    const failed = (error: Error, stored: boolean, manifest: string): ActionOutcome => {
      const message = `Helm ${action} failed for release ${releaseRef} with chart ${chartLabel}: ${error.message}`;
      if (!stored) return { ok: false, stored, message, maxHistory };
      this.storage.store(storageNamespace, releaseName, {
        revision,
        status: 'failed',
        chart,
        config: values,
        manifest,
        description: message,
        started,
        maxHistory,
      });
      return {
        ok: false,
        stored,
        message,
        maxHistory,
        snapshot: this.snapshot(releaseName, targetNamespace, revision, 'failed', chart, configDigest, started),
      };
    };
    let manifest: string;
    let objects: JsonObject[];
    try {
      const injected = this.faults.renderFailure(namespace, name, values);
      if (injected) throw new HelmError(injected);
      const trace = (phase: FluxTrace['phase']) => this.options.trace?.({ namespace, name, phase, at: Date.now() });
      trace('render-queued');
      manifest = await this.queue.limited(() => {
        trace('render-start');
        return this.helm.render({
          releaseName,
          namespace: targetNamespace,
          chartPath: chartFile,
          values,
          upgrade: action === 'upgrade' && deployed !== undefined,
          includeCrds: actionSpec.crds !== 'Skip' && !(action === 'upgrade' && actionSpec.crds === undefined),
          noHooks: actionSpec.disableHooks === true,
          kubeVersion: KUBE_VERSION.gitVersion,
          apiVersions: [...new Set(this.cluster.types.all().map((t) => `${apiVersionOf(t)}/${t.kind}`))],
        });
      });
      trace('render-end');
      objects = this.parseManifest(manifest, targetNamespace);
      // spec.commonMetadata: labels and annotations Flux's post-renderer puts on every object.
      const common = isObject(spec.commonMetadata) ? spec.commonMetadata : {};
      for (const object of objects) {
        const metadata = object.metadata as JsonObject;
        for (const field of ['labels', 'annotations'] as const) {
          if (isObject(common[field])) metadata[field] = { ...(isObject(metadata[field]) ? metadata[field] : {}), ...common[field] };
        }
      }
      if (actionSpec.disableTakeOwnership === true) this.checkOwnership(objects, releaseName, targetNamespace, action);
    } catch (error) {
      return failed(error as Error, false, '');
    }
    try {
      const injected = this.faults.releaseFailure(namespace, name);
      if (injected) throw new HelmError(injected);
      this.applyObjects(objects, releaseName, targetNamespace, namespace, name, action === 'install' && actionSpec.createNamespace === true);
      if (deployed) this.prune(this.inventory(deployed.manifest, targetNamespace), objects);
      // Helm waits for the workloads: let their controllers (./workloads.ts) report first.
      await new Promise((resolve) => setImmediate(resolve));
      // With disableWait Helm does not wait for the objects: the action ends once they are stored.
      const { ms: delay, cleared } = actionSpec.disableWait === true ? { ms: 0 } : this.faults.readyDelay(namespace, name);
      if (delay > timeoutMs) {
        await this.sleep(timeoutMs);
        throw new HelmError('context deadline exceeded');
      }
      if (delay > 0) await Promise.race([this.sleep(delay), ...(cleared ? [cleared] : [])]);
    } catch (error) {
      return failed(error as Error, true, manifest);
    }
    this.storage.store(storageNamespace, releaseName, {
      revision,
      status: 'deployed',
      chart,
      config: values,
      manifest,
      description: action === 'install' ? 'Install complete' : 'Upgrade complete',
      started,
      maxHistory,
    });
    return {
      ok: true,
      stored: true,
      message: `Helm ${action} succeeded for release ${releaseRef}.v${revision} with chart ${chartLabel}`,
      maxHistory,
      snapshot: this.snapshot(releaseName, targetNamespace, revision, 'deployed', chart, configDigest, started),
    };
  }

  /** Rolls back to the release deployed before the failed one (a new revision with its manifest and values). */
  private rollbackRemediation(owner: { namespace: string; name: string }, target: ReleaseTarget, maxHistory: number): RemediationOutcome {
    const { releaseName, targetNamespace, storageNamespace } = target;
    const releases = this.storage.list(storageNamespace, releaseName);
    const previous = releases.find((r) => r.info.status === 'deployed' || r.info.status === 'superseded');
    if (!previous)
      return { reason: 'RollbackFailed', message: `Helm rollback failed for release ${targetNamespace}/${releaseName}: no previous release to roll back to` };
    const revision = releases[0]!.version + 1;
    this.applyObjects(this.parseManifest(previous.manifest, targetNamespace), releaseName, targetNamespace, owner.namespace, owner.name, false);
    this.prune(this.inventory(releases[0]!.manifest, targetNamespace), this.parseManifest(previous.manifest, targetNamespace));
    this.storage.store(storageNamespace, releaseName, {
      revision,
      status: 'deployed',
      chart: previous.chart.metadata,
      config: previous.config,
      manifest: previous.manifest,
      description: `Rollback to ${previous.version}`,
      started: now(),
      maxHistory,
    });
    const configDigest = sha256(JSON.stringify(previous.config));
    return {
      reason: 'RollbackSucceeded',
      message: `Helm rollback to previous release ${targetNamespace}/${releaseName}.v${previous.version} with chart ${previous.chart.metadata.name}@${previous.chart.metadata.version} succeeded`,
      snapshot: this.snapshot(releaseName, targetNamespace, revision, 'deployed', previous.chart.metadata, configDigest, now()),
    };
  }

  /** Uninstalls the failed release (install remediation, or upgrade remediation with strategy uninstall). */
  private uninstallRemediation(target: ReleaseTarget, history: Snapshot[]): RemediationOutcome {
    const { releaseName, targetNamespace, storageNamespace } = target;
    const latest = this.storage.list(storageNamespace, releaseName)[0];
    if (latest) this.uninstall(this.inventory(latest.manifest, targetNamespace));
    this.storage.remove(storageNamespace, releaseName);
    const observed = history[0];
    const label = observed ? `${observed.chartName}@${observed.chartVersion}` : '';
    return {
      reason: 'UninstallSucceeded',
      message: `Helm uninstall remediation for release ${targetNamespace}/${releaseName}.v${latest?.version ?? observed?.version ?? 0} with chart ${label} succeeded`,
    };
  }

  /** A core/v1 Event about the release, as helm-controller records one (kubectl describe shows them). */
  private recordEvent(hr: JsonObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const meta = metaOf(hr);
    const eventType = this.cluster.types.get('', 'v1', 'events')!;
    const time = now();
    try {
      this.cluster.create(
        eventType,
        meta.namespace!,
        {
          metadata: { name: `${meta.name}.${randomBytes(8).toString('hex')}` },
          involvedObject: {
            kind: 'HelmRelease',
            namespace: meta.namespace!,
            name: meta.name,
            uid: meta.uid!,
            apiVersion: apiVersionOf(this.type(HR)!),
            resourceVersion: meta.resourceVersion!,
          },
          reason,
          message,
          type,
          source: { component: MANAGER },
          reportingComponent: MANAGER,
          reportingInstance: '',
          firstTimestamp: time,
          lastTimestamp: time,
          count: 1,
        },
        { fieldManager: MANAGER },
      );
    } catch {
      // A terminating namespace takes no new events; nothing else depends on them.
    }
  }

  private snapshot(
    releaseName: string,
    namespace: string,
    version: number,
    status: string,
    chart: ChartMetadata,
    configDigest: string,
    started: string,
  ): Snapshot {
    return {
      name: releaseName,
      namespace,
      version,
      status,
      chartName: chart.name,
      chartVersion: chart.version,
      ...(chart.appVersion ? { appVersion: String(chart.appVersion) } : {}),
      configDigest,
      digest: sha256(`${releaseName}/${namespace}/${version}/${configDigest}/${chart.name}@${chart.version}`),
      firstDeployed: started,
      lastDeployed: now(),
    };
  }

  /** Another attempt after `delayMs` (a timer, not a busy loop). */
  private retryLater(object: JsonObject, kind: string, delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.schedule(kind, object);
    }, delayMs);
    this.timers.add(timer);
  }

  /** Consecutive failed reconciles per object, for the backoff. */
  private readonly failures = new Map<string, number>();

  /**
   * The wait before the next attempt of an object whose reconcile failed:
   * controller-runtime's per-object exponential backoff (base
   * retryIntervalMs, doubling, up to 15 minutes), reset by a success.
   */
  private backoff(key: string): number {
    const failures = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, failures);
    return Math.min((this.options.retryIntervalMs ?? 750) * 2 ** (failures - 1), 15 * 60_000);
  }

  private forget(key: string): void {
    this.failures.delete(key);
  }

  private backOff(kind: string, object: JsonObject): void {
    this.retryLater(object, kind, this.backoff(`${kind}/${metaOf(object).namespace}/${metaOf(object).name}`));
  }

  private succeeded(kind: string, namespace: string, name: string): void {
    this.forget(`${kind}/${namespace}/${name}`);
  }

  private get requeueDependencyMs(): number {
    return this.options.requeueDependencyMs ?? 30_000;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  /** Rendered documents, with the release namespace on namespaced objects that name none. Hooks run and deleted on success are left out. */
  private parseManifest(manifest: string, namespace: string): JsonObject[] {
    const objects: JsonObject[] = [];
    for (const doc of loadAll(manifest)) {
      if (!isObject(doc) || typeof doc.kind !== 'string') continue;
      const annotations = isObject(doc.metadata) && isObject(doc.metadata.annotations) ? doc.metadata.annotations : {};
      const hook = annotations['helm.sh/hook'];
      if (
        typeof hook === 'string' &&
        (hook.includes('test') || String(annotations['helm.sh/hook-delete-policy'] ?? 'before-hook-creation').includes('hook-succeeded'))
      )
        continue;
      const type = this.cluster.types.byKind(String(doc.apiVersion ?? ''), doc.kind);
      const metadata = isObject(doc.metadata) ? doc.metadata : {};
      if (type?.namespaced && !metadata.namespace) doc.metadata = { ...metadata, namespace };
      objects.push(doc);
    }
    // CRDs first, then namespaces, then the rest, as Helm orders an install.
    const rank = (o: JsonObject) => (o.kind === 'CustomResourceDefinition' ? 0 : o.kind === 'Namespace' ? 1 : 2);
    return objects.sort((a, b) => rank(a) - rank(b));
  }

  /**
   * With disableTakeOwnership, Helm refuses objects that exist and belong to
   * no release or another one, with Helm's own message.
   */
  private checkOwnership(objects: JsonObject[], releaseName: string, releaseNamespace: string, action: string): void {
    for (const object of objects) {
      const metadata = isObject(object.metadata) ? object.metadata : {};
      const type = this.cluster.types.byKind(String(object.apiVersion ?? ''), String(object.kind));
      const existing = type ? this.cluster.find(type, type.namespaced ? String(metadata.namespace ?? '') : '', String(metadata.name ?? '')) : undefined;
      if (!type || !existing) continue;
      const meta = metaOf(existing);
      const problems: string[] = [];
      const expect = (kind: 'label' | 'annotation', key: string, want: string) => {
        const got = (kind === 'label' ? meta.labels : meta.annotations)?.[key];
        if (got === undefined) problems.push(`${kind} validation error: missing key "${key}": must be set to "${want}"`);
        else if (got !== want) problems.push(`${kind} validation error: key "${key}" must equal "${want}": current value is "${got}"`);
      };
      expect('label', 'app.kubernetes.io/managed-by', 'Helm');
      expect('annotation', 'meta.helm.sh/release-name', releaseName);
      expect('annotation', 'meta.helm.sh/release-namespace', releaseNamespace);
      if (problems.length > 0) {
        const where = type.namespaced ? ` in namespace "${meta.namespace}"` : '';
        throw new HelmError(
          `rendered manifests contain a resource that already exists. Unable to continue with ${action}: ${type.kind} "${meta.name}"${where} exists and cannot be imported into the current release: invalid ownership metadata; ${problems.join('; ')}`,
        );
      }
    }
  }

  /** Stores rendered objects as Helm would: labelled, annotated, server-side applied by helm-controller. */
  private applyObjects(
    objects: JsonObject[],
    releaseName: string,
    releaseNamespace: string,
    hrNamespace: string,
    hrName: string,
    createNamespace: boolean,
  ): void {
    const nsType = this.cluster.types.get('', 'v1', 'namespaces')!;
    if (createNamespace && !this.cluster.find(nsType, '', releaseNamespace))
      this.cluster.create(nsType, '', { metadata: { name: releaseNamespace } }, { fieldManager: MANAGER });
    for (const object of objects) {
      const metadata = isObject(object.metadata) ? object.metadata : {};
      const objectName = String(metadata.name ?? '');
      const objectNamespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
      const type = this.cluster.types.byKind(String(object.apiVersion ?? ''), String(object.kind));
      if (!type) {
        throw new HelmError(
          `unable to build kubernetes objects from release manifest: resource mapping not found for name: "${objectName}" namespace: "${objectNamespace}" from "": no matches for kind "${String(object.kind)}" in version "${String(object.apiVersion)}"\nensure CRDs are installed first`,
        );
      }
      const labelled: JsonObject = {
        ...object,
        metadata: {
          ...metadata,
          labels: {
            ...(isObject(metadata.labels) ? metadata.labels : {}),
            'app.kubernetes.io/managed-by': 'Helm',
            'helm.toolkit.fluxcd.io/name': hrName,
            'helm.toolkit.fluxcd.io/namespace': hrNamespace,
          },
          annotations: {
            ...(isObject(metadata.annotations) ? metadata.annotations : {}),
            'meta.helm.sh/release-name': releaseName,
            'meta.helm.sh/release-namespace': releaseNamespace,
          },
        },
      };
      try {
        this.cluster.apply(type, type.namespaced ? objectNamespace : '', objectName, JSON.stringify(labelled), { fieldManager: MANAGER, force: true });
      } catch (error) {
        const message = error instanceof ApiError ? error.message : (error as Error).message;
        throw new HelmError(`failed to create resource: ${message}`);
      }
    }
  }

  private inventory(manifest: string, namespace: string): InventoryEntry[] {
    return this.parseManifest(manifest, namespace).map((o) => {
      const metadata = isObject(o.metadata) ? o.metadata : {};
      const annotations = isObject(metadata.annotations) ? metadata.annotations : {};
      return {
        apiVersion: String(o.apiVersion ?? ''),
        kind: String(o.kind),
        namespace: String(metadata.namespace ?? ''),
        name: String(metadata.name ?? ''),
        kept: annotations['helm.sh/resource-policy'] === 'keep',
      };
    });
  }

  private deleteEntry(entry: InventoryEntry): void {
    const type = this.cluster.types.byKind(entry.apiVersion, entry.kind);
    if (!type) return;
    try {
      this.cluster.delete(type, type.namespaced ? entry.namespace : '', entry.name, { propagationPolicy: 'Background' });
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 404)) throw error;
    }
  }

  /** Deletes what the previous revision had and the new one does not. */
  private prune(previous: InventoryEntry[], current: JsonObject[]): void {
    const keep = new Set(
      current.map((o) => `${String(o.kind)}/${String((o.metadata as JsonObject).namespace ?? '')}/${String((o.metadata as JsonObject).name)}`),
    );
    for (const entry of previous) if (!entry.kept && !keep.has(`${entry.kind}/${entry.namespace}/${entry.name}`)) this.deleteEntry(entry);
  }

  /** Helm deletes in reverse install order; CRDs stay, as Helm keeps them, and so does what asks to be kept (`helm.sh/resource-policy: keep`). */
  private uninstall(entries: InventoryEntry[]): void {
    for (const entry of [...entries].reverse()) if (entry.kind !== 'CustomResourceDefinition' && !entry.kept) this.deleteEntry(entry);
  }

  private async finalizeRelease(hrType: ResourceType, hr: JsonObject): Promise<void> {
    const meta = metaOf(hr);
    const spec = isObject(hr.spec) ? hr.spec : {};
    if (!meta.finalizers?.includes(FLUX_FINALIZER)) return;
    // A suspended release is not uninstalled: only the finalizer goes (as helm-controller does).
    if (spec.suspend !== true) {
      const { releaseName, targetNamespace, storageNamespace } = this.releaseName(hr);
      const latest = this.storage.list(storageNamespace, releaseName)[0];
      if (latest) this.uninstall(this.inventory(latest.manifest, targetNamespace));
      this.storage.remove(storageNamespace, releaseName);
      const status = isObject(hr.status) ? hr.status : {};
      if (typeof status.helmChart === 'string') {
        const [chartNamespace, chartName] = status.helmChart.split('/');
        const chartType = this.type(HELM_CHART);
        if (chartType && this.cluster.find(chartType, chartNamespace!, chartName!)) this.cluster.delete(chartType, chartNamespace!, chartName!);
      }
    }
    const finalizers = meta.finalizers.filter((f) => f !== FLUX_FINALIZER);
    try {
      this.cluster.patch(
        hrType,
        meta.namespace!,
        meta.name,
        'application/merge-patch+json',
        JSON.stringify({ metadata: { finalizers: finalizers.length ? finalizers : null, resourceVersion: meta.resourceVersion } }),
        { fieldManager: MANAGER },
      );
    } catch (error) {
      // A conflict means the object changed meanwhile: the change event reconciles it again.
      if (!(error instanceof ApiError && (error.code === 409 || error.code === 404))) throw error;
    }
  }
}

/** Flux/Go durations: `5m`, `1h30m`, `90s`, `500ms`. */
export function parseDuration(text: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(amount) * units[unit!]!;
  return total || 300_000;
}

/** Go's time.Duration format, as Flux prints timeouts: `5m0s`, `1h0m0s`, `30s`. */
export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
