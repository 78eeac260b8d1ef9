/**
 * The previous build's application tarball as a source of compressed
 * pieces. Each entry of the tarball is a deflate piece of its own
 * (bundle/tar-write.ts); the piece table written beside the cache says
 * where each lies. The next build copies the pieces of unchanged entries
 * instead of compressing them, and takes unchanged chart archives (stored,
 * not compressed) straight out of it, so nothing is kept twice on disk.
 *
 * A piece depends only on its entry's path and bytes (and zlib's version,
 * recorded), so a build that reuses pieces writes the same bytes as a cold
 * one. The table is trusted only while the tarball it describes still has
 * the recorded size and CRC-32; otherwise nothing is reused.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import { writeFileAtomic } from '../files/index.js';
import { pieceKey, type DeflatePiece, type PieceRecord, type PieceSource, type WrittenArchive } from '../bundle/index.js';

const FORMAT = 'flotilla-bundle-pieces/1';
const TABLE = 'bundle-pieces.json';

interface PieceTable {
  readonly format: string;
  /** Pieces from another zlib could differ from what this one writes: not reused. */
  readonly zlib: string;
  readonly file: string;
  readonly size: number;
  readonly crc: number;
  readonly pieces: readonly PieceRecord[];
}

const TAR_BLOCK = 512;
const STORED_BLOCK_HEADER = 5;

/** The bytes inside a piece of stored blocks (storedPiece's inverse); undefined when it is not one. */
function unstore(deflated: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  for (let at = 0; at < deflated.length; ) {
    if (deflated[at] !== 0 || at + STORED_BLOCK_HEADER > deflated.length) return undefined;
    const length = deflated.readUInt16LE(at + 1);
    if ((deflated.readUInt16LE(at + 3) ^ 0xffff) !== length) return undefined;
    parts.push(deflated.subarray(at + STORED_BLOCK_HEADER, at + STORED_BLOCK_HEADER + length));
    at += STORED_BLOCK_HEADER + length;
  }
  return Buffer.concat(parts);
}

export class BundleReuse implements PieceSource {
  private constructor(
    private readonly cacheDir: string,
    private readonly pieces: ReadonlyMap<string, DeflatePiece>,
  ) {}

  /** The pieces of the tarball last written with this cache, or none when it is gone or changed. */
  static open(cacheDir: string): BundleReuse {
    return new BundleReuse(cacheDir, readPieces(cacheDir));
  }

  get(key: string): DeflatePiece | undefined {
    return this.pieces.get(key);
  }

  /**
   * The file stored as entry `path` with this sha256 in the previous tarball
   * (a chart archive), read back from its stored piece.
   */
  storedFile(path: string, sha256: string): Buffer | undefined {
    const piece = this.pieces.get(pieceKey(path, sha256));
    const raw = piece && unstore(piece.deflated);
    // A plain ustar header (type '0', no pax record) and then the file.
    if (!raw || raw.length < TAR_BLOCK || raw[156] !== 0x30) return undefined;
    const size = parseInt(raw.toString('latin1', 124, 135), 8);
    return Number.isSafeInteger(size) && TAR_BLOCK + size <= raw.length ? raw.subarray(TAR_BLOCK, TAR_BLOCK + size) : undefined;
  }

  /** Records where the pieces of the tarball just written lie. */
  async save(written: WrittenArchive): Promise<void> {
    const table: PieceTable = { format: FORMAT, zlib: process.versions.zlib ?? '', file: resolve(written.file), size: written.size, crc: crc32(written.bytes), pieces: written.pieces };
    await mkdir(this.cacheDir, { recursive: true });
    await writeFileAtomic(join(this.cacheDir, TABLE), JSON.stringify(table));
  }
}

function readPieces(cacheDir: string): Map<string, DeflatePiece> {
  const pieces = new Map<string, DeflatePiece>();
  const tableFile = join(cacheDir, TABLE);
  if (!existsSync(tableFile)) return pieces;
  let table: PieceTable;
  try {
    table = JSON.parse(readFileSync(tableFile, 'utf8')) as PieceTable;
  } catch {
    return pieces;
  }
  if (table.format !== FORMAT || table.zlib !== process.versions.zlib || !existsSync(table.file)) return pieces;
  const bytes = readFileSync(table.file);
  if (bytes.length !== table.size || crc32(bytes) !== table.crc) return pieces;
  for (const record of table.pieces) {
    if (record.key === '' || record.offset + record.deflatedLength > bytes.length) continue;
    pieces.set(record.key, { deflated: bytes.subarray(record.offset, record.offset + record.deflatedLength), crc: record.crc, length: record.length });
  }
  return pieces;
}
