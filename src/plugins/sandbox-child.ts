/**
 * The plugin process (docs/plugins.md, "Where plugins run"): started by the
 * plugin host with Node's permission model (it may read its own script and
 * the plugin bundle, nothing else, and write nothing), it imports the bundle
 * named by its one argument, constructs the plugins and runs the hooks the
 * host asks for, answering through the IPC channel. Bundled into one file
 * (scripts/bundle-cli.mjs, or by the host when run from sources), so that it
 * reads nothing else.
 */
import dgram from 'node:dgram';
import dns from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';
import { pathToFileURL } from 'node:url';
import { helmValuesMapProblem } from './helm-values.js';
import {
  ACCESS_DENIED,
  CHART_METHODS,
  type CrossingError,
  type HostMessage,
  type Invocation,
  type PluginFacts,
  type SandboxMessage,
  type ServiceName,
  type SharedContext,
} from './sandbox-protocol.js';
import type { JsonValue } from './context.js';

/**
 * Node 20's permission model has no network permission: every way the
 * built-in modules reach the network is replaced, before any plugin code
 * runs, by one that throws the permission model's error, and fixed in place.
 */
function fenceNetwork(): void {
  const denied = (what: string) =>
    function deniedNetwork(...args: unknown[]): never {
      throw Object.assign(new Error(`Access to this API has been restricted: ${what}`), {
        code: ACCESS_DENIED,
        permission: 'Network',
        resource: networkTarget(args),
      });
    };
  const fix = (owner: object, names: readonly string[], what: string) => {
    for (const name of names) Object.defineProperty(owner, name, { value: denied(what), writable: false, configurable: false, enumerable: true });
  };
  fix(net.Socket.prototype, ['connect'], 'net.Socket.connect');
  fix(net, ['connect', 'createConnection', '_createServerHandle'], 'net.connect');
  fix(net.Server.prototype, ['listen'], 'net.Server.listen');
  fix(tls, ['connect'], 'tls.connect');
  fix(dgram.Socket.prototype, ['bind', 'connect', 'send'], 'dgram');
  const lookups = [
    'lookup',
    'lookupService',
    'resolve',
    'resolve4',
    'resolve6',
    'resolveAny',
    'resolveCaa',
    'resolveCname',
    'resolveMx',
    'resolveNaptr',
    'resolveNs',
    'resolvePtr',
    'resolveSoa',
    'resolveSrv',
    'resolveTxt',
    'reverse',
  ];
  for (const owner of [dns, dns.promises, dns.Resolver.prototype, dns.promises.Resolver.prototype])
    fix(
      owner,
      lookups.filter((n) => n in owner),
      'dns',
    );
}

/** Where a refused call meant to connect (or listen): `host:port`, a socket path or a host name. */
function networkTarget(args: readonly unknown[]): string {
  const [first, second] = args;
  if (typeof first === 'object' && first !== null) {
    const { host, path, port } = first as { host?: unknown; path?: unknown; port?: unknown };
    return [host ?? path ?? (port !== undefined ? 'localhost' : undefined), port]
      .filter((p) => p !== undefined)
      .map(String)
      .join(':');
  }
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) return `${typeof second === 'string' ? second : 'localhost'}:${first}`;
  return typeof first === 'string' ? first : '';
}

fenceNetwork();
process.setSourceMapsEnabled(true);

const send = (message: SandboxMessage): void => {
  process.send?.(message);
};

/** An error as it crosses to the host; a refused permission wrapped by another error (fetch's "fetch failed") crosses as itself. */
function crossing(error: unknown): CrossingError {
  if (!(error instanceof Error)) return { message: String(error) };
  for (let cause: unknown = error.cause; cause instanceof Error; cause = cause.cause) {
    if ((cause as { code?: unknown }).code === ACCESS_DENIED) return { ...crossing(cause), ...(error.stack ? { stack: error.stack } : {}) };
  }
  const { code, permission, resource } = error as { code?: unknown; permission?: unknown; resource?: unknown };
  return {
    message: error.message,
    ...(error.stack ? { stack: error.stack } : {}),
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof permission === 'string' ? { permission } : {}),
    ...(typeof resource === 'string' ? { resource } : {}),
  };
}

interface BundledModule {
  readonly file: string;
  readonly exports: Readonly<Record<string, unknown>>;
}

let modules: readonly BundledModule[] = [];
const sets = new Map<number, { readonly instances: readonly unknown[]; context?: SharedContext }>();
const waiting = new Map<number, { resolve: (value: JsonValue | undefined) => void; reject: (error: Error) => void }>();
let nextRequest = 0;

const field = (value: unknown) => (value === undefined ? undefined : typeof value === 'string' ? value : { type: value === null ? 'null' : typeof value });

function factsOf(module: BundledModule): { facts: PluginFacts; instance?: unknown } {
  const none = { file: module.file, methods: [], stages: [], modes: [], partial: {} };
  const Class = module.exports.default;
  if (typeof Class !== 'function') return { facts: { ...none, problem: 'no default export class' } };
  let instance: Record<string, unknown>;
  try {
    instance = new (Class as new () => Record<string, unknown>)();
  } catch (error) {
    return { facts: { ...none, problem: `constructing the plugin failed: ${error instanceof Error ? error.message : String(error)}` } };
  }
  const timeouts = instance.timeouts;
  const hooks = instance.hooks as Record<string, Record<string, Record<string, unknown>>> | undefined;
  const stages: string[] = [];
  if (instance.pluginKind === 'lifecycle' && hooks && typeof hooks === 'object') {
    for (const [operation, timings] of Object.entries(hooks)) {
      for (const [timing, kinds] of Object.entries(timings ?? {})) {
        for (const [kind, hook] of Object.entries(kinds ?? {})) if (typeof hook === 'function') stages.push(`${operation}.${timing}.${kind}`);
      }
    }
  }
  const modes = instance.pluginKind === 'kustomize' && Array.isArray(instance.modes) ? instance.modes.filter((m): m is string => typeof m === 'string') : [];
  const partial: Record<string, boolean> = {};
  if (instance.pluginKind === 'kustomize' && typeof instance.isPartial === 'function') {
    for (const mode of ['normal', ...modes]) partial[mode] = (instance.isPartial as (m: string) => unknown)(mode) === true;
  }
  const facts: PluginFacts = {
    file: module.file,
    pluginKind: field(instance.pluginKind),
    apiVersion: typeof instance.apiVersion === 'number' || typeof instance.apiVersion === 'string' ? instance.apiVersion : null,
    chart: field(instance.chart),
    release: field(instance.release),
    ...(timeouts && typeof timeouts === 'object'
      ? { timeouts: Object.fromEntries(Object.entries(timeouts).filter((e): e is [string, number] => typeof e[1] === 'number')) }
      : {}),
    methods: CHART_METHODS.filter((m) => typeof instance[m] === 'function'),
    stages,
    modes,
    partial,
  };
  return { facts, instance };
}

function service(call: number, name: ServiceName, args: readonly JsonValue[]): Promise<JsonValue | undefined> {
  const request = nextRequest++;
  return new Promise((resolve, reject) => {
    waiting.set(request, { resolve, reject });
    send({ type: 'service', call, request, service: name, args });
  });
}

function contextFor(id: number, shared: SharedContext, signal: AbortSignal, extra: Record<string, unknown>): Record<string, unknown> {
  const log = (level: 'debug' | 'info' | 'warn') => (message: unknown) => send({ type: 'log', call: id, level, message: String(message) });
  const selector = (s: unknown) => s as JsonValue;
  return {
    ...shared,
    ...extra,
    signal,
    log: { debug: log('debug'), info: log('info'), warn: log('warn') },
    passwords: {
      getOrGenerate: (name: unknown, options?: { length?: unknown }) =>
        service(id, 'passwords.getOrGenerate', [name as JsonValue, (options ?? null) as JsonValue]),
    },
    records: {
      get: (key: unknown) => service(id, 'records.get', [key as JsonValue]),
      set: async (key: unknown, value: unknown) => void (await service(id, 'records.set', [key as JsonValue, value as JsonValue])),
      delete: async (key: unknown) => void (await service(id, 'records.delete', [key as JsonValue])),
    },
    ...(shared.mode === 'cluster'
      ? {
          kube: {
            namespace: shared.namespace,
            list: (s: unknown) => service(id, 'kube.list', [selector(s)]),
            deleteAll: (s: unknown) => service(id, 'kube.deleteAll', [selector(s)]),
          },
        }
      : {}),
  };
}

async function invoke(instance: Record<string, unknown>, invocation: Invocation, ctx: Record<string, unknown>): Promise<unknown> {
  const method = (name: string, ...args: unknown[]) => (instance[name] as (...a: unknown[]) => unknown).call(instance, ...args, ctx);
  switch (invocation.method) {
    case 'stage': {
      const { operation, timing, kind } = invocation;
      const table = (instance.hooks as Record<string, Record<string, Record<string, (c: unknown) => unknown>>>)[operation]?.[timing];
      // Called through the table so `this` inside a method-style entry is the table, as written.
      return table?.[kind]?.call(table, { ...ctx, operation, timing, kind });
    }
    case 'isEnabled':
      return method('isEnabled', invocation.release, invocation.mode);
    case 'check':
      return method('check', invocation.operation);
    default:
      return method(invocation.method);
  }
}

async function call(message: Extract<HostMessage, { type: 'call' }>): Promise<void> {
  // Never aborted here: a call the host gives up on is ended with its process.
  const controller = new AbortController();
  try {
    const set = sets.get(message.set);
    const instance = set?.instances[message.plugin] as Record<string, unknown> | undefined;
    if (!set?.context || !instance) throw new Error(`no plugin ${message.plugin} in set ${message.set}`);
    const extra = message.release ? { release: message.release } : {};
    const result = await invoke(instance, message.invocation, contextFor(message.id, set.context, controller.signal, extra));
    const method = message.invocation.method;
    if (method === 'getOverrides') {
      const problem = helmValuesMapProblem(result, message.maxDepth);
      if (problem) throw new Error(problem);
    }
    // Only what the host reads crosses back: values, a verdict, a yes or no.
    const answer =
      method === 'getOverrides' || method === 'check' || method === 'isEnabled' || (method === 'stage' && message.invocation.kind === 'check')
        ? result
        : undefined;
    send({ type: 'result', id: message.id, ...(answer === undefined ? {} : { value: answer as JsonValue }) });
  } catch (error) {
    send({ type: 'failed', id: message.id, error: crossing(error) });
  }
}

process.on('message', (message: HostMessage) => {
  switch (message.type) {
    case 'instantiate': {
      const made = modules.map(factsOf);
      sets.set(message.set, { instances: made.map((m) => m.instance) });
      send({ type: 'instantiated', set: message.set, plugins: made.map((m) => m.facts) });
      return;
    }
    case 'context': {
      const set = sets.get(message.set);
      if (set) set.context = deepFreeze(message.context);
      return;
    }
    case 'call':
      void call(message);
      return;
    case 'service-result': {
      const pending = waiting.get(message.request);
      waiting.delete(message.request);
      if (message.error !== undefined) pending?.reject(new Error(message.error));
      else pending?.resolve(message.value);
      return;
    }
  }
});
// The host is gone: nothing is left to answer.
process.on('disconnect', () => process.exit(0));

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

try {
  const bundle = process.argv[2];
  if (bundle === undefined) throw new Error('no plugin bundle named');
  const loaded = (await import(pathToFileURL(bundle).href)) as { plugins?: unknown };
  if (!Array.isArray(loaded.plugins)) throw new Error('the bundle module does not export its plugin list; rebuild the app');
  modules = loaded.plugins as BundledModule[];
  send({ type: 'loaded', plugins: modules.length });
} catch (error) {
  send({ type: 'load-failed', error: crossing(error) });
}
