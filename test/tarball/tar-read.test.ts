import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile, link } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { create as tarCreate } from 'tar';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  extractTarGzSafely,
  readTarGzSafely,
  readTarGzSafelySync,
  UnsafeArchiveError,
  writeTarGz,
  type ArchiveLimits,
  type ArchiveProblem,
} from '../../src/tarball/index.js';
import { gzipWithHeader, paxRecord, rawTar, rawTarGz, type RawEntry } from './raw-tar.js';
import { nodeTarListing } from '../support/tar-readers/readers.js';

let sandbox: string;
beforeEach(async () => {
  sandbox = await mkdtemp(join(tmpdir(), 'flotilla-bundle-'));
});
afterEach(async () => rm(sandbox, { recursive: true, force: true }));

/** Every path under `root`, recursively (lstat: symlinks are listed, not followed). */
async function everything(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) out.push(join(entry.parentPath, entry.name).slice(root.length + 1));
  return out.sort();
}

/**
 * Extracts `bytes` into sandbox/target and expects a refusal of the given
 * kind naming `entry`; then checks that nothing at all was written (neither
 * in the target nor anywhere else in the sandbox).
 */
async function expectRefused(
  bytes: Buffer,
  problem: ArchiveProblem,
  entry: string | undefined,
  message: RegExp,
  limits: ArchiveLimits = {},
): Promise<UnsafeArchiveError> {
  const target = join(sandbox, 'target');
  const error = await extractTarGzSafely(bytes, target, { ...limits, label: 'app.tgz' }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UnsafeArchiveError);
  const refusal = error as UnsafeArchiveError;
  expect(refusal.problem).toBe(problem);
  expect(refusal.entry).toBe(entry);
  expect(refusal.message).toMatch(/^archive rejected \(app\.tgz\): /);
  expect(refusal.message).toMatch(message);
  expect(await everything(sandbox)).toEqual([]);
  // the in-memory reader refuses the same way
  expect(() => readTarGzSafelySync(bytes, limits)).toThrow(UnsafeArchiveError);
  return refusal;
}

const evil = (): string => `evil-${randomUUID()}.txt`;

describe('refusing hostile archives before writing anything', () => {
  it('refuses ".." segments, in every spelling', async () => {
    for (const name of [`../${evil()}`, `a/../../${evil()}`, `a/b/../../../${evil()}`, `ok/..\\..\\${evil()}`]) {
      await expectRefused(
        rawTarGz([
          { name: 'fine.txt', data: 'ok' },
          { name, data: 'pwned' },
        ]),
        'parent-segment',
        name,
        /path has a "\.\." segment/,
      );
    }
  });

  it('refuses absolute paths and drive letters', async () => {
    const name = `/tmp/${evil()}`;
    await expectRefused(rawTarGz([{ name, data: 'x' }]), 'absolute-path', name, /absolute path/);
    await expectRefused(rawTarGz([{ name: 'C:/Windows/x', data: 'x' }]), 'absolute-path', 'C:/Windows/x', /drive letter/);
    await expectRefused(rawTarGz([{ name: 'x', prefix: '/etc', data: 'x' }]), 'absolute-path', '/etc/x', /absolute path/);
  });

  it('refuses a traversal hidden in a pax path or a GNU long name', async () => {
    const target = `../${evil()}`;
    const pax: RawEntry = { name: 'PaxHeader/innocent', type: 'x', data: paxRecord('path', target) };
    await expectRefused(rawTarGz([pax, { name: 'innocent', data: 'x' }]), 'parent-segment', target, /"\.\." segment/);
    const gnu: RawEntry = { name: '././@LongLink', type: 'L', data: `${target}\0` };
    await expectRefused(rawTarGz([gnu, { name: 'innocent', data: 'x' }]), 'parent-segment', target, /"\.\." segment/);
    const global: RawEntry = { name: 'pax_global_header', type: 'g', data: paxRecord('path', 'x') };
    await expectRefused(rawTarGz([global, { name: 'a', data: 'x' }]), 'ambiguous', 'pax_global_header', /global pax header has the record "path"/);
  });

  it('refuses symlinks (also the classic symlink-then-write-through-it pair)', async () => {
    const bytes = rawTarGz([
      { name: 'link', type: '2', linkname: sandbox },
      { name: `link/${evil()}`, data: 'pwned' },
    ]);
    await expectRefused(bytes, 'symlink', 'link', new RegExp(`symbolic link \\(to "${sandbox}"\\) is not allowed`));
  });

  it('refuses hard links', async () => {
    await expectRefused(
      rawTarGz([
        { name: 'a', data: 'x' },
        { name: 'b', type: '1', linkname: '/etc/passwd' },
      ]),
      'hardlink',
      'b',
      /hard link \(to "\/etc\/passwd"\)/,
    );
  });

  it('refuses devices and FIFOs', async () => {
    await expectRefused(rawTarGz([{ name: 'dev/tty', type: '3' }]), 'device', 'dev/tty', /character device/);
    await expectRefused(rawTarGz([{ name: 'dev/sda', type: '4' }]), 'device', 'dev/sda', /block device/);
    await expectRefused(rawTarGz([{ name: 'pipe', type: '6' }]), 'fifo', 'pipe', /FIFO/);
    await expectRefused(rawTarGz([{ name: 'sparse', type: 'S', data: 'x' }]), 'unsupported-entry', 'sparse', /unsupported entry type "S"/);
  });

  it('refuses archives node-tar makes from a tree with links', async () => {
    const src = join(sandbox, '..', `src-${randomUUID()}`);
    await mkdir(src);
    try {
      await writeFile(join(src, 'real.txt'), 'x');
      await symlink('/etc/passwd', join(src, 'passwd'));
      const withSymlink = await nodeTar(src, ['real.txt', 'passwd']);
      await expectRefused(withSymlink, 'symlink', 'passwd', /symbolic link \(to "\/etc\/passwd"\)/);
      await rm(join(src, 'passwd'));
      await link(join(src, 'real.txt'), join(src, 'twin.txt'));
      const withHardlink = await nodeTar(src, ['real.txt', 'twin.txt']);
      await expectRefused(withHardlink, 'hardlink', 'twin.txt', /hard link/);
    } finally {
      await rm(src, { recursive: true, force: true });
    }
  });

  it('refuses duplicate names, also after normalisation', async () => {
    await expectRefused(
      rawTarGz([
        { name: 'a.txt', data: '1' },
        { name: 'a.txt', data: '2' },
      ]),
      'duplicate',
      'a.txt',
      /appears twice/,
    );
    await expectRefused(
      rawTarGz([
        { name: 'a.txt', data: '1' },
        { name: './a.txt', data: '2' },
      ]),
      'duplicate',
      './a.txt',
      /same path as "a\.txt"/,
    );
    await expectRefused(
      rawTarGz([
        { name: 'd/b', data: '1' },
        { name: 'd//b/', type: '5' },
      ]),
      'duplicate',
      'd//b/',
      /same path as "d\/b"/,
    );
    const nfc = 'caf\u00e9';
    const nfd = 'cafe\u0301';
    await expectRefused(
      rawTarGz([
        { name: nfc, data: '1' },
        { name: nfd, data: '2' },
      ]),
      'duplicate',
      nfd,
      /same path/,
    );
  });

  it('refuses a file that is also a folder of another entry', async () => {
    await expectRefused(
      rawTarGz([
        { name: 'a', data: 'x' },
        { name: 'a/b', data: 'y' },
      ]),
      'path-conflict',
      'a',
      /is a file but also the folder of "a\/b"/,
    );
  });

  it('refuses too many entries and too many bytes (a gzip bomb stops at the cap)', async () => {
    const many = rawTarGz(Array.from({ length: 30 }, (_, i) => ({ name: `f${i}`, data: 'x' })));
    await expectRefused(many, 'too-many-entries', undefined, /more than 20 entries/, { maxEntries: 20 });
    expect(readTarGzSafelySync(many, { maxEntries: 30 }).size).toBe(30);

    // 64 MiB of zeros gzip to well under 200 KiB; decompression stops at the cap
    const bomb = rawTarGz([{ name: 'zeros', data: Buffer.alloc(64 * 1024 * 1024) }]);
    expect(bomb.length).toBeLessThan(200 * 1024);
    await expectRefused(bomb, 'too-large', undefined, /decompressed size exceeds the limit of 1048576 bytes/, { maxBytes: 1024 * 1024 });
    expect(readTarGzSafelySync(bomb).get('zeros')?.length).toBe(64 * 1024 * 1024); // the 1 GiB default lets it through
  });

  it('refuses a pax record holding a newline, which node-tar splits into records of its own (another name, another size)', async () => {
    const data = Buffer.alloc(1024, 0x41);
    for (const inner of [paxRecord('path', 'smuggled'), paxRecord('size', '512')]) {
      const archive = rawTar([
        { name: 'PaxHeader/x', type: 'x', data: paxRecord('comment', `x\n${inner.slice(0, -1)}`) },
        { name: 'plugins.mjs', data },
      ]);
      // The oracle: node-tar drops the outer record (its length is wrong for one line) and applies the inner one.
      const nodeTar = await nodeTarListing(archive);
      expect(nodeTar.lines.join('\n')).not.toContain(`file plugins.mjs ${createHash('sha256').update(data).digest('hex')}`);
      await expectRefused(gzipSync(archive), 'ambiguous', 'PaxHeader/x', /pax header record at byte 0 holds a newline/);
    }
  });

  it('checks a gzip header CRC (FHCRC) as GNU tar and node-tar do: a wrong one is refused, a right one read', async () => {
    const archive = rawTar([{ name: 'a.txt', data: 'x' }]);
    await expectRefused(gzipWithHeader(archive, 'wrong-header-crc'), 'bad-gzip', undefined, /gzip header checksum \(FHCRC\) does not match the header/);
    expect(execFileSync('tar', ['-tzf', '-'], { input: gzipWithHeader(archive, 'header-crc'), encoding: 'utf8' })).toBe('a.txt\n');
    expect(() => execFileSync('tar', ['-tzf', '-'], { input: gzipWithHeader(archive, 'wrong-header-crc'), stdio: 'pipe' })).toThrow();
    expect([...readTarGzSafelySync(gzipWithHeader(archive, 'header-crc')).keys()]).toEqual(['a.txt']);
  });

  it('refuses truncated archives', async () => {
    const good = rawTarGz([{ name: 'a.txt', data: 'x'.repeat(5000) }]);
    await expectRefused(good.subarray(0, Math.floor(good.length / 2)), 'truncated', undefined, /gzip stream is truncated/);
    await expectRefused(rawTarGz([{ name: 'a.txt', data: 'x' }], { endMarker: false }), 'truncated', undefined, /without the end-of-archive marker/);
    const short = gzipSync(rawTar([{ name: 'big.bin', data: 'x', size: 4096 }], { endMarker: false }));
    await expectRefused(short, 'truncated', 'big.bin', /entry data runs past the end of the archive \(needs 4096 bytes\)/);
  });

  it('refuses files that are not gzip, and tar headers that are corrupt', async () => {
    await expectRefused(rawTar([{ name: 'a', data: 'x' }]), 'not-gzip', undefined, /not a gzip file/);
    await expectRefused(Buffer.from('PK\u0003\u0004 a zip file'), 'not-gzip', undefined, /not a gzip file/);
    await expectRefused(gzipSync(Buffer.from('hello world, not a tar')), 'truncated', undefined, /end-of-archive/);
    await expectRefused(gzipSync(Buffer.alloc(512, 'a')), 'bad-header', undefined, /header checksum mismatch at offset 0/);
    await expectRefused(rawTarGz([{ name: 'a', data: 'x', corruptChecksum: true }]), 'bad-header', undefined, /checksum mismatch/);
    const bad = Buffer.from(rawTarGz([{ name: 'a', data: 'x' }]));
    bad[bad.length - 8] ^= 0xff; // CRC
    await expectRefused(bad, 'bad-gzip', undefined, /corrupt gzip stream/);
    const dirWithData = rawTarGz([{ name: 'd/', type: '5', data: 'smuggled' }]);
    await expectRefused(dirWithData, 'bad-header', 'd/', /directory entry has a size/);
  });

  it('never writes into a non-empty or non-folder target', async () => {
    const ok = writeTarGz([{ path: 'a.txt', data: 'x' }]);
    await writeFile(join(sandbox, 'busy.txt'), 'x');
    await expect(extractTarGzSafely(ok, sandbox)).rejects.toThrow(/is not empty/);
    await expect(extractTarGzSafely(ok, join(sandbox, 'busy.txt'))).rejects.toThrow(/not a directory/);
    expect(await everything(sandbox)).toEqual(['busy.txt']);
  });
});

describe('refusing what other tar readers would extract differently', () => {
  const pax = (...records: [string, string][]): RawEntry => ({ name: 'PaxHeader/x', type: 'x', data: records.map(([k, v]) => paxRecord(k, v)).join('') });

  it('refuses two pax headers in a row: GNU tar keeps only the last, so the ustar size decides and hidden entries appear', async () => {
    // flotilla used to merge them (size 1024 from the first); GNU tar reads the entry as 0 bytes and the data as a header.
    const hidden = rawTar([{ name: 'hidden-by-gnu-tar', data: 'surprise' }], { endMarker: false });
    const bytes = rawTarGz([pax(['size', String(hidden.length)]), pax(['path', 'innocent.txt']), { name: 'innocent.txt', data: hidden, size: 0 }]);
    await expectRefused(bytes, 'ambiguous', 'PaxHeader/x', /a pax header follows a pax header for the same entry \(readers disagree on which applies\)/);
  });

  it('refuses GNU.sparse.* records, which rename or resize an entry for GNU tar only', async () => {
    for (const key of ['GNU.sparse.name', 'GNU.sparse.major', 'GNU.sparse.realsize']) {
      const bytes = rawTarGz([pax([key, key === 'GNU.sparse.name' ? 'charts/evil.tgz' : '1']), { name: 'charts/web-1.0.0.tgz', data: 'x' }]);
      await expectRefused(bytes, 'ambiguous', 'PaxHeader/x', new RegExp(`pax header has the sparse-file record "${key.replace(/\./g, '\\.')}"`));
    }
  });

  it('refuses a pax size that disagrees with the header, and records readers interpret differently', async () => {
    await expectRefused(
      rawTarGz([pax(['size', '600']), { name: 'a', data: Buffer.alloc(600), size: 512 }]),
      'ambiguous',
      'a',
      /pax size 600 disagrees with the header's size 512/,
    );
    await expectRefused(rawTarGz([pax(['hdrcharset', 'BINARY']), { name: 'a', data: 'x' }]), 'ambiguous', 'PaxHeader/x', /record "hdrcharset"/);
    await expectRefused(
      rawTarGz([
        { name: 'PaxHeader/x', type: 'x', data: `${paxRecord('path', 'a')}${paxRecord('path', 'b')}` },
        { name: 'c', data: 'x' },
      ]),
      'ambiguous',
      'PaxHeader/x',
      /sets "path" twice/,
    );
    await expectRefused(
      rawTarGz([
        { name: 'PaxHeader/x', type: 'x', data: `${paxRecord('path', 'a')}\0\0` },
        { name: 'c', data: 'x' },
      ]),
      'bad-header',
      'PaxHeader/x',
      /malformed pax header/,
    );
    const global: RawEntry = { name: 'pax_global_header', type: 'g', data: paxRecord('size', '0') };
    await expectRefused(rawTarGz([global, { name: 'a', data: 'x' }]), 'ambiguous', 'pax_global_header', /global pax header has the record "size"/);
    await expectRefused(
      rawTarGz([{ name: '././@LongLink', type: 'L', data: 'one\0' }, pax(['path', 'two']), { name: 'n', data: 'x' }]),
      'ambiguous',
      'PaxHeader/x',
      /follows a GNU long name/,
    );
  });

  it('accepts the descriptive pax records real writers add, and a global comment (git archive)', () => {
    const comment: RawEntry = { name: 'pax_global_header', type: 'g', data: paxRecord('comment', 'f'.repeat(40)) };
    const files = readTarGzSafelySync(
      rawTarGz([comment, pax(['mtime', '1700000000.5'], ['uname', ''], ['SCHILY.xattr.user.x', 'y']), { name: 'a', data: 'x' }]),
    );
    expect([...files.keys()]).toEqual(['a']);
  });

  it('refuses data after the end-of-archive marker, a lone zero block, and bytes after the gzip stream', async () => {
    const entries: RawEntry[] = [{ name: 'a', data: 'x' }];
    const tail = rawTar([{ name: 'hidden', data: 'x' }]);
    await expectRefused(gzipSync(Buffer.concat([rawTar(entries), tail])), 'trailing-data', undefined, /data after the end-of-archive marker, at offset 2048/);
    await expectRefused(
      gzipSync(Buffer.concat([rawTar(entries, { endMarker: false }), Buffer.alloc(512), tail])),
      'trailing-data',
      undefined,
      /a lone zero block at offset 1024 is followed by more data/,
    );
    await expectRefused(
      gzipSync(Buffer.concat([rawTar(entries, { endMarker: false }), Buffer.alloc(512)])),
      'truncated',
      undefined,
      /one zero block instead of two/,
    );
    const good = rawTarGz(entries);
    await expectRefused(Buffer.concat([good, gzipSync(tail)]), 'trailing-data', undefined, /bytes after the gzip stream/);
    await expectRefused(Buffer.concat([good, Buffer.from('junk')]), 'trailing-data', undefined, /4 bytes after the gzip stream/);
  });

  it('refuses names readers spell differently: not UTF-8, backslashes, old-style folders, too long for Linux', async () => {
    await expectRefused(rawTarGz([{ name: '', nameBytes: Buffer.from([0x61, 0xff, 0x62]), data: 'x' }]), 'bad-path', 'a\ufffdb', /name is not valid UTF-8/);
    await expectRefused(rawTarGz([{ name: 'dir\\file', data: 'x' }]), 'bad-path', 'dir\\file', /backslash/);
    await expectRefused(rawTarGz([{ name: 'old/', type: '\0' }]), 'ambiguous', 'old/', /trailing slash/);
    const segment = 'n'.repeat(256);
    await expectRefused(rawTarGz([pax(['path', segment]), { name: 'n', data: 'x' }]), 'bad-path', segment, /segment is longer than 255 bytes/);
  });

  it('refuses headers only some readers parse: v7, star or GNU extra fields, odd numbers, signed checksums', async () => {
    await expectRefused(rawTarGz([{ name: 'a', data: 'x', magic: 'v7' }]), 'bad-header', 'a', /not a ustar, pax or GNU tar header at offset 0/);
    await expectRefused(rawTarGz([{ name: 'a', data: 'x', magic: 'gnu', prefix: 'p' }]), 'ambiguous', 'a', /outside plain GNU/);
    await expectRefused(rawTarGz([{ name: 'a', data: 'x', patches: [{ offset: 508, bytes: Buffer.from('tar\0') }] }]), 'ambiguous', 'a', /outside plain ustar/);
    await expectRefused(
      rawTarGz([{ name: 'a', data: 'x', patches: [{ offset: 100, bytes: Buffer.from('\u0000000644\u0000') }] }]),
      'bad-header',
      'a',
      /bad mode field/,
    );
    await expectRefused(rawTarGz([{ name: 'h\u00ff', data: 'x', signedChecksum: true }]), 'bad-header', undefined, /checksum mismatch/);
  });
});

/** A .tgz of `paths` under `cwd`, made by node-tar (written next to the sandbox, never inside it). */
async function nodeTar(cwd: string, paths: string[]): Promise<Buffer> {
  const file = join(tmpdir(), `flotilla-nodetar-${randomUUID()}.tgz`);
  try {
    // Synchronously: node-tar's streaming gzip has thrown an uncaught "zlib: stream error" on a busy machine.
    tarCreate({ cwd, gzip: true, portable: true, file, sync: true }, paths);
    return await readFile(file);
  } finally {
    await rm(file, { force: true });
  }
}

describe('reading and extracting well-formed archives', () => {
  it('extracts files (0644) and folders (0755) and reports them in order', async () => {
    const bytes = rawTarGz([
      { name: './', type: '5' },
      { name: 'empty/', type: '5' },
      { name: 'b/c.txt', data: 'c' },
      { name: './a.txt', data: 'a' },
    ]);
    const target = join(sandbox, 'out');
    const result = await extractTarGzSafely(bytes, target);
    expect(result.files).toEqual(['b/c.txt', 'a.txt']);
    expect(await everything(sandbox)).toEqual(['out', 'out/a.txt', 'out/b', 'out/b/c.txt', 'out/empty']);
    expect((await stat(join(target, 'a.txt'))).mode & 0o777).toBe(0o644);
    expect((await stat(join(target, 'empty'))).mode & 0o777).toBe(0o755);
    expect(await readFile(join(target, 'b', 'c.txt'), 'utf8')).toBe('c');
  });

  it('reads from a path or a buffer into a map keyed by normalised path', async () => {
    const file = join(sandbox, 'x.tgz');
    await writeFile(
      file,
      writeTarGz([
        { path: 'z.txt', data: 'z' },
        { path: 'a/b.txt', data: Buffer.from([0, 1, 2]) },
      ]),
    );
    const files = await readTarGzSafely(file);
    expect([...files.keys()]).toEqual(['a/b.txt', 'z.txt']);
    expect(files.get('a/b.txt')).toEqual(Buffer.from([0, 1, 2]));
    await expect(readTarGzSafely(join(sandbox, 'nope.tgz'))).rejects.toThrow(/nope\.tgz: no such file or folder$/);
    await expect(readTarGzSafely(Buffer.from('nope'), { label: 'upload.tgz' })).rejects.toThrow(/archive rejected \(upload\.tgz\): not a gzip file/);
  });

  it('reads what GNU tar writes (long names, pax format) and what node-tar writes', async () => {
    const src = join(sandbox, 'src');
    const long = `${'d'.repeat(60)}/${'e'.repeat(60)}/${'f'.repeat(120)}.yaml`;
    await mkdir(join(src, long, '..'), { recursive: true });
    await writeFile(join(src, long), 'deep');
    await writeFile(join(src, 'caf\u00e9.txt'), 'unicode');
    for (const format of ['gnu', 'pax']) {
      const archive = execFileSync('tar', ['-C', src, `--format=${format}`, '-czf', '-', '.']);
      const files = readTarGzSafelySync(archive);
      expect(files.get(long)?.toString(), format).toBe('deep');
      expect(files.get('caf\u00e9.txt')?.toString(), format).toBe('unicode');
    }
    const fromNodeTar = await nodeTar(src, ['.']);
    expect(readTarGzSafelySync(fromNodeTar).get(long)?.toString()).toBe('deep');
  });
});
