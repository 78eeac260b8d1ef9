import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import {
  codeHeader,
  crc32Combine,
  deflatePiece,
  headerPiece,
  headerPieceLike,
  joinGzip,
  PiecePattern,
  SharedFiles,
  storedPiece,
  writeTar,
  writeTarGz,
  writeTarGzAsync,
  type DeflatePiece,
  type TarEntry,
  type TarItem,
} from '../../src/bundle/index.js';

/** Text like a library template: repetitive, so copies between files pay. */
const template = (i: number): string => `{{- define "lib.snippet${i}" -}}\n${Array.from({ length: 40 }, (_, j) => `# option_${i}_${j}: {{ .Values.conf.value${j} | quote }}`).join('\n')}\n{{- end -}}\n`;

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

  it('joins zlib, stored and header pieces into one stream that gunzip and zlib decode', () => {
    const text = Buffer.from(template(1).repeat(30));
    const binary = randomBytes(150_000); // more than two stored blocks
    const header = writeTar([{ path: 'chart/templates/a.yaml', data: 'x' }]).subarray(0, 512);
    const next = writeTar([{ path: 'chart/templates/b.yaml', data: 'yy' }]).subarray(0, 512);
    const pieces = [deflatePiece(text), storedPiece(binary), headerPiece(header), headerPiece(next, { bytes: header, distance: 512 }), deflatePiece(Buffer.alloc(0)), headerPiece(Buffer.alloc(1024))];
    const expected = Buffer.concat([text, binary, header, next, Buffer.alloc(1024)]);
    const { bytes } = joinGzip(pieces);
    expect(gunzipSync(bytes).equals(expected)).toBe(true);
    const finalBlock = Buffer.from([0x03, 0x00]);
    expect(inflateRawSync(Buffer.concat([...pieces.map((p) => p.deflated), finalBlock])).equals(expected)).toBe(true);
    execFileSync('gunzip', ['-t'], { input: bytes });
    // a header coded against the one before it is a few bytes, not 512
    expect(pieces[3]!.deflated.length).toBeLessThan(40);
  });
});

describe('piece patterns', () => {
  // A run as a chart archive holds a library: data, then header pieces coded against the header before (their folder copied, their checksum digits literals), each followed by data.
  const folderLength = 'alpha/charts/lib/'.length;
  let data: Buffer[] = [];
  const padded = (d: Buffer) => Buffer.concat([d, Buffer.alloc((512 - (d.length % 512)) % 512)]);

  /** The headers of `folder`'s run (files named after `tail`), and the run after its first header, uncompressed. */
  function run(folder: string, tail: string) {
    const headers = data.map((d, i) => writeTar([{ path: `${folder}/charts/lib/${tail}${i}.tpl`, data: d }]).subarray(0, 512));
    const raw = Buffer.concat(data.flatMap((d, i) => (i === 0 ? [padded(d)] : [headers[i]!, padded(d)])));
    return { headers, raw, values: (h: Buffer[]) => Buffer.concat([h[1]!.subarray(0, folderLength), ...h.slice(1).map((one) => one.subarray(148, 154))]) };
  }

  it('give, for any folder name as long and any checksum digits, the bytes and CRC-32 of the data with them in place', () => {
    const alignments = new Set<number>();
    // Files of other sizes (copies from farther back) and other names move the checksum digits' codes to every bit alignment.
    for (const [size, tail] of [1, 2, 3, 4, 6, 8, 10, 12].flatMap((n) => ['f', 'file-', 'a-much-longer-file-name-'].map((t) => [n, t] as const))) {
      data = [template(1), template(2).repeat(size), template(3)].map((text) => Buffer.from(text));
      const { headers, raw, values } = run('alpha', tail);
      const pieces: DeflatePiece[] = [deflatePiece(padded(data[0]!))];
      const folderPlaces = [];
      const digitGroups = [];
      let offset = pieces[0]!.length;
      let deflated = pieces[0]!.deflated.length;
      for (let i = 1; i < data.length; i++) {
        const coded = codeHeader(headers[i]!, { bytes: headers[i - 1]!, distance: 512 + padded(data[i - 1]!).length }, folderLength);
        expect(coded.checksumBit).toBeDefined();
        alignments.add(coded.checksumBit! % 8);
        folderPlaces.push({ offset, length: folderLength });
        digitGroups.push({ places: [{ offset: offset + 148, length: 6, bit: deflated * 8 + coded.checksumBit! }], original: headers[i]!.subarray(148, 154) });
        const piece = deflatePiece(padded(data[i]!));
        pieces.push(coded.piece, piece);
        offset += 512 + piece.length;
        deflated += coded.piece.deflated.length + piece.deflated.length;
      }
      const pattern = PiecePattern.join(pieces, [{ places: folderPlaces, original: headers[1]!.subarray(0, folderLength) }, ...digitGroups]);
      // Its own values give back the pieces joined.
      const same = pattern.fill(values(headers));
      expect(same.crc).toBe(crc32(raw));
      expect(same.deflated.equals(Buffer.concat(pieces.map((p) => p.deflated)))).toBe(true);
      for (const folder of ['omega', 'zz-99', 'ALPHA', '.....', 'b0b1b']) {
        const other = run(folder, tail);
        const piece = pattern.fill(values(other.headers));
        expect([piece.crc, piece.length], folder).toEqual([crc32(other.raw), other.raw.length]);
        // Decoded after the first header of its own archive (the copies of the folder reach into it).
        const decoded = inflateRawSync(Buffer.concat([headerPiece(other.headers[0]!).deflated, piece.deflated, Buffer.from([3, 0])]));
        expect(decoded.equals(Buffer.concat([other.headers[0]!, other.raw])), `${folder} ${tail}`).toBe(true);
      }
      // Values of another length are refused, not written askew.
      expect(() => pattern.fill(values(headers).subarray(1))).toThrow(/varying bytes given/);
    }
    expect([...alignments].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

describe('a piece pattern with a group of no places', () => {
  // Its bytes shift the CRC by nothing: the shift of no place is zero (multModP(0, …), which would not end on zlib's loop).
  it('fills to the pieces it was joined from, whatever that group is given', () => {
    const pieces = [deflatePiece(Buffer.from('first piece\n')), deflatePiece(Buffer.from('second piece\n'))];
    const raw = Buffer.from('first piece\nsecond piece\n');
    const pattern = PiecePattern.join(pieces, [{ places: [], original: Buffer.from('ab') }, { places: [{ offset: 0, length: 5 }], original: Buffer.from('first') }]);
    for (const unused of ['ab', 'zz']) {
      const filled = pattern.fill(Buffer.from(`${unused}first`));
      expect(filled.crc).toBe(crc32(raw));
      expect(filled.length).toBe(raw.length);
    }
  });
});

describe('shared runs', () => {
  const library = Array.from({ length: 40 }, (_, i) => Buffer.from(template(i)));
  const libraryFiles = (data: readonly Buffer[] = library) => new SharedFiles(data.map((d, i) => ({ path: `templates/_t${String(i).padStart(2, '0')}.tpl`, data: d })));
  const shared = libraryFiles();
  const archive = (name: string, own: string, files = shared): TarItem[] => [
    { path: `${name}/Chart.yaml`, data: `name: ${name}\n` },
    { path: `${name}/templates/own.yaml`, data: own },
    { folder: `${name}/charts/lib`, files },
    { path: `${name}/values.yaml`, data: 'after: the run\n' },
  ];
  /** The same archive with the run's files as entries of their own. */
  const written = (items: readonly TarItem[]): TarEntry[] =>
    items.flatMap((item) => ('files' in item ? item.files.files.map((f) => ({ path: `${item.folder}/${f.path}`, data: f.data })) : [item]));

  it('decode to the same tar as the files written as entries, sync or async, and share the library bytes', async () => {
    const a = archive('alpha', 'a: 1\n');
    const b = archive('a-much-longer-chart-name', 'b: 2\n'.repeat(100));
    for (const items of [a, b]) {
      const plain = writeTar(written(items), { order: 'given' });
      expect(writeTar(items, { order: 'given' }).equals(plain)).toBe(true);
      const asyncBytes = await writeTarGzAsync(items, { order: 'given' });
      expect(gunzipSync(asyncBytes).equals(plain)).toBe(true);
      expect(writeTarGz(items, { order: 'given' }).equals(asyncBytes)).toBe(true);
      execFileSync('gunzip', ['-t'], { input: asyncBytes });
      // Sorted, a run is written entry by entry, its members still sharing.
      expect(gunzipSync(writeTarGz(items)).equals(writeTar(written(items)))).toBe(true);
    }
    // The library's compressed data is the same bytes in both archives; its copies reach across files.
    const [gzA, gzB] = [await writeTarGzAsync(a, { order: 'given' }), await writeTarGzAsync(b, { order: 'given' })];
    let found = 0;
    for (let at = 0; at + 16 <= gzA.length; at += 16) if (gzB.includes(gzA.subarray(at, at + 16))) found++;
    expect(found / Math.floor(gzA.length / 16)).toBeGreaterThan(0.6);
    // Close to one zlib stream over the whole tar; far below each file compressed alone.
    const inline = writeTarGz(written(a), { order: 'given' }).length;
    const alone = library.reduce((sum, data) => sum + deflatePiece(data).deflated.length, 0);
    expect(gzA.length).toBeLessThan(inline * 1.25);
    expect(gzA.length).toBeLessThan(alone * 0.65);
  });

  it("reuse one archive's header pieces in another whose folder name is as long, giving the bytes coded afresh", async () => {
    // Names of one length, every checksum digit different between them (the first archive's header pieces are coded,
    // the next ones copy the run whole as one patterned piece); a name outside ASCII has headers of its own kind,
    // and is written entry by entry.
    // Whether each archive took the patterned copy: the first plain one codes the headers, the next plain ones copy
    // the run (a name outside ASCII needs a pax header, a layout of its own, and teaches nothing).
    const fill = vi.spyOn(PiecePattern.prototype, 'fill');
    const cases: [string[], boolean[]][] = [
      [
        ['alpha', 'omega', 'zz-99', 'ålpha', 'a'.repeat(5), 'b0b1b'],
        [false, true, true, false, true, true],
      ],
      [
        ['ωmega', 'alpha', 'omega'],
        [false, false, true],
      ],
    ];
    for (const [names, patterned] of cases) {
      const files = libraryFiles();
      for (const [i, name] of names.entries()) {
        fill.mockClear();
        const reused = writeTarGz(archive(name, `own: ${name}\n`, files), { order: 'given' });
        expect(fill.mock.calls.length, name).toBe(patterned[i] ? 1 : 0);
        // A set of files never seen codes every header itself.
        const fresh = writeTarGz(archive(name, `own: ${name}\n`, libraryFiles()), { order: 'given' });
        expect(reused.equals(fresh), name).toBe(true);
        expect((await writeTarGzAsync(archive(name, `own: ${name}\n`, files), { order: 'given' })).equals(fresh), name).toBe(true);
        expect(gunzipSync(reused).equals(writeTar(written(archive(name, `own: ${name}\n`)), { order: 'given' }))).toBe(true);
      }
    }
    fill.mockRestore();
    // The headers after the first of the run are small pieces whatever archive they were first coded for.
    const header = (name: string, i: number) => writeTar([{ path: `${name}/charts/lib/templates/_t${String(i).padStart(2, '0')}.tpl`, data: library[i]! }]).subarray(0, 512);
    const coded = codeHeader(header('alpha', 2), { bytes: header('alpha', 1), distance: 512 + 512 * Math.ceil(library[1]!.length / 512) }, 'alpha/charts/lib/'.length);
    expect(coded.checksumBit).toBeGreaterThan(0);
    const other = header('omega', 2);
    expect(inflateRawSync(Buffer.concat([headerPieceLike(coded as Required<typeof coded>, other).deflated, Buffer.from([3, 0])]), { dictionary: Buffer.concat([header('omega', 1), Buffer.alloc(512 * Math.ceil(library[1]!.length / 512))]) }).equals(other)).toBe(true);
  });

  it('refuse what the same files given as entries are refused for, in the same words', () => {
    const refusal = (items: readonly TarItem[], options = { order: 'given' as const }): string => {
      try {
        writeTarGz(items, options);
      } catch (error) {
        return (error as Error).message;
      }
      return 'written';
    };
    const name = 'beta';
    const run = { folder: `${name}/charts/lib`, files: shared };
    const cases: TarItem[][] = [
      [run, { path: `${name}/charts/lib/templates/_t03.tpl`, data: 'twice' }], // a member's path again
      [{ path: `${name}/charts/lib`, data: 'a file' }, run], // the run's folder a file
      [run, { path: `${name}/charts/lib/templates`, data: 'a file' }], // a folder of the members a file
      [{ path: `${name}/charts/lib/templates/_t03.tpl/x`, data: 'below a member' }, run], // a member a folder
      [{ path: name, data: 'above the run' }, run], // a folder above the run a file
      [run, { ...run }], // the same folder twice
      [run, { folder: `${name}/charts/lib/templates/_t03.tpl`, files: libraryFiles(library.slice(0, 2)) }], // a run below another's member
      [{ folder: `${name}/charts/lib`, files: new SharedFiles([{ path: 'a', data: Buffer.from('1') }, { path: 'a', data: Buffer.from('2') }]) }], // a set with a path twice
      [{ folder: `${name}/charts/lib`, files: new SharedFiles([{ path: 'a', data: Buffer.from('1') }, { path: 'a/b', data: Buffer.from('2') }]) }], // a path the folder of another
      [{ folder: `${name}/charts/lib`, files: new SharedFiles([{ path: './a', data: Buffer.from('1') }, { path: 'b', data: Buffer.from('2') }]) }], // not canonical
      [{ folder: `${name}/../lib`, files: shared }], // the folder not canonical
    ];
    for (const items of cases) {
      const expected = refusal(written(items));
      expect(expected, JSON.stringify(items.map((i) => ('files' in i ? i.folder : i.path)))).not.toBe('written');
      expect(refusal(items)).toBe(expected);
    }
    // Files beside the members, below the run's folder, are fine.
    const beside: TarItem[] = [run, { path: `${name}/charts/lib/templates/_t99.tpl`, data: 'mine' }, { path: `${name}/charts/lib/README`, data: 'mine' }];
    expect(gunzipSync(writeTarGz(beside, { order: 'given' })).equals(writeTar(written(beside), { order: 'given' }))).toBe(true);
  });

  it('stay valid for binary data in which every byte value occurs (compressed without a dictionary)', () => {
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const items: TarItem[] = [{ folder: 'c/charts/bin', files: new SharedFiles([every, randomBytes(3000), Buffer.concat([every, every])].map((data, i) => ({ path: `f${i}`, data }))) }];
    const gz = writeTarGz(items, { order: 'given' });
    expect(gunzipSync(gz).equals(writeTar(written(items), { order: 'given' }))).toBe(true);
  });

  it('stay valid when a name needs a pax header (a different layout, compressed for it)', () => {
    const files = libraryFiles(library.slice(0, 3));
    for (const name of ['short', 'n'.repeat(120), 'short', 'n'.repeat(120)]) {
      const items: TarItem[] = [{ folder: `${name}/charts/lib`, files }];
      expect(gunzipSync(writeTarGz(items, { order: 'given' })).equals(writeTar(written(items), { order: 'given' }))).toBe(true);
    }
  });
});
