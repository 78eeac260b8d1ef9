/**
 * A tree of files held in memory (a tarball's folder) written below a
 * folder of ours: for tools that read a folder (kubectl kustomize, helm).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Writes `files` (names relative, already checked: no `..`, no links) below
 * `target`: every folder made first, then the files written at once (one
 * after another took a tenth of a second for a tarball's manifests).
 */
export async function writeFolder(target: string, files: ReadonlyMap<string, Uint8Array>): Promise<void> {
  for (const folder of new Set([...files.keys()].map((name) => dirname(join(target, name))))) await mkdir(folder, { recursive: true });
  await Promise.all([...files].map(([name, data]) => writeFile(join(target, name), data)));
}
