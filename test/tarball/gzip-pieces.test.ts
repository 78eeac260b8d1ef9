import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32Combine, deflatePiece, joinGzip, storedPiece } from '../../src/tarball/index.js';

/** Text like a library template: repetitive, so copies between files pay. */
const template = (i: number): string =>
  `{{- define "lib.snippet${i}" -}}\n${Array.from({ length: 40 }, (_, j) => `# option_${i}_${j}: {{ .Values.conf.value${j} | quote }}`).join('\n')}\n{{- end -}}\n`;

describe('deflate pieces', () => {
  it('combines CRC-32s as zlib does, for any split and length', () => {
    const data = randomBytes(200_000);
    for (const cut of [0, 1, 511, 512, 65_535, 65_536, 131_071, 200_000]) {
      const [a, b] = [data.subarray(0, cut), data.subarray(cut)];
      expect(crc32Combine(crc32(a), crc32(b), b.length)).toBe(crc32(data));
    }
    expect(crc32Combine(0x12345678, crc32(Buffer.alloc(0)), 0)).toBe(0x12345678);
  });

  it('stores bytes given in parts exactly as the same bytes given whole, across block boundaries', () => {
    const data = randomBytes(200_000);
    for (const cuts of [[], [512], [512, 65_535], [65_536, 65_537, 131_072], [0, 0, 199_999], [1, 70_000, 140_000]]) {
      const bounds = [0, ...cuts, data.length];
      const parts = bounds.slice(1).map((end, i) => data.subarray(bounds[i]!, end));
      const whole = storedPiece(data);
      const split = storedPiece(parts);
      expect(split.deflated.equals(whole.deflated)).toBe(true);
      expect([split.crc, split.length]).toEqual([crc32(data), data.length]);
    }
    expect(storedPiece([]).deflated.equals(storedPiece(Buffer.alloc(0)).deflated)).toBe(true);
  });

  it('joins zlib and stored pieces into one stream that gunzip and zlib decode', () => {
    const text = Buffer.from(template(1).repeat(30));
    const binary = randomBytes(150_000); // more than two stored blocks
    const pieces = [deflatePiece(text), storedPiece(binary), deflatePiece(Buffer.alloc(0)), deflatePiece(Buffer.alloc(1024))];
    const expected = Buffer.concat([text, binary, Buffer.alloc(1024)]);
    const { bytes } = joinGzip(pieces);
    expect(gunzipSync(bytes).equals(expected)).toBe(true);
    const finalBlock = Buffer.from([0x03, 0x00]);
    expect(inflateRawSync(Buffer.concat([...pieces.map((p) => p.deflated), finalBlock])).equals(expected)).toBe(true);
    execFileSync('gunzip', ['-t'], { input: bytes });
  });
});
