/**
 * `kubectl kustomize` of an apply's manifests folder, its output kept in
 * the user cache (`<user cache>/kustomize/`, one entry per app) through
 * the one cache module (src/cache): sealed under this user's cache key and
 * keyed by everything the build reads — every file of the folder (kustomize
 * reads nothing outside it: its load restrictor keeps it in the root, and
 * flotilla's tools have no route to remote bases) and which kubectl runs
 * it. The folder holds the app's own files only (the passwords join in
 * memory afterwards, render.ts), so the entry holds no secret.
 *
 * Why: kustomize of the 80 releases of the apply bench takes 0.42 s of the
 * 1.45 s before flotilla's first HelmRelease (docs/benchmark.md); an apply
 * of a version already applied (again after a failure, after an override
 * change, a recovery) reads the same folder.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { CacheFolder } from '../cache/index.js';
import { userCacheDir } from '../files/index.js';
import { kubectl, toolPath } from '../tools/index.js';

const KIND = 'kustomize-build';

/** Where the kept builds live (one entry per app). */
export function kustomizeCacheDir(): string {
  return join(userCacheDir(), 'kustomize');
}

/** The build of `dir` (`kubectl kustomize DIR`'s output): kept from an earlier build of the same files by the same kubectl, else run and kept. */
export async function kustomizeBuild(dir: string, appName: string, notes?: (message: string) => void): Promise<string> {
  const folder = CacheFolder.open(kustomizeCacheDir(), notes);
  const entry = `app-${createHash('sha256').update(appName).digest('hex').slice(0, 32)}`;
  const inputs = folder && (await buildInputs(dir));
  const kept = inputs === undefined ? undefined : await folder?.read(entry, KIND, inputs);
  if (kept) return kept.toString('utf8');
  const { stdout } = await kubectl(['kustomize', dir]);
  if (inputs !== undefined)
    await folder?.write(entry, KIND, inputs, stdout).catch((error: unknown) => notes?.(`kustomize build not kept: ${(error as Error).message}`));
  return stdout;
}

/**
 * What the build reads: the kubectl that runs it (its path, size and change
 * time) and every file of `dir` by its path and sha256. Undefined for a
 * kubectl found on PATH (known by name only): nothing is kept for it.
 */
async function buildInputs(dir: string): Promise<string | undefined> {
  const tool = toolPath('kubectl');
  const binary = await stat(tool).then(
    (s) => ({ size: s.size, changed: s.mtimeMs }),
    () => undefined,
  );
  if (!binary) return undefined;
  const files: [string, string][] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() && !entry.isSymbolicLink()) continue;
    const path = join(entry.parentPath, entry.name);
    files.push([
      relative(dir, path),
      createHash('sha256')
        .update(await readFile(path))
        .digest('hex'),
    ]);
  }
  files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify({ kubectl: { path: tool, ...binary }, files });
}
