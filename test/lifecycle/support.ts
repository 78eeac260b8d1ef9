/**
 * Lifecycle test support: the repository's default app built as tarballs
 * (at its own version or another), and the CLI run against the dev cluster
 * TEST FIXTURE the way a user runs it.
 */
import { execFile } from 'node:child_process';
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
