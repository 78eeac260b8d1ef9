import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CHECKSUM_FILES,
  extractTarGzSafely,
  formatChecksumProblem,
  md5sumFile,
  readTarGzSafelySync,
  sha256sumFile,
  verifyChecksums,
  writeTarGz,
  type TarEntry,
} from '../../src/tarball/index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flotilla-sums-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

const payload: TarEntry[] = [
  { path: 'metadata.yaml', data: 'app_name: demo\napp_version: 1.0-1\n' },
  { path: 'charts/keystone-0.3.1.tgz', data: Buffer.from([0x1f, 0x8b, 0, 1, 2]) },
  { path: 'fluxcd-manifests/base/kustomization.yaml', data: 'resources: [helmrepository.yaml]\n' },
  { path: 'plugins/with space.js', data: 'export {};\n' },
];

/** An app-like tarball with both checksum files, as a build would write it. */
function appTarball(entries: readonly TarEntry[] = payload): Buffer {
  return writeTarGz([...entries, { path: CHECKSUM_FILES.sha256, data: sha256sumFile(entries) }, { path: CHECKSUM_FILES.md5, data: md5sumFile(entries) }]);
}

describe('checksum files', () => {
  it('use the `<hex>  <path>` format, sorted, without the checksum files', () => {
    const text = md5sumFile([...payload, { path: 'checksum.md5', data: 'old' }, { path: 'checksum.sha256', data: 'old' }]);
    const lines = text.trimEnd().split('\n');
    expect(lines.map((l) => l.slice(34))).toEqual([
      'charts/keystone-0.3.1.tgz',
      'fluxcd-manifests/base/kustomization.yaml',
      'metadata.yaml',
      'plugins/with space.js',
    ]);
    for (const line of lines) expect(line).toMatch(/^[0-9a-f]{32} {2}\S/);
    expect(text.endsWith('\n')).toBe(true);
    expect(sha256sumFile(new Map(payload.map((e) => [e.path, e.data])))).toBe(sha256sumFile(payload));
    expect(sha256sumFile(payload).split('\n')[0]).toMatch(/^[0-9a-f]{64} {2}charts\//);
  });

  it('pass the real md5sum -c and sha256sum -c on an extracted tarball', async () => {
    const out = join(dir, 'app');
    await extractTarGzSafely(appTarball(), out);
    const md5 = execFileSync('md5sum', ['-c', '--strict', CHECKSUM_FILES.md5], { cwd: out }).toString();
    const sha = execFileSync('sha256sum', ['-c', '--strict', CHECKSUM_FILES.sha256], { cwd: out }).toString();
    expect(md5).toContain('metadata.yaml: OK');
    expect(md5).toContain('plugins/with space.js: OK');
    expect(sha.trim().split('\n')).toHaveLength(payload.length);
    // and coreutils notices tampering
    await writeFile(join(out, 'metadata.yaml'), 'app_name: evil\n');
    expect(() => execFileSync('md5sum', ['-c', CHECKSUM_FILES.md5], { cwd: out, stdio: 'pipe' })).toThrow();
  });

  it('escape names with a backslash the way coreutils does', async () => {
    const odd: TarEntry[] = [{ path: 'a\\b.txt', data: 'x' }];
    const text = sha256sumFile(odd);
    expect(text.startsWith('\\')).toBe(true);
    await writeFile(join(dir, 'a\\b.txt'), 'x');
    await writeFile(join(dir, 'sums'), text);
    expect(execFileSync('sha256sum', ['-c', 'sums'], { cwd: dir }).toString()).toContain('OK');
    expect(
      verifyChecksums(
        new Map([
          ['a\\b.txt', Buffer.from('x')],
          ['checksum.sha256', Buffer.from(text)],
        ]),
        { required: ['sha256'] },
      ),
    ).toEqual([]);
  });
});

describe('verifyChecksums', () => {
  it('finds nothing wrong with a tarball we wrote', () => {
    expect(verifyChecksums(readTarGzSafelySync(appTarball()))).toEqual([]);
  });

  it('reports every kind of problem, per file', () => {
    const files = readTarGzSafelySync(appTarball());
    files.set('metadata.yaml', Buffer.from('tampered'));
    files.delete('plugins/with space.js');
    files.set('smuggled.sh', Buffer.from('rm -rf /'));
    const problems = verifyChecksums(files);
    const summary = problems.map((p) => `${p.kind} ${'path' in p ? p.path : ''} ${p.checksumFile}`);
    expect(summary).toEqual([
      'mismatch metadata.yaml checksum.sha256',
      'missing-file plugins/with space.js checksum.sha256',
      'not-listed smuggled.sh checksum.sha256',
      'mismatch metadata.yaml checksum.md5',
      'missing-file plugins/with space.js checksum.md5',
      'not-listed smuggled.sh checksum.md5',
    ]);
    const mismatch = problems[0]!;
    expect(formatChecksumProblem(mismatch)).toMatch(/^checksum\.sha256:3: metadata\.yaml checksum mismatch \(expected [0-9a-f]{64}, got [0-9a-f]{64}\)$/);
    expect(formatChecksumProblem(problems[2]!)).toBe('smuggled.sh is not listed in checksum.sha256');
  });

  it('reports a missing checksum file unless it is optional', () => {
    const files = new Map(payload.map((e) => [e.path, Buffer.from(e.data)]));
    files.set(CHECKSUM_FILES.md5, Buffer.from(md5sumFile(payload)));
    expect(verifyChecksums(files)).toEqual([{ kind: 'missing-checksum-file', checksumFile: 'checksum.sha256' }]);
    expect(formatChecksumProblem(verifyChecksums(files)[0]!)).toBe('checksum.sha256 is missing');
    expect(verifyChecksums(files, { required: ['md5'] })).toEqual([]);
  });

  it('reports malformed and duplicate lines, and accepts ./ paths and binary markers', () => {
    const md5 = md5sumFile(payload)
      .split('\n')
      .map((line, i) => (i === 0 ? line.replace('  ', ' *./') : line))
      .join('\n');
    const files = new Map(payload.map((e) => [e.path, Buffer.from(e.data)]));
    files.set(CHECKSUM_FILES.md5, Buffer.from(`${md5}not a checksum line\n${md5.split('\n')[1]}\n`));
    expect(verifyChecksums(files, { required: ['md5'] })).toEqual([
      { kind: 'malformed-line', checksumFile: 'checksum.md5', line: 5, text: 'not a checksum line' },
      { kind: 'duplicate-line', checksumFile: 'checksum.md5', line: 6, path: 'fluxcd-manifests/base/kustomization.yaml' },
    ]);
  });
});
