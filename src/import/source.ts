/**
 * Where the StarlingX app is read from: an unpacked folder, or the
 * application tarball itself (read in memory with the safe tar reader, never
 * extracted). Paths are `/`-separated and relative to the app's top level
 * (where metadata.yaml is); the importer only ever asks for paths it built
 * from validated single-segment names.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { readTarGzSafely } from '../bundle/index.js';
import { FlotillaError } from '../diagnostics/index.js';

export type EntryKind = 'file' | 'directory';

export interface SourceFiles {
  /** Absolute path of the folder or tarball. */
  readonly path: string;
  readonly kind: 'directory' | 'tarball';
  /** The bytes of a file, or undefined when there is no such file. */
  read(rel: string): Promise<Buffer | undefined>;
  kindOf(rel: string): Promise<EntryKind | undefined>;
  /** Names directly inside a folder, sorted, with their kinds. */
  list(rel: string): Promise<{ name: string; kind: EntryKind }[]>;
}

export async function openSource(path: string): Promise<SourceFiles> {
  const root = resolve(path);
  const info = await stat(root).catch(() => undefined);
  if (!info) throw new FlotillaError(`${root} does not exist`);
  if (info.isDirectory()) return directorySource(root);
  if (info.isFile() && /\.(tgz|tar\.gz)$/.test(root)) return tarballSource(root);
  throw new FlotillaError(`${root} is neither a folder nor a StarlingX application tarball (.tgz / .tar.gz)`);
}

function directorySource(root: string): SourceFiles {
  const abs = (rel: string) => (rel === '' ? root : join(root, ...rel.split('/')));
  return {
    path: root,
    kind: 'directory',
    async read(rel) {
      try {
        return await readFile(abs(rel));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return undefined;
        throw error;
      }
    },
    async kindOf(rel) {
      const info = await stat(abs(rel)).catch(() => undefined);
      if (!info) return undefined;
      return info.isDirectory() ? 'directory' : info.isFile() ? 'file' : undefined;
    },
    async list(rel) {
      const names = await readdir(abs(rel)).catch(() => [] as string[]);
      const out: { name: string; kind: EntryKind }[] = [];
      for (const name of names.sort()) {
        const kind = await this.kindOf(rel === '' ? name : `${rel}/${name}`);
        if (kind) out.push({ name, kind });
      }
      return out;
    },
  };
}

async function tarballSource(file: string): Promise<SourceFiles> {
  const files = await readTarGzSafely(file, { label: basename(file) });
  const dirs = new Set<string>(['']);
  for (const path of files.keys()) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  const kindOf = (rel: string): EntryKind | undefined => (files.has(rel) ? 'file' : dirs.has(rel) ? 'directory' : undefined);
  return {
    path: file,
    kind: 'tarball',
    read: async (rel) => files.get(rel),
    kindOf: async (rel) => kindOf(rel),
    async list(rel) {
      const prefix = rel === '' ? '' : `${rel}/`;
      const names = new Set<string>();
      for (const path of [...files.keys(), ...dirs]) {
        if (path === rel || !path.startsWith(prefix)) continue;
        const name = path.slice(prefix.length).split('/')[0];
        if (name) names.add(name);
      }
      return [...names].sort().map((name) => ({ name, kind: kindOf(`${prefix}${name}`) as EntryKind }));
    },
  };
}
