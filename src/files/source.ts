/**
 * A read-only tree of files, wherever it is kept: a folder on disk, or files
 * in memory (a tarball read with the safe reader). Code that reads an app or
 * a StarlingX application asks a FileSource, so a folder and an archive feed
 * the same reader (as Helm's loader does). Paths are `/`-separated and
 * relative to the tree's top.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export type EntryKind = 'file' | 'directory';

export interface FileSource {
  /** Absolute path of the folder or the archive the files come from. */
  readonly path: string;
  readonly kind: 'directory' | 'tarball';
  /** The bytes of a file, or undefined when there is no such file. */
  read(rel: string): Buffer | undefined;
  kindOf(rel: string): EntryKind | undefined;
  /** Names directly inside a folder, sorted, with their kinds; empty when there is no such folder. */
  list(rel: string): { name: string; kind: EntryKind }[];
}

/** The files below `root` on disk, read when asked for. */
export function directorySource(root: string): FileSource {
  const top = resolve(root);
  const abs = (rel: string) => (rel === '' ? top : join(top, ...rel.split('/')));
  const kindOf = (rel: string): EntryKind | undefined => {
    const info = statSync(abs(rel), { throwIfNoEntry: false });
    return info?.isDirectory() ? 'directory' : info?.isFile() ? 'file' : undefined;
  };
  return {
    path: top,
    kind: 'directory',
    read(rel) {
      try {
        return readFileSync(abs(rel));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return undefined;
        throw error;
      }
    },
    kindOf,
    list(rel) {
      let names: string[];
      try {
        names = readdirSync(abs(rel));
      } catch {
        return [];
      }
      const out: { name: string; kind: EntryKind }[] = [];
      for (const name of names.sort()) {
        const kind = kindOf(rel === '' ? name : `${rel}/${name}`);
        if (kind) out.push({ name, kind });
      }
      return out;
    },
  };
}

/** Files held in memory by path (folders are implied by the paths), e.g. a tarball's entries. */
export function memorySource(files: ReadonlyMap<string, Buffer>, path: string): FileSource {
  const dirs = new Set<string>(['']);
  for (const file of files.keys()) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  const kindOf = (rel: string): EntryKind | undefined => (files.has(rel) ? 'file' : dirs.has(rel) ? 'directory' : undefined);
  return {
    path,
    kind: 'tarball',
    read: (rel) => files.get(rel),
    kindOf,
    list(rel) {
      const prefix = rel === '' ? '' : `${rel}/`;
      const names = new Set<string>();
      for (const file of [...files.keys(), ...dirs]) {
        if (file === rel || !file.startsWith(prefix)) continue;
        const name = file.slice(prefix.length).split('/')[0];
        if (name) names.add(name);
      }
      return [...names].sort().map((name) => ({ name, kind: kindOf(`${prefix}${name}`) as EntryKind }));
    },
  };
}
