/**
 * Tar writer differential: whatever path the writer takes (its own header
 * encoder, node-tar for the rest), the tar it writes is the one node-tar's
 * Header and Pax encoders give entry by entry, and the gzip around it is
 * valid (zlib checks its CRC-32 and length) and the same bytes whether
 * written at once or on the thread pool (files past 64 KiB among them).
 * Random archives (seeded; FLOTILLA_WRITER_CASES and FLOTILLA_WRITER_SEED
 * change how many and which): names around ustar's 100-byte limit and
 * outside ASCII, empty and block-sized files, every entry order, times
 * before and after the ones ten octal digits hold.
 */
import { gunzipSync } from 'node:zlib';
import { Header, Pax } from 'tar';
import { describe, expect, it } from 'vitest';
import { compareBytewise, FIXED_MTIME, writeTar, writeTarGz, writeTarGzAsync, type TarWriteOptions } from '../../src/tarball/index.js';
import { seededRandom } from '../support/random.js';

const CASES = Number(process.env.FLOTILLA_WRITER_CASES ?? 400);
const SEED = Number(process.env.FLOTILLA_WRITER_SEED ?? 20261125);

/** The tar node-tar's encoders give for these entries, in this order. */
function referenceTar(entries: readonly { path: string; data: Buffer }[], mtime: Date): Buffer {
  const parts: Buffer[] = [];
  for (const { path, data } of entries) {
    const header = new Header({ path, mode: 0o644, uid: 0, gid: 0, size: data.length, mtime, type: 'File', uname: '', gname: '' });
    if (header.encode()) parts.push(new Pax({ path }).encode());
    parts.push(header.block!, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

describe('tar writer against node-tar', () => {
  it(`writes ${CASES} random archives as node-tar encodes them, in valid gzip, the same bytes sync and async`, async () => {
    const random = seededRandom(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const int = (max: number) => Math.floor(random() * (max + 1));
    const segment = (length: number) =>
      Array.from({ length: Math.max(1, length) }, () => pick([...'abcdefghijklmnopqrstuvwxyz0123456789._-', ' ', 'é', 'ω']))
        .join('')
        .replace(/^\.+/, 'x');
    // Now and then past the 64 KiB from which a piece is compressed on libuv's pool, not on the main thread.
    const LARGE = 70_000;
    const data = () => {
      const size = random() < 0.03 ? LARGE + int(5000) : pick([0, 1, 511, 512, 513, 1024, int(3000)]);
      // Text-like (compressible, as templates are) or any bytes.
      return random() < 0.7
        ? Buffer.from('key: value\n'.repeat(Math.ceil(size / 11)).slice(0, size))
        : Buffer.from(Array.from({ length: size }, () => int(255)));
    };
    const times = [undefined, new Date(0), new Date((8 ** 10 - 1) * 1000), new Date(8 ** 10 * 1000), new Date(Date.UTC(2026, 0, 1))];
    const paths = { ascii: 0, pax: 0, large: 0 };

    for (let n = 0; n < CASES; n++) {
      const entries: { path: string; data: Buffer }[] = [];
      const taken = new Set<string>();
      const charts = Array.from({ length: 1 + int(2) }, (_, i) => `${segment(1 + int(random() < 0.2 ? 110 : 12)).replace(/\//g, '')}${i}`);
      for (const chart of charts) {
        for (let f = int(5); f >= 0; f--) {
          const depth = int(2);
          const path = [chart, ...Array.from({ length: depth }, () => segment(1 + int(random() < 0.1 ? 60 : 10))), `${segment(1 + int(8))}.yaml`].join('/');
          // Names unique and none the folder of another.
          if ([...taken].some((other) => other === path || other.startsWith(`${path}/`) || path.startsWith(`${other}/`))) continue;
          taken.add(path);
          entries.push({ path, data: data() });
        }
      }
      const options: TarWriteOptions = { order: pick(['given', 'sorted'] as const), mtime: pick(times), level: pick([1, 6, 9]), label: `case ${n}` };
      const written = options.order === 'sorted' ? [...entries].sort((a, b) => compareBytewise(a.path, b.path)) : entries;
      for (const e of written) paths[Buffer.byteLength(e.path) < 100 && /^[\x20-\x7e]+$/.test(e.path) ? 'ascii' : 'pax']++;
      if (entries.some((e) => e.data.length >= LARGE)) paths.large++;

      const expected = referenceTar(written, options.mtime ?? FIXED_MTIME);
      const what = `case ${n} (seed ${SEED}): ${entries.length} entries, ${JSON.stringify(options)}`;
      expect(writeTar(entries, options).equals(expected), what).toBe(true);
      const gz = writeTarGz(entries, options);
      expect(gunzipSync(gz).equals(expected), what).toBe(true);
      expect((await writeTarGzAsync(entries, options)).equals(gz), what).toBe(true);
    }
    // The cases reach every kind of entry they are meant to.
    expect(paths.ascii).toBeGreaterThan(CASES);
    expect(paths.pax).toBeGreaterThan(CASES / 10);
    expect(paths.large).toBeGreaterThan(CASES / 20);
  });
});
