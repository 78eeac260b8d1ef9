import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import {
  ArchiveWriteError,
  pieceKey,
  readTarGzSafelySync,
  writeTar,
  writeTarGz,
  writeTarGzFile,
  writeTarGzPieces,
  type DeflatePiece,
  type PieceSource,
  type TarEntry,
  type WrittenTarGz,
} from '../../src/tarball/index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flotilla-tarw-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

const entries: TarEntry[] = [
  { path: 'metadata.yaml', data: 'app_name: demo\napp_version: 1.0-1\n' },
  { path: 'charts/keystone-0.3.1.tgz', data: Buffer.from([1, 2, 3, 0, 255]) },
  { path: 'fluxcd-manifests/kustomization.yaml', data: 'resources: [base]\n' },
  { path: 'fluxcd-manifests/base/helmrepository.yaml', data: '' },
];

describe('writeTarGz', () => {
  it('gives the same bytes whatever the input order or data type', () => {
    const a = writeTarGz(entries);
    const b = writeTarGz([...entries].reverse().map((e) => ({ path: e.path, data: Buffer.from(e.data) })));
    expect(Buffer.compare(a, b)).toBe(0);
  });

  it('sorts byte-wise by default and keeps the given order on request', () => {
    const sorted = [...readTarGzSafelySync(writeTarGz(entries)).keys()];
    expect(sorted).toEqual(['charts/keystone-0.3.1.tgz', 'fluxcd-manifests/base/helmrepository.yaml', 'fluxcd-manifests/kustomization.yaml', 'metadata.yaml']);
    const given = [...readTarGzSafelySync(writeTarGz(entries, { order: 'given' })).keys()];
    expect(given).toEqual(entries.map((e) => e.path));
  });

  it('writes only file entries: mode 0644, root-owned, fixed time, no atime/ctime', () => {
    const listing = execFileSync('tar', ['--numeric-owner', '--full-time', '-tvzf', '-'], { input: writeTarGz(entries) }).toString();
    for (const line of listing.trim().split('\n')) expect(line).toMatch(/^-rw-r--r-- 0\/0 +\d+ 2000-01-01 00:00:00 /);
    const tar = writeTar(entries);
    expect(tar.length % 512).toBe(0);
    expect(tar.subarray(tar.length - 1024).every((b) => b === 0)).toBe(true);
    // ustar with an empty atime/ctime area and empty uname/gname
    expect(tar.subarray(257, 265).toString('latin1')).toBe('ustar\u000000');
    expect(tar.subarray(265, 329).every((b) => b === 0)).toBe(true);
    expect(tar.subarray(476, 500).every((b) => b === 0)).toBe(true);
  });

  it('pins the gzip header (mtime 0, no name, Unix OS byte)', () => {
    const gz = writeTarGz(entries);
    expect([...gz.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]); // XFL 0: the default level, as helm package writes
    expect(gunzipSync(gz).equals(writeTar(entries))).toBe(true);
  });

  it('changes bytes only when content, names or the chosen mtime change', () => {
    const base = writeTarGz(entries);
    expect(writeTarGz([...entries.slice(1), { path: 'metadata.yaml', data: 'app_name: demo\napp_version: 1.0-2\n' }]).equals(base)).toBe(false);
    expect(writeTarGz(entries, { mtime: new Date(Date.UTC(2024, 0, 1)) }).equals(base)).toBe(false);
  });

  it('stores long and non-ASCII names (pax, without times) that tar reads back', async () => {
    const long = `${'a'.repeat(90)}/${'b'.repeat(90)}/${'c'.repeat(150)}.yaml`;
    const named: TarEntry[] = [
      { path: long, data: 'long' },
      { path: `${'p'.repeat(120)}/short.yaml`, data: 'prefix-split' },
      { path: 'unicode/caf\u00e9-\u6f22\u5b57.txt', data: 'utf8' },
    ];
    const gz = writeTarGz(named);
    expect(gunzipSync(gz).toString('latin1')).not.toMatch(/mtime=|atime=|ctime=/);
    const back = readTarGzSafelySync(gz);
    expect(back.get(long)?.toString()).toBe('long');
    expect(back.get(`${'p'.repeat(120)}/short.yaml`)?.toString()).toBe('prefix-split');
    expect(back.get('unicode/caf\u00e9-\u6f22\u5b57.txt')?.toString()).toBe('utf8');
    const out = join(dir, 'x');
    execFileSync('mkdir', [out]);
    execFileSync('tar', ['-xzf', '-', '-C', out], { input: gz });
    expect(await readFile(join(out, long), 'utf8')).toBe('long');
    expect(await readFile(join(out, 'unicode', 'caf\u00e9-\u6f22\u5b57.txt'), 'utf8')).toBe('utf8');
  });

  it('refuses entries it would refuse to read', () => {
    const bad: [string, RegExp][] = [
      ['../x', /"\.\." segment/],
      ['/abs', /absolute path/],
      ['./a', /not a canonical path \(use "a"\)/],
      ['a//b', /not a canonical path/],
      ['dir\\file', /name contains a backslash/],
      ['', /empty path/],
    ];
    for (const [path, message] of bad) expect(() => writeTarGz([{ path, data: 'x' }]), path).toThrow(message);
    expect(() =>
      writeTarGz([
        { path: 'a', data: '1' },
        { path: 'a', data: '2' },
      ]),
    ).toThrow(ArchiveWriteError);
    expect(() =>
      writeTarGz([
        { path: 'a', data: '1' },
        { path: 'a/b', data: '2' },
      ]),
    ).toThrow(/"a": is a file but also the folder of "a\/b"/);
    // A folder further up, found after a nearer one was looked up for another file.
    expect(() =>
      writeTarGz([
        { path: 'x/y/z1', data: '1' },
        { path: 'x/y/z2', data: '2' },
        { path: 'x', data: '3' },
      ]),
    ).toThrow(/"x": is a file but also the folder of "x\/y\/z1"/);
  });

  it('writes a file atomically and reports its digest', async () => {
    const file = join(dir, 'demo-1.0-1.tgz');
    const written = await writeTarGzFile(file, entries);
    const bytes = await readFile(file);
    expect(written.size).toBe(bytes.length);
    expect(bytes.equals(writeTarGz(entries))).toBe(true);
    expect(written.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await stat(file)).isFile()).toBe(true);
    expect(execFileSync('ls', [dir]).toString().trim()).toBe('demo-1.0-1.tgz');
  });
});

describe('header encoding', () => {
  it('writes plain names exactly as node-tar does, and long or non-ASCII names through node-tar', async () => {
    const { Header } = await import('tar');
    const { writeTar } = await import('../../src/tarball/index.js');
    const names = ['a', 'Chart.yaml', 'svc01/charts/toolkit/templates/_snippet001.tpl', 'x'.repeat(99), 'x'.repeat(100), 'dir with space/f~!.txt'];
    for (const [i, path] of names.entries()) {
      for (const size of [0, 1, 511, 512, 12_345]) {
        const data = Buffer.alloc(size, i);
        const mine = writeTar([{ path, data }]).subarray(0, 512);
        const theirs = new Header({ path, mode: 0o644, uid: 0, gid: 0, size, mtime: new Date(Date.UTC(2000, 0, 1)), type: 'File', uname: '', gname: '' });
        theirs.encode();
        expect(mine.equals(theirs.block!)).toBe(true);
      }
    }
    // beyond the fast path: still readable and round-trips
    const { readTarGzSafely, writeTarGz } = await import('../../src/tarball/index.js');
    const long = `${'deep/'.repeat(30)}file.txt`;
    const files = await readTarGzSafely(
      writeTarGz([
        { path: long, data: 'x' },
        { path: 'naïve.txt', data: 'y' },
      ]),
    );
    expect([...files.keys()].sort()).toEqual([long, 'naïve.txt'].sort());
  });

  it('writes sizes and times of every width as node-tar does: ten octal digits and " \\0", or eleven and "\\0" (1 GiB and more, after 2004-01-10)', async () => {
    const { Header } = await import('tar');
    const { entryHeader } = await import('../../src/tarball/tar-write.js');
    const times = [new Date(Date.UTC(2000, 0, 1)), new Date((8 ** 10 - 1) * 1000), new Date(8 ** 10 * 1000), new Date(Date.UTC(2026, 0, 1))];
    for (const mtime of times) {
      for (const size of [0, 12_345, 8 ** 9 + 7, 8 ** 10 - 1, 8 ** 10, 8 ** 11 - 1]) {
        const theirs = new Header({ path: 'charts/a.tgz', mode: 0o644, uid: 0, gid: 0, size, mtime, type: 'File', uname: '', gname: '' });
        theirs.encode();
        const mine = entryHeader('charts/a.tgz', size, mtime);
        expect(mine, `one block, no pax record: size ${size}, ${mtime.toISOString()}`).toHaveLength(1);
        expect(mine[0]!.equals(theirs.block!), `size ${size}, ${mtime.toISOString()}`).toBe(true);
      }
      const folder = new Header({ path: './charts/', mode: 0o755, uid: 0, gid: 0, size: 0, mtime, type: 'Directory', uname: '', gname: '' });
      folder.encode();
      const mineFolder = entryHeader('./charts/', 0, mtime, 'directory');
      expect(mineFolder).toHaveLength(1);
      expect(mineFolder[0]!.equals(folder.block!), `folder, ${mtime.toISOString()}`).toBe(true);
    }
  });

  it('with dotRoot, writes the ./ folder and each folder as node-tar writes directory headers, then ./-prefixed files', async () => {
    const { Header } = await import('tar');
    const { writeTar, writeTarGz, readTarGzEntriesSync } = await import('../../src/tarball/index.js');
    const entries = [
      { path: 'metadata.yaml', data: 'a' },
      { path: 'charts/x.tgz', data: 'b' },
      { path: 'fluxcd-manifests/base/k.yaml', data: 'c' },
    ];
    const tar = writeTar(entries, { dotRoot: true });
    const dir = (path: string) => {
      const header = new Header({ path, mode: 0o755, uid: 0, gid: 0, size: 0, mtime: new Date(Date.UTC(2000, 0, 1)), type: 'Directory', uname: '', gname: '' });
      header.encode();
      return header.block!;
    };
    expect(tar.subarray(0, 512).equals(dir('./'))).toBe(true);
    expect(tar.subarray(512, 1024).equals(dir('./charts/'))).toBe(true);
    const names = readTarGzEntriesSync(writeTarGz(entries, { dotRoot: true })).map((e) => `${e.type} ${e.rawPath}`);
    expect(names).toEqual([
      'directory ./charts/',
      'file ./charts/x.tgz',
      'directory ./fluxcd-manifests/',
      'directory ./fluxcd-manifests/base/',
      'file ./fluxcd-manifests/base/k.yaml',
      'file ./metadata.yaml',
    ]);
    expect(writeTarGz(entries, { dotRoot: true }).equals(writeTarGz([...entries].reverse(), { dotRoot: true }))).toBe(true);
  });
});

describe('pieces for reuse (the app tarball, rebuilt)', () => {
  const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
  // An app tarball's shape: many small manifests, a stored chart archive, one large file.
  const app = (): TarEntry[] => [
    ...Array.from({ length: 60 }, (_, i) => ({
      path: `fluxcd-manifests/svc${String(i).padStart(2, '0')}/helmrelease.yaml`,
      data: `kind: HelmRelease\nmetadata:\n  name: svc${i}\n`,
    })),
    { path: 'charts/web-1.0.0.tgz', data: Buffer.from([31, 139, 8, 0, 1, 2, 3]), compression: 'stored' },
    { path: 'plugins/bundle.js', data: 'x'.repeat(40 * 1024) },
  ];
  /** The pieces of a written tarball as the next build finds them, counting what it asks for and does not find. */
  const source = (written: WrittenTarGz) => {
    const pieces = new Map<string, DeflatePiece>(
      written.pieces.map((r) => [r.key, { deflated: written.bytes.subarray(r.offset, r.offset + r.deflatedLength), crc: r.crc, length: r.length }]),
    );
    const misses: string[] = [];
    const reuse: PieceSource = {
      get(key) {
        const piece = pieces.get(key);
        if (!piece) misses.push(key);
        return piece;
      },
    };
    return { reuse, misses };
  };
  const nothing: PieceSource = { get: () => undefined };

  it('groups small entries a few to a piece by name; a stored or large entry is a piece of its own', async () => {
    const entries = app();
    const written = await writeTarGzPieces(entries, { reuse: nothing });
    expect(gunzipSync(written.bytes).equals(writeTar(entries))).toBe(true);
    const keys = written.pieces.map((p) => p.key);
    // 62 entries and the end of the archive: the 60 manifests take a handful of pieces, not 60.
    expect(keys.length).toBeGreaterThan(4);
    expect(keys.length).toBeLessThan(30);
    expect(keys).toContain(pieceKey('charts/web-1.0.0.tgz', sha256(entries[60]!.data)));
    expect(keys).toContain(pieceKey('plugins/bundle.js', sha256(entries[61]!.data)));
  });

  it('compresses again only the group of an edited entry, and writes the bytes a build from nothing writes', async () => {
    const before = await writeTarGzPieces(app(), { reuse: nothing });
    const edited = app().map((e) => (e.path === 'fluxcd-manifests/svc17/helmrelease.yaml' ? { ...e, data: `${String(e.data)}  namespace: openstack\n` } : e));
    const { reuse, misses } = source(before);
    const rebuilt = await writeTarGzPieces(edited, { reuse });
    expect(misses).toHaveLength(1);
    expect(rebuilt.bytes.equals((await writeTarGzPieces(edited, { reuse: nothing })).bytes)).toBe(true);
    expect(gunzipSync(rebuilt.bytes).equals(writeTar(edited))).toBe(true);
  });

  it('an added or removed file changes only its own group', async () => {
    const before = await writeTarGzPieces(app(), { reuse: nothing });
    for (const changed of [
      [...app(), { path: 'fluxcd-manifests/svc17/extra.yaml', data: 'kind: ConfigMap\n' }],
      app().filter((e) => e.path !== 'fluxcd-manifests/svc30/helmrelease.yaml'),
    ]) {
      const { reuse, misses } = source(before);
      const rebuilt = await writeTarGzPieces(changed, { reuse });
      // The group it joins or leaves; an added file that ends a group splits it in two.
      expect(misses.length).toBeGreaterThanOrEqual(1);
      expect(misses.length).toBeLessThanOrEqual(2);
      expect(rebuilt.bytes.equals((await writeTarGzPieces(changed, { reuse: nothing })).bytes)).toBe(true);
    }
  });
});
