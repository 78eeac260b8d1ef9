/**
 * Where plugin code runs (docs/plugins.md, "Where plugins run"): never in
 * flotilla's own process, but in one Node process per plugin bundle, started
 * with Node's permission model — it may read its own script and the bundle
 * file, and nothing else; it may not write files, start processes or
 * threads, load addons, or (a fence of its own, Node 20 having no network
 * permission) open network connections — under a memory limit, each call
 * under its time limit. It talks to the host through JSON messages only
 * (src/plugins/sandbox-protocol.ts); the services the plugin API offers
 * (passwords, records, cluster objects, the log) are requests the host
 * answers from the calling hook's context.
 *
 * One process serves a bundle for the whole run: the build that bundles the
 * plugins and the session that computes values with them share it, each
 * with its own plugin instances (a "set"). A process stopped (a hook past its
 * time limit, a crash) is started again on the next call.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { makeTempDir, removeTempDir } from '../files/index.js';
import { positiveNumber } from '../tools/index.js';
import type { JsonValue, ObjectSelector, PluginContext, ReleaseRef } from './context.js';
import { PluginBundleError, PluginError } from './errors.js';
import { HOST_ROOT } from './host-root.js';
import { sha256 } from './manifest.js';
import type { SecretRegistry } from './redact.js';
import {
  ACCESS_DENIED,
  describeDenied,
  SERVICES,
  type CrossingError,
  type HostMessage,
  type Invocation,
  type PluginFacts,
  type SandboxMessage,
  type ServiceName,
  type SharedContext,
} from './sandbox-protocol.js';

export interface SandboxLimits {
  /** V8's old-space limit of the plugin process (`--max-old-space-size`), MiB. */
  readonly memoryMiB: number;
}

/** The limits from FLOTILLA_PLUGIN_MEMORY (MiB, default 512). */
export function sandboxLimits(): SandboxLimits {
  return { memoryMiB: positiveNumber('FLOTILLA_PLUGIN_MEMORY', 512) };
}

/** How long importing the bundle (its modules' top level) may take. */
const LOAD_LIMIT_MS = 60_000;
/** Plugin processes kept alive at once; an older idle one is stopped (and started again if its host calls it). */
const LIVE_PROCESSES = 2;
/** What is kept of the process's stderr, to tell why it ended. */
const STDERR_TAIL = 8192;

/** An error raised in the plugin process, as the host reports it: its message (a refused permission in the user's words) and its stack, for the plugin's source line. */
export class SandboxedError extends Error {
  readonly code: string | undefined;
  constructor(error: CrossingError) {
    super(error.code === ACCESS_DENIED ? describeDenied(error) : error.message);
    this.code = error.code;
    if (error.stack) this.stack = error.stack;
  }
}

/** The plugin process ended or was stopped while a call or the load waited for it. */
export class PluginProcessError extends PluginError {}

interface PendingCall {
  readonly resolve: (value: JsonValue | undefined) => void;
  readonly reject: (error: Error) => void;
  readonly ctx: PluginContext;
}

interface Running {
  readonly child: ChildProcess;
  /** Settles once the bundle is imported; rejects with why it is not. */
  readonly loaded: Promise<void>;
  readonly calls: Map<number, PendingCall>;
  readonly instantiations: Map<number, { readonly resolve: (facts: readonly PluginFacts[]) => void; readonly reject: (error: Error) => void }>;
  stderr: string;
  /** Why the host stopped it, for the calls it leaves unanswered. */
  stoppedBecause?: string;
  exited: boolean;
}

const live = new Map<string, PluginSandbox>();
let childSource: Promise<string> | undefined;
let exitHookSet = false;

/** The sandbox of these bundle bytes: the process already serving them in this run, or a new one. */
export function sandboxFor(bytes: Uint8Array, label: string): PluginSandbox {
  const limits = sandboxLimits();
  const key = `${sha256(bytes)}:${limits.memoryMiB}`;
  const known = live.get(key);
  live.delete(key);
  const sandbox = known ?? new PluginSandbox(bytes, label, limits);
  live.set(key, sandbox);
  for (const [old, other] of live) {
    if (live.size <= LIVE_PROCESSES) break;
    if (other.idle) {
      other.stop('a newer plugin bundle replaced it');
      live.delete(old);
    }
  }
  return sandbox;
}

export class PluginSandbox {
  private running: Running | undefined;
  private starting: Promise<Running> | undefined;
  /** Every set made, with its shared context once given: replayed into a process started again. */
  private readonly sets = new Map<number, SharedContext | undefined>();
  private readonly redactors = new Set<SecretRegistry>();
  private nextSet = 0;
  private nextCall = 0;
  /** How many processes this sandbox started (tests count them). */
  starts = 0;

  constructor(
    private readonly bytes: Uint8Array,
    /** The bundle as messages name it (`the tarball's plugins/`). */
    readonly label: string,
    readonly limits: SandboxLimits,
  ) {}

  get idle(): boolean {
    return !this.running || !busy(this.running);
  }

  /** Constructs a new instance of every plugin in the process; returns what it found of each, in bundle order. */
  async instantiate(): Promise<{ readonly set: number; readonly facts: readonly PluginFacts[] }> {
    const set = this.nextSet++;
    this.sets.set(set, undefined);
    const running = await this.ensure();
    return { set, facts: await this.instantiateIn(running, set) };
  }

  /** Resolves once the process runs with the bundle imported (started again if it was stopped). */
  async ready(): Promise<void> {
    await this.ensure();
  }

  /** The context data every call of `set` shares (sent once, not with every call). */
  setContext(set: number, context: SharedContext): void {
    this.sets.set(set, context);
    if (this.running && !this.running.exited) this.post(this.running, { type: 'context', set, context });
  }

  /** Secrets a host handed out: plugin output forwarded to stderr is redacted with them. */
  redactWith(secrets: SecretRegistry): void {
    this.redactors.add(secrets);
  }

  /**
   * Runs one call in the plugin process. The services the plugin asks for
   * while it runs are answered from `ctx`; when `ctx.signal` is aborted (a
   * time limit, a cancelled operation) the process is stopped, as a hook
   * that ignores its signal could otherwise run on.
   */
  async call(set: number, plugin: number, invocation: Invocation, ctx: PluginContext, maxDepth: number, release?: ReleaseRef): Promise<JsonValue | undefined> {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const running = await this.ensure();
    const id = this.nextCall++;
    const onAbort = () => this.stop(ctx.signal.reason instanceof Error ? ctx.signal.reason.message : 'the hook was stopped');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await new Promise<JsonValue | undefined>((resolve, reject) => {
        running.calls.set(id, { resolve, reject, ctx });
        this.keepAlive(running);
        this.post(running, { type: 'call', id, set, plugin, invocation, maxDepth, ...(release ? { release } : {}) });
      });
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      running.calls.delete(id);
      this.keepAlive(running);
    }
  }

  /** Ends the process now (SIGKILL); what waited on it fails, naming `reason`. The next call starts a new one. */
  stop(reason: string): void {
    const running = this.running;
    if (!running) return;
    this.running = undefined;
    running.stoppedBecause = reason;
    if (!running.exited) running.child.kill('SIGKILL');
  }

  /** The running process, started (once, however many calls ask at the same time) when there is none. */
  private ensure(): Promise<Running> {
    const running = this.running;
    if (running && !running.exited) return running.loaded.then(() => running);
    this.starting ??= this.startWithSets().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** A new process, every set made so far instantiated in it again, with its context. */
  private async startWithSets(): Promise<Running> {
    const running = await this.start();
    for (const [set, context] of this.sets) {
      if (context === undefined) continue;
      await this.instantiateIn(running, set);
      this.post(running, { type: 'context', set, context });
    }
    return running;
  }

  private instantiateIn(running: Running, set: number): Promise<readonly PluginFacts[]> {
    return new Promise<readonly PluginFacts[]>((resolve, reject) => {
      running.instantiations.set(set, { resolve, reject });
      this.keepAlive(running);
      this.post(running, { type: 'instantiate', set });
    }).finally(() => {
      running.instantiations.delete(set);
      this.keepAlive(running);
    });
  }

  private async start(): Promise<Running> {
    this.starts++;
    const dir = await makeTempDir('plugin-process');
    let started: Running | undefined;
    try {
      const bundle = join(dir, `plugins-${sha256(this.bytes).slice(0, 16)}.mjs`);
      await writeFile(bundle, this.bytes, { mode: 0o600 });
      const script = await childScript(dir);
      const child = fork(script, [bundle], {
        execArgv: [
          '--experimental-permission',
          `--allow-fs-read=${script}`,
          `--allow-fs-read=${bundle}`,
          '--no-addons',
          `--max-old-space-size=${this.limits.memoryMiB}`,
          '--disable-warning=ExperimentalWarning',
        ],
        env: childEnvironment(),
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        serialization: 'json',
      });
      killOnExit();
      let settle: { resolve: () => void; reject: (e: Error) => void } | undefined;
      const loaded = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
      const running: Running = { child, loaded, calls: new Map(), instantiations: new Map(), stderr: '', exited: false };
      started = running;
      this.running = running;
      this.forwardOutput(running, child.stdout, false);
      this.forwardOutput(running, child.stderr, true);
      child.on('message', (message: unknown) => this.receive(running, message, settle));
      child.on('error', (error) => settle?.reject(new PluginProcessError(`${this.label}: cannot start the plugin process: ${error.message}`)));
      child.on('exit', (code, signal) => {
        running.exited = true;
        if (this.running === running) this.running = undefined;
        const why = new PluginProcessError(this.endedBecause(running, code, signal));
        settle?.reject(why);
        for (const waiter of [...running.calls.values(), ...running.instantiations.values()]) waiter.reject(why);
      });
      const timer = setTimeout(() => this.stop(`importing the bundle took longer than ${LOAD_LIMIT_MS / 1000}s`), LOAD_LIMIT_MS);
      try {
        await loaded;
      } finally {
        clearTimeout(timer);
      }
      this.keepAlive(running);
      return running;
    } catch (error) {
      if (started && !started.exited) started.child.kill('SIGKILL');
      throw error;
    } finally {
      // Imported: the process holds the bundle in memory and reads no file again.
      await removeTempDir(dir);
    }
  }

  private receive(running: Running, raw: unknown, load: { resolve: () => void; reject: (e: Error) => void } | undefined): void {
    if (typeof raw !== 'object' || raw === null || typeof (raw as { type?: unknown }).type !== 'string') return;
    const message = raw as SandboxMessage;
    switch (message.type) {
      case 'loaded':
        load?.resolve();
        return;
      case 'load-failed':
        load?.reject(loadError(this.label, message.error));
        return;
      case 'instantiated':
        if (Array.isArray(message.plugins)) running.instantiations.get(message.set)?.resolve(message.plugins);
        return;
      case 'result':
        running.calls.get(message.id)?.resolve(message.value);
        return;
      case 'failed':
        running.calls.get(message.id)?.reject(new SandboxedError(asCrossing(message.error)));
        return;
      case 'log': {
        const call = running.calls.get(message.call);
        const level = message.level === 'debug' || message.level === 'info' || message.level === 'warn' ? message.level : undefined;
        if (call && level) call.ctx.log[level](String(message.message));
        return;
      }
      case 'service': {
        const call = running.calls.get(message.call);
        if (!call || !Array.isArray(message.args) || !SERVICES.includes(message.service)) return;
        serve(call.ctx, message.service, message.args).then(
          (value) => this.post(running, { type: 'service-result', request: message.request, ...(value === undefined ? {} : { value }) }),
          (error: unknown) =>
            this.post(running, { type: 'service-result', request: message.request, error: error instanceof Error ? error.message : String(error) }),
        );
        return;
      }
    }
  }

  private post(running: Running, message: HostMessage): void {
    if (running.exited || !running.child.connected) return;
    // A send failing because the process ended meanwhile needs no handling: its exit fails what waits on it.
    running.child.send(message, () => undefined);
  }

  /** The process keeps flotilla alive only while something waits on it. */
  private keepAlive(running: Running): void {
    const channel = running.child.channel as { ref?: () => void; unref?: () => void } | undefined;
    if (busy(running)) {
      running.child.ref();
      channel?.ref?.();
    } else {
      running.child.unref();
      channel?.unref?.();
    }
  }

  private forwardOutput(running: Running, stream: Readable | null, isStderr: boolean): void {
    if (!stream) return;
    (stream as Readable & { unref?: () => void }).unref?.();
    let crashed = false;
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      if (isStderr) running.stderr = (running.stderr + chunk).slice(-STDERR_TAIL);
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        // V8's report of a crash (the heap limit) is told as one line when the process ends.
        if (isStderr && /^(<--- Last few GCs|FATAL ERROR:)/.test(line)) crashed = true;
        if (!crashed) process.stderr.write(`${this.redact(line)}\n`);
      }
    });
  }

  private redact(text: string): string {
    let out = text;
    for (const secrets of this.redactors) out = secrets.redactText(out);
    return out;
  }

  private endedBecause(running: Running, code: number | null, signal: NodeJS.Signals | null): string {
    if (running.stoppedBecause) return `the plugin process was stopped: ${running.stoppedBecause}`;
    if (/heap out of memory|Reached heap limit/.test(running.stderr)) {
      return `the plugin process ran out of memory (its limit is ${this.limits.memoryMiB} MiB; FLOTILLA_PLUGIN_MEMORY raises it)`;
    }
    return `the plugin process ended unexpectedly (${signal ? `signal ${signal}` : `exit code ${code}`})`;
  }
}

function busy(running: Running): boolean {
  return running.calls.size + running.instantiations.size > 0;
}

function asCrossing(raw: unknown): CrossingError {
  const error = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const text = (key: string) => (typeof error[key] === 'string' ? { [key]: error[key] as string } : {});
  return {
    message: typeof error.message === 'string' ? error.message : String(raw),
    ...text('stack'),
    ...text('code'),
    ...text('permission'),
    ...text('resource'),
  };
}

/** A bundle whose import failed: which plugin file it failed in (from the source-mapped stack) and what it tried. */
function loadError(label: string, raw: unknown): PluginBundleError {
  const error = new SandboxedError(asCrossing(raw));
  const where = /(plugins\/[^\s():]+\.[cm]?[jt]s):(\d+)/.exec(error.stack ?? '');
  const site = where ? ` (${where[1]}:${where[2]})` : '';
  return new PluginBundleError(`${label}: loading the plugins failed${site}: ${error.message}`, { cause: error });
}

/** What the plugin process's environment holds: nothing of the user's (tokens, kubeconfig paths), only the locale and time zone. */
function childEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['LANG', 'LC_ALL', 'TZ']) if (process.env[name] !== undefined) env[name] = process.env[name];
  return env;
}

function killOnExit(): void {
  if (exitHookSet) return;
  exitHookSet = true;
  process.on('exit', () => {
    for (const sandbox of live.values()) sandbox.stop('flotilla ended');
  });
}

/**
 * The plugin process's script: built into dist/plugins/ by scripts/bundle-cli.mjs;
 * from sources (tests), bundled by esbuild once per process and written beside the bundle.
 */
async function childScript(dir: string): Promise<string> {
  const built = join(HOST_ROOT, 'plugins', 'sandbox-child.mjs');
  if (existsSync(built)) return built;
  childSource ??= bundleChildScript();
  const file = join(dir, 'sandbox-child.mjs');
  await writeFile(file, await childSource, { mode: 0o600 });
  return file;
}

async function bundleChildScript(): Promise<string> {
  const { build } = await import('esbuild');
  const entry = ['sandbox-child.ts', 'sandbox-child.js'].map((name) => join(HOST_ROOT, 'plugins', name)).find((path) => existsSync(path));
  if (!entry) throw new PluginError(`the plugin process's script is missing from ${join(HOST_ROOT, 'plugins')}`);
  const result = await build({ entryPoints: [entry], bundle: true, write: false, format: 'esm', platform: 'node', target: 'node20', logLevel: 'silent' });
  return result.outputFiles[0]?.text ?? '';
}

/** Answers one service request of a running call from its context, checking what the plugin process sent. */
async function serve(ctx: PluginContext, service: ServiceName, args: readonly JsonValue[]): Promise<JsonValue | undefined> {
  const text = (value: JsonValue | undefined, what: string): string => {
    if (typeof value !== 'string') throw new Error(`${what} must be a string`);
    return value;
  };
  switch (service) {
    case 'passwords.getOrGenerate': {
      const options = args[1];
      const length = typeof options === 'object' && options !== null && !Array.isArray(options) ? options.length : undefined;
      if (length !== undefined && typeof length !== 'number') throw new Error('the password length must be a number');
      return ctx.passwords.getOrGenerate(text(args[0], 'a password name'), length === undefined ? undefined : { length });
    }
    case 'records.get':
      return ctx.records.get(text(args[0], 'a record key'));
    case 'records.set':
      return void (await ctx.records.set(text(args[0], 'a record key'), args[1] ?? null));
    case 'records.delete':
      return void (await ctx.records.delete(text(args[0], 'a record key')));
    case 'kube.list':
    case 'kube.deleteAll': {
      if (ctx.mode !== 'cluster') throw new Error('ctx.kube exists in cluster mode only');
      const selector = objectSelector(args[0]);
      return service === 'kube.list' ? ctx.kube.list(selector) : ctx.kube.deleteAll(selector);
    }
  }
}

function objectSelector(value: JsonValue | undefined): ObjectSelector {
  const fields = ['apiVersion', 'kind', 'namespace', 'labelSelector'] as const;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || fields.some((f) => typeof value[f] !== 'string')) {
    throw new Error(`an object selector is {${fields.join(', ')}}, all strings`);
  }
  return {
    apiVersion: value.apiVersion as string,
    kind: value.kind as string,
    namespace: value.namespace as string,
    labelSelector: value.labelSelector as string,
  };
}
