import { rm, rename, writeFile } from 'node:fs/promises';

export interface AtomicWriteOptions {
  /** File mode of the new file (e.g. 0o600 for secrets). */
  readonly mode?: number;
}

/**
 * Writes `data` to `path` through a temp file in the same folder and a
 * rename: readers see the old file or the new one, never half of one, and a
 * crash leaves no partial file under the real name.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const temp = `${path}.partial-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  try {
    await writeFile(temp, data, options.mode === undefined ? {} : { mode: options.mode });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
