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
 * - gzip with mtime 0, no file name, OS byte "Unix": one deflate stream
 *   (a chart archive, as `helm package` writes one), or with `reuse` (the
 *   application tarball) joined from deflate pieces (gzip-pieces.ts) that
 *   depend only on their own entries, so an unchanged entry of the previous
 *   build is copied into the next tarball, not compressed again.
 * Header encoding comes from node-tar; the policy above is ours.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { crc32, deflateRaw } from 'node:zlib';
import { createRequire } from 'node:module';
import { FlotillaError } from '../diagnostics/index.js';
import { writeFileAtomic } from '../files/index.js';
import { DEFAULT_LEVEL, deflatePiece, joinGzip, pieceOptions, storedPiece, type DeflatePiece } from './gzip-pieces.js';
import { checkEntryPath, collisionKey, compareBytewise } from './paths.js';

export interface TarEntry {
  /** Canonical relative path with `/` separators (`a/b.yaml`, never `./a` or `a//b`). */
  readonly path: string;
  readonly data: Buffer | string;
  /**
   * How a .tgz holds the data. `inline` (default): compressed together with
   * the neighbouring entries. `stored`: not compressed (a chart archive in
   * the app tarball is compressed already).
   */
  readonly compression?: 'inline' | 'stored';
  /** Digests of `data`, hex, when the caller knows them: spared hashing for {@link TarWriteOptions.reuse} and the checksum files. */
  readonly sha256?: string;
  readonly md5?: string;
}

/** Pieces of an earlier archive, by {@link pieceKey}. */
export interface PieceSource {
  get(key: string): DeflatePiece | undefined;
}

export interface TarWriteOptions {
  /** `sorted` (default): byte-wise by path. `given`: the caller's order (chart archives put Chart.yaml first). */
  readonly order?: 'sorted' | 'given';
  /** Time stamped on every entry; defaults to {@link FIXED_MTIME}. */
  readonly mtime?: Date;
  /** Names the archive in error messages. */
  readonly label?: string;
  /** deflate level of the compressed pieces (default 6, as `helm package`). */
  readonly level?: number;
  /**
   * Compress the entries as pieces that depend on their own entries only
   * and take the pieces found here instead of compressing them (the
   * application tarball, rebuilt): a stored or large entry is a piece of its
   * own; small ones are grouped, about eight to a piece, by their names.
   */
  readonly reuse?: PieceSource;
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

/** A bad entry list handed to the writer (a programming or input error, never a hostile archive). */
export class ArchiveWriteError extends FlotillaError {
  readonly entry: string;
  constructor(label: string, entry: string, reason: string) {
    super(`cannot write ${label}: entry ${JSON.stringify(entry)}: ${reason}`);
    this.entry = entry;
  }
}

/** The folders above a path, nearest first: `a/b/c` → `a/b`, `a` (each made only when the caller goes on). */
function* foldersAbove(path: string): Generator<string> {
  for (let slash = path.lastIndexOf('/'); slash > 0; slash = path.lastIndexOf('/', slash - 1)) yield path.slice(0, slash);
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
  // repeat a lot (every file of a folder), so each is looked up once: from
  // the nearest up, stopping at one looked up before (its own parents were then).
  const checkedParents = new Set<string>();
  for (const key of seen.keys()) {
    for (const parent of foldersAbove(key)) {
      if (checkedParents.has(parent)) break;
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

// node-tar is loaded only for the names the fast path cannot write.
const load = createRequire(import.meta.url);

/** The header block(s) of one entry: {@link ustarHeader}'s, or node-tar's (a pax record first when the name needs one). */
export function entryHeader(path: string, size: number, mtime: Date, kind: EntryKind = 'file'): Buffer[] {
  const fast = ustarHeader(path, size, mtime, kind);
  if (fast) return [fast];
  const { Header, Pax } = load('tar') as typeof import('tar');
  const fields = {
    path,
    mode: kind === 'file' ? FILE_MODE : DIR_MODE,
    uid: 0,
    gid: 0,
    size,
    mtime,
    type: kind === 'file' ? ('File' as const) : ('Directory' as const),
    uname: '',
    gname: '',
  };
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
/**
 * The largest size or time {@link octal} writes in a 12-byte field: ten
 * digits, then node-tar's " \0". node-tar writes an eleventh digit in place
 * of the space (a file of 1 GiB or more, a time after 2004-01-10), so those
 * headers go to node-tar.
 */
const MAX_OCTAL_10 = 0o7777777777;

/**
 * The common case — an ASCII name shorter than 100 bytes — encoded directly,
 * byte for byte as node-tar's Header writes it (a test holds them equal):
 * node-tar's general encoder costs ~10 µs a header, and a build writes
 * thousands. A copy of a template with the fixed fields (mode, owners,
 * mtime, magic) gets the name and size; the checksum is the template's sum
 * plus theirs. Anything else goes to node-tar.
 */
function ustarHeader(path: string, size: number, mtime: Date, kind: EntryKind): Buffer | undefined {
  if (!plainHeader(path, size, mtime)) return undefined;
  const template = headerTemplate(Math.floor(mtime.getTime() / 1000), kind);
  const block = Buffer.allocUnsafe(BLOCK);
  // TypedArray#set is a builtin; Buffer#copy checks its arguments in JavaScript first (cold, ~2 µs a header).
  block.set(template.block);
  let sum = template.sum;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    block[i] = c;
    sum += c;
  }
  const sizeField = octal(size, 12);
  for (let i = 0; i < sizeField.length; i++) {
    const c = sizeField.charCodeAt(i);
    block[124 + i] = c;
    sum += c;
  }
  // The digits, then (after the template's space) a NUL, as node-tar ends the field.
  writeChecksumDigits(block, CHECKSUM_DIGITS.start, sum);
  block[CHECKSUM_DIGITS.end + 1] = 0;
  return block;
}

/** A ustar header's checksum field: six octal digits, then " \0". */
const CHECKSUM_DIGITS = { start: 148, end: 154 } as const;

/** A header checksum's six octal digits, as {@link octal} writes them: a block's sum is below 512 × 256 = 8^6. */
function writeChecksumDigits(target: Buffer, at: number, sum: number): void {
  const length = CHECKSUM_DIGITS.end - CHECKSUM_DIGITS.start;
  for (let d = 0; d < length; d++) target[at + d] = 0x30 + ((sum >>> (3 * (length - 1 - d))) & 7);
}

/** Whether {@link ustarHeader} writes this entry's header: one block, its name in the first bytes. */
function plainHeader(path: string, size: number, mtime: Date): boolean {
  const seconds = Math.floor(mtime.getTime() / 1000);
  return PLAIN_NAME.test(path) && size <= MAX_OCTAL_10 && seconds >= 0 && seconds <= MAX_OCTAL_10;
}

const octal = (value: number, width: number): string => `${value.toString(8).padStart(width - 2, '0')} \0`;

interface HeaderTemplate {
  readonly seconds: number;
  readonly block: Buffer;
  readonly sum: number;
}

/** The fixed part of a header for one mtime and kind: name and size zero, checksum field blank (spaces, as the sum counts it). */
const templates: Record<EntryKind, HeaderTemplate | undefined> = { file: undefined, directory: undefined };

function headerTemplate(seconds: number, kind: EntryKind): HeaderTemplate {
  const known = templates[kind];
  if (known?.seconds === seconds) return known;
  const block = Buffer.alloc(BLOCK);
  block.write(octal(kind === 'file' ? FILE_MODE : DIR_MODE, 8), 100, 'latin1');
  block.write(octal(0, 8), 108, 'latin1');
  block.write(octal(0, 8), 116, 'latin1');
  block.write(octal(seconds, 12), 136, 'latin1');
  block.write(kind === 'file' ? '0' : '5', 156, 'latin1');
  block.write('ustar\x0000', 257, 'latin1');
  block.write(octal(0, 8), 329, 'latin1');
  block.write(octal(0, 8), 337, 'latin1');
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += block[i]!;
  return (templates[kind] = { seconds, block, sum });
}

/** An entry as the archive holds it: its name, header, data and padding. */
class LaidOutEntry {
  private made?: Buffer;

  constructor(
    readonly entry: TarEntry,
    /** The name in the archive ({@link tarEntryName}; `./a/` for a folder). */
    readonly name: string,
    readonly data: Buffer,
    /** The zeros that fill the data's last block. */
    readonly pad: Buffer,
    private readonly mtime: Date,
    private readonly kind: EntryKind,
  ) {}

  /** The header block(s): a pax record when the name needs one, then the ustar header. */
  get header(): Buffer {
    if (!this.made) {
      const headers = entryHeader(this.name, this.data.length, this.mtime, this.kind);
      this.made = headers.length === 1 ? headers[0]! : Buffer.concat(headers);
    }
    return this.made;
  }
}

/** Two zero blocks end a tar stream. */
const END_OF_ARCHIVE = Buffer.alloc(2 * BLOCK);
const ZERO_BLOCK = Buffer.alloc(BLOCK);

const NO_DATA = Buffer.alloc(0);

/** The name an entry's path gets in the archive. */
export function tarEntryName(path: string, options: Pick<TarWriteOptions, 'dotRoot'>): string {
  return options.dotRoot ? `./${path}` : path;
}

/** The zeros after `length` bytes of data, to the end of their last block. */
const padLength = (length: number): number => (BLOCK - (length % BLOCK)) % BLOCK;

/** The entries in archive order (checked by {@link orderedEntries}), with `dotRoot`'s folders. */
function layOut(entries: readonly TarEntry[], options: TarWriteOptions): LaidOutEntry[] {
  const mtime = options.mtime ?? FIXED_MTIME;
  const laid: LaidOutEntry[] = [];
  const add = (entry: TarEntry, name: string, data: Buffer, kind: EntryKind): void => {
    laid.push(new LaidOutEntry(entry, name, data, ZERO_BLOCK.subarray(0, padLength(data.length)), mtime, kind));
  };
  const folders = new Set<string>();
  const folder = (name: string): void => add({ path: name, data: NO_DATA }, name, NO_DATA, 'directory');
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
    add(entry, tarEntryName(entry.path, options), data, 'file');
  }
  return laid;
}

/** An uncompressed tar stream of `entries` (see the module comment for the guarantees). */
export function writeTar(entries: readonly TarEntry[], options: TarWriteOptions = {}): Buffer {
  const laid = layOut(entries, options);
  // One buffer of the exact size; the padding and the end marker are its zeros.
  const size = laid.reduce((sum, e) => sum + e.header.length + e.data.length + e.pad.length, END_OF_ARCHIVE.length);
  const out = Buffer.alloc(size);
  let offset = 0;
  for (const { header, data, pad } of laid) {
    offset += header.copy(out, offset);
    offset += data.copy(out, offset) + pad.length;
  }
  return out;
}

/** Where a piece comes from: bytes to compress, or a finished piece. */
type PieceJob = { readonly kind: 'compress'; readonly raw: Buffer } | { readonly kind: 'ready'; readonly piece: DeflatePiece };

/** A piece of a written .tgz, as the next build finds it again (see {@link TarWriteOptions.reuse}). */
export interface PieceRecord {
  /** {@link pieceKey} of the entry; `""` for the end-of-archive piece. */
  readonly key: string;
  /** Where the piece's deflate data starts in the file, and its length. */
  readonly offset: number;
  readonly deflatedLength: number;
  readonly crc: number;
  readonly length: number;
}

/** What identifies an entry's piece: its name in the archive and the sha256 of its data (a piece also depends on mtime and level, fixed per use). */
export function pieceKey(name: string, sha256: string): string {
  return `${name}\0${sha256}`;
}

/** An entry at least this large is a piece of its own: editing a file beside it does not compress it again. */
const OWN_PIECE = 32 * 1024;

/**
 * Whether a group of small entries ends after the entry named `name`, about
 * one entry in eight: decided by the name alone, so editing a file never
 * moves a boundary, and adding or removing one changes only its own group.
 * (FNV-1a of the name.)
 */
function endsGroup(name: string): boolean {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
  return (hash & 7) === 0;
}

/** The key of a piece holding several entries: their keys, digested (no entry is named "", and names hold no newline). */
function groupPieceKey(keys: readonly string[]): string {
  return pieceKey('', createHash('sha256').update(keys.join('\n')).digest('hex'));
}

interface PiecePlan {
  readonly jobs: readonly PieceJob[];
  /** With `reuse`: the key of each job's entry or group of entries. */
  readonly keys?: readonly string[];
}

/**
 * The .tgz of `entries` as deflate pieces (see gzip-pieces.ts). Without
 * `reuse`, the entries compressed `inline` are one stream, as one gzip
 * stream of the tar would be, and each `stored` entry's data a stored piece.
 * With `reuse`, each piece holds a stored or large entry, or a group of
 * small ones (see {@link endsGroup}), and is taken from there when known. A
 * piece is a function of its own bytes, so the same entries give the same
 * bytes however many pieces were reused.
 */
function planPieces(entries: readonly TarEntry[], options: TarWriteOptions): PiecePlan {
  const laid = layOut(entries, options);
  return options.reuse ? planReusablePieces(laid, options.reuse, options.level ?? DEFAULT_LEVEL) : planOneStream(laid);
}

/** Without reuse: the entries compressed `inline` as one stream (split only by the stored pieces of `stored` entries). */
function planOneStream(laid: readonly LaidOutEntry[]): PiecePlan {
  const jobs: PieceJob[] = [];
  let run: Buffer[] = [];
  const endRun = (): void => {
    if (run.length > 0) jobs.push({ kind: 'compress', raw: run.length === 1 ? run[0]! : Buffer.concat(run) });
    run = [];
  };
  for (const { entry, header, data, pad } of laid) {
    run.push(header);
    if (entry.compression === 'stored') {
      endRun();
      jobs.push({ kind: 'ready', piece: storedPiece([data, pad]) });
    } else run.push(data, pad);
  }
  run.push(END_OF_ARCHIVE);
  endRun();
  return { jobs };
}

/** With reuse: a piece per stored or large entry and per group of small ones, each taken from `reuse` when known, then the end marker's piece. */
function planReusablePieces(laid: readonly LaidOutEntry[], reuse: PieceSource, level: number): PiecePlan {
  const jobs: PieceJob[] = [];
  const keys: string[] = [];
  let group: LaidOutEntry[] = [];
  let groupKeys: string[] = [];
  const piece = (key: string, make: () => PieceJob): void => {
    const known = reuse.get(key);
    jobs.push(known ? { kind: 'ready', piece: known } : make());
    keys.push(key);
  };
  const endGroup = (): void => {
    if (group.length === 0) return;
    const members = group;
    piece(members.length === 1 ? groupKeys[0]! : groupPieceKey(groupKeys), () => ({
      kind: 'compress',
      raw: Buffer.concat(members.flatMap(({ header, data, pad }) => [header, data, pad])),
    }));
    group = [];
    groupKeys = [];
  };
  for (const laidOut of laid) {
    const { entry, name, data } = laidOut;
    const key = pieceKey(name, entry.sha256 ?? createHash('sha256').update(data).digest('hex'));
    if (entry.compression === 'stored' || data.length >= OWN_PIECE) {
      endGroup();
      piece(key, () => ownPiece(laidOut));
      continue;
    }
    group.push(laidOut);
    groupKeys.push(key);
    if (endsGroup(name)) endGroup();
  }
  endGroup();
  jobs.push({ kind: 'ready', piece: endOfArchivePiece(level) });
  keys.push('');
  return { jobs, keys };
}

/** The piece of a stored or large entry: stored as it is, or compressed alone. */
function ownPiece({ entry, header, data, pad }: LaidOutEntry): PieceJob {
  return entry.compression === 'stored'
    ? { kind: 'ready', piece: storedPiece([header, data, pad]) }
    : { kind: 'compress', raw: Buffer.concat([header, data, pad]) };
}

/** The end marker compressed alone, by level: the same piece in every archive. */
const endOfArchivePieces = new Map<number, DeflatePiece>();

function endOfArchivePiece(level: number): DeflatePiece {
  let piece = endOfArchivePieces.get(level);
  if (!piece) endOfArchivePieces.set(level, (piece = deflatePiece(END_OF_ARCHIVE, level)));
  return piece;
}

function pieceSync(job: PieceJob, level: number): DeflatePiece {
  return job.kind === 'ready' ? job.piece : deflatePiece(job.raw, level);
}

/** Pieces up to this size are compressed on the main thread (a thread-pool round trip costs more); larger ones on libuv's pool, several at once. */
const INLINE_PIECE = 64 * 1024;
const deflateRawAsync = promisify(deflateRaw);

function pieceAsync(job: PieceJob, level: number): DeflatePiece | Promise<DeflatePiece> {
  if (job.kind === 'ready') return job.piece;
  const raw = job.raw;
  if (raw.length <= INLINE_PIECE) return deflatePiece(raw, level);
  // One large output chunk: zlib's default 16 KiB means a main-thread round trip per chunk.
  return deflateRawAsync(raw, { ...pieceOptions(level), chunkSize: 1 << 20 }).then((deflated) => ({ deflated, crc: crc32(raw), length: raw.length }));
}

/** A byte-reproducible `.tgz` of `entries`. */
export function writeTarGz(entries: readonly TarEntry[], options: TarWriteOptions = {}): Buffer {
  const level = options.level ?? DEFAULT_LEVEL;
  return joinGzip(planPieces(entries, options).jobs.map((job) => pieceSync(job, level))).bytes;
}

export interface WrittenTarGz {
  readonly bytes: Buffer;
  /** With `reuse`: where each piece lies in `bytes`, by the key of its entry or group, for the next build. */
  readonly pieces: readonly PieceRecord[];
}

/** {@link writeTarGz}, large pieces compressed off the main thread, with the piece table when asked to reuse. */
export async function writeTarGzPieces(entries: readonly TarEntry[], options: TarWriteOptions = {}): Promise<WrittenTarGz> {
  const level = options.level ?? DEFAULT_LEVEL;
  const plan = planPieces(entries, options);
  const pieces = await Promise.all(plan.jobs.map((job) => pieceAsync(job, level)));
  const joined = joinGzip(pieces);
  const records = (plan.keys ?? []).map((key, i) => ({
    key,
    offset: joined.offsets[i]!,
    deflatedLength: pieces[i]!.deflated.length,
    crc: pieces[i]!.crc,
    length: pieces[i]!.length,
  }));
  return { bytes: joined.bytes, pieces: records };
}

/** {@link writeTarGz}, large pieces compressed off the main thread. */
export async function writeTarGzAsync(entries: readonly TarEntry[], options: TarWriteOptions = {}): Promise<Buffer> {
  return (await writeTarGzPieces(entries, options)).bytes;
}

export interface WrittenArchive {
  readonly file: string;
  readonly size: number;
  readonly sha256: string;
  /** What was written. */
  readonly bytes: Buffer;
  /** With `reuse`: the piece table of the file (see {@link writeTarGzPieces}). */
  readonly pieces: readonly PieceRecord[];
}

/**
 * Writes {@link writeTarGz} output to `file` atomically (temp file + rename),
 * so a crash never leaves half an archive. The digest is taken, and
 * `meanwhile` (such as saving what describes the archive) runs, while
 * libuv's pool writes and flushes the file.
 */
export async function writeTarGzFile(
  file: string,
  entries: readonly TarEntry[],
  options: TarWriteOptions = {},
  meanwhile?: (written: WrittenArchive) => Promise<unknown>,
): Promise<WrittenArchive> {
  const { bytes, pieces } = await writeTarGzPieces(entries, { label: file, ...options });
  const writing = writeFileAtomic(file, bytes);
  const written = archive(file, bytes, pieces);
  await Promise.all([writing, meanwhile?.(written)]);
  return written;
}

/** What {@link writeTarGzFile} would write to `file`, made in memory only. */
export async function tarGzInMemory(file: string, entries: readonly TarEntry[], options: TarWriteOptions = {}): Promise<WrittenArchive> {
  const { bytes, pieces } = await writeTarGzPieces(entries, { label: file, ...options });
  return archive(file, bytes, pieces);
}

function archive(file: string, bytes: Buffer, pieces: readonly PieceRecord[]): WrittenArchive {
  return { file, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), bytes, pieces };
}
