/**
 * A folder's fingerprint: what stat says of every file below it (name, size,
 * modification time, inode), digested, and the newest time seen — how make
 * and git tell a file unchanged without reading it (src/build/chart-cache.ts
 * keeps one per chart source folder). Taken by a walk of its own
 * (`fingerprintFolder`), or along a walk that reads the files anyway (the chart
 * loader, src/charts/load.ts): from the descriptor each file is read
 * through, so a cold build does not walk the folder and stat every file by
 * its path a second time. Both
 * give the same fingerprint for the same folder: lines are sorted by path before
 * they are digested, so the order of the walk does not matter.
 */
import { createHash } from 'node:crypto';
import { readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { readWithStats } from './read.js';

export interface FolderFingerprint {
  readonly digest: string;
  /** The newest modification or change time of any file or folder below (ms). */
  readonly newest: number;
  /** When the fingerprint began to be taken (ms): a change in the same second as a time it saw may not show (git's "racily clean"). */
  readonly takenAt: number;
  /**
   * A file below has other names (hard links): it can change through one
   * outside the folder, which no watcher of the folder hears, so a
   * long-lived process takes this fingerprint again for every build.
   */
  readonly hardLinked?: boolean;
}

/** A fingerprint taken entry by entry, as a walk meets them; any failure to look makes it no fingerprint at all. */
export class FolderFingerprinter {
  private readonly takenAt = Date.now();
  /** `path\0size\0mtime\0inode` a file: sorted as strings, they are in path order (no path holds a NUL). */
  private readonly lines: string[] = [];
  private newest = 0;
  private hardLinked = false;
  private failed = false;

  /** A folder below the fingerprinted one (its times count; its files are added one by one). */
  folder(info: Stats): void {
    this.newest = Math.max(this.newest, info.mtimeMs, info.ctimeMs);
  }

  /** A file, by its path below the fingerprinted folder. */
  file(path: string, info: Stats): void {
    this.newest = Math.max(this.newest, info.mtimeMs, info.ctimeMs);
    this.lines.push(`${path}\0${info.size}\0${info.mtimeMs}\0${info.ino}\n`);
    if (info.nlink > 1) this.hardLinked = true;
  }

  /** A file the walk does not read (an ignored one), by its path on disk; gone since the listing, it does not count. */
  fileAt(abs: string, path: string): void {
    this.attempt(() => {
      const info = statSync(abs, { throwIfNoEntry: false });
      if (info) this.file(path, info);
    });
  }

  /** Everything below `abs` (at `path/` below the fingerprinted folder), links followed: a folder the walk does not enter. */
  walk(abs: string, path: string): void {
    this.attempt(() => {
      for (const name of readdirSync(abs)) {
        const child = join(abs, name);
        const info = statSync(child, { throwIfNoEntry: false });
        if (!info) continue;
        if (info.isDirectory()) {
          this.folder(info);
          this.walk(child, `${path}${name}/`);
        } else this.file(`${path}${name}`, info);
      }
    });
  }

  /** A folder's own times, by its path on disk. */
  folderAt(abs: string): void {
    this.attempt(() => this.folder(statSync(abs)));
  }

  /** Reads a file whole through one descriptor, adding what stat says of it as it was opened. */
  read(abs: string, path: string): Buffer {
    const { data, info } = readWithStats(abs);
    this.file(path, info);
    return data;
  }

  /** The fingerprint, or undefined when some entry could not be looked at. */
  finish(): FolderFingerprint | undefined {
    if (this.failed) return undefined;
    const hash = createHash('sha256');
    for (const line of this.lines.sort()) hash.update(line);
    return { digest: hash.digest('hex'), newest: this.newest, takenAt: this.takenAt, ...(this.hardLinked ? { hardLinked: true } : {}) };
  }

  private attempt(look: () => void): void {
    if (this.failed) return;
    try {
      look();
    } catch {
      this.failed = true;
    }
  }
}

/** The fingerprint of `dir` by a walk of its own (undefined: the folder could not be walked). */
export function fingerprintFolder(dir: string): FolderFingerprint | undefined {
  const fingerprinter = new FolderFingerprinter();
  fingerprinter.walk(dir, '');
  return fingerprinter.finish();
}
