/**
 * No parser differential: for every archive, flotilla either refuses it or
 * extracts exactly what GNU tar, Python's tarfile, node-tar (its pax parser
 * included) and Go's archive/tar extract (same files, same bytes, same
 * folders), each reading the archive gzipped (some with a header CRC, right
 * or wrong). The archives are thousands of random ones (seeded; FLOTILLA_DIFF_CASES and
 * FLOTILLA_DIFF_SEED change how many and which) plus what real writers make.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create as tarCreate } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTarGzEntriesSync, UnsafeArchiveError, writeTar } from '../../src/tarball/index.js';
import { buildGoLister, gnuTarListings, goListings, listing, nodeTarListing, pythonListings, type Listing } from '../support/tar-readers/readers.js';
import { seededRandom } from '../support/random.js';
import { randomArchive, type GeneratedArchive } from './archive-generator.js';
import { gzipWithHeader } from './raw-tar.js';

const CASES = Number(process.env.FLOTILLA_DIFF_CASES ?? 3000);
const SEED = Number(process.env.FLOTILLA_DIFF_SEED ?? 20261125);

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'flotilla-differential-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A tree with what real archives hold: long and non-ASCII names, empty and nested folders. */
function sourceTree(root: string, short: boolean): void {
  const long = short ? 'd/e/f.yaml' : `${'d'.repeat(60)}/${'e'.repeat(60)}/${'f'.repeat(120)}.yaml`;
  for (const [path, text] of [
    [long, 'deep'],
    ['café/naïve.txt', 'unicode'],
    ['charts/web-1.0.0.tgz', 'x'.repeat(700)],
    ['metadata.yaml', 'app_name: demo\n'],
    ['empty.txt', ''],
  ] as const) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  mkdirSync(join(root, 'empty-folder'), { recursive: true });
}

/** Archives as GNU tar, Python's tarfile, node-tar, git archive and flotilla write them: all must be accepted. */
async function writerArchives(): Promise<GeneratedArchive[]> {
  const src = join(work, 'src');
  const shortSrc = join(work, 'short-src');
  sourceTree(src, false);
  sourceTree(shortSrc, true);
  const out: GeneratedArchive[] = [];
  for (const format of ['gnu', 'oldgnu', 'pax', 'posix'])
    out.push({ label: `GNU tar --format=${format}`, tar: execFileSync('tar', ['-C', src, `--format=${format}`, '-cf', '-', '.']) });
  out.push({ label: 'GNU tar --format=ustar', tar: execFileSync('tar', ['-C', shortSrc, '--format=ustar', '-cf', '-', '.']) });
  for (const format of ['PAX_FORMAT', 'GNU_FORMAT']) {
    const script = `import sys, tarfile\nwith tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=tarfile.${format}) as t: t.add(sys.argv[1], arcname=".")`;
    out.push({ label: `Python tarfile ${format}`, tar: execFileSync('python3', ['-c', script, src]) });
  }
  for (const portable of [true, false]) {
    const file = join(work, `node-tar-${portable}.tar`);
    await tarCreate({ cwd: src, portable, file }, ['.']);
    out.push({ label: `node-tar portable=${portable}`, tar: readFileSync(file) });
  }
  const repo = join(work, 'repo');
  execFileSync('bash', [
    '-c',
    `cp -r "${shortSrc}" "${repo}" && cd "${repo}" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm x`,
  ]);
  out.push({ label: 'git archive', tar: execFileSync('git', ['-C', repo, 'archive', '--format=tar', 'HEAD']) });
  out.push({
    label: 'flotilla writeTar',
    tar: writeTar([
      { path: 'a/b.yaml', data: 'b' },
      { path: `${'n'.repeat(120)}/é.txt`, data: 'long' },
    ]),
  });
  return out;
}

/** Every archive is compared as a .tgz (how bundles and charts arrive), its gzip header as the generator chose. */
const compressed = (archive: GeneratedArchive): Buffer => gzipWithHeader(archive.tar, archive.gzip ?? 'plain');

function flotillaListing(archive: GeneratedArchive): Listing | UnsafeArchiveError {
  try {
    const entries = readTarGzEntriesSync(compressed(archive), { label: archive.label });
    return listing(entries.map((e) => ({ name: e.path, type: e.type === 'file' ? 'file' : 'dir', sha256: e.type === 'file' ? sha(e.data) : undefined })));
  } catch (error) {
    if (error instanceof UnsafeArchiveError) return error;
    throw new Error(`${archive.label}: flotilla crashed instead of refusing: ${(error as Error).stack}`);
  }
}

const sha = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

describe('tar readers agree on every archive flotilla accepts', () => {
  it(`GNU tar, Python, node-tar and Go extract what flotilla does, over ${CASES} random archives and real writers' output`, async () => {
    const writers = await writerArchives();
    const generated = Array.from({ length: CASES }, (_, i) => {
      const archive = randomArchive(seededRandom(SEED + i));
      return { ...archive, label: `case ${i} (seed ${SEED + i}): ${archive.label}` };
    });
    const accepted: { archive: GeneratedArchive; listing: Listing; file: string }[] = [];
    const refusedWriters: string[] = [];
    const refusals = new Map<string, number>();
    mkdirSync(join(work, 'archives'));
    for (const archive of [...writers, ...generated]) {
      const result = flotillaListing(archive);
      if (result instanceof UnsafeArchiveError) {
        if (writers.includes(archive)) refusedWriters.push(result.message);
        refusals.set(result.problem, (refusals.get(result.problem) ?? 0) + 1);
        continue;
      }
      const file = join(work, 'archives', `${accepted.length}.tgz`);
      writeFileSync(file, compressed(archive));
      accepted.push({ archive, listing: result, file });
    }
    expect(refusedWriters).toEqual([]);

    const files = accepted.map((a) => a.file);
    const go = buildGoLister(work);
    if (go.skipped) console.warn(go.skipped);
    const took: string[] = [];
    const timed = async <T>(name: string, run: () => T | Promise<T>): Promise<T> => {
      const started = performance.now();
      const result = await run();
      took.push(`${name} ${((performance.now() - started) / 1000).toFixed(1)} s`);
      return result;
    };
    const readers: Record<string, Listing[]> = {
      'GNU tar': await timed('GNU tar', () => gnuTarListings(files, work)),
      'Python tarfile': await timed('Python', () => pythonListings(files)),
      'node-tar': await timed('node-tar', () => Promise.all(accepted.map((a) => nodeTarListing(compressed(a.archive))))),
      ...(go.binary ? { 'Go archive/tar': await timed('Go', () => goListings(go.binary!, files)) } : {}),
    };
    const disagreements: string[] = [];
    accepted.forEach(({ archive, listing: ours }, i) => {
      for (const [reader, listings] of Object.entries(readers)) {
        const theirs = listings[i]!;
        if (!theirs.ok) disagreements.push(`${archive.label}: flotilla accepts it, ${reader} fails: ${theirs.error}`);
        else if (theirs.lines.join('\n') !== ours.lines.join('\n')) {
          disagreements.push(`${archive.label}: ${reader} extracts\n  ${theirs.lines.join('\n  ')}\nflotilla\n  ${ours.lines.join('\n  ')}`);
        }
      }
    });
    expect({ disagreements: disagreements.length, first: disagreements.slice(0, 5) }).toEqual({ disagreements: 0, first: [] });
    // The property means something only if both sides are well represented.
    const refused = writers.length + generated.length - accepted.length;
    console.info(
      `differential: ${generated.length + writers.length} archives, ${accepted.length} accepted and compared with ${Object.keys(readers).join(', ')} (${took.join(', ')}); ${refused} refused (${[...refusals].map(([p, n]) => `${p} ${n}`).join(', ')})`,
    );
    expect(accepted.length).toBeGreaterThan(generated.length * 0.3);
    expect(refused).toBeGreaterThan(generated.length * 0.2);
  }, 300_000);
});
