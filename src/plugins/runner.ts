/**
 * The hook runner a lifecycle calls: which hooks a stage has, in what order,
 * each under its time limit. A check that refuses, a hook that throws and a
 * hook past its limit all stop the stage: nothing after them runs.
 *
 * Order: plugins in file order (NNN_ prefix); for `remove` the reverse, so
 * what was set up last is taken down first. A chart plugin serving several
 * releases runs once per enabled release, in release-table order.
 */
import type { HookKind, JsonValue, Operation, PluginContext, ReleaseRef, Timing, Values } from './context.js';
import { HOOK_KINDS } from './context.js';
import { OperationRefusedError, PluginAbortedError, PluginHookError, PluginTimeoutError, type HookSite } from './errors.js';
import { helmValuesMapProblem } from './helm-values.js';
import type { LoadedChartPlugin, LoadedPlugin } from './instantiate.js';
import type { Invocation } from './sandbox-protocol.js';
import { runWithTimeLimit } from './time-limit.js';
import { YAML_LIMITS } from '../yaml/index.js';
import { isRefusal } from './verdict.js';

export interface HookSelector {
  readonly operation: Operation;
  readonly timing: Timing;
  readonly kind: HookKind;
}

/** One hook that ran to its end. */
export interface HookRecord {
  readonly plugin: string;
  readonly file: string;
  readonly hook: string;
  readonly release?: string;
  readonly millis: number;
}

/** What the runner needs from the host. */
export interface HookEnvironment {
  /** The context of one call of `plugin`, carrying that call's signal. */
  context(signal: AbortSignal, plugin: LoadedPlugin): PluginContext;
  /** The enabled releases a chart plugin serves, in release-table order. */
  releasesOf(plugin: LoadedChartPlugin): readonly ReleaseRef[];
  /** Time limit (ms) of a hook; `category` is the hook kind, `getOverrides` or `status`. */
  timeLimit(plugin: LoadedPlugin, hook: string, category: string): number;
  /** Runs one call of `plugin` where its code lives (the plugin process); resolves to what the call returned. */
  invoke(plugin: LoadedPlugin, invocation: Invocation, ctx: PluginContext, release?: ReleaseRef): Promise<JsonValue | undefined>;
  /** Resolves once `plugin` can be called (its process started): that wait is not the hook's time. */
  ready(plugin: LoadedPlugin): Promise<void>;
  /** Cancels the whole operation. */
  readonly signal?: AbortSignal;
}

interface Call {
  readonly plugin: LoadedPlugin;
  readonly hook: string;
  readonly category: string;
  readonly release?: ReleaseRef;
  readonly check?: Operation;
  readonly invocation: Invocation;
}

/** Names of the chart plugin hooks that do work around an operation. */
const CHART_WORK_HOOKS: Partial<Record<Operation, Partial<Record<Timing, 'preApply' | 'postApply' | 'preRemove' | 'postRemove'>>>> = {
  apply: { pre: 'preApply', post: 'postApply' },
  remove: { pre: 'preRemove', post: 'postRemove' },
};

function callsOf(plugin: LoadedPlugin, selector: HookSelector, env: HookEnvironment): Call[] {
  const { operation, timing, kind } = selector;
  if (plugin.kind === 'lifecycle') {
    if (!plugin.stages.has(`${operation}.${timing}.${kind}`)) return [];
    return [
      {
        plugin,
        hook: `${operation}.${timing}.${kind}`,
        category: kind,
        ...(kind === 'check' ? { check: operation } : {}),
        invocation: { method: 'stage', operation, timing, kind },
      },
    ];
  }
  if (plugin.kind !== 'chart') return [];
  const perRelease = (hook: string, invocation: Invocation, check?: Operation): Call[] =>
    env.releasesOf(plugin).map((release) => ({ plugin, hook, category: kind, release, ...(check ? { check } : {}), invocation }));
  if (kind === 'check' && timing === 'pre' && plugin.methods.has('check')) return perRelease(`check(${operation})`, { method: 'check', operation }, operation);
  const work = kind === 'operation' ? CHART_WORK_HOOKS[operation]?.[timing] : undefined;
  if (work && plugin.methods.has(work)) return perRelease(work, { method: work });
  return [];
}

function ordered(plugins: readonly LoadedPlugin[], operation: Operation): readonly LoadedPlugin[] {
  return operation === 'remove' ? [...plugins].reverse() : plugins;
}

/** The hooks a selector would run, in order (for plans and progress): plugin, hook and release. */
export function plannedHooks(plugins: readonly LoadedPlugin[], selector: HookSelector, env: HookEnvironment): Omit<HookRecord, 'millis'>[] {
  return ordered(plugins, selector.operation)
    .flatMap((p) => callsOf(p, selector, env))
    .map((c) => ({ plugin: c.plugin.name, file: c.plugin.file, hook: c.hook, ...(c.release ? { release: c.release.name } : {}) }));
}

/** Runs the hooks of one operation × timing × kind. Throws OperationRefusedError, PluginHookError or PluginTimeoutError. */
export async function runHooks(plugins: readonly LoadedPlugin[], selector: HookSelector, env: HookEnvironment): Promise<HookRecord[]> {
  const records: HookRecord[] = [];
  for (const plugin of ordered(plugins, selector.operation)) {
    for (const call of callsOf(plugin, selector, env)) records.push((await runCall(call, env)).record);
  }
  return records;
}

/** Runs every kind of one operation × timing, checks first (HOOK_KINDS order). */
export async function runStage(
  plugins: readonly LoadedPlugin[],
  stage: { readonly operation: Operation; readonly timing: Timing },
  env: HookEnvironment,
): Promise<HookRecord[]> {
  const records: HookRecord[] = [];
  for (const kind of HOOK_KINDS) records.push(...(await runHooks(plugins, { ...stage, kind }, env)));
  return records;
}

/** Runs the `status` hook of the plugin serving `release`, once that release is Ready. */
export async function runStatusHook(plugin: LoadedChartPlugin | undefined, release: ReleaseRef, env: HookEnvironment): Promise<HookRecord[]> {
  if (!plugin || !plugin.methods.has('status')) return [];
  return [(await runCall({ plugin, hook: 'status', category: 'status', release, invocation: { method: 'status' } }, env)).record];
}

/** Calls a chart plugin's getOverrides under its time limit and checks it returned Helm values. */
export async function callGetOverrides(plugin: LoadedChartPlugin, release: ReleaseRef, env: HookEnvironment): Promise<Values> {
  const site: HookSite = { plugin: plugin.name, file: plugin.file, hook: 'getOverrides', release: release.name };
  const result = await callPlugin(plugin, 'getOverrides', 'getOverrides', env, { method: 'getOverrides' }, release);
  // Checked in the plugin process too; what arrives is trusted no more than the plugin.
  const problem = helmValuesMapProblem(result, YAML_LIMITS.maxDepth);
  if (problem) throw new PluginHookError(site, problem);
  return result as Values;
}

/** Calls any plugin method under its time limit, with the runner's error handling; for hosts calling plugin methods that are not hooks. */
export async function callPlugin(
  plugin: LoadedPlugin,
  hook: string,
  category: string,
  env: HookEnvironment,
  invocation: Invocation,
  release?: ReleaseRef,
): Promise<JsonValue | undefined> {
  return (await runCall({ plugin, hook, category, ...(release ? { release } : {}), invocation }, env)).result;
}

function siteOf(call: Call): HookSite {
  return { plugin: call.plugin.name, file: call.plugin.file, hook: call.hook, ...(call.release ? { release: call.release.name } : {}) };
}

async function runCall(call: Call, env: HookEnvironment): Promise<{ record: HookRecord; result: JsonValue | undefined }> {
  const site = siteOf(call);
  const limitMs = env.timeLimit(call.plugin, call.hook, call.category);
  let result: JsonValue | undefined;
  let started = Date.now();
  try {
    await env.ready(call.plugin);
    started = Date.now();
    result = await runWithTimeLimit((signal) => env.invoke(call.plugin, call.invocation, env.context(signal, call.plugin), call.release), {
      limitMs,
      ...(env.signal ? { parent: env.signal } : {}),
      onTimeout: () => new PluginTimeoutError(site, limitMs),
      onCancel: (reason) => new PluginAbortedError(site, `the operation was cancelled${reason instanceof Error ? ` (${reason.message})` : ''}`),
    });
  } catch (error) {
    if (error instanceof PluginHookError) throw error;
    throw new PluginHookError(site, error instanceof Error ? error.message : String(error), error);
  }
  if (call.check && isRefusal(result)) throw new OperationRefusedError(site, call.check, result.reason);
  return { record: { ...site, millis: Date.now() - started }, result };
}
