/**
 * The previous build's application tarball as a source of compressed
 * pieces. Each chart archive or large entry of the tarball is a deflate
 * piece of its own, the small entries are grouped a few to a piece
 * (bundle/tar-write.ts); the piece table written beside the cache says
 * where each lies. The next build copies the pieces whose entries are
 * unchanged instead of compressing them, and takes unchanged chart archives
 * (stored, not compressed) straight out of it, so nothing is kept twice on
 * disk.
 *
 * A piece depends only on its entries' paths and bytes (and zlib's version,
 * recorded), so a build that reuses pieces writes the same bytes as a cold
 * one. The table is a cache entry (src/cache: this user's, keyed by the
 * writer's inputs), and names the sha256 of the tarball it describes: the
 * tarball's bytes are hashed as they are read back, and anything else there
 * (another tarball, one edited) is not reused.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import type { CacheFolder } from '../cache/index.js';
import { pieceKey, tarEntryName, type DeflatePiece, type PieceRecord, type PieceSource, type TarWriteOptions, type WrittenArchive } from '../tarball/index.js';

const FORMAT = 'flotilla-bundle-pieces/3';
const TABLE = 'bundle-pieces.json';

interface PieceTable {
  readonly file: string;
  readonly size: number;
  /** Of the whole tarball: checked against the bytes read back before a piece of them is used. */
  readonly sha256: string;
  readonly pieces: readonly PieceRecord[];
}

const TAR_BLOCK = 512;
const STORED_BLOCK_HEADER = 5;

/** The bytes inside a piece of stored blocks (storedPiece's inverse); undefined when it is not one. */
function unstore(deflated: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  for (let at = 0; at < deflated.length;) {
    if (deflated[at] !== 0 || at + STORED_BLOCK_HEADER > deflated.length) return undefined;
    const length = deflated.readUInt16LE(at + 1);
    if ((deflated.readUInt16LE(at + 3) ^ 0xffff) !== length) return undefined;
    parts.push(deflated.subarray(at + STORED_BLOCK_HEADER, at + STORED_BLOCK_HEADER + length));
    at += STORED_BLOCK_HEADER + length;
  }
  return Buffer.concat(parts);
}

/** Files read back out of stored pieces, by piece key: `--watch` and the build server read the same ones build after build. */
const readBack = new Map<string, { readonly crc: number; readonly length: number; readonly file: Buffer }>();
/** Chart archives kept at most (a few hundred KB each at worst). */
const READ_BACK_KEPT = 512;

export class BundleReuse implements PieceSource {
  private constructor(
    private readonly cache: CacheFolder,
    private readonly options: TarWriteOptions,
    private readonly pieces: ReadonlyMap<string, DeflatePiece>,
  ) {}

  /**
   * The pieces of the tarball last written with this cache and these writer
   * options, or none when it is gone or changed. `lastWritten`, what this
   * process wrote last with them (`--watch`), is used as it is held in memory
   * instead of being read back and checked.
   */
  static open(cache: CacheFolder, options: TarWriteOptions, lastWritten?: WrittenArchive): BundleReuse {
    return new BundleReuse(cache, options, lastWritten ? piecesOf(lastWritten.bytes, lastWritten.pieces) : readPieces(cache, options));
  }

  get(key: string): DeflatePiece | undefined {
    return this.pieces.get(key);
  }

  /**
   * The file stored as entry `path` with this sha256 in the previous tarball
   * (a chart archive), read back from its stored piece.
   */
  storedFile(path: string, sha256: string): Buffer | undefined {
    const key = pieceKey(tarEntryName(path, this.options), sha256);
    const piece = this.pieces.get(key);
    if (!piece) return undefined;
    // The same piece (its key names the bytes) read back before, by a long-lived process's earlier build.
    const seen = readBack.get(key);
    if (seen && seen.crc === piece.crc && seen.length === piece.length) return seen.file;
    const raw = unstore(piece.deflated);
    // A plain ustar header (type '0', no pax record) and then the file, as recorded.
    if (!raw || raw.length !== piece.length || crc32(raw) !== piece.crc || raw.length < TAR_BLOCK || raw[156] !== 0x30) return undefined;
    const size = parseInt(raw.toString('latin1', 124, 135), 8);
    if (!Number.isSafeInteger(size) || TAR_BLOCK + size > raw.length) return undefined;
    const file = raw.subarray(TAR_BLOCK, TAR_BLOCK + size);
    if (readBack.size >= READ_BACK_KEPT) readBack.clear();
    readBack.set(key, { crc: piece.crc, length: piece.length, file });
    return file;
  }

  /** Records where the pieces of the tarball just written lie. */
  async save(written: WrittenArchive): Promise<void> {
    const table: PieceTable = { file: resolve(written.file), size: written.size, sha256: written.sha256, pieces: written.pieces };
    await this.cache.write(TABLE, 'bundle-pieces', tableInputs(this.options), JSON.stringify(table));
  }
}

/** A well-formed piece record; a torn or hand-edited table only costs compressing again. */
function isRecord(value: unknown): value is PieceRecord {
  const r = value as Partial<PieceRecord> | null;
  const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.key === 'string' &&
    count(r.offset) &&
    count(r.deflatedLength) &&
    count(r.length) &&
    count(r.crc) &&
    (r.crc as number) < 2 ** 32
  );
}

/**
 * What the pieces depend on besides their entries: the table's format, zlib
 * (another could compress otherwise) and the writer options (names, times,
 * level).
 */
function tableInputs(options: TarWriteOptions): string {
  return JSON.stringify([FORMAT, process.versions.zlib ?? '', options.dotRoot ?? false, options.level ?? null, options.mtime?.getTime() ?? null]);
}

function readPieces(cache: CacheFolder, options: TarWriteOptions): Map<string, DeflatePiece> {
  const pieces = new Map<string, DeflatePiece>();
  const content = cache.readSync(TABLE, 'bundle-pieces', tableInputs(options));
  if (!content) return pieces;
  let table: Partial<PieceTable> | null;
  let bytes: Buffer;
  try {
    table = JSON.parse(content.toString('utf8')) as Partial<PieceTable> | null;
    if (typeof table?.file !== 'string' || !Array.isArray(table.pieces)) return pieces;
    bytes = readFileSync(table.file);
  } catch {
    return pieces; // a tarball gone: nothing to reuse, never a failed build
  }
  // The table vouches for one tarball: what lies at its path now is hashed, and used only when it is that one.
  if (bytes.length !== table.size || createHash('sha256').update(bytes).digest('hex') !== table.sha256) {
    cache.ignored(TABLE, `${table.file} is not the tarball the piece table describes`);
    return pieces;
  }
  return piecesOf(bytes, table.pieces);
}

function piecesOf(bytes: Buffer, records: readonly unknown[]): Map<string, DeflatePiece> {
  const pieces = new Map<string, DeflatePiece>();
  for (const record of records) {
    if (!isRecord(record) || record.key === '' || record.offset + record.deflatedLength > bytes.length) continue;
    pieces.set(record.key, { deflated: bytes.subarray(record.offset, record.offset + record.deflatedLength), crc: record.crc, length: record.length });
  }
  return pieces;
}
