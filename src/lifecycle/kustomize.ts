/**
 * `kubectl kustomize` of an apply's manifests folder, its output kept in
 * the user cache (`<user cache>/kustomize/`, one entry per app) through
 * the one cache module (src/cache): sealed under this user's cache key and
 * keyed by what the folder was made from — the stored payload, by the
 * digest its read was checked against, and the top kustomization as cut
 * for this apply (render.ts) — and by which kubectl builds it. kustomize
 * reads nothing outside the folder: its load restrictor keeps it in the
 * root, and flotilla's tools have no route to remote bases. The folder
 * holds the app's own files only (the passwords join in memory afterwards,
 * render.ts), so the entry holds no secret.
 *
 * Why: kustomize of the 80 releases of the apply bench takes 0.42 s of the
 * 1.45 s before flotilla's first HelmRelease (docs/benchmark.md); an apply
 * of a version already applied (again after a failure, after an override
 * change, a recovery) reads the same folder. The key is the payload's
 * digest, not the folder's files hashed again: reading back the 323 files
 * flotilla had just written took 80–190 ms.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CacheFolder } from '../cache/index.js';
import { userCacheDir } from '../files/index.js';
import { kubectl, toolPath } from '../tools/index.js';

const KIND = 'kustomize-build';

/** Where the kept builds live (one entry per app). */
export function kustomizeCacheDir(): string {
  return join(userCacheDir(), 'kustomize');
}

export interface KeptBuild {
  readonly appName: string;
  /** Everything the folder's content was made from, as one string (undefined: nothing is kept). */
  readonly madeFrom: string | undefined;
  /** Where notes on an entry not used go (--debug). */
  readonly notes?: (message: string) => void;
}

/** The build of `dir` (`kubectl kustomize DIR`'s output): kept from an earlier build of a folder made from the same, by the same kubectl, else run and kept. */
export async function kustomizeBuild(dir: string, { appName, madeFrom, notes }: KeptBuild): Promise<string> {
  const folder = madeFrom === undefined ? undefined : CacheFolder.open(kustomizeCacheDir(), notes);
  const entry = `app-${createHash('sha256').update(appName).digest('hex').slice(0, 32)}`;
  const kubectlIs = folder && (await kubectlIdentity());
  const inputs = kubectlIs && JSON.stringify({ kubectl: kubectlIs, madeFrom });
  const kept = inputs === undefined ? undefined : await folder?.read(entry, KIND, inputs);
  if (kept) return kept.toString('utf8');
  const { stdout } = await kubectl(['kustomize', dir]);
  if (inputs !== undefined)
    await folder?.write(entry, KIND, inputs, stdout).catch((error: unknown) => notes?.(`kustomize build not kept: ${(error as Error).message}`));
  return stdout;
}

/** The kubectl that builds: its path, size and change time; undefined for one found on PATH (known by name only: nothing is kept for it). */
async function kubectlIdentity(): Promise<{ path: string; size: number; changed: number } | undefined> {
  const path = toolPath('kubectl');
  return stat(path).then(
    (s) => ({ path, size: s.size, changed: s.mtimeMs }),
    () => undefined,
  );
}
