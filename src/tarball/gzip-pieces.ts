/**
 * gzip files joined from separately compressed pieces, as pigz does: each
 * piece is raw deflate data that ends on a byte boundary without a final
 * block (zlib's sync flush), so pieces can be laid end to end; one empty
 * final block, the combined CRC-32 and the length close the member. A piece
 * refers back to no byte before it, so one compressed once — an unchanged
 * entry of the previous build — is copied, not compressed again.
 */
import { constants, crc32, deflateRawSync, type ZlibOptions } from 'node:zlib';

export interface DeflatePiece {
  /** Raw deflate blocks, none final, ending byte-aligned. */
  readonly deflated: Buffer;
  /** CRC-32 of the uncompressed bytes. */
  readonly crc: number;
  /** Length of the uncompressed bytes. */
  readonly length: number;
}

/** zlib's default, and Go's DefaultCompression that `helm package` uses; 9 buys little on text. */
export const DEFAULT_LEVEL = 6;

/** zlib options for a piece: a sync flush at its end. */
export function pieceOptions(level: number): ZlibOptions {
  return { level, finishFlush: constants.Z_SYNC_FLUSH };
}

/** `raw` compressed by zlib, ended by a sync flush. */
export function deflatePiece(raw: Buffer, level = DEFAULT_LEVEL): DeflatePiece {
  return { deflated: deflateRawSync(raw, pieceOptions(level)), crc: crc32(raw), length: raw.length };
}

const STORED_MAX = 0xffff;

/**
 * `raw` — or its parts, laid end to end — as stored (uncompressed) blocks:
 * for bytes that are compressed already, where deflate gains nothing. Given
 * in parts (a tar header, a chart archive, its padding), the bytes are
 * copied once, into the piece, rather than joined first.
 */
export function storedPiece(raw: Buffer | readonly Buffer[]): DeflatePiece {
  const parts = Buffer.isBuffer(raw) ? [raw] : raw;
  let length = 0;
  for (const part of parts) length += part.length;
  const blocks = Math.max(1, Math.ceil(length / STORED_MAX));
  const out = Buffer.allocUnsafe(length + 5 * blocks);
  let at = 0;
  let crc = 0;
  let part = 0;
  let inPart = 0;
  for (let b = 0; b < blocks; b++) {
    const size = Math.min(STORED_MAX, length - b * STORED_MAX);
    out[at] = 0; // BFINAL 0, BTYPE 00 (stored); the rest of the byte is padding
    out.writeUInt16LE(size, at + 1);
    out.writeUInt16LE(~size & 0xffff, at + 3);
    at += 5;
    for (let left = size; left > 0;) {
      const source = parts[part]!;
      const chunk = source.subarray(inPart, inPart + left);
      chunk.copy(out, at);
      crc = crc32(chunk, crc);
      at += chunk.length;
      left -= chunk.length;
      inPart += chunk.length;
      if (inPart === source.length) {
        part++;
        inPart = 0;
      }
    }
  }
  return { deflated: out, crc, length };
}

// --- CRC-32 of joined data (zlib's crc32_combine: multiplication modulo the CRC polynomial) ---

const POLY = 0xedb88320;

/** a·b modulo the CRC-32 polynomial (bit-reflected, as zlib's multmodp; 0 when a is, where zlib's would not end). */
function multModP(a: number, b: number): number {
  if (a === 0) return 0;
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** 1 (x^0) in this bit-reflected form: the shift past no bytes. */
const ONE = 0x80000000;

/** x^(2^k) modulo the polynomial, k = 0..31 (zlib's x2n_table). */
const X2N: number[] = (() => {
  const table = [1 << 30];
  for (let k = 1; k < 32; k++) table.push(multModP(table[k - 1]!, table[k - 1]!));
  return table;
})();

/** x^(8·bytes) modulo the polynomial: the operator that shifts a CRC past `bytes` zero bytes. */
function shiftOperator(bytes: number): number {
  let p = ONE;
  let k = 3;
  for (let n = bytes; n > 0; n = Math.floor(n / 2), k++) if (n % 2 === 1) p = multModP(X2N[k & 31]!, p);
  return p;
}

/**
 * Shift operators by length, kept: the same lengths come back thousands of
 * times a build (every tar header is 512 bytes, a vendored library's files
 * have the same sizes in every chart), and making one costs a dozen
 * multiplications where using it costs one.
 */
const shiftOperators = new Map<number, number>();
const SHIFT_OPERATORS_KEPT = 4096;

function cachedShiftOperator(bytes: number): number {
  let operator = shiftOperators.get(bytes);
  if (operator === undefined) {
    if (shiftOperators.size >= SHIFT_OPERATORS_KEPT) shiftOperators.clear();
    operator = shiftOperator(bytes);
    shiftOperators.set(bytes, operator);
  }
  return operator;
}

/** CRC-32 of A followed by B, from CRC(A), CRC(B) and B's length (zlib's crc32_combine). */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(cachedShiftOperator(lengthB), crcA) ^ crcB) >>> 0;
}

// --- The gzip member ---

/** mtime 0, no name, XFL 0, OS 3 (Unix): the same header on every platform. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03]);
/** An empty fixed-Huffman block with BFINAL set: what deflate(Z_FINISH) writes after a flush. */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);

export interface JoinedGzip {
  readonly bytes: Buffer;
  /** Where each piece's deflate data starts in `bytes`, in piece order. */
  readonly offsets: readonly number[];
}

/** One gzip member made of `pieces`, in order. */
export function joinGzip(pieces: readonly DeflatePiece[]): JoinedGzip {
  let size = GZIP_HEADER.length + FINAL_BLOCK.length + 8;
  for (const piece of pieces) size += piece.deflated.length;
  const out = Buffer.allocUnsafe(size);
  let at = GZIP_HEADER.copy(out, 0);
  let crc = 0;
  let length = 0;
  const offsets: number[] = [];
  for (const piece of pieces) {
    offsets.push(at);
    at += piece.deflated.copy(out, at);
    crc = length === 0 ? piece.crc : crc32Combine(crc, piece.crc, piece.length);
    length += piece.length;
  }
  at += FINAL_BLOCK.copy(out, at);
  out.writeUInt32LE(crc >>> 0, at);
  out.writeUInt32LE(length % 2 ** 32, at + 4);
  return { bytes: out, offsets };
}
