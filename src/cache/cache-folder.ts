/**
 * A cache folder (a build's `<out>/.flotilla-cache/`) through which every
 * cache entry is read and written: the folder held to the folder rule
 * (folder.ts), each entry in the one format (seal.ts), keyed by the digest
 * of its inputs and checked against its content's digest when read.
 * Anything that does not pass is ignored (the caller rebuilds it) with a
 * note for `--debug`; a cache is an optimisation, never a reason to fail or
 * to use what this user's flotilla did not make.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../files/index.js';
import { folderProblem } from './folder.js';
import { cacheKey, openEntry, sealEntry } from './seal.js';

/** Where notes on entries not used go (`--debug`). */
export type CacheNotes = (message: string) => void;

/** The digest an entry is keyed by: of everything its content is made from, as one string. */
export function inputDigest(inputs: string): string {
  return createHash('sha256').update(inputs).digest('hex');
}

export class CacheFolder {
  private constructor(
    readonly dir: string,
    private readonly key: Buffer,
    private readonly note: CacheNotes,
  ) {}

  /**
   * The cache in `dir`, or undefined (the build runs as without a cache)
   * when the folder is another user's or writable by others, or there is no
   * cache key; the note says which.
   */
  static open(dir: string, note: CacheNotes = () => undefined): CacheFolder | undefined {
    const key = cacheKey();
    if (typeof key === 'string') {
      note(`cache ${dir} not used: ${key}`);
      return undefined;
    }
    // A folder not made yet is made by the first write, as the rule wants it.
    const problem = folderProblem(dir);
    if (problem && !problem.endsWith('(ENOENT)')) {
      note(`cache not used: ${problem}`);
      return undefined;
    }
    return new CacheFolder(dir, key, note);
  }

  /** The content of entry `name` made from `inputs`, or undefined (missing, or not passing its checks: noted). */
  readSync(name: string, kind: string, inputs: string): Buffer | undefined {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(this.dir, name));
    } catch {
      return undefined;
    }
    return this.open(name, bytes, kind, inputs);
  }

  async read(name: string, kind: string, inputs: string): Promise<Buffer | undefined> {
    const bytes = await readFile(join(this.dir, name)).catch(() => undefined);
    return bytes && this.open(name, bytes, kind, inputs);
  }

  async write(name: string, kind: string, inputs: string, content: Uint8Array | string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    await writeFileAtomic(join(this.dir, name), sealEntry(kind, inputDigest(inputs), bytes, this.key), { durable: false, mode: 0o600 });
  }

  /** Says why something read through this cache (checked by its reader) was not used. */
  ignored(name: string, why: string): void {
    this.note(`cache entry ${join(this.dir, name)} ignored: ${why}; rebuilt`);
  }

  private open(name: string, bytes: Buffer, kind: string, inputs: string): Buffer | undefined {
    const opened = openEntry(bytes, kind, inputDigest(inputs), this.key);
    if ('problem' in opened) {
      // Another version of the same entry (other inputs) is the normal case of a cache: not worth a note.
      if (opened.problem !== 'made from other inputs') this.ignored(name, opened.problem);
      return undefined;
    }
    return opened.content;
  }
}
