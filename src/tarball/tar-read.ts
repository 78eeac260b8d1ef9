/**
 * Reading tar.gz files that may be hostile. The whole archive is decompressed
 * (under a size cap) and every header is checked before a single byte is
 * written anywhere: only regular files and directories with relative names
 * that stay inside the target are accepted.
 *
 * What is accepted must also be what every other reader extracts: GNU tar,
 * Python's tarfile, node-tar and Go's archive/tar (Helm, Flux). So only plain
 * ustar, pax and GNU long-name headers pass, one extended header per entry,
 * and every construct the readers resolve differently is refused by name:
 * repeated extended headers, sparse records, a pax size that disagrees with
 * the header, global headers that change names, data after the end marker or
 * after the gzip stream, names that are not UTF-8 (docs/security.md).
 *
 * The tar parser is ours rather than node-tar's streaming Parser on purpose:
 * the checks need every header's raw fields (type flag, pax records, GNU long
 * names, directory sizes) in one synchronous pass, and a refusal must be
 * total, not a warning event after some entries were already handed out.
 */
import { lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { crc32, type ZlibOptions } from 'node:zlib';
import { InflateRaw } from 'minizlib';
import { FlotillaError } from '../diagnostics/index.js';
import { readInputFile } from '../files/index.js';
import { UnsafeArchiveError, type ArchiveProblem } from './errors.js';
import { checkEntryPath, collisionKey } from './paths.js';

export interface ArchiveLimits {
  /** Largest decompressed (tar) size accepted, in bytes. Default 1 GiB. */
  readonly maxBytes?: number;
  /** Most entries (files and directories) accepted. Default 20,000. */
  readonly maxEntries?: number;
  /** Shared with the archives read from inside this one: what they may decompress in total. */
  readonly budget?: DecompressionBudget;
}

const MIB = 1024 * 1024;

/**
 * How many bytes a read may still decompress, shared by an archive and every
 * archive inside it (a tarball's charts, their vendored subcharts), so that
 * a small bomb nested ten deep costs no more than one: memory stays bounded
 * in total, not per archive.
 */
export class DecompressionBudget {
  private left: number;
  constructor(readonly totalBytes: number) {
    this.left = totalBytes;
  }

  /** For an archive of `compressedBytes`: 100 times its size, at least 64 MiB, at most 1 GiB. */
  static forArchive(compressedBytes: number): DecompressionBudget {
    return new DecompressionBudget(Math.min(1024 * MIB, Math.max(64 * MIB, 100 * compressedBytes)));
  }

  get remaining(): number {
    return this.left;
  }

  spend(bytes: number): void {
    this.left = Math.max(0, this.left - bytes);
  }
}

export interface ReadArchiveOptions extends ArchiveLimits {
  /** Names the archive in errors when the source is a buffer. */
  readonly label?: string;
}

const DEFAULT_ARCHIVE_LIMITS: Required<Omit<ArchiveLimits, 'budget'>> = {
  maxBytes: 1024 * 1024 * 1024,
  maxEntries: 20_000,
};

export interface ArchiveEntry {
  /** Normalised relative path (`a/b`, no `.` or empty segments). */
  readonly path: string;
  /** The name exactly as the archive stores it. */
  readonly rawPath: string;
  readonly type: 'file' | 'directory';
  /** File contents; empty for directories. */
  readonly data: Buffer;
}

/** Where an archive comes from: its bytes, or a file path. */
export type ArchiveSource = Buffer | string;

const BLOCK = 512;
/** Largest pax extended header or GNU long name accepted: far beyond any real name, small enough to hold. */
const MAX_EXTENDED_HEADER = 64 * 1024;
/** Linux's limits (PATH_MAX, NAME_MAX): a longer name cannot be extracted by any tool. */
const MAX_NAME_BYTES = 4095;
const MAX_SEGMENT_BYTES = 255;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function isZero(buf: Buffer): boolean {
  for (const byte of buf) if (byte !== 0) return false;
  return true;
}

function untilNul(buf: Buffer): Buffer {
  const end = buf.indexOf(0);
  return buf.subarray(0, end === -1 ? buf.length : end);
}

/** Text that is not UTF-8 decodes differently in every reader (replacement characters, surrogate escapes, raw bytes). */
function decodeStrict(bytes: Buffer): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** For messages only: a name as well as it can be shown. */
function decodeLoose(bytes: Buffer): string {
  return untilNul(bytes).toString('utf8');
}

/**
 * A numeric header field, in the one spelling every reader parses alike:
 * octal digits after optional spaces, then only NUL/space padding; or GNU
 * base-256 marked by a leading 0x80. Python, Go and GNU tar part ways on
 * anything else (digits after a NUL, other high-bit bytes), so it is refused.
 */
function readNumber(buf: Buffer): number | undefined {
  if (buf[0] === 0x80) {
    let value = 0;
    for (let i = 1; i < buf.length; i++) {
      value = value * 256 + buf[i]!;
      if (!Number.isSafeInteger(value)) return undefined;
    }
    return value;
  }
  const match = /^ *([0-7]*)[ \0]*$/.exec(buf.toString('latin1'));
  if (!match) return undefined;
  const value = match[1] === '' ? 0 : parseInt(match[1]!, 8);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Numeric fields of a ustar/GNU header; all must parse (Go and Python refuse the archive, or stop reading it, when one does not). */
const NUMERIC_FIELDS: readonly (readonly [string, number, number])[] = [
  ['mode', 100, 8],
  ['uid', 108, 8],
  ['gid', 116, 8],
  ['size', 124, 12],
  ['mtime', 136, 12],
  ['devmajor', 329, 8],
  ['devminor', 337, 8],
];

/** Only the unsigned sum: node-tar does not accept the signed one some old tars wrote. */
function checksumOf(block: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  return sum;
}

interface Header {
  readonly flag: string;
  readonly size: number;
  /** The stored name (prefix/name for ustar), still bytes: only decoded when it is the entry's name. */
  readonly nameBytes: Buffer;
  readonly linkName: string;
}

function readHeader(block: Buffer, offset: number, refuse: Refuse): Header {
  if (readNumber(block.subarray(148, 156)) !== checksumOf(block)) {
    throw refuse('bad-header', `header checksum mismatch at offset ${offset} (not a tar archive, or corrupt)`);
  }
  const shown = decodeLoose(block.subarray(0, 100));
  const numbers = new Map<string, number>();
  for (const [field, start, width] of NUMERIC_FIELDS) {
    const value = readNumber(block.subarray(start, start + width));
    if (value === undefined) throw refuse('bad-header', `bad ${field} field in the header at offset ${offset}`, shown);
    numbers.set(field, value);
  }
  const magic = block.subarray(257, 265).toString('latin1');
  const ustar = magic === 'ustar\u000000';
  if (!ustar && magic !== 'ustar  \0') {
    throw refuse('bad-header', `not a ustar, pax or GNU tar header at offset ${offset} (pre-POSIX archives are not accepted)`, shown);
  }
  // ustar keeps 500–511 unused (star puts times there); GNU keeps 345–511 for incremental and sparse data, which Python reads as a name prefix.
  if (!isZero(block.subarray(ustar ? 500 : 345, BLOCK))) {
    throw refuse(
      'ambiguous',
      `header at offset ${offset} uses fields outside plain ${ustar ? 'ustar' : 'GNU'} (star, incremental or sparse data that readers interpret differently)`,
      shown,
    );
  }
  const name = untilNul(block.subarray(0, 100));
  const prefix = ustar ? untilNul(block.subarray(345, 500)) : Buffer.alloc(0);
  return {
    flag: block[156] === 0 ? '\0' : String.fromCharCode(block[156]!),
    size: numbers.get('size')!,
    nameBytes: prefix.length > 0 ? Buffer.concat([prefix, Buffer.from('/'), name]) : name,
    linkName: decodeLoose(block.subarray(157, 257)),
  };
}

/** pax records that only describe an entry (owner, times, xattrs): readers may ignore them without extracting anything different. */
const DESCRIPTIVE_PAX_KEYS = new Set([
  'mtime',
  'atime',
  'ctime',
  'uid',
  'gid',
  'uname',
  'gname',
  'comment',
  'SCHILY.dev',
  'SCHILY.ino',
  'SCHILY.nlink',
  'LIBARCHIVE.creationtime',
]);
const DESCRIPTIVE_PAX_PREFIXES = ['SCHILY.xattr.', 'LIBARCHIVE.xattr.'];
const PAX_VALUE: Readonly<Record<string, RegExp>> = {
  size: /^[0-9]{1,15}$/,
  mtime: /^-?[0-9]{1,15}(\.[0-9]{1,9})?$/,
  atime: /^-?[0-9]{1,15}(\.[0-9]{1,9})?$/,
  ctime: /^-?[0-9]{1,15}(\.[0-9]{1,9})?$/,
  'LIBARCHIVE.creationtime': /^-?[0-9]{1,15}(\.[0-9]{1,9})?$/,
  uid: /^[0-9]{1,15}$/,
  gid: /^[0-9]{1,15}$/,
  'SCHILY.dev': /^[0-9]{1,18}$/,
  'SCHILY.ino': /^[0-9]{1,18}$/,
  'SCHILY.nlink': /^[0-9]{1,18}$/,
};

/**
 * pax records `<length> <key>=<value>\n`, exactly filling the data: no
 * padding, no leading zeros, UTF-8, no newline inside a record, each key once, every key one whose
 * meaning all readers share. `path` and `size` are allowed only in a
 * per-entry header; GNU.sparse.* (which GNU tar alone applies, renaming and
 * resizing the entry), hdrcharset, linkpath and unknown keys are refused.
 */
function parsePax(data: Buffer, global: boolean, refuse: Refuse, shown: string): Map<string, string> {
  const records = new Map<string, string>();
  const what = global ? 'global pax header' : 'pax header';
  let off = 0;
  while (off < data.length) {
    const space = data.indexOf(0x20, off);
    const lengthText = space === -1 ? '' : data.subarray(off, space).toString('latin1');
    if (!/^[1-9][0-9]{0,7}$/.test(lengthText)) throw refuse('bad-header', `malformed ${what}: bad record length at byte ${off}`, shown);
    const end = off + Number(lengthText);
    if (end > data.length || data[end - 1] !== 0x0a)
      throw refuse('bad-header', `malformed ${what}: record at byte ${off} does not end where its length says`, shown);
    const body = data.subarray(space + 1, end - 1);
    const eq = body.indexOf(0x3d);
    const key = eq <= 0 ? undefined : decodeStrict(body.subarray(0, eq));
    const value = eq <= 0 ? undefined : decodeStrict(body.subarray(eq + 1));
    if (key === undefined || value === undefined) throw refuse('bad-header', `malformed ${what}: record at byte ${off} is not UTF-8 key=value`, shown);
    if (records.has(key)) throw refuse('ambiguous', `${what} sets "${key}" twice (readers disagree on which applies)`, shown);
    if (body.includes(0x0a)) {
      throw refuse(
        'ambiguous',
        `${what} record at byte ${off} holds a newline (node-tar splits pax records at newlines and reads another name or size)`,
        shown,
      );
    }
    const descriptive = DESCRIPTIVE_PAX_KEYS.has(key) || DESCRIPTIVE_PAX_PREFIXES.some((p) => key.startsWith(p));
    if (key.startsWith('GNU.sparse.')) {
      throw refuse(
        'ambiguous',
        `${what} has the sparse-file record "${key}" (GNU tar alone applies it, extracting another name or size than other readers)`,
        shown,
      );
    }
    if (!descriptive && (global || (key !== 'path' && key !== 'size'))) {
      const allowed = global
        ? 'a global header may only describe (times, owners, comment)'
        : 'only path, size, times, owners, comments and extended attributes are accepted';
      throw refuse('ambiguous', `${what} has the record "${key}" (${allowed}: readers may interpret others differently)`, shown);
    }
    if ((value === '' && key === 'path') || value.includes('\0') || (PAX_VALUE[key] && !PAX_VALUE[key].test(value))) {
      throw refuse('bad-header', `${what} has a bad value for "${key}": ${JSON.stringify(value.slice(0, 60))}`, shown);
    }
    records.set(key, value);
    off = end;
  }
  return records;
}

/** A GNU long name: the name, then NUL padding only. */
function parseLongName(data: Buffer, refuse: Refuse): string {
  const name = untilNul(data);
  if (!isZero(data.subarray(name.length))) throw refuse('ambiguous', 'GNU long name has bytes after its end', decodeLoose(name));
  const text = decodeStrict(name);
  if (text === undefined) throw refuse('bad-path', 'name is not valid UTF-8', decodeLoose(name));
  return text;
}

type Refuse = (problem: ArchiveProblem, reason: string, entry?: string) => UnsafeArchiveError;

/** An extended header waiting for the entry it describes. */
type Extension = { readonly kind: 'pax header'; readonly records: Map<string, string> } | { readonly kind: 'GNU long name'; readonly name: string };

const EXTENSION_NAME: Readonly<Record<string, string>> = { x: 'pax header', g: 'global pax header', L: 'GNU long name' };

/**
 * After the first zero block: a second one, then nothing but zeros. A lone
 * zero block followed by headers, or data after the marker, is read as more
 * entries by some readers (GNU tar -i, Go after one zero block) and ignored by others.
 */
function checkEndOfArchive(tar: Buffer, offset: number, refuse: Refuse): void {
  const second = offset + BLOCK;
  if (second + BLOCK > tar.length) throw refuse('truncated', 'the end-of-archive marker is one zero block instead of two');
  if (!isZero(tar.subarray(second, second + BLOCK))) {
    throw refuse('trailing-data', `a lone zero block at offset ${offset} is followed by more data (some readers take it as the end, others read on)`);
  }
  const rest = tar.subarray(second + BLOCK);
  if (!isZero(rest)) {
    const at = second + BLOCK + rest.findIndex((byte) => byte !== 0);
    throw refuse('trailing-data', `data after the end-of-archive marker, at offset ${at} (some readers would read it as more entries)`);
  }
}

/** Normalised name, or the reason it is refused (beyond {@link checkEntryPath}: lengths Linux cannot hold, backslashes). */
function checkName(rawPath: string, refuse: Refuse): string {
  const checked = checkEntryPath(rawPath);
  if (!checked.ok) throw refuse(checked.problem, checked.reason, rawPath);
  if (Buffer.byteLength(checked.path) > MAX_NAME_BYTES) throw refuse('bad-path', `name is longer than ${MAX_NAME_BYTES} bytes`, rawPath);
  if (checked.path.split('/').some((segment) => Buffer.byteLength(segment) > MAX_SEGMENT_BYTES)) {
    throw refuse('bad-path', `a path segment is longer than ${MAX_SEGMENT_BYTES} bytes`, rawPath);
  }
  return checked.path;
}

/**
 * Parses an uncompressed tar stream, refusing anything unsafe and anything
 * that other readers (GNU tar, Python's tarfile, Go's archive/tar, node-tar)
 * could read as different files: accepted are plain ustar, pax and GNU
 * long-name headers as tools write them, one extended header per entry.
 * Returns files and directories in archive order.
 */
export function parseTarSafely(tar: Buffer, label: string, limits: ArchiveLimits = {}): ArchiveEntry[] {
  const maxEntries = limits.maxEntries ?? DEFAULT_ARCHIVE_LIMITS.maxEntries;
  const maxBytes = limits.maxBytes ?? DEFAULT_ARCHIVE_LIMITS.maxBytes;
  const refuse: Refuse = (problem, reason, entry) => new UnsafeArchiveError(label, problem, reason, entry);
  if (tar.length > maxBytes) throw refuse('too-large', `size exceeds the limit of ${maxBytes} bytes`);
  const entries: ArchiveEntry[] = [];
  const seen = new Map<string, ArchiveEntry>();
  let pending: Extension | undefined;
  let off = 0;

  for (;;) {
    if (off + BLOCK > tar.length) throw refuse('truncated', 'archive ends without the end-of-archive marker (truncated?)');
    const block = tar.subarray(off, off + BLOCK);
    if (isZero(block)) {
      if (pending) throw refuse('bad-header', `${pending.kind} not followed by an entry`);
      checkEndOfArchive(tar, off, refuse);
      break;
    }
    const header = readHeader(block, off, refuse);
    const shown = decodeLoose(header.nameBytes);
    const dataStart = off + BLOCK;
    const dataEnd = dataStart + header.size;
    if (dataEnd > tar.length) {
      const entryName = pending?.kind === 'GNU long name' ? pending.name : (pending?.records.get('path') ?? shown);
      throw refuse(header.size > maxBytes ? 'too-large' : 'truncated', `entry data runs past the end of the archive (needs ${header.size} bytes)`, entryName);
    }
    const data = tar.subarray(dataStart, dataEnd);
    off = dataStart + Math.ceil(header.size / BLOCK) * BLOCK;

    const extension = EXTENSION_NAME[header.flag];
    if (extension !== undefined) {
      if (pending) throw refuse('ambiguous', `a ${extension} follows a ${pending.kind} for the same entry (readers disagree on which applies)`, shown);
      if (header.size > MAX_EXTENDED_HEADER) throw refuse('too-large', `${extension} is larger than ${MAX_EXTENDED_HEADER} bytes`, shown);
      if (header.flag === 'L') pending = { kind: 'GNU long name', name: parseLongName(data, refuse) };
      else if (header.flag === 'x') pending = { kind: 'pax header', records: parsePax(data, false, refuse, shown) };
      else parsePax(data, true, refuse, shown); // only descriptive records: nothing to apply
      continue;
    }

    let rawPath: string;
    if (pending?.kind === 'GNU long name') rawPath = pending.name;
    else if (pending?.records.has('path')) rawPath = pending.records.get('path')!;
    else {
      const decoded = decodeStrict(header.nameBytes);
      if (decoded === undefined) throw refuse('bad-path', 'name is not valid UTF-8', shown);
      rawPath = decoded;
    }
    const paxSize = pending?.kind === 'pax header' ? pending.records.get('size') : undefined;
    pending = undefined;
    if (paxSize !== undefined && Number(paxSize) !== header.size) {
      throw refuse('ambiguous', `pax size ${paxSize} disagrees with the header's size ${header.size} (readers differ on which one to trust)`, rawPath);
    }

    if (entries.length + 1 > maxEntries) throw refuse('too-many-entries', `more than ${maxEntries} entries`);
    let type: ArchiveEntry['type'];
    switch (header.flag) {
      case '0':
      case '\0':
        // Old tars wrote folders as files with a trailing slash; readers disagree on when that still holds
        // (Python judges an old-style entry by its header name even when a long name replaces it).
        if (rawPath.endsWith('/') || (header.flag === '\0' && header.nameBytes.at(-1) === 0x2f)) {
          throw refuse('ambiguous', 'a regular file named with a trailing slash (some readers make it a folder)', rawPath);
        }
        type = 'file';
        break;
      case '5':
        if (header.size !== 0) throw refuse('bad-header', 'directory entry has a size', rawPath);
        type = 'directory';
        break;
      case '1':
        throw refuse('hardlink', `hard link (to ${JSON.stringify(header.linkName)}) is not allowed`, rawPath);
      case '2':
        throw refuse('symlink', `symbolic link (to ${JSON.stringify(header.linkName)}) is not allowed`, rawPath);
      case '3':
        throw refuse('device', 'character device is not allowed', rawPath);
      case '4':
        throw refuse('device', 'block device is not allowed', rawPath);
      case '6':
        throw refuse('fifo', 'FIFO (named pipe) is not allowed', rawPath);
      default:
        throw refuse('unsupported-entry', `unsupported entry type ${JSON.stringify(header.flag)}`, rawPath);
    }
    const path = checkName(rawPath, refuse);
    if (path === '') {
      if (type === 'file') throw refuse('bad-path', 'file entry has an empty name', rawPath);
      continue; // "./" – the extraction root itself
    }
    const entry: ArchiveEntry = { path, rawPath, type, data: type === 'file' ? data : Buffer.alloc(0) };
    const key = collisionKey(path);
    const previous = seen.get(key);
    if (previous) {
      const same = previous.rawPath === rawPath ? 'appears twice' : `is the same path as ${JSON.stringify(previous.rawPath)}`;
      throw refuse('duplicate', `duplicate entry: ${same}`, rawPath);
    }
    seen.set(key, entry);
    entries.push(entry);
  }

  // A file must not also be the parent folder of another entry.
  for (const [key, entry] of seen) {
    const parts = key.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = seen.get(parts.slice(0, i).join('/'));
      if (parent && parent.type === 'file') {
        throw refuse('path-conflict', `is a file but also the folder of ${JSON.stringify(entry.rawPath)}`, parent.rawPath);
      }
    }
  }
  return entries;
}

function sourceLabel(source: ArchiveSource, options: ReadArchiveOptions): string {
  return options.label ?? (typeof source === 'string' ? source : 'archive');
}

const GZIP_FLAGS = { HCRC: 2, EXTRA: 4, NAME: 8, COMMENT: 16, RESERVED: 0xe0 } as const;

/**
 * Where the deflate data of a gzip member starts, past the optional header
 * fields. A header CRC (FHCRC) must match, as GNU tar and node-tar require:
 * a reader that skips it would read an archive they refuse.
 */
function gzipDataStart(bytes: Buffer, refuse: Refuse): number {
  const flags = bytes[3]!;
  if (flags & GZIP_FLAGS.RESERVED) throw refuse('bad-gzip', 'gzip header sets reserved flags');
  let off = 10;
  if (flags & GZIP_FLAGS.EXTRA) off += 2 + bytes.readUInt16LE(off);
  for (const flag of [GZIP_FLAGS.NAME, GZIP_FLAGS.COMMENT]) {
    if (!(flags & flag)) continue;
    const end = bytes.indexOf(0, off);
    if (end === -1) throw refuse('truncated', 'gzip header is truncated');
    off = end + 1;
  }
  if (flags & GZIP_FLAGS.HCRC) {
    if (off + 2 > bytes.length) throw refuse('truncated', 'gzip header is truncated');
    if (bytes.readUInt16LE(off) !== (crc32(bytes.subarray(0, off)) & 0xffff))
      throw refuse('bad-gzip', 'gzip header checksum (FHCRC) does not match the header');
    off += 2;
  }
  if (off >= bytes.length) throw refuse('truncated', 'gzip header is truncated');
  return off;
}

/** Compressed bytes handed to the inflater at a time: at most about 1,000 times that comes out of one step (deflate's largest ratio). */
const INFLATE_STEP = 16 * 1024;
/** Size of the inflater's output pieces (fewer, larger pieces: the per-piece cost dominates at zlib's 16 KiB). */
const INFLATE_PIECE = 1024 * 1024;
/** Decompressed bytes kept from the streaming pass; a larger archive is inflated a second time once the first pass found it within the limits. */
const KEPT_WHILE_STREAMING = 32 * MIB;

/**
 * Decompresses exactly one gzip member against the cap (the archive's limit,
 * and what the shared budget has left), streaming: the output is counted as
 * it comes and the read refused the moment it passes the cap, so a gzip bomb
 * costs a bounded amount of memory (KEPT_WHILE_STREAMING), not the cap. A
 * second member or trailing bytes are refused: gzip tools concatenate
 * members, others stop or fail.
 */
function gunzipCapped(bytes: Buffer, label: string, maxBytes: number, budget?: DecompressionBudget): Buffer {
  const refuse: Refuse = (problem, reason) => new UnsafeArchiveError(label, problem, reason);
  if (bytes.length < 18 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) throw refuse('not-gzip', 'not a gzip file (a .tgz / .tar.gz is required)');
  if (bytes[2] !== 8) throw refuse('bad-gzip', 'unknown gzip compression method');
  const start = gzipDataStart(bytes, refuse);
  const cap = Math.min(maxBytes, budget?.remaining ?? maxBytes);
  const tooLarge = (): UnsafeArchiveError =>
    cap < maxBytes && budget
      ? refuse('too-large', `decompressed size exceeds the ${budget.totalBytes} bytes the archive may expand to in total, the archives inside it included`)
      : refuse('too-large', `decompressed size exceeds the limit of ${maxBytes} bytes`);
  const inflated = inflateStreaming(bytes.subarray(start), cap, KEPT_WHILE_STREAMING);
  if (inflated.failure === 'too-large') throw tooLarge();
  if (inflated.failure === 'truncated') throw refuse('truncated', 'gzip stream is truncated');
  if (inflated.failure !== undefined) throw refuse('bad-gzip', `corrupt gzip stream (${inflated.failure})`);
  const trailer = start + inflated.consumed;
  if (trailer + 8 > bytes.length) throw refuse('truncated', 'gzip stream is truncated');
  if (bytes.readUInt32LE(trailer) !== inflated.crc || bytes.readUInt32LE(trailer + 4) !== inflated.length % 2 ** 32) {
    throw refuse('bad-gzip', 'corrupt gzip stream (checksum or length does not match the data)');
  }
  if (trailer + 8 !== bytes.length) {
    throw refuse('trailing-data', `${bytes.length - trailer - 8} bytes after the gzip stream (a second member or garbage, which readers treat differently)`);
  }
  // Within the cap and whole: kept from the streaming pass, or inflated again to its known size.
  const tar = inflated.kept ?? (inflateStreaming(bytes.subarray(start, trailer), inflated.length, inflated.length).kept as Buffer);
  budget?.spend(tar.length);
  return tar;
}

interface StreamedInflate {
  readonly failure?: 'too-large' | 'truncated' | string;
  /** Compressed bytes the deflate stream took. */
  readonly consumed: number;
  readonly length: number;
  readonly crc: number;
  /** The output, when it stayed within what was to be kept. */
  readonly kept?: Buffer;
}

/** One pass of raw inflation in small steps (node-tar's minizlib, synchronous): counted against `cap`, checksummed, kept while within `keepUpTo`. */
function inflateStreaming(deflated: Buffer, cap: number, keepUpTo: number): StreamedInflate {
  // Node's own options, which minizlib hands to its zlib object (its types omit them).
  const options: ZlibOptions = { chunkSize: INFLATE_PIECE };
  const inflater = new InflateRaw(options);
  let length = 0;
  let crc = 0;
  let kept: Buffer[] | undefined = [];
  let failure: string | undefined;
  inflater.on('data', (chunk: Buffer) => {
    length += chunk.length;
    if (length > cap) {
      failure = 'too-large';
      return;
    }
    crc = crc32(chunk, crc);
    if (kept && length <= keepUpTo) kept.push(chunk);
    else kept = undefined;
  });
  inflater.on('error', (error: unknown) => {
    const { code, message } = error as { code?: string; message?: string };
    failure ??= code === 'Z_BUF_ERROR' || /unexpected end/i.test(message ?? '') ? 'truncated' : (message ?? String(error));
  });
  let consumed = 0;
  for (let off = 0; off < deflated.length && failure === undefined; off += INFLATE_STEP) {
    inflater.write(deflated.subarray(off, off + INFLATE_STEP));
    // What this step's input the engine took (less than all of it in the step where the deflate stream ends).
    consumed += (inflater.handle as unknown as { bytesWritten: number } | undefined)?.bytesWritten ?? 0;
  }
  if (failure === undefined) inflater.end();
  else inflater.close();
  return { ...(failure !== undefined ? { failure } : {}), consumed, length, crc, ...(kept ? { kept: Buffer.concat(kept, length) } : {}) };
}

/** Every file and directory of a .tgz held in memory, checked (see {@link parseTarSafely}). */
export function readTarGzEntriesSync(bytes: Buffer, options: ReadArchiveOptions = {}): ArchiveEntry[] {
  const label = options.label ?? 'archive';
  const maxBytes = options.maxBytes ?? DEFAULT_ARCHIVE_LIMITS.maxBytes;
  return parseTarSafely(gunzipCapped(bytes, label, maxBytes, options.budget), label, options);
}

/** The regular files of an in-memory .tgz by normalised path, in archive order. */
export function readTarGzSafelySync(bytes: Buffer, options: ReadArchiveOptions = {}): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const entry of readTarGzEntriesSync(bytes, options)) if (entry.type === 'file') files.set(entry.path, entry.data);
  return files;
}

async function loadSource(source: ArchiveSource): Promise<Buffer> {
  return typeof source === 'string' ? readInputFile(source) : source;
}

/** The regular files of a .tgz (bytes or a file path) by normalised path, in archive order. */
export async function readTarGzSafely(source: ArchiveSource, options: ReadArchiveOptions = {}): Promise<Map<string, Buffer>> {
  return readTarGzSafelySync(await loadSource(source), { ...options, label: sourceLabel(source, options) });
}

export interface ExtractedArchive {
  readonly dir: string;
  /** Normalised paths of the files written, in archive order. */
  readonly files: readonly string[];
}

/**
 * Extracts a .tgz into `targetDir`, which must not exist or be an empty
 * folder (so nothing already there, such as a planted symlink, can redirect a
 * write). The archive is fully validated first; files are written 0644,
 * folders 0755, with O_EXCL so an existing path is never followed.
 */
export async function extractTarGzSafely(source: ArchiveSource, targetDir: string, options: ReadArchiveOptions = {}): Promise<ExtractedArchive> {
  const label = sourceLabel(source, options);
  const entries = readTarGzEntriesSync(await loadSource(source), { ...options, label });
  const root = resolve(targetDir);

  let created = false;
  const existing = await lstat(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (existing) {
    if (!existing.isDirectory()) throw new FlotillaError(`cannot extract ${label}: ${root} exists and is not a directory`);
    if ((await readdir(root)).length > 0) throw new FlotillaError(`cannot extract ${label}: ${root} is not empty`);
  } else {
    await mkdir(root, { recursive: true, mode: 0o755 });
    created = true;
  }

  const inside = (path: string): string => {
    const full = resolve(root, ...path.split('/'));
    // Belt and braces: validation already refused anything that could escape.
    if (!full.startsWith(root + sep)) throw new UnsafeArchiveError(label, 'parent-segment', 'path leaves the target folder', path);
    return full;
  };

  const files: string[] = [];
  try {
    for (const entry of entries) {
      const full = inside(entry.path);
      if (entry.type === 'directory') {
        await mkdir(full, { recursive: true, mode: 0o755 });
        continue;
      }
      await mkdir(join(full, '..'), { recursive: true, mode: 0o755 });
      await writeFile(full, entry.data, { flag: 'wx', mode: 0o644 });
      files.push(entry.path);
    }
  } catch (error) {
    // A write failed midway (disk full, permissions): leave the target as it was, absent or empty.
    if (created) await rm(root, { recursive: true, force: true });
    else for (const name of await readdir(root)) await rm(join(root, name), { recursive: true, force: true });
    throw error;
  }
  return { dir: root, files };
}
