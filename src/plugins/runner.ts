/**
 * The hook runner a lifecycle calls: which hooks a stage has, in what order,
 * each under its time limit. A check that refuses, a hook that throws and a
 * hook past its limit all stop the stage: nothing after them runs.
 *
 * Order: plugins in file order (NNN_ prefix); for `remove` the reverse, so
 * what was set up last is taken down first. A chart plugin serving several
 * releases runs once per enabled release, in release-table order.
 */
import type { ChartContext, HookKind, LifecycleContext, Operation, PluginContext, ReleaseRef, Timing, Values } from './context.js';
import { HOOK_KINDS } from './context.js';
import { OperationRefusedError, PluginAbortedError, PluginHookError, PluginTimeoutError, type HookSite } from './errors.js';
import type { LoadedChartPlugin, LoadedPlugin } from './instantiate.js';
import { runWithTimeLimit } from './time-limit.js';
import { YAML_LIMITS } from '../document/index.js';
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
  /** Cancels the whole operation. */
  readonly signal?: AbortSignal;
}

interface Call {
  readonly plugin: LoadedPlugin;
  readonly hook: string;
  readonly category: string;
  readonly release?: ReleaseRef;
  readonly check?: Operation;
  readonly invoke: (ctx: PluginContext) => unknown;
}

/** Names of the chart plugin hooks that do work around an operation. */
const CHART_WORK_HOOKS: Partial<Record<Operation, Partial<Record<Timing, 'preApply' | 'postApply' | 'preRemove' | 'postRemove'>>>> = {
  apply: { pre: 'preApply', post: 'postApply' },
  remove: { pre: 'preRemove', post: 'postRemove' },
};

function callsOf(plugin: LoadedPlugin, selector: HookSelector, env: HookEnvironment): Call[] {
  const { operation, timing, kind } = selector;
  if (plugin.kind === 'lifecycle') {
    const hook = plugin.instance.hooks[operation]?.[timing]?.[kind];
    if (!hook) return [];
    const hooks = plugin.instance.hooks;
    const lifecycleCall: Call = {
      plugin,
      hook: `${operation}.${timing}.${kind}`,
      category: kind,
      ...(kind === 'check' ? { check: operation } : {}),
      // Called through the table so `this` inside a method-style entry is the table, as written.
      invoke: (ctx) => (hooks[operation]?.[timing]?.[kind] as (c: LifecycleContext) => unknown).call(hooks[operation]?.[timing], { ...ctx, operation, timing, kind }),
    };
    return [lifecycleCall];
  }
  if (plugin.kind !== 'chart') return [];
  const instance = plugin.instance;
  const perRelease = (hook: string, invoke: (ctx: ChartContext) => unknown, check?: Operation): Call[] =>
    env.releasesOf(plugin).map((release) => ({
      plugin,
      hook,
      category: kind,
      release,
      ...(check ? { check } : {}),
      invoke: (ctx: PluginContext) => invoke({ ...ctx, release }),
    }));
  if (kind === 'check' && timing === 'pre' && typeof instance.check === 'function') {
    return perRelease(`check(${operation})`, (ctx) => instance.check?.(operation, ctx), operation);
  }
  const work = kind === 'operation' ? CHART_WORK_HOOKS[operation]?.[timing] : undefined;
  if (work && typeof instance[work] === 'function') return perRelease(work, (ctx) => instance[work]?.(ctx));
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
    for (const call of callsOf(plugin, selector, env)) records.push(await runCall(call, env));
  }
  return records;
}

/** Runs every kind of one operation × timing, checks first (HOOK_KINDS order). */
export async function runStage(plugins: readonly LoadedPlugin[], stage: { readonly operation: Operation; readonly timing: Timing }, env: HookEnvironment): Promise<HookRecord[]> {
  const records: HookRecord[] = [];
  for (const kind of HOOK_KINDS) records.push(...(await runHooks(plugins, { ...stage, kind }, env)));
  return records;
}

/** Runs the `status` hook of the plugin serving `release`, once that release is Ready. */
export async function runStatusHook(plugin: LoadedChartPlugin | undefined, release: ReleaseRef, env: HookEnvironment): Promise<HookRecord[]> {
  if (!plugin || typeof plugin.instance.status !== 'function') return [];
  const instance = plugin.instance;
  return [await runCall({ plugin, hook: 'status', category: 'status', release, invoke: (ctx) => instance.status?.({ ...ctx, release }) }, env)];
}

/** Calls a chart plugin's getOverrides under its time limit and checks it returned Helm values. */
export async function callGetOverrides(plugin: LoadedChartPlugin, release: ReleaseRef, env: HookEnvironment): Promise<Values> {
  const site: HookSite = { plugin: plugin.name, file: plugin.file, hook: 'getOverrides', release: release.name };
  const result = await callPlugin(plugin, 'getOverrides', 'getOverrides', env, (ctx) => plugin.instance.getOverrides({ ...ctx, release }), release);
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    throw new PluginHookError(site, `must return a map of Helm values, got ${result === null ? 'null' : Array.isArray(result) ? 'a list' : typeof result}`);
  }
  const problem = valuesProblem(result, []);
  if (problem) throw new PluginHookError(site, problem);
  return result;
}

/** Calls any plugin method under its time limit, with the runner's error handling; for hosts calling plugin methods that are not hooks. */
export async function callPlugin<T>(plugin: LoadedPlugin, hook: string, category: string, env: HookEnvironment, fn: (ctx: PluginContext) => T | Promise<T>, release?: ReleaseRef): Promise<T> {
  let result: T | undefined;
  await runCall({ plugin, hook, category, ...(release ? { release } : {}), invoke: async (ctx) => { result = await fn(ctx); } }, env);
  return result as T;
}

function siteOf(call: Call): HookSite {
  return { plugin: call.plugin.name, file: call.plugin.file, hook: call.hook, ...(call.release ? { release: call.release.name } : {}) };
}

async function runCall(call: Call, env: HookEnvironment): Promise<HookRecord> {
  const site = siteOf(call);
  const limitMs = env.timeLimit(call.plugin, call.hook, call.category);
  const started = Date.now();
  let result: unknown;
  try {
    result = await runWithTimeLimit((signal) => call.invoke(env.context(signal, call.plugin)), {
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
  return { ...site, millis: Date.now() - started };
}

/**
 * What is wrong with values a plugin returned (functions, class instances,
 * NaN…), if anything. `inside`: the
 * maps and lists around this value, so that one containing itself is named
 * rather than walked forever; nesting is held to what a YAML file may hold.
 */
function valuesProblem(value: unknown, path: readonly string[], inside: Set<object> = new Set()): string | undefined {
  const at = () => (path.length > 0 ? ` at ${path.join('.')}` : '');
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `returned ${value}${at()}, which YAML cannot carry`;
  if (value === undefined) return undefined;
  const plainMap = typeof value === 'object' && (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null);
  if (Array.isArray(value) || plainMap) {
    if (inside.has(value as object)) return `returned a map or list that contains itself${at()}; Helm values are a tree`;
    if (inside.size >= YAML_LIMITS.maxDepth) return `returned values nested more than ${YAML_LIMITS.maxDepth} levels deep${at()}`;
    inside.add(value as object);
    try {
      // Array.from, not map: a hole in a list is an undefined item here, refused below.
      const entries: [string, unknown][] = Array.isArray(value) ? Array.from(value, (item, i) => [String(i), item]) : Object.entries(value as object);
      for (const [key, item] of entries) {
        if (item === undefined && Array.isArray(value)) return `returned undefined in a list${at()}[${key}]`;
        const p = valuesProblem(item, [...path, key], inside);
        if (p) return p;
      }
      return undefined;
    } finally {
      inside.delete(value as object);
    }
  }
  return `returned ${typeof value === 'object' ? `a ${(value as object).constructor?.name ?? 'non-plain'} object` : `a ${typeof value}`}${at()}; Helm values are maps, lists, strings, numbers, booleans and null`;
}
