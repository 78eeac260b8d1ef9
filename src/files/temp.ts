/**
 * Private temporary folders (and the partial files of atomic writes) that
 * do not outlive their run. Each folder is named
 * `flotilla-<purpose>-<pid>-<random>` in the system temp folder; it is
 * removed when its work ends, when the process is stopped by SIGINT, SIGTERM
 * or SIGHUP, and, if the process was killed outright (SIGKILL, a crash), by
 * the next run, which sweeps the folders of processes that no longer exist.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeLeftBehind } from './process.js';

const live = new Set<string>();
const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const NAME = /^flotilla-[a-z-]+-(\d+)-[A-Za-z0-9]{6}$/;
let prepared = false;
let listening = false;

function removeLive(): void {
  for (const dir of live) rmSync(dir, { recursive: true, force: true });
  live.clear();
}

/**
 * Runs before any other listener of the signal (it is prepended), so that
 * it sees them all, `once` listeners included (they are gone once they have
 * run). With none, it removes what is live and dies of the signal as if
 * nobody had listened; with one, that listener stops the process gracefully
 * (`build --watch` on Ctrl-C), and what is live is removed as it exits.
 */
function onSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return;
  removeLive();
  for (const s of SIGNALS) process.removeListener(s, onSignal);
  process.kill(process.pid, signal);
}

/** Removes temp folders left by runs of this user whose process is gone. */
export function sweepStaleTempDirs(root = tmpdir()): string[] {
  return removeLeftBehind(root, NAME, 'directory');
}

function prepare(): void {
  if (prepared) return;
  prepared = true;
  sweepStaleTempDirs();
  listen();
}

/** Removes what is live when the process ends: by a signal, or as it exits. */
function listen(): void {
  if (listening) return;
  listening = true;
  for (const signal of SIGNALS) process.prependListener(signal, onSignal);
  process.on('exit', removeLive);
}

/**
 * A file being written under a temporary name (atomic.ts): removed if the
 * process ends before the file is renamed into place, so that a build
 * stopped by Ctrl-C while it writes leaves no half-written file behind.
 * Returns what stops tracking it.
 */
export function trackPartialFile(path: string): () => void {
  listen();
  live.add(path);
  return () => live.delete(path);
}

/**
 * A new private (0700) temp folder for `purpose` (lower-case words and
 * dashes). Made in the system temp folder, or, with `parent`, as a hidden
 * `.flotilla-<purpose>-…` folder inside it (a staging folder renamed into
 * place later); removed on a signal or at exit like every other.
 */
export async function makeTempDir(purpose: string, options: { readonly parent?: string } = {}): Promise<string> {
  prepare();
  const dir = options.parent
    ? await mkdtemp(join(options.parent, `.flotilla-${purpose}-`))
    : await mkdtemp(join(tmpdir(), `flotilla-${purpose}-${process.pid}-`));
  live.add(dir);
  return dir;
}

export async function removeTempDir(dir: string): Promise<void> {
  live.delete(dir);
  await rm(dir, { recursive: true, force: true });
}

/** Runs `work` in a fresh temp folder and removes the folder afterwards, whatever happens. */
export async function withTempDir<T>(purpose: string, work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await makeTempDir(purpose);
  try {
    return await work(dir);
  } finally {
    await removeTempDir(dir);
  }
}
