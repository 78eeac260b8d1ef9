/**
 * A 10 MB gzip bomb (about 10 GB of zeros) is refused by `inspect` and
 * `verify` without inflating up to the cap in memory: the child's peak
 * resident set (process.resourceUsage().maxRSS, read as it exits) stays under
 * 200 MB, where inflating to the 1 GiB cap took it past 1 GB.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/app-fixture.js';
import { rawHeader } from './raw-tar.js';

const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');
const MB = 1024 * 1024;

/**
 * A gzip member of `megabytes` MiB of zeros behind one tar header, made
 * without compressing them all: a 1 MiB segment deflated up to a full flush
 * (byte-aligned, needing no history) is repeated, then a final empty block.
 */
function gzipBomb(megabytes: number): Buffer {
  const segment = (data: Buffer) => deflateRawSync(data, { finishFlush: constants.Z_FULL_FLUSH });
  const header = rawHeader({ name: 'zeros', data: '', size: 0o77777777777 });
  const zeros = segment(Buffer.alloc(MB));
  const finalEmptyBlock = Buffer.from([0x03, 0x00]);
  const gzipHeader = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(Buffer.alloc(0)), 0);
  return Buffer.concat([gzipHeader, segment(header), ...Array.from({ length: megabytes }, () => zeros), finalEmptyBlock, trailer]);
}

/** Runs the CLI with a preload that writes the peak resident set (KiB) to a file as the process exits. */
function runMeasured(work: string, args: readonly string[]): { status: number | null; output: string; maxRssMb: number } {
  const probe = join(work, 'max-rss.cjs');
  const report = join(work, `rss-${args[0]}`);
  writeFileSync(probe, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, String(process.resourceUsage().maxRSS)));\n`);
  const run = spawnSync(process.execPath, ['--require', probe, cli, ...args], { encoding: 'utf8', env: { ...process.env, FLOTILLA_BUILD_SERVER: '0' } });
  return { status: run.status, output: run.stdout + run.stderr, maxRssMb: Number(readFileSync(report, 'utf8')) / 1024 };
}

describe('a gzip bomb', () => {
  it('of 10 MB is refused by inspect and verify under 200 MB of memory', () => {
    const work = tempDir();
    const bomb = gzipBomb(10_000);
    expect(bomb.length).toBeLessThan(11 * MB);
    expect(bomb.length).toBeGreaterThan(9 * MB);
    const file = join(work, 'bomb.tgz');
    writeFileSync(file, bomb);
    for (const command of ['inspect', 'verify']) {
      const run = runMeasured(work, [command, file]);
      // (verify reports its problems on stdout, inspect fails on stderr.)
      expect({ command, status: run.status, output: run.output }).toEqual({
        command,
        status: 1,
        output: expect.stringMatching(/bomb\.tgz\): decompressed size exceeds/),
      });
      console.info(`${command} of a 10 MB gzip bomb: refused, peak RSS ${Math.round(run.maxRssMb)} MB`);
      expect(run.maxRssMb, command).toBeLessThan(200);
    }
  });
});
