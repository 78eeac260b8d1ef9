/**
 * The external programs flotilla drives: the real `helm` and `kubectl`.
 * Lookup order: FLOTILLA_HELM / FLOTILLA_KUBECTL, then the binaries that
 * `npm run tools` caches in .cache/tools/ of this package, then PATH.
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
    super(`${tool} ${args[0] ?? ''} failed${code === null ? '' : ` (exit ${code})`}: ${stderr.trim() || 'no message'}`);
    this.tool = tool;
    this.args = args;
    this.stderr = stderr;
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

export function runTool(name: ToolName, args: readonly string[], options: RunOptions = {}): Promise<ToolResult> {
  const bin = toolPath(name);
  return new Promise((resolvePromise, reject) => {
    const child = execFile(
      bin,
      args,
      {
        cwd: options.cwd,
        env: { ...process.env, ...options.env },
        maxBuffer: 256 * 1024 * 1024,
        signal: options.signal,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (!error) return resolvePromise({ stdout, stderr });
        const code = typeof error.code === 'number' ? error.code : null;
        if (error.code === 'ENOENT') {
          reject(new FlotillaError(`${name} not found (looked for ${bin}); run \`npm run tools\` or set FLOTILLA_${name.toUpperCase()}`));
          return;
        }
        reject(new ToolError(name, args, code, stderr || error.message, stdout));
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

export const helm = (args: readonly string[], options?: RunOptions): Promise<ToolResult> => runTool('helm', args, options);
export const kubectl = (args: readonly string[], options?: RunOptions): Promise<ToolResult> => runTool('kubectl', args, options);
