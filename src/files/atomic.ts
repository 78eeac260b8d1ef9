import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { trackPartialFile } from './temp.js';

export interface AtomicWriteOptions {
  /** File mode of the new file (e.g. 0o600 for secrets); default 0o666 less the umask, as for any new file. */
  readonly mode?: number;
  /**
   * Flush the data to the disk before the rename (default true), so that even
   * a power loss leaves the old file or the whole new one. Caches pass false:
   * they are read defensively, a torn one counts as missing, and a build
   * writes several, so waiting on the disk for each would cost more than
   * rebuilding what a power loss may take.
   */
  readonly durable?: boolean;
}

/**
 * Create-only, never through a link: fails if anything at all (a file, a
 * symbolic link planted by someone else) already has the name.
 */
const EXCLUSIVE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** A fresh, unguessable name next to `path` (same folder, so the rename is atomic), hidden from listings. */
export function tempNameFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${randomBytes(12).toString('hex')}.partial`);
}

/** Opens `path` for writing only if nothing exists there; see {@link EXCLUSIVE}. */
export function createExclusive(path: string, mode = 0o666): Promise<FileHandle> {
  return open(path, EXCLUSIVE, mode);
}

/**
 * Writes `data` to `path` through a temp file in the same folder and a
 * rename: readers see the old file or the new one, never half of one, and a
 * crash leaves no partial file under the real name. The temp file has an
 * unpredictable name and is created exclusively without following links, so
 * nobody can make the write land elsewhere; the rename replaces whatever is
 * at `path` (a link there is replaced, not written through).
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const temp = tempNameFor(path);
  // Tracked before it exists, so that a signal ending the process as soon as
  // it does finds it: the temp module removes what it tracks.
  const untrack = trackPartialFile(temp);
  let handle;
  try {
    handle = await createExclusive(temp, options.mode);
  } catch (error) {
    // Not created, so not ours to remove.
    untrack();
    throw error;
  }
  try {
    try {
      await handle.writeFile(data);
      if (options.durable !== false) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  } finally {
    untrack();
  }
}
