/**
 * Plugins: the API app authors write against (also published as
 * `flotilla/plugin`), and what flotilla does with plugins — bundle them,
 * load a bundle (checking its sha256 first) into the plugin process that
 * runs their code (sandbox.ts), bind them to releases, run their hooks
 * under time limits, provide values layer 5.
 */
export * from './api.js';
export { bindPlugins, servesRelease, type LoadedKustomizeOperator, type PluginBinding } from './binding.js';
export { bundlePlugins, findOverridesLine, pluginBundleKey, writePluginBundle, type PluginBundle } from './bundle.js';
export { discoverPluginFiles, nextFreeOrder, parsePluginFileName, PLUGINS_DIR, type PluginFile } from './discovery.js';
export {
  DuplicatePluginError,
  OperationRefusedError,
  PluginAbortedError,
  PluginBuildError,
  PluginBundleError,
  PluginError,
  PluginHookError,
  PluginLoadError,
  PluginTimeoutError,
  TamperedBundleError,
  type HookSite,
} from './errors.js';
export {
  createPluginHost,
  DEFAULT_TIME_LIMITS,
  loadAppPlugins,
  PluginModeError,
  type ClusterStores,
  type KustomizeOperatorView,
  type PluginAppView,
  type PluginHost,
  type PluginHostOptions,
  type PluginLogEntry,
  type ReleaseView,
} from './host.js';
export { describePlugin, type LoadedChartPlugin, type LoadedPlugin } from './instantiate.js';
export { loadPluginBundle, loadPluginBundleFiles, verifyPluginBundle, type LoadedBundle } from './loader.js';
export { defaultStateDir, LocalPasswordStore, LocalRecordStore } from './local-store.js';
export { ENTRY_FILE, MANIFEST_FILE, MANIFEST_FORMAT, parseManifest, serializeManifest, type ManifestPlugin, type PluginManifest } from './manifest.js';
export { checkPasswordName, generatePassword, passwordSecretName } from './passwords.js';
export { isSecretKey, REDACTED, SecretRegistry, type SecretPathRule, type SecretPathSegment } from './redact.js';
export { callPlugin, plannedHooks, runHooks, runStage, runStatusHook, type HookEnvironment, type HookRecord, type HookSelector } from './runner.js';
export { scaffoldPlugin, type ScaffoldOptions, type ScaffoldResult } from './scaffold.js';
export { PluginTypeError, typecheckPlugins, TypeScriptMissingError, type TypecheckOptions, type TypecheckResult, type TypeProblem } from './typecheck.js';
export { runWithTimeLimit, type TimeLimit } from './time-limit.js';
export { PluginProcessError, sandboxLimits, type PluginSandbox, type SandboxLimits } from './sandbox.js';
