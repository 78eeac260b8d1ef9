/**
 * Writes that cannot be hijacked or torn: the atomic write creates an
 * unpredictable temp name exclusively, never through a link, then renames;
 * the build's caches are read defensively (a torn or foreign entry is
 * ignored and rebuilt, never a failure).
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { open } from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { createExclusive, tempNameFor, writeFileAtomic } from '../../src/files/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

describe('the atomic write', () => {
  it('refuses to create through a planted symbolic link or over a planted file (O_EXCL, O_NOFOLLOW)', async () => {
    const dir = tempDir();
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const planted = join(dir, '.out.tgz.partial');
    symlinkSync(victim, planted);
    await expect(createExclusive(planted)).rejects.toMatchObject({ code: 'EEXIST' });
    writeFileSync(join(dir, 'file'), 'x');
    await expect(createExclusive(join(dir, 'file'))).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  });

  it('uses a fresh unguessable name in the target folder each time, and leaves only the target', async () => {
    const dir = tempDir();
    const target = join(dir, 'app.tgz');
    const names = new Set(Array.from({ length: 50 }, () => tempNameFor(target)));
    expect(names.size).toBe(50);
    for (const name of names) expect(name).toMatch(new RegExp(`^${dir}/\\.app\\.tgz\\.[0-9a-f]{24}\\.partial$`));
    await writeFileAtomic(target, 'one');
    await writeFileAtomic(target, 'two', { mode: 0o600 });
    expect(readdirSync(dir)).toEqual(['app.tgz']);
    expect(readFileSync(target, 'utf8')).toBe('two');
    expect(lstatSync(target).mode & 0o777).toBe(0o600);
  });

  it('replaces a symbolic link at the target instead of writing through it', async () => {
    const dir = tempDir();
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const target = join(dir, 'out.tgz');
    symlinkSync(victim, target);
    await writeFileAtomic(target, 'new');
    expect(lstatSync(target).isSymbolicLink()).toBe(false);
    expect(readFileSync(target, 'utf8')).toBe('new');
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  });

  it('leaves no temp file behind when the rename fails', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'taken', 'inside'), { recursive: true });
    await expect(writeFileAtomic(join(dir, 'taken'), 'x')).rejects.toMatchObject({ code: expect.stringMatching(/EISDIR|ENOTEMPTY|EEXIST/) });
    expect(readdirSync(dir)).toEqual(['taken']);
  });

  it('leaves no partial file behind when the process is stopped (Ctrl-C) while it writes', async () => {
    const dir = tempDir();
    const target = join(dir, 'big.tgz');
    // A process writing a file, as the build writes a large tarball, stopped by SIGINT while it writes. Its write
    // never finishes (the file handle's writeFile hangs once it has begun), so the signal always lands mid-write,
    // however fast the disk or slow the machine.
    const files = JSON.stringify(pathToFileURL(resolve(import.meta.dirname, '../../dist/files/index.js')).href);
    const script = `
      setInterval(() => {}, 60_000); // the process lives on, as a build does, until the signal
      const { open } = await import('node:fs/promises');
      const probe = await open(${JSON.stringify(dir)}, 'r');
      const FileHandle = probe.constructor;
      await probe.close();
      const write = FileHandle.prototype.writeFile;
      FileHandle.prototype.writeFile = function (data) { void write.call(this, data.subarray(0, 1024 * 1024)); return new Promise(() => {}); };
      const { writeFileAtomic } = await import(${files});
      await writeFileAtomic(${JSON.stringify(target)}, Buffer.alloc(64 * 1024 * 1024, 7));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    const ended = new Promise<NodeJS.Signals | null>((done) => child.on('exit', (_code, signal) => done(signal)));
    let partial: string | undefined;
    for (let i = 0; i < 2000 && !partial; i++) {
      partial = readdirSync(dir).find((name) => name.endsWith('.partial'));
      if (!partial) await new Promise((done) => setTimeout(done, 2));
    }
    expect(partial).toBeDefined();
    child.kill('SIGINT');
    expect(await ended).toBe('SIGINT');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('flushes to the disk before the rename, unless told the file is a cache (durable: false)', async () => {
    const dir = tempDir();
    const probe = await open(join(dir, 'probe'), 'w');
    const FileHandle = probe.constructor as { prototype: { sync(): Promise<void> } };
    await probe.close();
    const sync = vi.spyOn(FileHandle.prototype, 'sync');
    try {
      await writeFileAtomic(join(dir, 'output'), 'kept');
      expect(sync).toHaveBeenCalledTimes(1);
      await writeFileAtomic(join(dir, 'cache'), 'cached', { durable: false });
      expect(sync).toHaveBeenCalledTimes(1);
      expect(readFileSync(join(dir, 'cache'), 'utf8')).toBe('cached');
    } finally {
      sync.mockRestore();
    }
  });
});

describe('the build caches, read defensively', () => {
  const cacheFiles = (cache: string) => readdirSync(cache).sort();

  it('ignores and rebuilds a torn, foreign or tampered plugin cache entry', async () => {
    const app = writeApp();
    const out = tempDir();
    const first = await buildApp(app, { outDir: out });
    const cache = join(out, '.flotilla-cache');
    const pluginEntry = cacheFiles(cache).find((f) => f.startsWith('plugins-'))!;
    const original = readFileSync(join(cache, pluginEntry), 'utf8');
    // A cache entry (src/cache): its header line, then the content, here the bundle's files.
    const header = original.slice(0, original.indexOf('\n') + 1);
    const files = JSON.parse(original.slice(header.length)) as Record<string, string>;
    const tampered = header + JSON.stringify({ ...files, 'plugins.mjs': Buffer.from('process.exit(9)').toString('base64') });
    for (const bad of [original.slice(0, original.length / 2), '{"format":"someone-else/1"}', 'null', '[1,2]', tampered]) {
      writeFileSync(join(cache, pluginEntry), bad);
      const again = await buildApp(app, { outDir: out });
      expect(again.sha256).toBe(first.sha256);
      expect(readFileSync(join(cache, pluginEntry), 'utf8')).toBe(original);
    }
  });

  it('ignores a torn or foreign chart cache index, and entries that would read outside the cache', async () => {
    const app = writeApp();
    const out = tempDir();
    const first = await buildApp(app, { outDir: out });
    const index = join(out, '.flotilla-cache', 'index.json');
    const original = readFileSync(index, 'utf8');
    const header = original.slice(0, original.indexOf('\n') + 1);
    const parsed = JSON.parse(original.slice(header.length)) as { format: string; charts: Record<string, { name: string }> };
    const [dir, entry] = Object.entries(parsed.charts)[0]!;
    const climbing = header + JSON.stringify({ ...parsed, charts: { ...parsed.charts, [dir]: { ...entry, name: '../../../../etc/x' } } });
    for (const bad of [original.slice(0, 40), '{"format":"flotilla-chart-cache/3","charts":{"x":{"name":1}}}', 'null', climbing]) {
      writeFileSync(index, bad);
      const again = await buildApp(app, { outDir: out });
      expect(again.sha256).toBe(first.sha256);
    }
    expect(existsSync(index)).toBe(true);
  });
});
