/**
 * gzip files joined from separately compressed pieces, as pigz does: each
 * piece is raw deflate data that ends on a byte boundary without a final
 * block (zlib's sync flush), so pieces can be laid end to end; one empty
 * final block, the combined CRC-32 and the length close the member. A piece
 * compressed once — a library chart's file vendored into eighty charts, an
 * unchanged entry of the previous build — is copied, not compressed again.
 *
 * A piece refers back only to bytes its maker vouches for: none (valid
 * anywhere), a dictionary known to precede it, or — for {@link headerPiece}
 * — the previous tar header at a distance the caller states.
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

/** zlib options for a piece: a sync flush at its end, and the bytes before it as dictionary when it may copy from them. */
export function pieceOptions(level: number, dictionary?: Buffer): ZlibOptions {
  return { level, finishFlush: constants.Z_SYNC_FLUSH, ...(dictionary && dictionary.length > 0 ? { dictionary } : {}) };
}

/**
 * `raw` compressed by zlib, ended by a sync flush. With a dictionary (at most
 * {@link WINDOW} bytes), copies may reach back into it: the piece is then
 * valid only right after those same bytes.
 */
export function deflatePiece(raw: Buffer, level = DEFAULT_LEVEL, dictionary?: Buffer): DeflatePiece {
  return { deflated: deflateRawSync(raw, pieceOptions(level, dictionary)), crc: crc32(raw), length: raw.length };
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
    for (let left = size; left > 0; ) {
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

// --- Tar headers as fixed-Huffman blocks ---
//
// A chart archive's vendored library is mostly 512-byte tar headers between
// shared data pieces. zlib costs ~10 µs a call on something that small, and
// thousands are written per build; a header differs from the one before it
// only in a few fields (name tail, size, checksum), so it is coded here as
// copies of the previous header plus literals, with deflate's fixed codes.

const LENGTH_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
const MAX_MATCH = 258;
/** deflate's window: the farthest a copy may reach back. */
export const WINDOW = 32768;

/** Scratch space of the bit writer, reused: allocating a typed array per header costs more than coding it. */
let scratch = new Uint8Array(4096);

class BitWriter {
  private readonly bytes: Uint8Array;
  private length = 0;
  private pending = 0;
  private count = 0;

  constructor(capacity: number) {
    if (scratch.length < capacity) scratch = new Uint8Array(capacity);
    this.bytes = scratch;
  }

  /** `n` bits of `value`, least significant first (deflate's order; Huffman codes are stored pre-reversed). */
  put(value: number, n: number): void {
    this.pending |= value << this.count;
    this.count += n;
    while (this.count >= 8) {
      this.bytes[this.length++] = this.pending & 0xff;
      this.pending >>>= 8;
      this.count -= 8;
    }
  }

  /** Bits written so far. */
  get bits(): number {
    return this.length * 8 + this.count;
  }

  /** Pads to a byte boundary, appends `tail`, and returns the bytes. */
  finish(tail: Buffer): Buffer {
    if (this.count > 0) this.put(0, 8 - this.count);
    const out = Buffer.allocUnsafe(this.length + tail.length);
    out.set(this.bytes.subarray(0, this.length));
    tail.copy(out, this.length);
    return out;
  }
}

function reversed(code: number, n: number): number {
  let out = 0;
  for (let i = 0; i < n; i++) out |= ((code >>> i) & 1) << (n - 1 - i);
  return out;
}

/** deflate's fixed literal/length code, symbol → [bits reversed for writing, length]. */
const FIXED_LITERALS: readonly (readonly [number, number])[] = Array.from({ length: 288 }, (_, s) => {
  if (s < 144) return [reversed(0x30 + s, 8), 8] as const;
  if (s < 256) return [reversed(0x190 + s - 144, 9), 9] as const;
  if (s < 280) return [reversed(s - 256, 7), 7] as const;
  return [reversed(0xc0 + s - 280, 8), 8] as const;
});
const FIXED_DISTANCES = DIST_BASE.map((_, d) => reversed(d, 5));

function literalOrLength(out: BitWriter, symbol: number): void {
  const [code, bits] = FIXED_LITERALS[symbol]!;
  out.put(code, bits);
}

function copy(out: BitWriter, length: number, distance: number): void {
  let l = LENGTH_BASE.length - 1;
  while (LENGTH_BASE[l]! > length) l--;
  literalOrLength(out, 257 + l);
  out.put(length - LENGTH_BASE[l]!, LENGTH_EXTRA[l]!);
  let d = DIST_BASE.length - 1;
  while (DIST_BASE[d]! > distance) d--;
  out.put(FIXED_DISTANCES[d]!, 5);
  out.put(distance - DIST_BASE[d]!, DIST_EXTRA[d]!);
}

/** A ustar header's checksum digits (offset 148, six octal digits before " \0"): the bytes that differ between headers otherwise alike. */
export const CHECKSUM_DIGITS = { start: 148, end: 154 } as const;
const USTAR_BLOCK = 512;

/** A header piece and, when another header of the same shape can reuse it, where its checksum digits' codes lie (see {@link headerPieceLike}). */
export interface CodedHeader {
  readonly piece: DeflatePiece;
  readonly checksumBit?: number;
}

/**
 * `raw` (tar header blocks) as one fixed-Huffman block plus a sync flush.
 * `previous`, when given, is the previous header's bytes, `distance` bytes
 * before `raw` starts in the uncompressed stream (at most {@link WINDOW}):
 * runs equal to it are copied from there. Runs of one repeated byte (the
 * zero padding) are copied from one byte back.
 */
export function headerPiece(raw: Buffer, previous?: { readonly bytes: Buffer; readonly distance: number }): DeflatePiece {
  return codeHeader(raw, previous).piece;
}

/**
 * {@link headerPiece}, telling where the checksum digits' codes lie when the
 * coding depends on nothing else that differs between two headers of the
 * same files under another folder name of the same length: a single ustar
 * block whose first copy from the previous header covers `prefixLength`
 * bytes (the folder name). The checksum digits are always coded as
 * literals, 8 bits each, so another such header is this piece with its own
 * digits written in ({@link headerPieceLike}).
 */
export function codeHeader(raw: Buffer, previous?: { readonly bytes: Buffer; readonly distance: number }, prefixLength = Infinity): CodedHeader {
  // At most 9 bits a byte, plus block headers and the end-of-block code.
  const out = new BitWriter(Math.ceil((raw.length * 9) / 8) + 8);
  out.put(0b010, 3); // BFINAL 0, BTYPE 01 (fixed codes)
  const ref = previous && previous.distance <= WINDOW && previous.distance >= previous.bytes.length ? previous : undefined;
  const refEnd = ref ? Math.min(raw.length, ref.bytes.length) : 0;
  // In a plain ustar block the checksum digits are literals: no copy reaches into them.
  const digits = raw.length === USTAR_BLOCK ? CHECKSUM_DIGITS : undefined;
  let checksumBit: number | undefined;
  let reusable = false;
  let i = 0;
  while (i < raw.length) {
    if (digits && i === digits.start) {
      checksumBit = out.bits;
      for (; i < digits.end; i++) literalOrLength(out, raw[i]!);
      continue;
    }
    const limit = digits && i < digits.start ? digits.start : raw.length;
    const same = ref ? matchLength(raw, i, ref.bytes, i, Math.min(refEnd, limit, i + MAX_MATCH) - i) : 0;
    // A run of the byte before: the bytes from `i` equal those from `i - 1`.
    const repeat = i > 0 ? matchLength(raw, i, raw, i - 1, Math.min(limit, i + MAX_MATCH) - i) : 0;
    if (i === 0) reusable = same >= 3 && same >= prefixLength;
    if (same >= 3 && same >= repeat) {
      copy(out, same, ref!.distance);
      i += same;
    } else if (repeat >= 3) {
      copy(out, repeat, 1);
      i += repeat;
    } else {
      literalOrLength(out, raw[i]!);
      i++;
    }
  }
  literalOrLength(out, 256); // end of block
  out.put(0, 3); // an empty stored block (BFINAL 0, BTYPE 00) re-aligns to a byte, as a sync flush does
  const piece = { deflated: out.finish(SYNC_MARKER), crc: crc32(raw), length: raw.length };
  return reusable && checksumBit !== undefined ? { piece, checksumBit } : { piece };
}

/** How many bytes from `a[aStart]` equal those from `b[bStart]`, at most `max`: 32 at a time by the native comparison, then one by one. */
function matchLength(a: Buffer, aStart: number, b: Buffer, bStart: number, max: number): number {
  let n = 0;
  while (n + 32 <= max && a.compare(b, bStart + n, bStart + n + 32, aStart + n, aStart + n + 32) === 0) n += 32;
  while (n < max && a[aStart + n] === b[bStart + n]) n++;
  return n;
}

/**
 * The header piece of `raw` made from `coded`, the piece of a header alike
 * but for its folder name (of the same length) and so its checksum: a copy
 * with `raw`'s checksum digits coded in (each digit's fixed literal code is
 * 8 bits, so nothing else moves).
 */
export function headerPieceLike(coded: Required<CodedHeader>, raw: Buffer): DeflatePiece {
  const deflated = Buffer.from(coded.piece.deflated);
  writeLiterals(deflated, coded.checksumBit, raw.subarray(CHECKSUM_DIGITS.start, CHECKSUM_DIGITS.end));
  return { deflated, crc: crc32(raw), length: raw.length };
}

/** Writes `length` bytes of `bytes` from `start` as fixed-Huffman literals over the 8-bit literal codes at `bit` of `deflated` (bytes below 144 only: their codes are 8 bits). */
function writeLiterals(deflated: Buffer, bit: number, bytes: Uint8Array, start = 0, length = bytes.length): void {
  for (let d = 0; d < length; d++) {
    const [code, bits] = FIXED_LITERALS[bytes[start + d]!]!;
    if (bits !== 8) throw new Error(`byte ${bytes[start + d]} has no 8-bit literal code`);
    // The code's 8 bits, least significant first from `at`: the top of one byte and the bottom of the next.
    const at = bit + d * 8;
    const byte = at >>> 3;
    const shift = at & 7;
    const low = 0xff << shift;
    deflated[byte] = (deflated[byte]! & ~low) | ((code << shift) & low & 0xff);
    if (shift > 0) deflated[byte + 1] = (deflated[byte + 1]! & ~(0xff >>> (8 - shift))) | (code >>> (8 - shift));
  }
}

// --- Joined pieces, used again with a few bytes changed ---

/** Places in a pattern's data: `length` bytes at `offset`; `bit`, when the deflate data codes them as 8-bit literals there (else it copies them from elsewhere and stays as it is). */
export interface VaryingBytes {
  readonly offset: number;
  readonly length: number;
  readonly bit?: number;
}

/** Places that take the same bytes in each use, and the bytes they hold in the pieces the pattern was joined from. */
export interface VaryingGroup {
  readonly places: readonly VaryingBytes[];
  readonly original: Buffer;
}

/** CRC-32's table for one byte (zlib's, reflected). */
const CRC_TABLE = Int32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
  return c;
});

/** The CRC register after `length` bytes of `bytes` from `start`, from zero, unconditioned: linear in the bytes, unlike CRC-32 itself. */
function crcRegister(bytes: Uint8Array, start = 0, length = bytes.length): number {
  let r = 0;
  for (let i = start; i < start + length; i++) r = CRC_TABLE[(r ^ bytes[i]!) & 0xff]! ^ (r >>> 8);
  return r >>> 0;
}

/**
 * Pieces joined once and used again wherever their data differs only in
 * some places (a vendored library's run of headers and files, in a chart
 * whose name is as long): each use copies the deflate data, writes its
 * bytes over the places coded as literals, and gets its CRC-32 from the
 * pattern's without reading the data again. CRC-32 is affine in the data,
 * so changing bytes at a place changes it by their CRC register shifted past
 * the bytes after the place: one multiplication a group of places, however
 * many places it has.
 */
export class PiecePattern {
  private constructor(
    private readonly deflated: Buffer,
    private readonly length: number,
    /** The CRC-32 the data would have with every place zero. */
    private readonly zeroCrc: number,
    private readonly groups: readonly { readonly length: number; readonly shift: number; readonly bits: readonly number[] }[],
  ) {}

  static join(pieces: readonly DeflatePiece[], groups: readonly VaryingGroup[]): PiecePattern {
    const deflated = Buffer.concat(pieces.map((piece) => piece.deflated));
    let crc = 0;
    let length = 0;
    for (const piece of pieces) {
      crc = length === 0 ? piece.crc : crc32Combine(crc, piece.crc, piece.length);
      length += piece.length;
    }
    // Each place's shift, from the last place back: one multiplication a place, by the gap to the place after it.
    const ends = groups.flatMap(({ places, original }, group) =>
      places.map((place) => {
        if (place.length !== original.length || place.offset < 0 || place.offset + place.length > length) throw new Error('a varying place lies outside the pattern or has another length than its bytes');
        return { end: place.offset + place.length, group };
      }),
    );
    ends.sort((a, b) => b.end - a.end);
    const shifts = groups.map(() => 0);
    let after = length;
    let operator = ONE;
    for (const { end, group } of ends) {
      const gap = cachedShiftOperator(after - end);
      operator = multModP(gap, operator);
      after = end;
      shifts[group] ^= operator;
    }
    const shaped = groups.map(({ places, original }, group) => ({
      length: original.length,
      shift: shifts[group]! >>> 0,
      bits: places.flatMap((place) => (place.bit === undefined ? [] : [place.bit])),
    }));
    let zeroCrc = crc;
    shaped.forEach((group, i) => (zeroCrc ^= multModP(group.shift, crcRegister(groups[i]!.original))));
    return new PiecePattern(deflated, length, zeroCrc >>> 0, shaped);
  }

  /** How many bytes {@link fill} takes: every group's, one after another. */
  get valuesLength(): number {
    return this.groups.reduce((sum, group) => sum + group.length, 0);
  }

  /** The piece with each group's bytes in its places: `values` holds them one group after another, in the groups' order. */
  fill(values: Uint8Array): DeflatePiece {
    if (values.length !== this.valuesLength) throw new Error(`a pattern of ${this.valuesLength} varying bytes given ${values.length}`);
    const deflated = Buffer.from(this.deflated);
    let crc = this.zeroCrc;
    let at = 0;
    for (const group of this.groups) {
      crc ^= multModP(group.shift, crcRegister(values, at, group.length));
      for (const bit of group.bits) writeLiterals(deflated, bit, values, at, group.length);
      at += group.length;
    }
    return { deflated, crc: crc >>> 0, length: this.length };
  }
}

/** LEN 0, NLEN 0xffff: the body of the empty stored block that ends a sync flush. */
const SYNC_MARKER = Buffer.from([0x00, 0x00, 0xff, 0xff]);
