/**
 * What every plugin hook receives. These are types only (plus the few
 * constant lists below), so the plugin bundle carries no flotilla runtime:
 * the host builds the context and hands it in.
 */

/** Offline: computing values or rendering from the source tree. Cluster: a real operation against Kubernetes. */
export type PluginMode = 'offline' | 'cluster';

export const OPERATIONS = ['upload', 'apply', 'remove', 'update', 'recover'] as const;
export type Operation = (typeof OPERATIONS)[number];

export const TIMINGS = ['pre', 'post'] as const;
export type Timing = (typeof TIMINGS)[number];

/** Kinds of lifecycle hook, in the order one stage runs them: checks first, so a refusal comes before any work. */
export const HOOK_KINDS = ['check', 'resource', 'manifest', 'operation'] as const;
export type HookKind = (typeof HOOK_KINDS)[number];

/** A value that survives YAML/JSON: what Helm values are made of. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Helm values returned by a plugin (a map at the top). */
export type Values = { [key: string]: JsonValue };

export interface AppInfo {
  readonly name: string;
  readonly version: string;
}

/** A release of the app, as plugins see it. */
export interface ReleaseRef {
  /** HelmRelease name. */
  readonly name: string;
  readonly chart: string;
  readonly namespace: string;
  /** Helm release name (e.g. osh-openstack-glance). */
  readonly releaseName: string;
  readonly service?: string;
  readonly group?: string;
  readonly dependsOn: readonly string[];
}

/**
 * The target OpenStack release: its images (custom images applied) and
 * per-release switches, and the release running now, so overrides that
 * changed between releases (options renamed or removed) can live in plugins.
 */
export interface VersionContext {
  /** The release whose values are being computed: the target (docs/versions.md). */
  readonly release: string;
  /** The release the operator targets (the same as `release`). */
  readonly target: string;
  /** The release running on the cluster (every release Ready on its images), or null: none yet, or offline. */
  readonly deployed: string | null;
  /** image field → reference the charts get, custom images included. */
  readonly images: Readonly<Record<string, string>>;
  /** image field → where its reference comes from: the target release's catalog, or a custom image. */
  readonly imageSources: Readonly<Record<string, 'release' | 'custom'>>;
  /** overrides/versions/<release>.yaml `serviceDefaults`, with the app's fallbacks (overrides/service-defaults.yaml) for those it lacks. */
  readonly serviceDefaults: Readonly<Record<string, unknown>>;
}

export interface PluginLogger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
}

/**
 * Passwords generated once and kept: a Secret per password in cluster mode, a
 * local file (mode 0600) offline. Values handed out are redacted from logs and
 * from `flotilla overrides` output.
 */
export interface PasswordStore {
  getOrGenerate(name: string, options?: { readonly length?: number }): Promise<string>;
}

/**
 * Small facts the app keeps between runs (e.g. what an operator or a
 * monitoring job recorded): a local file offline, keys of the ConfigMap
 * `<app>-records` in the app's namespace in a cluster.
 */
export interface RecordStore {
  get(key: string): Promise<JsonValue | undefined>;
  set(key: string, value: JsonValue): Promise<void>;
  delete(key: string): Promise<void>;
}

/** Objects of one kind in one namespace, chosen by labels (`app.kubernetes.io/instance=x,component=server`). */
export interface ObjectSelector {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly labelSelector: string;
}

/** What a plugin may do to the cluster itself, in cluster mode only: look at objects and clean them up. */
export interface ClusterObjects {
  /** The app's namespace (where its Secrets and records live). */
  readonly namespace: string;
  /** Names of the objects the selector matches. */
  list(selector: ObjectSelector): Promise<string[]>;
  /** Deletes the objects the selector matches; returns their names. */
  deleteAll(selector: ObjectSelector): Promise<string[]>;
}

/** Values of one chart in the spec (`common.charts`, a group, a service's chart). */
export interface SpecValues {
  readonly values?: Readonly<Record<string, unknown>>;
}

/**
 * The merged deployment spec as plugins see it (docs/app-format.md): the
 * plugin API's own description of it, so that plugins depend on nothing of
 * flotilla's inside; the app's spec satisfies it.
 */
export interface DeploymentSpec {
  readonly main: {
    readonly release: string;
    readonly preset?: string;
    readonly size?: string;
    readonly domain?: string;
    readonly customImages?: Readonly<Record<string, string>>;
  };
  readonly features: Readonly<Record<string, unknown>>;
  readonly common: {
    readonly charts?: SpecValues;
    readonly groups?: Readonly<Record<string, SpecValues>>;
  };
  readonly services: Readonly<Record<string, Readonly<Record<string, SpecValues>>>>;
}

interface CommonContext {
  readonly app: AppInfo;
  /** The merged deployment spec (preset → size → deployment file). Frozen. */
  readonly spec: DeploymentSpec;
  readonly version: VersionContext;
  /** Releases the spec enables, in release-table order. */
  readonly releases: readonly ReleaseRef[];
  /** The apply mode (`normal` unless the operator chose another, e.g. `restore`). */
  readonly applyMode: string;
  readonly log: PluginLogger;
  /** The call's signal. A call past its time limit, or cancelled, stops the plugin process outright. */
  readonly signal: AbortSignal;
  readonly passwords: PasswordStore;
  readonly records: RecordStore;
}

export interface OfflineContext extends CommonContext {
  readonly mode: 'offline';
  readonly kube?: undefined;
}

export interface ClusterContext extends CommonContext {
  readonly mode: 'cluster';
  readonly kube: ClusterObjects;
}

export type PluginContext = OfflineContext | ClusterContext;

/** Context of a chart plugin's hook: the release it is called for. */
export type ChartContext = PluginContext & { readonly release: ReleaseRef };

/** Context of an app lifecycle hook: which stage is running. */
export type LifecycleContext = PluginContext & {
  readonly operation: Operation;
  readonly timing: Timing;
  readonly kind: HookKind;
};

/** Time limits in milliseconds, per hook name (`getOverrides`, `status`, `preApply`, or a lifecycle kind such as `check`). */
export type HookTimeouts = Readonly<Partial<Record<string, number>>>;
