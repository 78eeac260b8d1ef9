/**
 * The messages between the plugin host and the plugin process
 * (docs/plugins.md, "Where plugins run"). Everything crossing is JSON: a hook
 * name and the context's data in, a result out; the host services the plugin
 * API offers (passwords, records, cluster objects, the log) are requests the
 * plugin process makes while a call runs. The host trusts nothing it
 * receives: every message is checked for its shape before it is used.
 */
import type { AppInfo, DeploymentSpec, HookKind, JsonValue, Operation, PluginMode, ReleaseRef, Timing, VersionContext } from './context.js';

/** The context data every call of one host shares, sent once per plugin set. */
export interface SharedContext {
  readonly app: AppInfo;
  readonly spec: DeploymentSpec;
  readonly version: VersionContext;
  readonly releases: readonly ReleaseRef[];
  readonly applyMode: string;
  readonly mode: PluginMode;
  /** Cluster mode: the app's namespace (`ctx.kube.namespace`). */
  readonly namespace?: string;
}

/** A field the host checks, as the plugin process saw it: a string, or the type it had instead. */
export type FieldFact = string | { readonly type: string } | undefined;

/** What the plugin process learnt of one plugin module by constructing its default export. */
export interface PluginFacts {
  readonly file: string;
  /** Why there is no instance: no default export class, or its constructor threw. */
  readonly problem?: string;
  readonly pluginKind?: FieldFact;
  readonly apiVersion?: JsonValue;
  readonly chart?: FieldFact;
  readonly release?: FieldFact;
  readonly timeouts?: Readonly<Record<string, number>>;
  /** Chart plugins: the optional hooks the instance has (`check`, `preApply`, `status`, …). */
  readonly methods: readonly string[];
  /** App lifecycle plugins: the hooks of its table, as `operation.timing.kind`. */
  readonly stages: readonly string[];
  /** Kustomize operators: the modes besides `normal`, and which of them (and `normal`) are partial. */
  readonly modes: readonly string[];
  readonly partial: Readonly<Record<string, boolean>>;
}

/** The chart plugin methods a host may call, with the arguments before the context. */
export const CHART_METHODS = ['getOverrides', 'check', 'preApply', 'postApply', 'preRemove', 'postRemove', 'status'] as const;
export type ChartMethod = (typeof CHART_METHODS)[number];

/** What one call runs: a chart plugin method, a kustomize operator's `isEnabled`, or one hook of a lifecycle table. */
export type Invocation =
  | { readonly method: ChartMethod; readonly operation?: Operation }
  | { readonly method: 'isEnabled'; readonly release: ReleaseRef; readonly mode: string }
  | { readonly method: 'stage'; readonly operation: Operation; readonly timing: Timing; readonly kind: HookKind };

/** An error as it crosses: the Node error code and, for a refused permission, what was refused. */
export interface CrossingError {
  readonly message: string;
  readonly stack?: string;
  readonly code?: string;
  readonly permission?: string;
  readonly resource?: string;
}

export const SERVICES = ['passwords.getOrGenerate', 'records.get', 'records.set', 'records.delete', 'kube.list', 'kube.deleteAll'] as const;
export type ServiceName = (typeof SERVICES)[number];

export type HostMessage =
  | { readonly type: 'instantiate'; readonly set: number }
  | { readonly type: 'context'; readonly set: number; readonly context: SharedContext }
  | {
      readonly type: 'call';
      readonly id: number;
      readonly set: number;
      readonly plugin: number;
      readonly invocation: Invocation;
      readonly release?: ReleaseRef;
      readonly maxDepth: number;
    }
  | { readonly type: 'service-result'; readonly request: number; readonly value?: JsonValue; readonly error?: string };

export type SandboxMessage =
  | { readonly type: 'loaded'; readonly plugins: number }
  | { readonly type: 'load-failed'; readonly error: CrossingError }
  | { readonly type: 'instantiated'; readonly set: number; readonly plugins: readonly PluginFacts[] }
  | { readonly type: 'result'; readonly id: number; readonly value?: JsonValue }
  | { readonly type: 'failed'; readonly id: number; readonly error: CrossingError }
  | { readonly type: 'service'; readonly call: number; readonly request: number; readonly service: ServiceName; readonly args: readonly JsonValue[] }
  | { readonly type: 'log'; readonly call: number; readonly level: 'debug' | 'info' | 'warn'; readonly message: string };

/** The code of the errors the plugin process raises for what plugins may not do (the permission model's own code). */
export const ACCESS_DENIED = 'ERR_ACCESS_DENIED';

/**
 * What a refused attempt was, in the user's words: from the permission model's
 * `permission` and `resource` (and the network fence's, which uses the same
 * code: Node 20's permission model has no network permission).
 */
export function describeDenied(error: CrossingError): string {
  const resource = error.resource ? ` ${error.resource}` : '';
  switch (error.permission) {
    case 'FileSystemWrite':
      return `tried to write${resource || ' a file'}: plugins may not write files`;
    case 'FileSystemRead':
      return `tried to read${resource || ' a file'}: plugins may read no file but their own bundle`;
    case 'ChildProcess':
      return 'tried to start a process: plugins may not start processes';
    case 'WorkerThreads':
      return 'tried to start a worker thread: plugins may not start threads';
    case 'Network':
      return `tried to open a network connection${resource ? ` to${resource}` : ''}: plugins have no network (the cluster is ctx.kube)`;
    default:
      return `tried ${error.permission ?? 'something'}${resource}, which plugins may not do`;
  }
}
