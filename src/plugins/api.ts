/**
 * `flotilla/plugin`: what app authors import to write plugins. Everything
 * here is bundled into the app's plugin bundle, so it depends on nothing but
 * itself at run time.
 */
export { PLUGIN_API_VERSION, type PluginKind } from './brand.js';
export * from './context.js';
export { ChartPlugin } from './chart-plugin.js';
export { AppLifecycle, type CheckHook, type LifecycleHooks, type StageHooks, type WorkHook } from './app-lifecycle.js';
export { KustomizeOperator, NORMAL_MODE } from './kustomize-operator.js';
export { isRefusal, refuse, type Refusal, type Verdict } from './verdict.js';
export { endpointUrl, imageFor, imageTags, serviceEndpoints, type Endpoint, type EndpointOptions, type ServiceEndpoints } from './helpers.js';
export {
  MemoryLogger,
  MemoryPasswordStore,
  MemoryRecordStore,
  testChartContext,
  testContext,
  testLifecycleContext,
  type LogLine,
  type TestContext,
  type TestContextOptions,
} from './testing.js';
