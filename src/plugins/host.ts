/**
 * The plugin host: loaded plugins bound to an app, the context each call
 * gets, and the entry points other modules use — the values layer 5 provider,
 * the hook runner, status hooks and the kustomize operator's answers (apply
 * plans are made from them in src/lifecycle). `loadAppPlugins` builds the
 * app's plugins from source and loads them through the same loader as a
 * shipped bundle.
 */
import { join } from 'node:path';
import type { Release } from '../app/index.js';
import { fromPlain, YAML_LIMITS, type ValueNode } from '../yaml/index.js';
import type { LayerProvider, ReleaseInfo } from '../values/index.js';
import { bindPlugins, type LoadedKustomizeOperator, type PluginBinding } from './binding.js';
import { bundlePlugins, writePluginBundle } from './bundle.js';
import type {
  ClusterObjects,
  DeploymentSpec,
  OfflineContext,
  Operation,
  PasswordStore,
  PluginContext,
  PluginLogger,
  PluginMode,
  RecordStore,
  ReleaseRef,
  Timing,
  VersionContext,
} from './context.js';
import { discoverPluginFiles } from './discovery.js';
import { PluginError } from './errors.js';
import type { LoadedChartPlugin, LoadedPlugin } from './instantiate.js';
import { NORMAL_MODE } from './kustomize-operator.js';
import { loadPluginBundle, type LoadedBundle } from './loader.js';
import { defaultStateDir, LocalPasswordStore, LocalRecordStore } from './local-store.js';
import { MANIFEST_FORMAT, ENTRY_FILE } from './manifest.js';
import { SecretRegistry, type SecretPathRule, type SecretPathSegment } from './redact.js';
import {
  callGetOverrides,
  callPlugin,
  plannedHooks,
  runHooks,
  runStage,
  runStatusHook,
  type HookEnvironment,
  type HookRecord,
  type HookSelector,
} from './runner.js';
import type { SharedContext } from './sandbox-protocol.js';
import { PLUGIN_API_VERSION } from './brand.js';
import { makeTempDir, removeTempDir } from '../files/index.js';

/** What the host needs of the app; an `App` from src/app fits, and so will the app of an uploaded tarball. */
export interface PluginAppView {
  readonly metadata: { readonly appName: string; readonly appVersion: string };
  readonly spec: DeploymentSpec;
  readonly target: {
    readonly release: string;
    readonly serviceDefaults: Readonly<Record<string, unknown>>;
  };
  /** The images the charts get: the target release's, custom images on top. */
  readonly images: ReadonlyMap<string, { readonly reference: string; readonly source: 'release' | 'custom' }>;
  /** The cluster's version state, for a version on a cluster: the release deployed now. */
  readonly versions?: { readonly deployed?: string };
  readonly releases: readonly ReleaseView[];
  /** The releases the spec enables: the original set every apply plan starts from. */
  readonly enabled: readonly ReleaseView[];
}

export type ReleaseView = Pick<Release, 'name' | 'chart' | 'namespace' | 'releaseName' | 'service' | 'group' | 'dependsOn'>;

export interface PluginLogEntry {
  readonly level: 'debug' | 'info' | 'warn';
  readonly plugin: string;
  /** Already redacted. */
  readonly message: string;
}

/** Time limits (ms) by category: a hook kind (`check`, `operation`, `resource`, `manifest`), `getOverrides`, `status`, `isEnabled`. */
export const DEFAULT_TIME_LIMITS: Readonly<Record<string, number>> = {
  check: 60_000,
  resource: 600_000,
  manifest: 120_000,
  operation: 600_000,
  getOverrides: 30_000,
  status: 300_000,
  isEnabled: 10_000,
};

export interface PluginHostOptions {
  readonly mode: PluginMode;
  /** Cluster mode: the cluster's stores (src/kube builds them); offline mode has none. */
  readonly cluster?: ClusterStores;
  /** Offline: where passwords and records are kept (see local-store.ts for the default). */
  readonly stateDir?: string;
  readonly applyMode?: string;
  /** Over DEFAULT_TIME_LIMITS, by category or by hook name (`preApply`, `apply.pre.check`); a plugin's own `timeouts` win. */
  readonly timeLimits?: Readonly<Partial<Record<string, number>>>;
  /** Cancels every running and later hook. */
  readonly signal?: AbortSignal;
  /** Where plugin log lines go; by default warnings go to stderr, the rest nowhere. */
  readonly log?: (entry: PluginLogEntry) => void;
  /** Paths of a release's values to redact whatever their key (the charts' schemas mark them: see redact.ts). */
  readonly secretPathRules?: readonly SecretPathRule[];
  /** Replace the offline stores (tests). */
  readonly passwords?: PasswordStore;
  readonly records?: RecordStore;
}

/** Where a cluster-mode host keeps passwords and records, and what its plugins may touch. */
export interface ClusterStores {
  readonly passwords: PasswordStore;
  readonly records: RecordStore;
  readonly objects: ClusterObjects;
}

/** The app's kustomize operator as the lifecycle asks it, each call run like any hook (time limit, log, abort). */
export interface KustomizeOperatorView {
  /** Where it is defined, for messages. */
  readonly file: string;
  /** Apply modes besides `normal`. */
  readonly modes: readonly string[];
  isEnabled(release: ReleaseRef, mode: string): Promise<boolean>;
  isPartial(mode: string): boolean;
}

export interface PluginHost {
  readonly plugins: readonly LoadedPlugin[];
  readonly bundle: LoadedBundle;
  readonly mode: PluginMode;
  /** The chart plugin serving a release, if any. */
  pluginFor(release: string): LoadedChartPlugin | undefined;
  /** Values layer 5 for computeReleaseValues (`providers: { plugin: host.overridesProvider() }`). */
  overridesProvider(): LayerProvider;
  /** The plugin layer of one release: `getOverrides` as a tree whose origin is `plugin <chart>` at the plugin's file:line. */
  overrides(release: ReleaseInfo): Promise<ValueNode | undefined>;
  /** Hooks of one operation × timing × kind, in order; throws on refusal, failure or time-out. */
  runHooks(selector: HookSelector): Promise<HookRecord[]>;
  /** Every kind of one operation × timing, checks first. */
  runStage(stage: { readonly operation: Operation; readonly timing: Timing }): Promise<HookRecord[]>;
  /** What runHooks would run, without running it. */
  plannedHooks(selector: HookSelector): Omit<HookRecord, 'millis'>[];
  /** The status hook of the plugin serving `release`, after that release became Ready. */
  runStatus(release: string): Promise<HookRecord[]>;
  /** The releases the spec enables, in release-table order: the original set every apply plan starts from. */
  readonly enabled: readonly ReleaseRef[];
  /** The app's kustomize operator, if it has one. */
  readonly kustomizeOperator?: KustomizeOperatorView;
  /** A copy with every secret (a plugin's password, a value under a secret key) replaced by `<secret>`: for anything printed. `at`: where the value sits. */
  redact<T>(value: T, at?: readonly SecretPathSegment[]): T;
}

export class PluginModeError extends PluginError {}

function refOf(release: ReleaseView): ReleaseRef {
  return {
    name: release.name,
    chart: release.chart,
    namespace: release.namespace,
    releaseName: release.releaseName,
    ...(release.service !== undefined ? { service: release.service } : {}),
    ...(release.group !== undefined ? { group: release.group } : {}),
    dependsOn: [...release.dependsOn],
  };
}

function defaultLog(entry: PluginLogEntry): void {
  if (entry.level === 'warn') process.stderr.write(`warning: plugin ${entry.plugin}: ${entry.message}\n`);
}

export async function createPluginHost(app: PluginAppView, bundle: LoadedBundle, options: PluginHostOptions): Promise<PluginHost> {
  const releases = app.releases.map(refOf);
  const binding: PluginBinding = bindPlugins(bundle.plugins, releases);
  const enabled = app.enabled.map(refOf);
  const secrets = new SecretRegistry();
  for (const rule of options.secretPathRules ?? []) secrets.markSecretPaths(rule);
  const common = callContext(app, enabled, secrets, options);
  const kube = options.cluster?.objects;
  shareWithPluginProcess(bundle, common, kube, secrets, options.mode);
  const env = hookEnvironment(bundle, binding, enabled, common, kube, secrets, options);
  return pluginHost(bundle, binding, releases, enabled, env, secrets, options.mode);
}

/** What every call of a plugin gets, but its mode, cluster objects, logger and signal. */
type CallContext = Omit<OfflineContext, 'mode' | 'kube' | 'log' | 'signal'>;

/** The context every call shares: the app, its spec and version, the enabled releases, and the stores (the cluster's, or files of the user's), every password handed out remembered as a secret. */
function callContext(app: PluginAppView, enabled: readonly ReleaseRef[], secrets: SecretRegistry, options: PluginHostOptions): CallContext {
  if (options.mode === 'cluster' && !options.cluster) throw new PluginModeError('cluster mode needs the cluster stores');
  if (options.mode === 'offline' && options.cluster) throw new PluginModeError('offline mode has no cluster; leave the cluster stores out');
  const stateDir = options.stateDir ?? defaultStateDir(app.metadata.appName);
  const store: PasswordStore = options.cluster?.passwords ?? options.passwords ?? new LocalPasswordStore(join(stateDir, 'passwords.json'));
  const passwords: PasswordStore = {
    async getOrGenerate(name, opts) {
      const value = await store.getOrGenerate(name, opts);
      secrets.add(value);
      return value;
    },
  };
  const records = options.cluster?.records ?? options.records ?? new LocalRecordStore(join(stateDir, 'records.json'));
  const version: VersionContext = {
    release: app.target.release,
    target: app.target.release,
    deployed: app.versions?.deployed ?? null,
    images: Object.fromEntries([...app.images].map(([field, image]) => [field, image.reference])),
    imageSources: Object.fromEntries([...app.images].map(([field, image]) => [field, image.source])),
    serviceDefaults: structuredClone(app.target.serviceDefaults),
  };
  return {
    app: { name: app.metadata.appName, version: app.metadata.appVersion },
    spec: structuredClone(app.spec),
    version,
    releases: enabled,
    applyMode: options.applyMode ?? NORMAL_MODE,
    passwords,
    records,
  };
}

/** The plugins run in the plugin process: the data every call shares goes there once, frozen there, with the secrets to redact what it prints. */
function shareWithPluginProcess(bundle: LoadedBundle, common: CallContext, kube: ClusterObjects | undefined, secrets: SecretRegistry, mode: PluginMode): void {
  const instances = bundle.instances;
  if (!instances) return;
  const shared: SharedContext = {
    app: common.app,
    spec: common.spec,
    version: common.version,
    releases: common.releases,
    applyMode: common.applyMode,
    mode,
    ...(kube ? { namespace: kube.namespace } : {}),
  };
  instances.sandbox.setContext(instances.set, shared);
  instances.sandbox.redactWith(secrets);
}

/** How the hook runner reaches the plugins: each call's context, the releases a plugin serves, the call itself (in the plugin process), its time limit. */
function hookEnvironment(
  bundle: LoadedBundle,
  binding: PluginBinding,
  enabled: readonly ReleaseRef[],
  common: CallContext,
  kube: ClusterObjects | undefined,
  secrets: SecretRegistry,
  options: PluginHostOptions,
): HookEnvironment {
  const sink = options.log ?? defaultLog;
  const loggerFor = (plugin: LoadedPlugin): PluginLogger => {
    const emit = (level: PluginLogEntry['level']) => (message: string) => sink({ level, plugin: plugin.name, message: secrets.redactText(String(message)) });
    return { debug: emit('debug'), info: emit('info'), warn: emit('warn') };
  };
  const instances = bundle.instances;
  return {
    context(signal, plugin): PluginContext {
      const log = loggerFor(plugin);
      return kube ? { ...common, mode: 'cluster', kube, log, signal } : { ...common, mode: 'offline', log, signal };
    },
    releasesOf(plugin) {
      return enabled.filter((r) => binding.byRelease.get(r.name) === plugin);
    },
    async ready() {
      await instances?.sandbox.ready();
    },
    invoke(plugin, invocation, ctx, release) {
      if (!instances) throw new PluginError(`${plugin.file}: the plugin bundle was loaded without its plugin process`);
      return instances.sandbox.call(instances.set, plugin.index, invocation, ctx, YAML_LIMITS.maxDepth, release);
    },
    timeLimit(plugin, hook, category) {
      const own = plugin.timeouts;
      return (
        own?.[hook] ??
        own?.[category] ??
        options.timeLimits?.[hook] ??
        options.timeLimits?.[category] ??
        DEFAULT_TIME_LIMITS[category] ??
        DEFAULT_TIME_LIMITS.operation ??
        600_000
      );
    },
    ...(options.signal ? { signal: options.signal } : {}),
  };
}

/** The host over the bound plugins: their overrides as a values layer, their hooks, the kustomize operator, redaction. */
function pluginHost(
  bundle: LoadedBundle,
  binding: PluginBinding,
  releases: readonly ReleaseRef[],
  enabled: readonly ReleaseRef[],
  env: HookEnvironment,
  secrets: SecretRegistry,
  mode: PluginMode,
): PluginHost {
  const refByName = (name: string): ReleaseRef => {
    const release = releases.find((r) => r.name === name);
    if (!release) throw new PluginError(`no release "${name}"`);
    return release;
  };
  const kustomizeOperator = kustomizeOperatorView(binding.kustomize, env);
  const host: PluginHost = {
    plugins: bundle.plugins,
    bundle,
    mode,
    pluginFor: (release) => binding.byRelease.get(release),
    overridesProvider: () => (release) => host.overrides(release),
    async overrides(release) {
      const plugin = binding.byRelease.get(release.name);
      if (!plugin) return undefined;
      const values = await callGetOverrides(plugin, refByName(release.name), env);
      if (Object.keys(values).length === 0) return undefined;
      return fromPlain(values, {
        layer: `plugin ${release.chart}`,
        location: { file: plugin.file, line: plugin.overridesLine, column: plugin.overridesLine > 0 ? 1 : 0 },
      });
    },
    runHooks: (selector) => runHooks(bundle.plugins, selector, env),
    runStage: (stage) => runStage(bundle.plugins, stage, env),
    plannedHooks: (selector) => plannedHooks(bundle.plugins, selector, env),
    runStatus: (release) => runStatusHook(binding.byRelease.get(release), refByName(release), env),
    enabled,
    ...(kustomizeOperator ? { kustomizeOperator } : {}),
    redact: (value, at) => secrets.redact(value, at),
  };
  return host;
}

function kustomizeOperatorView(operator: LoadedKustomizeOperator | undefined, env: HookEnvironment): KustomizeOperatorView | undefined {
  return (
    operator && {
      file: operator.file,
      modes: operator.modes,
      isEnabled: async (release, mode) => (await callPlugin(operator, 'isEnabled', 'isEnabled', env, { method: 'isEnabled', release, mode }, release)) === true,
      // Asked of the plugin for every mode it has when it was loaded: the answer is known without a call.
      isPartial: (mode) => operator.partial[mode] ?? mode !== NORMAL_MODE,
    }
  );
}

/** An app's plugins from its source tree: bundled into a temporary folder, loaded from there like a shipped bundle. */
export async function loadAppPlugins(app: PluginAppView & { readonly root: string }, options: PluginHostOptions): Promise<PluginHost> {
  if ((await discoverPluginFiles(app.root)).length === 0) return createPluginHost(app, emptyBundle(), options);
  const dir = await makeTempDir('plugin-bundle');
  try {
    await writePluginBundle(await bundlePlugins(app.root), dir);
    // Awaited here, not returned: a rejection must have its handler before `finally` awaits the clean-up.
    return await createPluginHost(app, await loadPluginBundle(dir), options);
  } finally {
    await removeTempDir(dir);
  }
}

function emptyBundle(): LoadedBundle {
  return { manifest: { format: MANIFEST_FORMAT, apiVersion: PLUGIN_API_VERSION, entry: ENTRY_FILE, plugins: [], files: {}, sources: {} }, plugins: [] };
}
