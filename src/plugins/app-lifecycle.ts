/**
 * The base class of an app lifecycle plugin: app-wide hooks keyed by
 * operation × timing × kind, declared as a table so what runs when is
 * readable at a glance:
 *
 *   override readonly hooks: LifecycleHooks = {
 *     apply: { pre: { check: (ctx) => this.checkStorage(ctx) } },
 *   };
 */
import { PLUGIN_API_VERSION } from './brand.js';
import type { HookKind, HookTimeouts, LifecycleContext, Operation, Timing } from './context.js';
import type { Verdict } from './verdict.js';

/** A check may refuse the operation; other kinds do work and return nothing. */
export type CheckHook = (ctx: LifecycleContext) => Verdict | Promise<Verdict>;
export type WorkHook = (ctx: LifecycleContext) => void | Promise<void>;

export type StageHooks = { readonly check?: CheckHook } & { readonly [K in Exclude<HookKind, 'check'>]?: WorkHook };

export type LifecycleHooks = {
  readonly [O in Operation]?: { readonly [T in Timing]?: StageHooks };
};

export abstract class AppLifecycle {
  readonly pluginKind = 'lifecycle' as const;
  readonly apiVersion = PLUGIN_API_VERSION;
  /** Time limits (ms) per hook kind, over the host's defaults. */
  readonly timeouts?: HookTimeouts;
  readonly hooks: LifecycleHooks = {};
}
