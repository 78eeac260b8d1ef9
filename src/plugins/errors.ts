/** Typed errors of the plugin host. Each names the plugin (and its file) a user has to look at. */
import { FlotillaError, type SourceLocation } from '../diagnostics/index.js';
import type { Operation } from './context.js';

export class PluginError extends FlotillaError {}

/** A plugin file that cannot be used: bad name, bad export, duplicate order, unknown chart. */
export class PluginLoadError extends PluginError {}

/** Two plugins would serve the same release. */
export class DuplicatePluginError extends PluginLoadError {}

/** esbuild could not compile the app's plugins. */
export class PluginBuildError extends PluginError {
  readonly problems: readonly { readonly message: string; readonly location?: SourceLocation }[];
  constructor(problems: readonly { readonly message: string; readonly location?: SourceLocation }[]) {
    super(
      `cannot compile the app's plugins:\n${problems
        .map((p) => `  ${p.location ? `${p.location.file}:${p.location.line}:${p.location.column}: ` : ''}${p.message}`)
        .join('\n')}`,
    );
    this.problems = problems;
  }
}

/** A plugin bundle that is malformed, or whose bytes do not match its manifest. */
export class PluginBundleError extends PluginError {}

/** The bundle's bytes differ from the sha256 its manifest records: nothing of it was imported. */
export class TamperedBundleError extends PluginBundleError {}

/** Who ran, for messages: `plugin glance (plugins/030_glance.ts)`. */
export interface HookSite {
  readonly plugin: string;
  readonly file: string;
  /** `getOverrides`, `preApply`, `check(remove)`, `apply.pre.check`, … */
  readonly hook: string;
  readonly release?: string;
}

function describeSite(site: HookSite): string {
  return `plugin ${site.plugin} (${site.file}) ${site.hook}${site.release ? ` for release ${site.release}` : ''}`;
}

/** A hook threw: the operation fails and nothing after the hook runs. */
export class PluginHookError extends PluginError {
  readonly site: HookSite;
  constructor(site: HookSite, message: string, cause?: unknown) {
    super(`${describeSite(site)} failed: ${message}`, { cause, location: sourceLocation(site.file, cause) });
    this.site = site;
    // --debug prints the stack: the plugin's own, at its source lines (the bundle carries source maps).
    if (cause instanceof Error && cause.stack) this.stack = `${this.stack ?? this.message}\nCaused by: ${cause.stack}`;
  }
}

/** The plugin's own file:line in a stack from the bundle (source-mapped), for the line it threw at. */
function sourceLocation(file: string, cause: unknown): { file: string; line: number; column: number } | undefined {
  const stack = cause instanceof Error ? cause.stack : undefined;
  if (!stack) return undefined;
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const frame = new RegExp(`(?:^|[/(\\s])${escaped}:(\\d+):(\\d+)`, 'm').exec(stack);
  return frame ? { file, line: Number(frame[1]), column: Number(frame[2]) } : undefined;
}

/** A hook ran past its time limit; its abort signal was fired. */
export class PluginTimeoutError extends PluginHookError {
  readonly limitMs: number;
  constructor(site: HookSite, limitMs: number) {
    super(site, `no answer within its time limit of ${formatMillis(limitMs)}`);
    this.limitMs = limitMs;
  }
}

/** The operation was cancelled (the host's signal) while a hook ran. */
export class PluginAbortedError extends PluginHookError {}

/** A check hook refused the operation; `reason` is the plugin's own words for the user. */
export class OperationRefusedError extends PluginError {
  readonly site: HookSite;
  readonly operation: Operation;
  readonly reason: string;
  constructor(site: HookSite, operation: Operation, reason: string) {
    super(`${operation} refused by plugin ${site.plugin} (${site.file})${site.release ? ` for release ${site.release}` : ''}: ${reason}`);
    this.site = site;
    this.operation = operation;
    this.reason = reason;
  }
}

function formatMillis(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
