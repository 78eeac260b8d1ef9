/**
 * The one deterministic tar.gz writer, used for the application tarball and
 * for Helm chart archives alike. Same entries in, same bytes out, whatever
 * the file times, checkout path, user or machine:
 * - regular files only (no directory entries: Helm writes none and every tar
 *   reader creates parents), mode 0644, uid/gid 0, empty uname/gname; with
 *   `dotRoot`, names as `tar czf app.tgz .` writes them: the `./` folder
 *   first, `./`-prefixed names, each folder (0755) before its first file;
 * - one fixed mtime; ustar headers without atime/ctime; a pax header (path
 *   only, no times) just for names ustar cannot hold;
 * - entries sorted byte-wise by path unless the caller fixes the order;
 * - gzip with mtime 0, no file name, maximum compression and OS byte "Unix".
 * Header encoding comes from node-tar; the policy above is ours.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip, gzipSync } from 'node:zlib';
import { Header, Pax } from 'tar';
import { FlotillaError } from '../diagnostics/index.js';
import { writeFileAtomic } from '../files/index.js';
import { checkEntryPath, collisionKey, compareBytewise } from './paths.js';

export interface TarEntry {
  /** Canonical relative path with `/` separators (`a/b.yaml`, never `./a` or `a//b`). */
  readonly path: string;
  readonly data: Buffer | string;
}

export interface TarWriteOptions {
  /** `sorted` (default): byte-wise by path. `given`: the caller's order (chart archives put Chart.yaml first). */
  readonly order?: 'sorted' | 'given';
  /** Time stamped on every entry; defaults to {@link FIXED_MTIME}. */
  readonly mtime?: Date;
  /** Names the archive in error messages. */
  readonly label?: string;
  /** gzip level (default 6). The outer app tarball holds mostly compressed chart archives, where any level buys little. */
  readonly level?: number;
  /**
   * Name entries as `tar czf app.tgz .` does (`./` folder first, `./a/`, `./a/b`):
   * StarlingX registers an app tarball by reading its member `./metadata.yaml`.
   */
  readonly dotRoot?: boolean;
}

/**
 * 2000-01-01T00:00:00Z. Not the epoch: GNU tar warns about "implausibly old
 * time stamp" for 1970 when extracting, which would be noise on every upload.
 */
export const FIXED_MTIME = new Date(Date.UTC(2000, 0, 1));

const FILE_MODE = 0o644;
const DIR_MODE = 0o755;
const BLOCK = 512;
/** gzip header byte 9; zlib writes the build platform's code (0x03 Unix, 0x0a Windows, 0x13 macOS). */
const GZIP_OS_UNIX = 0x03;

/** A bad entry list handed to the writer (a programming or input error, never a hostile archive). */
export class ArchiveWriteError extends FlotillaError {
  readonly entry: string;
  constructor(label: string, entry: string, reason: string) {
    super(`cannot write ${label}: entry ${JSON.stringify(entry)}: ${reason}`);
    this.entry = entry;
  }
}

function orderedEntries(entries: readonly TarEntry[], options: TarWriteOptions): TarEntry[] {
  const label = options.label ?? 'archive';
  const seen = new Map<string, string>();
  for (const entry of entries) {
    const checked = checkEntryPath(entry.path);
    if (!checked.ok) throw new ArchiveWriteError(label, entry.path, checked.reason);
    if (checked.path === '') throw new ArchiveWriteError(label, entry.path, 'empty path');
    if (checked.path !== entry.path) {
      throw new ArchiveWriteError(label, entry.path, `not a canonical path (use ${JSON.stringify(checked.path)})`);
    }
    const key = collisionKey(entry.path);
    const previous = seen.get(key);
    if (previous !== undefined) throw new ArchiveWriteError(label, entry.path, `duplicate of ${JSON.stringify(previous)}`);
    seen.set(key, entry.path);
  }
  // A file may not also be a parent folder of another entry. Parent prefixes
  // repeat a lot (every file of a folder), so each is looked up once.
  const checkedParents = new Set<string>();
  for (const key of seen.keys()) {
    for (let slash = key.indexOf('/'); slash !== -1; slash = key.indexOf('/', slash + 1)) {
      const parent = key.slice(0, slash);
      if (checkedParents.has(parent)) continue;
      checkedParents.add(parent);
      const clash = seen.get(parent);
      if (clash !== undefined) throw new ArchiveWriteError(label, clash, `is a file but also the folder of ${JSON.stringify(seen.get(key))}`);
    }
  }
  const list = [...entries];
  if ((options.order ?? 'sorted') === 'sorted') list.sort((a, b) => compareBytewise(a.path, b.path));
  return list;
}

type EntryKind = 'file' | 'directory';

function entryHeader(path: string, size: number, mtime: Date, kind: EntryKind = 'file'): Buffer[] {
  const fast = ustarHeader(path, size, mtime, kind);
  if (fast) return [fast];
  const fields = { path, mode: kind === 'file' ? FILE_MODE : DIR_MODE, uid: 0, gid: 0, size, mtime, type: kind === 'file' ? ('File' as const) : ('Directory' as const), uname: '', gname: '' };
  const header = new Header(fields);
  const needPax = header.encode();
  const block = header.block;
  if (!block) throw new Error('tar header encoding produced no block');
  if (!needPax) return [block];
  // Long or non-ASCII names: a pax record carrying only the path (no times,
  // so the bytes stay fixed), then the ustar header with a truncated name.
  return [new Pax({ path }).encode(), block];
}

const PLAIN_NAME = /^[\x20-\x7e]{1,99}$/;
const MAX_OCTAL_11 = 0o77777777777;

/**
 * The common case — an ASCII name shorter than 100 bytes — encoded directly,
 * byte for byte as node-tar's Header writes it (a test holds them equal):
 * node-tar's general encoder costs ~10 µs a header, and a build writes
 * thousands. Anything else goes to node-tar.
 */
function ustarHeader(path: string, size: number, mtime: Date, kind: EntryKind): Buffer | undefined {
  const seconds = Math.floor(mtime.getTime() / 1000);
  if (!PLAIN_NAME.test(path) || size > MAX_OCTAL_11 || seconds < 0 || seconds > MAX_OCTAL_11) return undefined;
  const block = Buffer.alloc(BLOCK);
  const octal = (value: number, width: number) => `${value.toString(8).padStart(width - 2, '0')} \0`;
  block.write(path, 0, 'latin1');
  block.write(octal(kind === 'file' ? FILE_MODE : DIR_MODE, 8), 100, 'latin1');
  block.write(octal(0, 8), 108, 'latin1');
  block.write(octal(0, 8), 116, 'latin1');
  block.write(octal(size, 12), 124, 'latin1');
  block.write(octal(seconds, 12), 136, 'latin1');
  block.write(kind === 'file' ? '0' : '5', 156, 'latin1');
  block.write('ustar\x0000', 257, 'latin1');
  block.write(octal(0, 8), 329, 'latin1');
  block.write(octal(0, 8), 337, 'latin1');
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += block[i] as number;
  block.write(octal(sum, 8), 148, 'latin1');
  return block;
}

/** An uncompressed tar stream of `entries` (see the module comment for the guarantees). */
export function writeTar(entries: readonly TarEntry[], options: TarWriteOptions = {}): Buffer {
  const mtime = options.mtime ?? FIXED_MTIME;
  const parts: { headers: Buffer[]; data: Buffer }[] = [];
  const folders = new Set<string>();
  const folder = (path: string) => parts.push({ headers: entryHeader(path, 0, mtime, 'directory'), data: Buffer.alloc(0) });
  if (options.dotRoot) folder('./');
  for (const entry of orderedEntries(entries, options)) {
    const data = typeof entry.data === 'string' ? Buffer.from(entry.data, 'utf8') : entry.data;
    if (options.dotRoot) {
      // Each folder once, before the first file below it.
      for (let slash = entry.path.indexOf('/'); slash !== -1; slash = entry.path.indexOf('/', slash + 1)) {
        const parent = entry.path.slice(0, slash);
        if (!folders.has(parent)) {
          folders.add(parent);
          folder(`./${parent}/`);
        }
      }
    }
    parts.push({ headers: entryHeader(options.dotRoot ? `./${entry.path}` : entry.path, data.length, mtime), data });
  }
  // One buffer of the exact size; the padding and the end marker are its zeros.
  const padded = (n: number) => n + ((BLOCK - (n % BLOCK)) % BLOCK);
  const size = parts.reduce((sum, p) => sum + p.headers.reduce((h, b) => h + b.length, 0) + padded(p.data.length), 2 * BLOCK);
  const out = Buffer.alloc(size);
  let offset = 0;
  for (const { headers, data } of parts) {
    for (const header of headers) offset += header.copy(out, offset);
    data.copy(out, offset);
    offset += padded(data.length);
  }
  return out;
}

/** Node's zlib already writes mtime 0 and no FNAME; pin them anyway so the header never depends on the platform or a future default. */
function pinGzipHeader(out: Buffer): Buffer {
  out.writeUInt32LE(0, 4);
  out[9] = GZIP_OS_UNIX;
  return out;
}

/** zlib's default, which is also what `helm package` uses (Go's DefaultCompression); 9 costs time for nothing on text. */
const DEFAULT_LEVEL = 6;

/** gzip with a fixed header: mtime 0, no name, OS byte Unix, level 6 unless told. */
export function gzipDeterministic(data: Buffer, level = DEFAULT_LEVEL): Buffer {
  return pinGzipHeader(gzipSync(data, { level }));
}

const gzipAsync = promisify(gzip);

/** {@link gzipDeterministic} on libuv's thread pool, so several archives compress at once. */
export async function gzipDeterministicAsync(data: Buffer, level = DEFAULT_LEVEL): Promise<Buffer> {
  // One large output chunk: zlib's default 16 KiB means a main-thread round trip per chunk.
  return pinGzipHeader(await gzipAsync(data, { level, chunkSize: 1 << 20 }));
}

/** A byte-reproducible `.tgz` of `entries`. */
export function writeTarGz(entries: readonly TarEntry[], options: TarWriteOptions = {}): Buffer {
  return gzipDeterministic(writeTar(entries, options), options.level);
}

/** {@link writeTarGz}, compressing off the main thread. */
export function writeTarGzAsync(entries: readonly TarEntry[], options: TarWriteOptions = {}): Promise<Buffer> {
  return gzipDeterministicAsync(writeTar(entries, options), options.level);
}

export interface WrittenArchive {
  readonly file: string;
  readonly size: number;
  readonly sha256: string;
}

/** Writes {@link writeTarGz} output to `file` atomically (temp file + rename), so a crash never leaves half an archive. */
export async function writeTarGzFile(file: string, entries: readonly TarEntry[], options: TarWriteOptions = {}): Promise<WrittenArchive> {
  const bytes = await writeTarGzAsync(entries, { label: file, ...options });
  await writeFileAtomic(file, bytes);
  return { file, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}
