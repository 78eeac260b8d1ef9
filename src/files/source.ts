/**
 * A read-only tree of files, wherever it is kept: a folder on disk, or files
 * in memory (a tarball read with the safe reader). Code that reads an app or
 * a StarlingX application asks a FileSource, so a folder and an archive feed
 * the same reader (as Helm's loader does). Paths are `/`-separated and
 * relative to the tree's top.
 */
import { readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { join, resolve } from 'node:path';
import { readWithStats } from './read.js';

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

/**
 * What a long-lived process has read below a folder, by absolute path:
 * files' bytes, folders' listings, what kind each path is. Whoever keeps one
 * must drop an entry as soon as its path changes (src/build app-watcher.ts
 * does, from file events), and must not keep one for a tree with symbolic
 * links, whose targets change under other names.
 */
export interface ReadMemory {
  readonly contents: Map<string, Buffer | undefined>;
  readonly listings: Map<string, readonly { readonly name: string; readonly kind: EntryKind }[]>;
  readonly kinds: Map<string, EntryKind | undefined>;
}

export function emptyReadMemory(): ReadMemory {
  return { contents: new Map(), listings: new Map(), kinds: new Map() };
}

/** Answers from `memory` when it holds `key`, else computes and keeps. */
function kept<T>(memory: Map<string, T> | undefined, key: string, compute: () => T): T {
  if (!memory) return compute();
  if (memory.has(key)) return memory.get(key) as T;
  const value = compute();
  memory.set(key, value);
  return value;
}

/** What `read` returns, or undefined when there is no such file (or it is a folder). */
function absentAsUndefined<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** The files below `root` on disk, read when asked for; with `memory`, each at most once while it holds (see ReadMemory). */
export function directorySource(root: string, memory?: ReadMemory): FileSource {
  const top = resolve(root);
  const abs = (rel: string) => (rel === '' ? top : join(top, ...rel.split('/')));
  const kindOf = (rel: string): EntryKind | undefined =>
    kept(memory?.kinds, abs(rel), () => {
      const info = statSync(abs(rel), { throwIfNoEntry: false });
      return info?.isDirectory() ? 'directory' : info?.isFile() ? 'file' : undefined;
    });
  const listing = (rel: string): readonly { name: string; kind: EntryKind }[] => {
    let entries: Dirent[];
    try {
      entries = readdirSync(abs(rel), { withFileTypes: true });
    } catch {
      return [];
    }
    const out: { name: string; kind: EntryKind }[] = [];
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      // The listing knows files and folders; a link (or an unknown type) is what it points at.
      const kind = entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : kindOf(rel === '' ? entry.name : `${rel}/${entry.name}`);
      if (kind) out.push({ name: entry.name, kind });
    }
    return out;
  };
  return {
    path: top,
    kind: 'directory',
    read(rel) {
      const path = abs(rel);
      if (!memory) return absentAsUndefined(() => readFileSync(path));
      if (memory.contents.has(path)) return memory.contents.get(path);
      const read = absentAsUndefined(() => readWithStats(path));
      // A file with other names can change through one outside the app, which no watcher hears: read again each build.
      if (!read || read.info.nlink <= 1) memory.contents.set(path, read?.data);
      return read?.data;
    },
    kindOf,
    list: (rel) => [...kept(memory?.listings, abs(rel), () => listing(rel))],
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
