/**
 * Lifecycle test support: the repository's default app built as tarballs
 * (at its own version or another), and the CLI run against the dev cluster
 * TEST FIXTURE the way a user runs it.
 */
import { execFile, spawn } from 'node:child_process';
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

/** Runs the shipped CLI (dist/cli/flotilla.cjs; `npm test` builds it) with KUBECONFIG set. */
export function flotilla(kubeconfig: string, args: readonly string[]): Promise<CliResult> {
  return new Promise((done) => {
    execFile(process.execPath, [join(ROOT, 'dist', 'cli', 'flotilla.cjs'), ...args], { env: { ...process.env, KUBECONFIG: kubeconfig }, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

/**
 * Runs an operation in a child (test/lifecycle/<script>) and kills it with
 * SIGKILL at its first `release-ready` event: a run that dies half-way, as
 * kill -9 leaves it. Resolves with what the child said on stderr.
 */
export async function killAtFirstReady(script: string, args: readonly string[]): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'lifecycle', script), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
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
