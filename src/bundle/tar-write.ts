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
 * - gzip with mtime 0, no file name, OS byte "Unix", joined from deflate
 *   pieces (gzip-pieces.ts): a piece depends only on its own bytes, so what
 *   was compressed once — a vendored library's file, an unchanged entry of
 *   the previous build — is copied into the next archive, not compressed again;
 * - a run of shared files ({@link TarRun}) gives the bytes its files would
 *   give as entries, and is checked as they would be.
 * Header encoding comes from node-tar; the policy above is ours.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { crc32, deflateRaw } from 'node:zlib';
import { createRequire } from 'node:module';
import { FlotillaError } from '../diagnostics/index.js';
import { writeFileAtomic } from '../files/index.js';
import {
  CHECKSUM_DIGITS,
  codeHeader,
  DEFAULT_LEVEL,
  deflatePiece,
  headerPiece,
  headerPieceLike,
  joinGzip,
  pieceOptions,
  PiecePattern,
  storedPiece,
  WINDOW,
  type CodedHeader,
  type DeflatePiece,
  type VaryingBytes,
  type VaryingGroup,
} from './gzip-pieces.js';
import { checkEntryPath, collisionKey, compareBytewise, isCanonicalEntryPath } from './paths.js';

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

/**
 * Files written into many archives, each time under another folder: a
 * library chart vendored under `<chart>/charts/<library>/` of every chart
 * that depends on it. One object per set of files, kept while they are the
 * same: their data is compressed once per process, and an archive whose
 * folder name is as long as one written before copies the whole run, headers
 * and all, as one piece (see {@link planPieces}).
 */
export class SharedFiles {
  constructor(readonly files: readonly { readonly path: string; readonly data: Buffer }[]) {}
}

/** {@link SharedFiles} in an archive: as entries `${folder}/${path}`, in their order. */
export interface TarRun {
  readonly folder: string;
  readonly files: SharedFiles;
}

/** What an archive is written from: entries, and runs of shared files. */
export type TarItem = TarEntry | TarRun;

const isRun = (item: TarItem): item is TarRun => 'files' in item;

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

/** Whether a folder above `path` is in `set`. */
function folderAboveIn(path: string, set: ReadonlySet<string> | ReadonlyMap<string, unknown>): boolean {
  for (const folder of foldersAbove(path)) if (set.has(folder)) return true;
  return false;
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

/** An entry of a run of shared files written out one by one (see {@link expandRuns}). */
interface MemberEntry extends TarEntry {
  readonly data: Buffer;
  readonly member: { readonly files: SharedFiles; readonly folder: string; readonly index: number };
}

const memberOf = (entry: TarEntry): MemberEntry['member'] | undefined => (entry as Partial<MemberEntry>).member;

/** The entry of a run's `index`-th file, marked with where it came from. */
function memberEntry(run: TarRun, index: number): MemberEntry {
  const file = run.files.files[index]!;
  return { path: `${run.folder}/${file.path}`, data: file.data, member: { files: run.files, folder: run.folder, index } };
}

/** Every run as its entries, in place. */
function expandRuns(items: readonly TarItem[]): TarEntry[] {
  return items.flatMap((item): TarEntry[] => (isRun(item) ? item.files.files.map((_, index) => memberEntry(item, index)) : [item]));
}

/**
 * The items in archive order, checked as {@link orderedEntries} checks
 * entries: runs stay whole when they can (see {@link runsStayWhole}), else
 * they are written out entry by entry and checked as such.
 */
function orderedItems(items: readonly TarItem[], options: TarWriteOptions): (TarEntry | TarRun)[] {
  if (!items.some(isRun)) return orderedEntries(items as readonly TarEntry[], options);
  return runsStayWhole(items, options) ? [...items] : orderedEntries(expandRuns(items), options);
}

/** What the writer knows of a set of shared files, worked out once per set. */
interface RunSpec {
  readonly paths: readonly string[];
  /** Every path canonical, none twice, none the folder of another: entries beside the run then need checking against `keys` and `folders` only. */
  readonly sound: boolean;
  /** The paths' collision keys, and every folder above a path (below the run's folder). */
  readonly keys: ReadonlySet<string>;
  readonly folders: ReadonlySet<string>;
  /** Every path printable ASCII, the longest this long, the largest file this size: whether the headers are plain (see {@link plainHeader}) depends then on the folder alone. */
  readonly asciiPaths: boolean;
  readonly longestPath: number;
  readonly largest: number;
  /** The run's bytes when every header is one block: headers, data and padding. */
  readonly plainLength: number;
}

const runSpecs = new WeakMap<SharedFiles, RunSpec>();

function runSpec(shared: SharedFiles): RunSpec {
  const known = runSpecs.get(shared);
  if (known) return known;
  const paths = shared.files.map((file) => file.path);
  const keys = new Set<string>();
  const folders = new Set<string>();
  let sound = true;
  for (const path of paths) {
    const key = collisionKey(path);
    if (!isCanonicalEntryPath(path) || keys.has(key)) sound = false;
    keys.add(key);
    for (const folder of foldersAbove(key)) folders.add(folder);
  }
  for (const key of keys) if (folders.has(key)) sound = false;
  const spec: RunSpec = {
    paths,
    sound,
    keys,
    folders,
    asciiPaths: paths.every((path) => /^[\x20-\x7e]+$/.test(path)),
    longestPath: paths.reduce((longest, path) => Math.max(longest, path.length), 0),
    largest: shared.files.reduce((largest, file) => Math.max(largest, file.data.length), 0),
    plainLength: shared.files.reduce((sum, file) => sum + BLOCK + file.data.length + padLength(file.data.length), 0),
  };
  runSpecs.set(shared, spec);
  return spec;
}

/**
 * Whether the runs can be kept whole: the order is the caller's, the names
 * are plain (no `./` root), and the checks {@link orderedEntries} makes of
 * every entry pass for the runs' folders and the other entries — then, runs
 * being sound, they pass for every entry. Anything doubtful is written out
 * and checked entry by entry, which names the fault.
 */
function runsStayWhole(items: readonly TarItem[], options: TarWriteOptions): boolean {
  if ((options.order ?? 'sorted') !== 'given' || options.dotRoot) return false;
  const own = new Set<string>();
  const runs: { readonly folder: string; readonly spec: RunSpec }[] = [];
  for (const item of items) {
    if (isRun(item)) {
      const spec = runSpec(item.files);
      if (!isCanonicalEntryPath(item.folder) || !spec.sound || spec.paths.length === 0) return false;
      runs.push({ folder: collisionKey(item.folder), spec });
    } else {
      const key = collisionKey(item.path);
      if (!isCanonicalEntryPath(item.path) || own.has(key)) return false;
      own.add(key);
    }
  }
  for (const key of own) if (folderAboveIn(key, own)) return false;
  for (const [i, { folder, spec }] of runs.entries()) {
    if (runs.some((other, j) => j !== i && (other.folder === folder || other.folder.startsWith(`${folder}/`)))) return false;
    if (own.has(folder) || folderAboveIn(folder, own)) return false;
    for (const key of own) {
      if (!key.startsWith(`${folder}/`)) continue;
      const below = key.slice(folder.length + 1);
      if (spec.keys.has(below) || spec.folders.has(below) || folderAboveIn(below, spec.keys)) return false;
    }
  }
  return true;
}

type EntryKind = 'file' | 'directory';

// node-tar is loaded only for the names the fast path cannot write.
const load = createRequire(import.meta.url);

/** The header block(s) of one entry: {@link ustarHeader}'s, or node-tar's (a pax record first when the name needs one). */
export function entryHeader(path: string, size: number, mtime: Date, kind: EntryKind = 'file'): Buffer[] {
  const fast = ustarHeader(path, size, mtime, kind);
  if (fast) return [fast];
  const { Header, Pax } = load('tar') as typeof import('tar');
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

class LaidOutEntry {
  private made?: Buffer;
  private plainKnown?: boolean;

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

  /**
   * The header block(s): a pax record when the name needs one, then the
   * ustar header. Made when first asked for: a vendored library's headers
   * often never are (see {@link runPattern}).
   */
  get header(): Buffer {
    if (!this.made) {
      const headers = entryHeader(this.name, this.data.length, this.mtime, this.kind);
      this.made = headers.length === 1 ? headers[0]! : Buffer.concat(headers);
    }
    return this.made;
  }

  /** The header's length, known without making it when it is one plain block. */
  get headerLength(): number {
    return this.made?.length ?? (this.plain ? BLOCK : this.header.length);
  }

  /** Whether the header is one ustar block with the name in its first bytes (see {@link ustarHeader}). */
  get plain(): boolean {
    return (this.plainKnown ??= plainHeader(this.name, this.data.length, this.mtime));
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

/** A run of shared files kept whole (see {@link runsStayWhole}): its entries are laid out only when asked for. */
class LaidOutRun {
  readonly spec: RunSpec;

  constructor(
    readonly run: TarRun,
    private readonly mtime: Date,
  ) {
    this.spec = runSpec(run.files);
  }

  /** The entry of the run's `index`-th file. */
  member(index: number): LaidOutEntry {
    const entry = memberEntry(this.run, index);
    return new LaidOutEntry(entry, entry.path, entry.data, ZERO_BLOCK.subarray(0, padLength(entry.data.length)), this.mtime, 'file');
  }

  members(): LaidOutEntry[] {
    return this.run.files.files.map((_, index) => this.member(index));
  }
}

function layOut(items: readonly TarItem[], options: TarWriteOptions): (LaidOutEntry | LaidOutRun)[] {
  const mtime = options.mtime ?? FIXED_MTIME;
  const laid: (LaidOutEntry | LaidOutRun)[] = [];
  const add = (entry: TarEntry, name: string, data: Buffer, kind: EntryKind): void => {
    laid.push(new LaidOutEntry(entry, name, data, ZERO_BLOCK.subarray(0, padLength(data.length)), mtime, kind));
  };
  const folders = new Set<string>();
  const folder = (name: string): void => add({ path: name, data: NO_DATA }, name, NO_DATA, 'directory');
  if (options.dotRoot) folder('./');
  for (const entry of orderedItems(items, options)) {
    if (isRun(entry)) {
      laid.push(new LaidOutRun(entry, mtime));
      continue;
    }
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

/** The entries of `items`, laid out, runs written out entry by entry. */
function layOutEntries(items: readonly TarItem[], options: TarWriteOptions): LaidOutEntry[] {
  return layOut(expandRuns(items), options) as LaidOutEntry[];
}

/** An uncompressed tar stream of `items` (see the module comment for the guarantees). */
export function writeTar(items: readonly TarItem[], options: TarWriteOptions = {}): Buffer {
  const laid = layOutEntries(items, options);
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

/** Where a piece comes from: bytes to compress, a finished piece, or the i-th data piece of a shared run. */
type PieceJob =
  | { readonly kind: 'compress'; readonly raw: Buffer }
  | { readonly kind: 'ready'; readonly piece: DeflatePiece }
  | { readonly kind: 'shared'; readonly run: SharedRun; readonly index: number };

/** Consecutive members of one set of shared files: their data is compressed once per process and layout. */
interface SharedRun {
  readonly files: SharedFiles;
  /** {@link runLayout}: the run's pieces fit any archive where it is the same. */
  readonly layout: string;
  readonly items: readonly { readonly data: Buffer; readonly pad: Buffer; readonly headerLength: number }[];
  /** Its pieces, once looked up. */
  pieces?: (DeflatePiece | Promise<DeflatePiece>)[];
}

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

/**
 * The header pieces of a shared run's members, kept by set of files, layout,
 * time and the length of the folder the run sits in
 * (`<chart>/charts/<library>/`): the same library vendored into another chart
 * whose name is as long has the same headers but for that folder's name and
 * the checksum, so their pieces are these with the checksum's digits written
 * in (gzip-pieces.ts codeHeader). Each member's name below the folder is kept
 * and compared. Once every header after the first has its piece and the
 * run's data is compressed, the whole run is joined into one
 * {@link PiecePattern}: the next chart copies it and writes in its folder's
 * name and its checksums, without making the headers.
 */
interface KnownHeader {
  readonly coded: Required<CodedHeader>;
  readonly header: Buffer;
  readonly plain: boolean;
}

interface KnownRun {
  readonly tails: readonly string[];
  /**
   * By member index: the header piece, and the header it was coded for. A
   * Map, not an array filled by index: a member whose header cannot serve
   * (its previous header out of the deflate window) leaves a gap, which an
   * array would hold as a hole that `some`/`every` skip.
   */
  readonly templates: Map<number, KnownHeader>;
  /** The run after its first header as one pattern; null once it cannot be made (see {@link runPattern}). */
  pattern?: RunPattern | null;
}

interface RunPattern {
  readonly pattern: PiecePattern;
  /** The sum of the folder name's bytes in the headers the pattern holds. */
  readonly folderSum: number;
  /** By member: the header checksum the pattern holds (the first member's is not in it). */
  readonly checksums: readonly number[];
}

const runHeaderPieces = new WeakMap<SharedFiles, Map<string, KnownRun>>();

/** Where a run's header pieces are kept: its layout, its folder's length and the time; `whole`: the run is all its set's files, in order. */
const runShape = (layout: string, prefixLength: number, mtime: Date, whole: boolean): string => `${layout}\0${prefixLength}\0${mtime.getTime()}${whole ? '\0whole' : ''}`;

function knownRuns(files: SharedFiles): Map<string, KnownRun> {
  let byShape = runHeaderPieces.get(files);
  if (!byShape) runHeaderPieces.set(files, (byShape = new Map()));
  return byShape;
}

/** The header pieces kept for members written one by one under `folder`, and where to keep those coded now. */
function runHeaders(run: SharedRun, folder: string, members: readonly LaidOutEntry[], mtime: Date): {
  readonly prefixLength: number;
  template(index: number): Required<CodedHeader> | undefined;
  learn(index: number, coded: CodedHeader, member: LaidOutEntry): void;
} {
  const prefixLength = folder.length + 1;
  const tails = members.map((m) => m.name.slice(prefixLength));
  const whole = members.length === run.files.files.length && members.every((m, i) => memberOf(m.entry)?.index === i);
  const byShape = knownRuns(run.files);
  const shape = runShape(run.layout, prefixLength, mtime, whole);
  let known = byShape.get(shape);
  if (!known || known.tails.some((tail, i) => tail !== tails[i])) byShape.set(shape, (known = { tails, templates: new Map() }));
  const usable = members.every((m) => m.headerLength === BLOCK && m.name.startsWith(`${folder}/`));
  const kept = known;
  return {
    prefixLength: usable ? prefixLength : Infinity,
    template: (index) => (usable ? kept.templates.get(index)?.coded : undefined),
    learn(index, coded, member) {
      if (usable && coded.checksumBit !== undefined) kept.templates.set(index, { coded: { piece: coded.piece, checksumBit: coded.checksumBit }, header: member.header, plain: member.plain });
    },
  };
}

const CHECKSUM_LENGTH = CHECKSUM_DIGITS.end - CHECKSUM_DIGITS.start;

/** A header checksum's six octal digits, as {@link octal} writes them: a block's sum is below 512 × 256 = 8^6. */
function writeChecksumDigits(target: Buffer, at: number, sum: number): void {
  for (let d = 0; d < CHECKSUM_LENGTH; d++) target[at + d] = 0x30 + ((sum >>> (3 * (CHECKSUM_LENGTH - 1 - d))) & 7);
}

/**
 * The run after its first header — its first data, then each later header and
 * its data — joined into a pattern whose varying places are the folder's
 * name in every header and each header's checksum digits. Undefined while a
 * piece is still missing (a header not coded yet, data still compressing);
 * null when the headers were not all plain, or were coded for different
 * folder names.
 */
function runPattern(files: SharedFiles, layout: string, known: KnownRun, prefixLength: number): RunPattern | null | undefined {
  const data = sharedRuns.get(files)?.get(layout);
  if (!data || data.some((piece) => piece instanceof Promise)) return undefined;
  // Every header after the first, by member index (templates[0] is the second member's).
  const templates: KnownHeader[] = [];
  for (let i = 1; i < data.length; i++) {
    const template = known.templates.get(i);
    if (!template) return undefined;
    templates.push(template);
  }
  if (templates.length === 0) return null;
  const folder = templates[0]!.header.subarray(0, prefixLength);
  const pieces: DeflatePiece[] = [data[0] as DeflatePiece];
  const folderPlaces: VaryingBytes[] = [];
  const digitGroups: VaryingGroup[] = [];
  const checksums: number[] = [0];
  let offset = pieces[0]!.length;
  let deflatedOffset = pieces[0]!.deflated.length;
  for (let i = 1; i < data.length; i++) {
    const { coded, header, plain } = templates[i - 1]!;
    if (!plain || header.compare(folder, 0, prefixLength, 0, prefixLength) !== 0) return null;
    folderPlaces.push({ offset, length: prefixLength });
    const digits = header.subarray(CHECKSUM_DIGITS.start, CHECKSUM_DIGITS.end);
    digitGroups.push({ places: [{ offset: offset + CHECKSUM_DIGITS.start, length: CHECKSUM_LENGTH, bit: deflatedOffset * 8 + coded.checksumBit }], original: digits });
    checksums.push(parseInt(digits.toString('latin1'), 8));
    const piece = data[i] as DeflatePiece;
    pieces.push(coded.piece, piece);
    offset += coded.piece.length + piece.length;
    deflatedOffset += coded.piece.deflated.length + piece.deflated.length;
  }
  let folderSum = 0;
  for (const byte of folder) folderSum += byte;
  return { pattern: PiecePattern.join(pieces, [{ places: folderPlaces, original: folder }, ...digitGroups]), folderSum, checksums };
}

/** Layouts of whole runs with one-block headers, by level: the layout {@link planPieces} gives such a run written entry by entry. */
const plainLayouts = new WeakMap<SharedFiles, Map<number, string>>();

function plainLayout(files: SharedFiles, level: number): string {
  let byLevel = plainLayouts.get(files);
  if (!byLevel) plainLayouts.set(files, (byLevel = new Map()));
  let layout = byLevel.get(level);
  if (layout === undefined) byLevel.set(level, (layout = runLayout(level, files.files.map((file) => [BLOCK, file.data.length]))));
  return layout;
}

/** Level, header and data lengths: a shared run's pieces fit any archive where these are the same. */
const runLayout = (level: number, lengths: readonly (readonly [header: number, data: number])[]): string => `${level}:${lengths.map(([header, data]) => `${header}/${data}`).join(',')}`;

/**
 * A whole run after its first header as one piece, from the pattern of an
 * earlier archive whose folder name was as long, or undefined when there is
 * none yet or the headers are not all plain (then the run is written entry by
 * entry). Every header being plain, each differs from the pattern's only in
 * the folder's name and so in its checksum: the checksum is the pattern's
 * less the old name's bytes plus the new name's.
 */
function patternedRun(laid: LaidOutRun, level: number, mtime: Date): DeflatePiece | undefined {
  const { run, spec } = laid;
  const prefixLength = run.folder.length + 1;
  // Every member's header is plain when the longest name is (the folder, then printable ASCII as long as the longest path) and so is the largest file.
  const longestName = `${run.folder}/${'x'.repeat(spec.longestPath)}`;
  const plain = spec.asciiPaths && spec.paths.length >= 2 && plainHeader(longestName, spec.largest, mtime);
  if (!plain) return undefined;
  const layout = plainLayout(run.files, level);
  const known = knownRuns(run.files).get(runShape(layout, prefixLength, mtime, true));
  if (!known) return undefined;
  if (known.pattern === undefined) known.pattern = runPattern(run.files, layout, known, prefixLength);
  if (!known.pattern) return undefined;
  const { pattern, folderSum, checksums } = known.pattern;
  // The folder's name, then each later header's six checksum digits.
  const values = Buffer.allocUnsafe(prefixLength + (spec.paths.length - 1) * CHECKSUM_LENGTH);
  values.write(`${run.folder}/`, 0, 'latin1');
  let sumChange = -folderSum;
  for (let i = 0; i < prefixLength; i++) sumChange += values[i]!;
  for (let i = 1, at = prefixLength; i < spec.paths.length; i++, at += CHECKSUM_LENGTH) writeChecksumDigits(values, at, checksums[i]! + sumChange);
  return pattern.fill(values);
}

interface PiecePlan {
  readonly jobs: readonly PieceJob[];
  /** With `reuse`: the key of each job's entry or group of entries. */
  readonly keys?: readonly string[];
}

/**
 * The .tgz of `items` as deflate pieces (see gzip-pieces.ts). Entries
 * compressed `inline` are compressed together, run by run; a `stored` entry
 * is kept as is; the data of a run of shared files is compressed once (see
 * {@link sharedData}), and each of its headers is a small piece coded against
 * the header before it, or the whole run after its first header is one
 * patterned piece ({@link patternedRun}). With `reuse`, each piece holds a
 * stored or large entry, or a group of small ones (see {@link endsGroup}),
 * and is taken from there when known. A piece is a function of its own bytes
 * (and of the shared run's), so the same entries give the same bytes however
 * many pieces were reused.
 */
function planPieces(items: readonly TarItem[], options: TarWriteOptions): PiecePlan {
  const jobs: PieceJob[] = [];
  const level = options.level ?? DEFAULT_LEVEL;
  const mtime = options.mtime ?? FIXED_MTIME;
  if (options.reuse) {
    const reuse = options.reuse;
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
      piece(members.length === 1 ? groupKeys[0]! : groupPieceKey(groupKeys), () => ({ kind: 'compress', raw: Buffer.concat(members.flatMap(({ header, data, pad }) => [header, data, pad])) }));
      group = [];
      groupKeys = [];
    };
    for (const laidOut of layOutEntries(items, options)) {
      const { entry, name, header, data, pad } = laidOut;
      const key = pieceKey(name, entry.sha256 ?? createHash('sha256').update(data).digest('hex'));
      if (entry.compression === 'stored' || data.length >= OWN_PIECE) {
        endGroup();
        piece(key, () => (entry.compression === 'stored' ? { kind: 'ready', piece: storedPiece([header, data, pad]) } : { kind: 'compress', raw: Buffer.concat([header, data, pad]) }));
        continue;
      }
      group.push(laidOut);
      groupKeys.push(key);
      if (endsGroup(name)) endGroup();
    }
    endGroup();
    jobs.push({ kind: 'ready', piece: headerPiece(END_OF_ARCHIVE) });
    keys.push('');
    return { jobs, keys };
  }
  const laid = layOut(items, options);
  let run: Buffer[] = [];
  let offset = 0;
  let previousHeader: { entry: LaidOutEntry; offset: number } | undefined;
  const endRun = (): void => {
    if (run.length > 0) jobs.push({ kind: 'compress', raw: run.length === 1 ? run[0]! : Buffer.concat(run) });
    run = [];
  };
  // Header pieces are coded against the header before them, wherever it lies.
  const codeNext = (header: Buffer, prefixLength?: number): CodedHeader =>
    codeHeader(header, previousHeader && { bytes: previousHeader.entry.header, distance: offset - previousHeader.offset }, prefixLength);
  const headerJob = (header: Buffer): PieceJob => ({ kind: 'ready', piece: codeNext(header).piece });
  const advance = (entry: LaidOutEntry): void => {
    previousHeader = { entry, offset };
    offset += entry.headerLength + entry.data.length + entry.pad.length;
  };
  /** Members of a run of shared files, written one by one. */
  const writeMembers = (members: readonly LaidOutEntry[], files: SharedFiles, folder: string): void => {
    const shared: SharedRun = {
      files,
      layout: runLayout(level, members.map((m) => [m.headerLength, m.data.length])),
      items: members.map((m) => ({ data: m.data, pad: m.pad, headerLength: m.headerLength })),
    };
    const coded = runHeaders(shared, folder, members, mtime);
    members.forEach((member, index) => {
      // The first member's header follows one of this archive's own: coded here every time.
      const like = index > 0 ? coded.template(index) : undefined;
      let piece: DeflatePiece;
      if (like) piece = headerPieceLike(like, member.header);
      else {
        const fresh = codeNext(member.header, coded.prefixLength);
        if (index > 0) coded.learn(index, fresh, member);
        piece = fresh.piece;
      }
      jobs.push({ kind: 'ready', piece }, { kind: 'shared', run: shared, index });
      advance(member);
    });
  };
  for (let i = 0; i < laid.length; ) {
    const laidOut = laid[i]!;
    if (laidOut instanceof LaidOutRun) {
      endRun();
      const whole = patternedRun(laidOut, level, mtime);
      if (whole) {
        const first = laidOut.member(0);
        jobs.push({ kind: 'ready', piece: codeNext(first.header, laidOut.run.folder.length + 1).piece }, { kind: 'ready', piece: whole });
        const last = laidOut.spec.paths.length - 1;
        const lastMember = laidOut.member(last);
        previousHeader = { entry: lastMember, offset: offset + laidOut.spec.plainLength - (BLOCK + lastMember.data.length + lastMember.pad.length) };
        offset += laidOut.spec.plainLength;
      } else writeMembers(laidOut.members(), laidOut.run.files, laidOut.run.folder);
      i++;
      continue;
    }
    const member = memberOf(laidOut.entry);
    if (!member) {
      if (laidOut.entry.compression === 'stored') {
        endRun();
        jobs.push(headerJob(laidOut.header), { kind: 'ready', piece: storedPiece([laidOut.data, laidOut.pad]) });
      } else run.push(laidOut.header, laidOut.data, laidOut.pad);
      advance(laidOut);
      i++;
      continue;
    }
    // Members written out entry by entry (the order sorted, or a doubt in the checks): consecutive ones of one run share.
    endRun();
    let end = i;
    const next = (j: number) => {
      const at = laid[j];
      return at instanceof LaidOutEntry ? memberOf(at.entry) : undefined;
    };
    while (end < laid.length && next(end)?.files === member.files && next(end)?.folder === member.folder) end++;
    writeMembers(laid.slice(i, end) as LaidOutEntry[], member.files, member.folder);
    i = end;
  }
  // After a shared run, the end marker is alone: the same piece in every archive.
  if (run.length === 0) jobs.push({ kind: 'ready', piece: endOfArchivePiece(level) });
  else {
    run.push(END_OF_ARCHIVE);
    endRun();
  }
  return { jobs };
}

/** The end marker compressed alone, by level. */
const endOfArchivePieces = new Map<number, DeflatePiece>();

function endOfArchivePiece(level: number): DeflatePiece {
  let piece = endOfArchivePieces.get(level);
  if (!piece) endOfArchivePieces.set(level, (piece = deflatePiece(END_OF_ARCHIVE, level)));
  return piece;
}

/**
 * The data pieces of a shared run, each with the run's earlier data as its
 * deflate dictionary, so a library's files compress against one another as
 * in one stream. The headers between them differ from archive to archive,
 * so in the dictionary they are a filler byte that occurs in none of the
 * data: no copy can then come from a header, and a piece is valid after any
 * header of the same length. Where every byte value occurs (binary data),
 * each piece is compressed on its own.
 */
function sharedData(run: SharedRun): { raws: Buffer[]; dictionaries: (Buffer | undefined)[] } {
  const raws = run.items.map((item) => (item.pad.length === 0 ? item.data : Buffer.concat([item.data, item.pad])));
  let filler = 0xff;
  while (filler > 0 && run.items.some((item) => item.data.includes(filler))) filler--;
  if (filler === 0) return { raws, dictionaries: raws.map(() => undefined) };
  const stream: Buffer[] = [];
  const starts: number[] = [];
  let at = 0;
  run.items.forEach((item, i) => {
    stream.push(Buffer.alloc(item.headerLength, filler), raws[i]!);
    at += item.headerLength;
    starts.push(at);
    at += raws[i]!.length;
  });
  const whole = Buffer.concat(stream);
  return { raws, dictionaries: starts.map((start) => whole.subarray(Math.max(0, start - WINDOW), start)) };
}

/** Shared runs by key and layout: a library chart's files are compressed once per process, whatever number of archives holds them. */
const sharedRuns = new WeakMap<SharedFiles, Map<string, (DeflatePiece | Promise<DeflatePiece>)[]>>();

function sharedPieces(run: SharedRun, compress: (raw: Buffer, dictionary: Buffer | undefined) => DeflatePiece | Promise<DeflatePiece>): (DeflatePiece | Promise<DeflatePiece>)[] {
  if (run.pieces) return run.pieces;
  let byLayout = sharedRuns.get(run.files);
  if (!byLayout) sharedRuns.set(run.files, (byLayout = new Map()));
  let pieces = byLayout.get(run.layout);
  if (!pieces) {
    const { raws, dictionaries } = sharedData(run);
    const made = raws.map((raw, i) => compress(raw, dictionaries[i]));
    made.forEach((piece, i) => {
      if (piece instanceof Promise) void piece.then((done) => (made[i] = done), () => byLayout.delete(run.layout));
    });
    byLayout.set(run.layout, (pieces = made));
  }
  run.pieces = pieces;
  return pieces;
}

function pieceSync(job: PieceJob, level: number): DeflatePiece {
  if (job.kind === 'ready') return job.piece;
  if (job.kind === 'compress') return deflatePiece(job.raw, level);
  const piece = sharedPieces(job.run, (raw, dictionary) => deflatePiece(raw, level, dictionary))[job.index]!;
  if (piece instanceof Promise) throw new Error('a shared run is still being compressed asynchronously');
  return piece;
}

/** Pieces up to this size are compressed on the main thread (a thread-pool round trip costs more); larger ones on libuv's pool, several at once. */
const INLINE_PIECE = 64 * 1024;
const deflateRawAsync = promisify(deflateRaw);

function compressAsync(raw: Buffer, level: number, dictionary?: Buffer): DeflatePiece | Promise<DeflatePiece> {
  if (raw.length <= INLINE_PIECE) return deflatePiece(raw, level, dictionary);
  // One large output chunk: zlib's default 16 KiB means a main-thread round trip per chunk.
  return deflateRawAsync(raw, { ...pieceOptions(level, dictionary), chunkSize: 1 << 20 }).then((deflated) => ({ deflated, crc: crc32(raw), length: raw.length }));
}

function pieceAsync(job: PieceJob, level: number): DeflatePiece | Promise<DeflatePiece> {
  if (job.kind === 'ready') return job.piece;
  if (job.kind === 'compress') return compressAsync(job.raw, level);
  return sharedPieces(job.run, (raw, dictionary) => compressAsync(raw, level, dictionary))[job.index]!;
}

/** A byte-reproducible `.tgz` of `entries`. */
export function writeTarGz(items: readonly TarItem[], options: TarWriteOptions = {}): Buffer {
  const level = options.level ?? DEFAULT_LEVEL;
  return joinGzip(planPieces(items, options).jobs.map((job) => pieceSync(job, level))).bytes;
}

export interface WrittenTarGz {
  readonly bytes: Buffer;
  /** With `reuse`: where each piece lies in `bytes`, by the key of its entry or group, for the next build. */
  readonly pieces: readonly PieceRecord[];
}

/** {@link writeTarGz}, large pieces compressed off the main thread, with the piece table when asked to reuse. */
export async function writeTarGzPieces(entries: readonly TarItem[], options: TarWriteOptions = {}): Promise<WrittenTarGz> {
  const level = options.level ?? DEFAULT_LEVEL;
  const plan = planPieces(entries, options);
  const pieces = await Promise.all(plan.jobs.map((job) => pieceAsync(job, level)));
  const joined = joinGzip(pieces);
  const records = (plan.keys ?? []).map((key, i) => ({ key, offset: joined.offsets[i]!, deflatedLength: pieces[i]!.deflated.length, crc: pieces[i]!.crc, length: pieces[i]!.length }));
  return { bytes: joined.bytes, pieces: records };
}

/** {@link writeTarGz}, large pieces compressed off the main thread. */
export async function writeTarGzAsync(entries: readonly TarItem[], options: TarWriteOptions = {}): Promise<Buffer> {
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
  entries: readonly TarItem[],
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
export async function tarGzInMemory(file: string, entries: readonly TarItem[], options: TarWriteOptions = {}): Promise<WrittenArchive> {
  const { bytes, pieces } = await writeTarGzPieces(entries, { label: file, ...options });
  return archive(file, bytes, pieces);
}

function archive(file: string, bytes: Buffer, pieces: readonly PieceRecord[]): WrittenArchive {
  return { file, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), bytes, pieces };
}
