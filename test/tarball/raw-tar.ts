/**
 * Hand-made tar streams for hostile-archive tests: every header field is
 * under the test's control (type flags, link names, pax and GNU long-name
 * records, broken checksums), which no well-behaved writer would produce.
 */
import { crc32, gzipSync } from 'node:zlib';

export interface RawEntry {
  name: string;
  /** Name field bytes, when they must not be UTF-8 (overrides `name`). */
  nameBytes?: Buffer;
  /** Type flag character: '0' file, '1' hard link, '2' symlink, '3' char dev, '4' block dev, '5' dir, '6' FIFO, 'x' pax, 'g' global pax, 'L' GNU long name … */
  type?: string;
  data?: Buffer | string;
  linkname?: string;
  /** Size written in the header (defaults to the data length). */
  size?: number;
  prefix?: string;
  corruptChecksum?: boolean;
  /** Header magic: POSIX ustar (default), GNU's `ustar  \0`, or none (pre-POSIX v7). */
  magic?: 'ustar' | 'gnu' | 'v7';
  /** The signed byte sum some old tars wrote, instead of the unsigned one. */
  signedChecksum?: boolean;
  /** Raw header bytes written over the encoded fields (before the checksum is computed). */
  patches?: readonly { offset: number; bytes: Buffer }[];
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

export function rawHeader(entry: RawEntry): Buffer {
  const block = Buffer.alloc(512);
  const data = typeof entry.data === 'string' ? Buffer.from(entry.data) : (entry.data ?? Buffer.alloc(0));
  if (entry.nameBytes) entry.nameBytes.copy(block, 0, 0, 100);
  else block.write(entry.name, 0, 100, 'utf8');
  block.write(octal(0o644, 8), 100, 'latin1');
  block.write(octal(0, 8), 108, 'latin1');
  block.write(octal(0, 8), 116, 'latin1');
  block.write(octal(entry.size ?? data.length, 12), 124, 'latin1');
  block.write(octal(946684800, 12), 136, 'latin1');
  block.write(entry.type ?? '0', 156, 'latin1');
  if (entry.linkname) block.write(entry.linkname, 157, 100, 'utf8');
  const magic = entry.magic ?? 'ustar';
  if (magic !== 'v7') block.write(magic === 'ustar' ? 'ustar\u000000' : 'ustar  \0', 257, 'latin1');
  if (entry.prefix) block.write(entry.prefix, 345, 155, 'utf8');
  for (const patch of entry.patches ?? []) patch.bytes.copy(block, patch.offset);
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += entry.signedChecksum && byte > 127 ? byte - 256 : byte;
  if (entry.corruptChecksum) sum += 1;
  block.write(octal(sum, 7) + ' ', 148, 'latin1');
  return block;
}

function padded(data: Buffer): Buffer {
  const pad = (512 - (data.length % 512)) % 512;
  return Buffer.concat([data, Buffer.alloc(pad)]);
}

/** A pax record `<len> key=value\n`. */
export function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

export function rawTar(entries: RawEntry[], options: { endMarker?: boolean } = {}): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = typeof entry.data === 'string' ? Buffer.from(entry.data) : (entry.data ?? Buffer.alloc(0));
    parts.push(rawHeader(entry), padded(data));
  }
  if (options.endMarker !== false) parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

export function rawTarGz(entries: RawEntry[], options: { endMarker?: boolean } = {}): Buffer {
  return gzipSync(rawTar(entries, options));
}

/** How a gzip member's header is written: plain, or with a header CRC (FHCRC, RFC 1952) that is right or wrong. */
export type GzipHeader = 'plain' | 'header-crc' | 'wrong-header-crc';

/** `data` gzipped, its header written as `header` says (an original file name too, so the CRC covers a variable field). */
export function gzipWithHeader(data: Buffer, header: GzipHeader): Buffer {
  const plain = gzipSync(data);
  if (header === 'plain') return plain;
  const FHCRC = 2;
  const FNAME = 8;
  const head = Buffer.concat([plain.subarray(0, 10), Buffer.from('archive.tar\0', 'latin1')]);
  head[3] = head[3]! | FHCRC | FNAME;
  const crc = Buffer.alloc(2);
  crc.writeUInt16LE((crc32(head) & 0xffff) ^ (header === 'wrong-header-crc' ? 0x0100 : 0));
  return Buffer.concat([head, crc, plain.subarray(10)]);
}
