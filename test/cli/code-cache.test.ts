/**
 * The shipped CLI keeps V8's bytecode of each command between runs
 * (src/cli/code-cache.ts). A cache V8 accepts is used as it is; one it rejects
 * (torn, foreign) is written again whole; a cache that cannot be written
 * costs nothing but time; a failed command leaves no file.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, writeApp } from '../support/app-fixture.js';

const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');

function run(cacheDir: string, args: readonly string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, FLOTILLA_CACHE_DIR: cacheDir, ...env } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const entries = (cacheDir: string) => readdirSync(join(cacheDir, 'code-cache')).sort();
const identity = (file: string) => {
  const { ino, mtimeMs, size } = statSync(file);
  return { ino, mtimeMs, size };
};

describe('the code cache', () => {
  it('is written by the first run of a command and used, unchanged, by the next', () => {
    const cacheDir = tempDir();
    const app = writeApp();
    const first = run(cacheDir, ['releases', app]);
    expect(first.status, first.stderr).toBe(0);
    const [file, ...others] = entries(cacheDir);
    expect(others).toEqual([]);
    expect(file).toMatch(/^[0-9a-f]{16}-[0-9a-f]{16}-[0-9a-f]{16}\.bin$/);
    const path = join(cacheDir, 'code-cache', file!);
    const written = identity(path);
    expect(written.size).toBeGreaterThan(10_000);
    // A cache V8 rejected would be written again: an untouched file is one V8 ran from.
    expect(run(cacheDir, ['releases', app])).toEqual(first);
    expect(identity(path)).toEqual(written);
    // Another command, and help, have their own.
    expect(run(cacheDir, ['releases', '--help']).status).toBe(0);
    expect(entries(cacheDir)).toHaveLength(2);
  });

  it('replaces a torn or foreign file with a whole one', () => {
    const cacheDir = tempDir();
    const app = writeApp();
    const expected = run(cacheDir, ['releases', app]);
    const path = join(cacheDir, 'code-cache', entries(cacheDir)[0]!);
    const whole = statSync(path).size;
    for (const spoil of [() => truncateSync(path, Math.floor(whole / 2)), () => writeFileSync(path, Buffer.alloc(whole, 7))]) {
      spoil();
      expect(run(cacheDir, ['releases', app])).toEqual(expected);
      const rewritten = identity(path);
      expect(rewritten.size).toBeGreaterThan(whole / 2);
      expect(readFileSync(path).subarray(0, 64).equals(Buffer.alloc(64, 7))).toBe(false);
      // …and V8 accepts the new one.
      expect(run(cacheDir, ['releases', app])).toEqual(expected);
      expect(identity(path)).toEqual(rewritten);
    }
    expect(entries(cacheDir)).toHaveLength(1);
  });

  it('runs no bytecode planted in its folder, and uses no folder others may open', () => {
    const cacheDir = tempDir();
    const expected = run(cacheDir, ['--version']);
    expect(expected.status).toBe(0);
    const path = join(cacheDir, 'code-cache', entries(cacheDir)[0]!);
    const genuine = readFileSync(path);
    // V8 checks only that cached bytecode was made by the same V8 and flags for source of the same length:
    // bytecode of a script as long as the bundle, made by a Node started as the CLI's is, would run.
    const bundle = join(
      dirname(cli),
      readdirSync(dirname(cli)).find((name) => /^flotilla-[0-9a-f]+\.cjs$/.test(name))!,
    );
    const marker = join(tempDir(), 'planted-code-ran');
    const plantedData = join(tempDir(), 'planted.bin');
    const maker = `
      const { Script } = require('node:vm');
      let source = '(function (exports, require) { require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran"); })';
      source += '/*' + ' '.repeat(${readFileSync(bundle, 'latin1').length} - source.length - 4) + '*/';
      const script = new Script(source, { filename: ${JSON.stringify(bundle)} });
      script.runInThisContext()({}, () => ({ writeFileSync() {} }));
      require('node:fs').writeFileSync(${JSON.stringify(plantedData)}, script.createCachedData());`;
    expect(spawnSync(process.execPath, ['-e', maker]).status).toBe(0);
    const planted = readFileSync(plantedData);
    const header = genuine.subarray(0, genuine.indexOf(0x0a) + 1);
    for (const [what, bytes] of [
      ['as V8 wrote it', planted],
      ['under the header of the genuine entry', Buffer.concat([header, planted])],
    ] as const) {
      writeFileSync(path, bytes);
      const result = run(cacheDir, ['--version', '--debug']);
      expect(existsSync(marker), what).toBe(false);
      expect(result.stdout, what).toBe(expected.stdout);
      expect(result.stderr, what).toMatch(
        /^flotilla: debug: code cache .* ignored: (not a flotilla cache entry|its content is not what this user wrote \(digest check failed\)); rebuilt\n$/,
      );
      // …and written again as an entry of this user's.
      expect(readFileSync(path).toString('latin1', 0, 17), what).toBe('flotilla-cache/1 ');
    }
    // A folder others may read or write is not used: neither read nor written.
    chmodSync(join(cacheDir, 'code-cache'), 0o755);
    writeFileSync(path, planted);
    const open = run(cacheDir, ['--version', '--debug']);
    expect(existsSync(marker)).toBe(false);
    expect(open.stderr).toBe(
      `flotilla: debug: code cache not used: ${join(cacheDir, 'code-cache')} is open to group or others (mode 755; chmod 700 it to use it)\n`,
    );
    expect(readFileSync(path).equals(planted)).toBe(true);
  });

  it('drops the files of an earlier bundle at the same place when it writes', () => {
    const cacheDir = tempDir();
    expect(run(cacheDir, ['build', '--help']).status).toBe(0);
    const [file] = entries(cacheDir);
    const [place] = file!.split('-');
    const earlier = `${place}-0000000000000000-0000000000000000.bin`;
    const elsewhere = `0000000000000000-0000000000000000-0000000000000000.bin`;
    for (const name of [earlier, elsewhere]) writeFileSync(join(cacheDir, 'code-cache', name), 'old');
    expect(run(cacheDir, ['releases', '--help']).status).toBe(0);
    expect(entries(cacheDir)).not.toContain(earlier);
    expect(entries(cacheDir)).toContain(elsewhere);
    expect(entries(cacheDir)).toHaveLength(3);
  });

  it('is not written after a failure, nor when turned off', () => {
    const cacheDir = tempDir();
    const typo = run(cacheDir, ['biuld']);
    expect(typo.status).toBe(2);
    expect(readdirSync(cacheDir)).toEqual([]);
    expect(run(cacheDir, ['build', '--help'], { FLOTILLA_NO_CODE_CACHE: '1' }).status).toBe(0);
    expect(readdirSync(cacheDir)).toEqual([]);
  });

  it('costs nothing but time when its folder cannot be written', () => {
    const notAFolder = join(tempDir(), 'file');
    writeFileSync(notAFolder, '');
    const help = run(notAFolder, ['build', '--help']);
    expect(help.status).toBe(0);
    expect(help.stderr).toBe('');
    expect(help.stdout).toContain('Usage: flotilla build');
  });
});
