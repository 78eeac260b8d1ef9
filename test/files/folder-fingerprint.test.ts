/**
 * Folder fingerprints (src/files/folder-fingerprint.ts): the fingerprint the chart loader takes
 * as it reads a chart is the fingerprint a walk of its own takes of the same
 * folder — else every build after a cold one would find its charts changed —
 * whatever the walk skips (ignored files and folders), follows (links) or
 * orders otherwise (names Helm sorts by their bytes); and a change to any
 * file below, read or ignored, changes it.
 */
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createChartLoader } from '../../src/charts/index.js';
import { FolderFingerprinter, fingerprintFolder } from '../../src/files/index.js';
import { tempDir, writeFiles } from '../support/app-fixture.js';

function chartFolder(): string {
  const dir = tempDir();
  writeFiles(dir, {
    'Chart.yaml': 'apiVersion: v2\nname: demo\nversion: 0.1.0\n',
    'values.yaml': 'a: 1\n',
    '.helmignore': 'ignored.txt\nscratch/\n',
    'templates/cm.yaml': 'kind: ConfigMap\n',
    'templates/deep/nested/x.tpl': '{{/* x */}}\n',
    'templates/empty.tpl': '',
    'ignored.txt': 'not shipped\n',
    'scratch/notes/a.md': 'not shipped either\n',
    // One name sorts first by its UTF-16 units, the other by its UTF-8 bytes.
    'files/\u{E000}.txt': 'private use\n',
    'files/\u{1F600}.txt': 'emoji\n',
  });
  symlinkSync(join(dir, 'values.yaml'), join(dir, 'files', 'linked-values.yaml'));
  symlinkSync(join(dir, 'templates', 'deep'), join(dir, 'files', 'linked-folder'));
  return dir;
}

async function printRead(dir: string) {
  return (await createChartLoader({ fingerprint: () => true }).load(dir)).fingerprint;
}

describe('folder fingerprints', () => {
  it('the loader fingerprints a chart as a walk of its own does: ignored entries, links and byte order included', async () => {
    const dir = chartFolder();
    const walked = fingerprintFolder(dir)!;
    const read = (await printRead(dir))!;
    expect(read.digest).toBe(walked.digest);
    expect(read.newest).toBe(walked.newest);
    expect(read.hardLinked).toBeUndefined();
    // A loader not asked for fingerprints takes none.
    expect((await createChartLoader().load(dir)).fingerprint).toBeUndefined();
  });

  it('is dated when it began, not when it was finished (files changed while it was taken are then not trusted)', async () => {
    const fingerprinter = new FolderFingerprinter();
    const began = Date.now();
    await new Promise((done) => setTimeout(done, 30));
    const fingerprint = fingerprinter.finish()!;
    expect(fingerprint.takenAt).toBeGreaterThanOrEqual(began - 1);
    expect(fingerprint.takenAt).toBeLessThan(Date.now() - 20);
  });

  it('does not depend on the order a walk meets the files in (Helm sorts by bytes, a plain listing by the file system)', () => {
    const dir = chartFolder();
    const stats = ['values.yaml', 'files/\u{E000}.txt', 'files/\u{1F600}.txt', 'templates/cm.yaml'].map((path) => [path, statSync(join(dir, path))] as const);
    const fingerprinted = (order: typeof stats) => {
      const fingerprinter = new FolderFingerprinter();
      for (const [path, info] of order) fingerprinter.file(path, info);
      return fingerprinter.finish()!.digest;
    };
    expect(fingerprinted([...stats].reverse())).toBe(fingerprinted(stats));
    expect(fingerprinted([stats[2]!, stats[0]!, stats[3]!, stats[1]!])).toBe(fingerprinted(stats));
  });

  it('changes with any file below, read or ignored, and with a file added or removed', async () => {
    const dir = chartFolder();
    const before = fingerprintFolder(dir)!.digest;
    const seen = new Set([before]);
    const change = async (what: string, edit: () => void): Promise<void> => {
      edit();
      const walked = fingerprintFolder(dir)!.digest;
      expect(walked, what).not.toBe(before);
      expect((await printRead(dir))!.digest, what).toBe(walked);
      expect(seen.has(walked), what).toBe(false);
      seen.add(walked);
    };
    const past = new Date('2020-01-01T00:00:00Z');
    await change('a read file rewritten', () => writeFileSync(join(dir, 'values.yaml'), 'a: 2\n'));
    await change('its time alone', () => utimesSync(join(dir, 'values.yaml'), past, past));
    await change('an ignored file', () => writeFileSync(join(dir, 'ignored.txt'), 'still not shipped, but changed\n'));
    await change('a file in an ignored folder', () => writeFileSync(join(dir, 'scratch', 'notes', 'b.md'), 'new\n'));
    await change('a file added', () => writeFileSync(join(dir, 'templates', 'new.yaml'), 'kind: Secret\n'));
    await change('a file removed', () => rmSync(join(dir, 'templates', 'empty.tpl')));
  });

  it('says when a file below has another name (a hard link), and is none for a folder not there', async () => {
    const dir = chartFolder();
    const outside = join(tempDir(), 'shared.yaml');
    writeFileSync(outside, 'shared: true\n');
    linkSync(outside, join(dir, 'templates', 'shared.yaml'));
    expect(fingerprintFolder(dir)!.hardLinked).toBe(true);
    expect((await printRead(dir))!.hardLinked).toBe(true);
    expect(fingerprintFolder(join(dir, 'absent'))).toBeUndefined();
  });

  it('reads a file whole, as readFileSync does, empty or large', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'd'));
    const large = Buffer.alloc(300_000, 7);
    writeFileSync(join(dir, 'd', 'large.bin'), large);
    writeFileSync(join(dir, 'd', 'empty'), '');
    const fingerprinter = new FolderFingerprinter();
    expect(fingerprinter.read(join(dir, 'd', 'large.bin'), 'd/large.bin').equals(large)).toBe(true);
    expect(fingerprinter.read(join(dir, 'd', 'empty'), 'd/empty').length).toBe(0);
    // A file of /proc says size 0 and holds more: it is read to its end.
    expect(fingerprinter.read('/proc/self/cmdline', 'cmdline').equals(readFileSync('/proc/self/cmdline'))).toBe(true);
    expect(readFileSync('/proc/self/cmdline').length).toBeGreaterThan(0);
  });
});
