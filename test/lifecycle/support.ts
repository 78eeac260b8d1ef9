/**
 * Lifecycle test support: the repository's default app built as tarballs
 * (at its own version or another), and the CLI run against the dev cluster
 * TEST FIXTURE the way a user runs it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildApp } from '../../src/build/index.js';
import { tempDir } from '../support/app-fixture.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const APP = 'flotilla-openstack';
const APP_PARTS = ['charts', 'fluxcd', 'overrides', 'plugins', 'policies'];

/** The default app built as a tarball; `version` replaces app_version, `edit` changes files of the copy first. */
export async function buildDefaultApp(options: { version?: string; edit?: (root: string) => void } = {}): Promise<string> {
  const root = tempDir('flotilla-lifecycle-app-');
  for (const part of APP_PARTS) cpSync(join(ROOT, part), join(root, part), { recursive: true });
  if (options.version) {
    const file = join(root, 'fluxcd', 'metadata.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^app_version: .*$/m, `app_version: ${options.version}`));
  }
  options.edit?.(root);
  return (await buildApp(root, { outDir: tempDir('flotilla-lifecycle-out-'), cacheDir: false })).file;
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Children a test started that still run. */
const running = new Set<ChildProcess>();

/** Notes a child a test started, so that `stopStarted` ends it if the test does not wait for it (a failure, a time-out). */
export function started<T extends ChildProcess>(child: T): T {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/**
 * Ends every child a test started that still runs (call it in afterEach):
 * SIGTERM, as a user's Ctrl-C, so an operation gives its lock back; SIGKILL
 * for one still there after 10 s. No operation outlives its test.
 */
export async function stopStarted(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      const exited = new Promise<void>((done) => (child.exitCode !== null || child.signalCode !== null ? done() : child.once('exit', () => done())));
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(kill);
    }),
  );
}

/** Runs the shipped CLI (dist/cli/flotilla.cjs; `npm test` builds it) with KUBECONFIG set. */
export function flotilla(kubeconfig: string, args: readonly string[]): Promise<CliResult> {
  return new Promise((done) => {
    started(
      execFile(
        process.execPath,
        [join(ROOT, 'dist', 'cli', 'flotilla.cjs'), ...args],
        { env: { ...process.env, KUBECONFIG: kubeconfig }, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          done({ code, stdout, stderr });
        },
      ),
    );
  });
}

/**
 * Runs an operation in a child (test/lifecycle/<script>) and kills it with
 * SIGKILL at its first `release-ready` event: a run that dies half-way, as
 * kill -9 leaves it. Resolves with what the child said on stderr.
 */
export async function killAtFirstReady(script: string, args: readonly string[]): Promise<string> {
  const child = started(
    spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'lifecycle', script), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  const exited = new Promise<void>((done) => child.on('exit', () => done()));
  let said = '';
  child.stderr.on('data', (chunk: Buffer) => (said += chunk.toString('utf8')));
  for await (const line of createInterface(child.stdout)) {
    if ((JSON.parse(line) as { type: string }).type === 'release-ready') {
      child.kill('SIGKILL');
      break;
    }
  }
  await exited;
  return said;
}
