/**
 * Caches hold no authority (src/cache, docs/security.md): every kind of
 * entry under `<out>/.flotilla-cache/` planted by someone else — content
 * changed under its header, sealed with another key, in the old formats
 * whose "tamper check" was a digest kept in the same file, a piece table
 * whose tarball was swapped, a folder others may write to — gives a build
 * byte-identical to one without a cache, and says under --debug
 * (`cacheNotes`) what it ignored.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { sealEntry } from '../../src/cache/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

let app: string;
let out: string;
let cache: string;
let cold: Buffer;
/** The warm cache as this user's build wrote it: file name → bytes. */
let written: Map<string, Buffer>;

/** An entry's header line and content (src/cache seal.ts). */
function split(entry: Buffer): { header: string; kind: string; inputKey: string; content: Buffer } {
  const end = entry.indexOf(0x0a);
  const header = entry.toString('latin1', 0, end + 1);
  const [, kind, inputKey] = header.trim().split(' ');
  return { header, kind: kind!, inputKey: inputKey!, content: entry.subarray(end + 1) };
}

/** Restores the cache as written, plants `files`, builds with the cache and returns the tarball and the notes. */
async function buildWith(files: ReadonlyMap<string, Buffer | string>): Promise<{ tarball: Buffer; notes: string[] }> {
  rmSync(cache, { recursive: true, force: true });
  mkdirSync(cache, { mode: 0o700 });
  for (const [name, bytes] of [...written, ...files]) writeFileSync(join(cache, name), bytes, { mode: 0o600 });
  const notes: string[] = [];
  const built = await buildApp(app, { outDir: out, cacheNotes: (note) => notes.push(note) });
  return { tarball: readFileSync(built.file), notes };
}

beforeAll(async () => {
  app = writeApp();
  cold = readFileSync((await buildApp(app, { outDir: tempDir(), cacheDir: false })).file);
  out = tempDir();
  await buildApp(app, { outDir: out });
  cache = join(out, '.flotilla-cache');
  written = new Map(readdirSync(cache).map((name) => [name, readFileSync(join(cache, name))]));
}, 120_000);

describe('a poisoned build cache', () => {
  it('is written by this build as one entry format, and a clean warm build matches a cold one', async () => {
    const names = [...written.keys()].map((n) => n.replace(/-[0-9a-f]{64}\.json$/, '-<key>.json')).sort();
    expect(names).toEqual(['bundle-pieces.json', 'index.json', 'manifests.json', 'parsed-yaml.bin', 'plugins-<key>.json', 'values-check.json']);
    for (const bytes of written.values()) expect(bytes.toString('latin1', 0, 17)).toBe('flotilla-cache/1 ');
    const { tarball, notes } = await buildWith(new Map());
    expect(tarball.equals(cold)).toBe(true);
    expect(notes).toEqual([]);
  });

  it('gives the bytes of a cache-less build for every kind of entry changed under its header or sealed with another key', async () => {
    const stranger = randomBytes(32);
    for (const [name, bytes] of written) {
      const { header, kind, inputKey, content } = split(bytes);
      // What an attacker would put there: the content changed (a byte flipped in the middle keeps JSON readable only sometimes, so also a whole other content).
      const flipped = Buffer.from(content);
      flipped[Math.floor(flipped.length / 2)]! ^= 0x20;
      const other = Buffer.from(JSON.stringify({ planted: true }));
      for (const [what, planted] of [
        ['content changed under its header', Buffer.concat([Buffer.from(header, 'latin1'), flipped])],
        ['other content under its header', Buffer.concat([Buffer.from(header, 'latin1'), other])],
        ['sealed with another key', sealEntry(kind, inputKey, flipped, stranger)],
      ] as const) {
        const { tarball, notes } = await buildWith(new Map([[name, planted]]));
        expect(tarball.equals(cold), `${name}: ${what}`).toBe(true);
        expect(notes, `${name}: ${what}`).toEqual([expect.stringContaining(`${join(cache, name)} ignored: its content is not what this user wrote`)]);
      }
    }
  }, 240_000);

  it('does not take a plugin bundle whose "tamper check" is a sha256 kept in the same file (the old format)', async () => {
    const name = [...written.keys()].find((n) => n.startsWith('plugins-'))!;
    const files = JSON.parse(split(written.get(name)!).content.toString('utf8')) as Record<string, string>;
    const planted = {
      ...files,
      'plugins.mjs': Buffer.from(`import { writeFileSync } from 'node:fs';\nwriteFileSync('/tmp/planted', 'x');\n`).toString('base64'),
    };
    const hash = createHash('sha256');
    for (const [file, base64] of Object.entries(planted).sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const data = Buffer.from(base64, 'base64');
      hash.update(`${file}\0${data.length}\0`).update(data);
    }
    const legacy = JSON.stringify({ format: 'flotilla-plugin-cache/2', files: planted, sha256: hash.digest('hex') });
    const { tarball, notes } = await buildWith(new Map([[name, legacy]]));
    expect(tarball.equals(cold)).toBe(true);
    expect(notes).toEqual([expect.stringContaining(`${join(cache, name)} ignored: not a flotilla cache entry`)]);
  });

  it('does not reuse pieces of a tarball other than the one its piece table names', async () => {
    // Another build's tarball (an edited static override) put where the previous one was: same name, other bytes.
    const other = writeApp({ 'overrides/static/web.yaml': 'conf:\n  greeting: planted\n' });
    const otherOut = tempDir();
    const otherTarball = (await buildApp(other, { outDir: otherOut, cacheDir: false })).file;
    const previous = readdirSync(out).find((n) => n.endsWith('.tgz'))!;
    const kept = readFileSync(join(out, previous));
    copyFileSync(otherTarball, join(out, previous));
    try {
      const { tarball, notes } = await buildWith(new Map());
      expect(tarball.equals(cold)).toBe(true);
      expect(notes).toEqual([expect.stringContaining(`bundle-pieces.json ignored: ${join(out, previous)} is not the tarball the piece table describes`)]);
    } finally {
      writeFileSync(join(out, previous), kept);
    }
  });

  it('is not used at all from a folder others may write to', async () => {
    await buildWith(new Map());
    chmodSync(cache, 0o777);
    try {
      const before = new Map(readdirSync(cache).map((name) => [name, readFileSync(join(cache, name))]));
      const notes: string[] = [];
      const built = await buildApp(app, { outDir: out, cacheNotes: (note) => notes.push(note) });
      expect(readFileSync(built.file).equals(cold)).toBe(true);
      expect(notes).toEqual([`cache not used: ${cache} is writable by group or others (mode 777; chmod go-w it to use it)`]);
      // Nothing read from it, nothing written into it.
      expect(new Map(readdirSync(cache).map((name) => [name, readFileSync(join(cache, name))]))).toEqual(before);
    } finally {
      chmodSync(cache, 0o700);
    }
  });
});
