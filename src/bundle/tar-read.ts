/**
 * Reading tar.gz files that may be hostile. The whole archive is decompressed
 * (under a size cap) and every header is checked before a single byte is
 * written anywhere: only regular files and directories with relative names
 * that stay inside the target are accepted.
 *
 * The tar parser is ours rather than node-tar's streaming Parser on purpose:
 * the checks need every header's raw fields (type flag, pax records, GNU long
 * names, directory sizes) in one synchronous pass, and a refusal must be
 * total, not a warning event after some entries were already handed out.
 */
import { lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { FlotillaError } from '../diagnostics/index.js';
import { UnsafeArchiveError } from './errors.js';
import { checkEntryPath, collisionKey } from './paths.js';

export interface ArchiveLimits {
  /** Largest decompressed (tar) size accepted, in bytes. Default 1 GiB. */
  readonly maxBytes?: number;
  /** Most entries (files and directories) accepted. Default 20,000. */
  readonly maxEntries?: number;
}

export interface ReadArchiveOptions extends ArchiveLimits {
  /** Names the archive in errors when the source is a buffer. */
  readonly label?: string;
}

export const DEFAULT_ARCHIVE_LIMITS: Required<ArchiveLimits> = {
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

function isZeroBlock(block: Buffer): boolean {
  for (const byte of block) if (byte !== 0) return false;
  return true;
}

function cString(buf: Buffer): string {
  const end = buf.indexOf(0);
  return buf.subarray(0, end === -1 ? buf.length : end).toString('utf8');
}

/** A numeric header field: NUL/space-terminated octal, or GNU base-256 when the high bit is set. */
function readNumber(buf: Buffer): number | undefined {
  if (buf[0]! & 0x80) {
    if (buf[0] === 0xff) return undefined; // negative
    let value = buf[0]! & 0x7f;
    for (let i = 1; i < buf.length; i++) {
      value = value * 256 + buf[i]!;
      if (!Number.isSafeInteger(value)) return undefined;
    }
    return value;
  }
  const text = buf.toString('latin1').replace(/[\0 ]+$/, '').replace(/^[ ]+/, '').replace(/\0.*$/s, '');
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) return undefined;
  return parseInt(text, 8);
}

function checksumMatches(block: Buffer): boolean {
  const stored = readNumber(block.subarray(148, 156));
  if (stored === undefined) return false;
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const byte = i >= 148 && i < 156 ? 0x20 : block[i]!;
    unsigned += byte;
    signed += byte > 127 ? byte - 256 : byte;
  }
  // Some old tars summed signed bytes; both are accepted by GNU tar.
  return stored === unsigned || stored === signed;
}

/** pax extended header records: `<len> <key>=<value>\n`, strictly. */
function parsePax(data: Buffer): Map<string, string> | undefined {
  const records = new Map<string, string>();
  let off = 0;
  while (off < data.length) {
    if (data[off] === 0) break; // NUL padding after the last record
    const space = data.indexOf(0x20, off);
    if (space === -1) return undefined;
    const lengthText = data.subarray(off, space).toString('latin1');
    if (!/^[1-9][0-9]*$/.test(lengthText)) return undefined;
    const length = Number(lengthText);
    const end = off + length;
    if (end > data.length || data[end - 1] !== 0x0a) return undefined;
    const record = data.subarray(space + 1, end - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq <= 0) return undefined;
    records.set(record.slice(0, eq), record.slice(eq + 1));
    off = end;
  }
  return records;
}

function sourceLabel(source: ArchiveSource, options: ReadArchiveOptions): string {
  return options.label ?? (typeof source === 'string' ? source : 'archive');
}

/** Decompresses with a hard cap so a gzip bomb fails fast instead of exhausting memory. */
function gunzipCapped(bytes: Buffer, label: string, maxBytes: number): Buffer {
  if (bytes.length < 18 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) {
    throw new UnsafeArchiveError(label, 'not-gzip', 'not a gzip file (a .tgz / .tar.gz is required)');
  }
  if (bytes[2] !== 8) throw new UnsafeArchiveError(label, 'bad-gzip', 'unknown gzip compression method');
  try {
    return gunzipSync(bytes, { maxOutputLength: maxBytes });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
      throw new UnsafeArchiveError(label, 'too-large', `decompressed size exceeds the limit of ${maxBytes} bytes`);
    }
    if (code === 'Z_BUF_ERROR') throw new UnsafeArchiveError(label, 'truncated', 'gzip stream is truncated');
    throw new UnsafeArchiveError(label, 'bad-gzip', `corrupt gzip stream (${(error as Error).message})`);
  }
}

/**
 * Parses an uncompressed tar stream, refusing anything unsafe. Returns files
 * and directories in archive order.
 */
export function parseTarSafely(tar: Buffer, label: string, limits: ArchiveLimits = {}): ArchiveEntry[] {
  const maxEntries = limits.maxEntries ?? DEFAULT_ARCHIVE_LIMITS.maxEntries;
  const maxBytes = limits.maxBytes ?? DEFAULT_ARCHIVE_LIMITS.maxBytes;
  if (tar.length > maxBytes) throw new UnsafeArchiveError(label, 'too-large', `size exceeds the limit of ${maxBytes} bytes`);
  const entries: ArchiveEntry[] = [];
  const seen = new Map<string, ArchiveEntry>();
  let pax: Map<string, string> | undefined;
  let longName: string | undefined;
  let longLink: string | undefined;
  let off = 0;

  for (;;) {
    if (off + BLOCK > tar.length) {
      throw new UnsafeArchiveError(label, 'truncated', 'archive ends without the end-of-archive marker (truncated?)');
    }
    const block = tar.subarray(off, off + BLOCK);
    if (isZeroBlock(block)) {
      if (pax || longName !== undefined || longLink !== undefined) {
        throw new UnsafeArchiveError(label, 'bad-header', 'extended header not followed by an entry');
      }
      break; // end of archive; what follows (normally zero padding) is not read by any tar
    }
    if (!checksumMatches(block)) {
      throw new UnsafeArchiveError(label, 'bad-header', `header checksum mismatch at offset ${off} (not a tar archive, or corrupt)`);
    }
    const flag = block[156] === 0 ? '0' : String.fromCharCode(block[156]!);
    const isGnu = block.subarray(257, 265).toString('latin1') === 'ustar  \0';
    const isUstar = block.subarray(257, 263).toString('latin1') === 'ustar\0';
    let name = cString(block.subarray(0, 100));
    if (isUstar && !isGnu) {
      const prefix = cString(block.subarray(345, 500));
      if (prefix !== '') name = `${prefix}/${name}`;
    }
    const headerSize = readNumber(block.subarray(124, 136));
    if (headerSize === undefined) throw new UnsafeArchiveError(label, 'bad-header', `bad size field at offset ${off}`, name);
    const isMeta = flag === 'x' || flag === 'g' || flag === 'L' || flag === 'K';
    // A pending pax record describes the next real entry only (never another extension header).
    let size = headerSize;
    if (!isMeta && pax?.has('size')) {
      const paxSize = pax.get('size')!;
      if (!/^[0-9]+$/.test(paxSize)) throw new UnsafeArchiveError(label, 'bad-header', 'bad pax size record', name);
      size = Number(paxSize);
    }
    const dataStart = off + BLOCK;
    const dataEnd = dataStart + size;
    if (dataEnd > tar.length || !Number.isSafeInteger(dataEnd)) {
      throw new UnsafeArchiveError(label, size > maxBytes ? 'too-large' : 'truncated', `entry data runs past the end of the archive (needs ${size} bytes)`, pax?.get('path') ?? longName ?? name);
    }
    const data = tar.subarray(dataStart, dataEnd);
    off = dataStart + Math.ceil(size / BLOCK) * BLOCK;

    if (isMeta) {
      if (flag === 'L') longName = cString(data);
      else if (flag === 'K') longLink = cString(data);
      else {
        const records = parsePax(data);
        if (!records) throw new UnsafeArchiveError(label, 'bad-header', `malformed pax header at offset ${off}`, name);
        if (flag === 'x') pax = new Map([...(pax ?? []), ...records]);
        else if (records.has('path') || records.has('linkpath') || records.has('size')) {
          // A global path/size would silently rename or resize every later entry; tar implementations disagree on it.
          throw new UnsafeArchiveError(label, 'bad-header', 'global pax header sets path, linkpath or size');
        }
      }
      continue;
    }

    const rawPath = pax?.get('path') ?? longName ?? name;
    const linkPath = pax?.get('linkpath') ?? longLink ?? cString(block.subarray(157, 257));
    pax = undefined;
    longName = undefined;
    longLink = undefined;

    if (entries.length + 1 > maxEntries) {
      throw new UnsafeArchiveError(label, 'too-many-entries', `more than ${maxEntries} entries`);
    }
    let type: ArchiveEntry['type'];
    switch (flag) {
      case '0':
      case '7':
        type = rawPath.endsWith('/') && size === 0 ? 'directory' : 'file'; // old tars wrote dirs as files with a trailing slash
        break;
      case '5':
        if (size !== 0) throw new UnsafeArchiveError(label, 'bad-header', 'directory entry has a size', rawPath);
        type = 'directory';
        break;
      case '1':
        throw new UnsafeArchiveError(label, 'hardlink', `hard link (to ${JSON.stringify(linkPath)}) is not allowed`, rawPath);
      case '2':
        throw new UnsafeArchiveError(label, 'symlink', `symbolic link (to ${JSON.stringify(linkPath)}) is not allowed`, rawPath);
      case '3':
        throw new UnsafeArchiveError(label, 'device', 'character device is not allowed', rawPath);
      case '4':
        throw new UnsafeArchiveError(label, 'device', 'block device is not allowed', rawPath);
      case '6':
        throw new UnsafeArchiveError(label, 'fifo', 'FIFO (named pipe) is not allowed', rawPath);
      default:
        throw new UnsafeArchiveError(label, 'unsupported-entry', `unsupported entry type ${JSON.stringify(flag)}`, rawPath);
    }
    const checked = checkEntryPath(rawPath);
    if (!checked.ok) throw new UnsafeArchiveError(label, checked.problem, checked.reason, rawPath);
    if (checked.path === '') {
      if (type === 'file') throw new UnsafeArchiveError(label, 'bad-path', 'file entry has an empty name', rawPath);
      continue; // "./" – the extraction root itself
    }
    const entry: ArchiveEntry = { path: checked.path, rawPath, type, data: type === 'file' ? data : Buffer.alloc(0) };
    const key = collisionKey(checked.path);
    const previous = seen.get(key);
    if (previous) {
      const same = previous.rawPath === rawPath ? 'appears twice' : `is the same path as ${JSON.stringify(previous.rawPath)}`;
      throw new UnsafeArchiveError(label, 'duplicate', `duplicate entry: ${same}`, rawPath);
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
        throw new UnsafeArchiveError(label, 'path-conflict', `is a file but also the folder of ${JSON.stringify(entry.rawPath)}`, parent.rawPath);
      }
    }
  }
  return entries;
}

/** Every file and directory of a .tgz held in memory, checked (see {@link parseTarSafely}). */
export function readTarGzEntriesSync(bytes: Buffer, options: ReadArchiveOptions = {}): ArchiveEntry[] {
  const label = options.label ?? 'archive';
  const maxBytes = options.maxBytes ?? DEFAULT_ARCHIVE_LIMITS.maxBytes;
  return parseTarSafely(gunzipCapped(bytes, label, maxBytes), label, options);
}

/** The regular files of an in-memory .tgz by normalised path, in archive order. */
export function readTarGzSafelySync(bytes: Buffer, options: ReadArchiveOptions = {}): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const entry of readTarGzEntriesSync(bytes, options)) if (entry.type === 'file') files.set(entry.path, entry.data);
  return files;
}

async function loadSource(source: ArchiveSource): Promise<Buffer> {
  return typeof source === 'string' ? readFile(source) : source;
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
