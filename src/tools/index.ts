/**
 * The external programs flotilla drives: the real `helm` and `kubectl`.
 * Lookup order: FLOTILLA_HELM / FLOTILLA_KUBECTL, then the binaries that
 * `npm run tools` caches in .cache/tools/ of this package, then PATH.
 *
 * They see content from tarballs, so every run is fenced (docs/security.md):
 * a time limit (killed after FLOTILLA_TOOL_TIMEOUT seconds, default 300), a
 * memory limit (address space capped at FLOTILLA_TOOL_MEMORY MiB, default
 * 2048, through the shell's `ulimit -v`), and no route to remote hosts:
 * HTTP(S) proxies point at a closed loopback port, git may only use local
 * files, and only loopback is exempt.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlotillaError } from '../diagnostics/index.js';

export type ToolName = 'helm' | 'kubectl';

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function toolPath(name: ToolName): string {
  const fromEnv = process.env[`FLOTILLA_${name.toUpperCase()}`];
  if (fromEnv) return fromEnv;
  const cached = join(packageRoot, '.cache', 'tools', name);
  if (existsSync(cached)) return cached;
  return name;
}

export interface ToolResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** A tool ran and exited non-zero; `stderr` holds the tool's own message. */
export class ToolError extends FlotillaError {
  readonly tool: ToolName;
  readonly args: readonly string[];
  readonly stderr: string;
  /** What the tool printed on stdout before failing (helm lint reports its findings there). */
  readonly stdout: string;
  readonly code: number | null;

  constructor(tool: ToolName, args: readonly string[], code: number | null, stderr: string, stdout = '') {
    // Helm's hint names its own --debug flag, which flotilla passes to no tool: flotilla's --debug is another.
    const said = stderr.replace(/\s*Use --debug flag to render out invalid YAML\.?/g, '');
    super(`${tool} ${args[0] ?? ''} failed${code === null ? '' : ` (exit ${code})`}: ${said.trim() || 'no message'}`);
    this.tool = tool;
    this.args = args;
    this.stderr = said;
    this.stdout = stdout;
    this.code = code;
  }
}

export interface RunOptions {
  readonly cwd?: string;
  readonly input?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
}

export interface ToolLimits {
  readonly timeoutMs: number;
  readonly memoryBytes: number;
}

const MIB = 1024 * 1024;

/** A positive number from the environment variable `name`, else `fallback`; anything else is a usage error. */
export function positiveNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new FlotillaError(`${name}=${raw}: expected a positive number`, { exitCode: 2 });
  return value;
}

/** The limits every tool run gets, from FLOTILLA_TOOL_TIMEOUT (seconds) and FLOTILLA_TOOL_MEMORY (MiB). */
function toolLimits(): ToolLimits {
  return { timeoutMs: positiveNumber('FLOTILLA_TOOL_TIMEOUT', 300) * 1000, memoryBytes: positiveNumber('FLOTILLA_TOOL_MEMORY', 2048) * MIB };
}

/** A proxy nobody listens on: any attempt to reach a remote host fails at once instead of leaving the machine. */
const CLOSED_PROXY = 'http://127.0.0.1:9';
const NO_NETWORK_ENV: NodeJS.ProcessEnv = {
  HTTP_PROXY: CLOSED_PROXY,
  HTTPS_PROXY: CLOSED_PROXY,
  ALL_PROXY: CLOSED_PROXY,
  http_proxy: CLOSED_PROXY,
  https_proxy: CLOSED_PROXY,
  all_proxy: CLOSED_PROXY,
  NO_PROXY: '127.0.0.1,localhost,::1',
  no_proxy: '127.0.0.1,localhost,::1',
  // kustomize fetches remote bases with git.
  GIT_ALLOW_PROTOCOL: 'file',
  GIT_TERMINAL_PROMPT: '0',
};

/** The tool is run by `sh`, which caps the address space first (Go programs need ~1 GiB of it just to start). */
function fenced(bin: string, args: readonly string[], limits: ToolLimits): [string, string[]] {
  if (process.platform === 'win32') return [bin, [...args]];
  // A hard limit already below ours stays (ulimit then fails, quietly): the tool is bounded either way.
  return ['/bin/sh', ['-c', 'ulimit -v "$0" 2>/dev/null; exec "$@"', String(Math.floor(limits.memoryBytes / 1024)), bin, ...args]];
}

export function runTool(name: ToolName, args: readonly string[], options: RunOptions = {}): Promise<ToolResult> {
  const bin = toolPath(name);
  const limits = toolLimits();
  const [command, commandArgs] = fenced(bin, args, limits);
  const what = `${name} ${args[0] ?? ''}`.trim();
  return new Promise((resolvePromise, reject) => {
    const child = execFile(
      command,
      commandArgs,
      {
        cwd: options.cwd,
        // Go's collector aims below the hard cap, so a big but legitimate render slows down before it fails.
        env: { ...process.env, GOMEMLIMIT: `${Math.floor((limits.memoryBytes * 0.75) / MIB)}MiB`, ...options.env, ...NO_NETWORK_ENV },
        maxBuffer: 256 * MIB,
        signal: options.signal,
        timeout: limits.timeoutMs,
        killSignal: 'SIGKILL',
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (!error) return resolvePromise({ stdout, stderr });
        if (error.killed && error.signal === 'SIGKILL' && !options.signal?.aborted) {
          reject(
            new ToolError(
              name,
              args,
              null,
              `${what} did not finish within ${limits.timeoutMs / 1000} s and was stopped (FLOTILLA_TOOL_TIMEOUT raises the limit)`,
              stdout,
            ),
          );
          return;
        }
        const code = typeof error.code === 'number' ? error.code : null;
        // 127: the shell found no such program; ENOENT: the same without the shell (Windows).
        if (error.code === 'ENOENT' || code === 127) {
          reject(new FlotillaError(`${name} not found (looked for ${bin}); run \`npm run tools\` or set FLOTILLA_${name.toUpperCase()}`));
          return;
        }
        const outOfMemory = /out of memory|cannot allocate memory|failed to reserve/i.test(stderr);
        const hint = outOfMemory ? `\n(${what} ran out of its ${limits.memoryBytes / MIB} MiB memory limit; FLOTILLA_TOOL_MEMORY raises it)` : '';
        reject(new ToolError(name, args, code, `${stderr || error.message}${hint}`, stdout));
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

export const helm = (args: readonly string[], options?: RunOptions): Promise<ToolResult> => runTool('helm', args, options);
export const kubectl = (args: readonly string[], options?: RunOptions): Promise<ToolResult> => runTool('kubectl', args, options);
