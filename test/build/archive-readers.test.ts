/**
 * The archives a build writes: chart archives as one deflate stream, the
 * app tarball joined from deflate pieces (chart archives stored, small
 * entries grouped). Every reader that meets them in the
 * field must read them the same: GNU tar, Python's tarfile, node-tar, Go's
 * archive/tar (Helm's and Flux's reader), gunzip and zlib — and Helm itself,
 * including a push to and pull from a real OCI registry.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { x as nodeTarExtract } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { extractTarGzSafely, parseTarSafely } from '../../src/tarball/index.js';
import { helm } from '../../src/tools/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { readWithGo } from '../support/go.js';
import { startRegistry, type TestRegistry } from '../support/registry.js';

type Listing = Map<string, string>;
const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

function walk(root: string): Listing {
  const out: Listing = new Map();
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else out.set(relative(root, path), sha256(readFileSync(path)));
    }
  };
  visit(root);
  return out;
}

const sorted = (listing: Listing): [string, string][] => [...listing].sort(([a], [b]) => (a < b ? -1 : 1));

/** Varied text (unlike a repeated line) in the library, so its archives pass 64 KiB and need several stored blocks. */
function bulkyTemplate(): string {
  let seed = 7;
  const word = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed.toString(36);
  };
  const lines = ['{{- define "lib.bulk" -}}'];
  for (let i = 0; i < 6000; i++) lines.push(`# ${word()} ${word()} ${word()}`);
  return `${lines.join('\n')}\n{{- end -}}\n`;
}

let tarball: string;
let charts: string[];
let registry: TestRegistry | undefined;

beforeAll(async () => {
  const source = writeApp({
    'charts/lib/templates/_bulk.tpl': bulkyTemplate(),
    // a name past ustar's 100 bytes inside the archive: a pax record in the vendored library
    [`charts/lib/templates/_${'long-helper-name-'.repeat(6)}.tpl`]: '{{- define "lib.long" -}}long{{- end -}}\n',
  });
  const result = await buildApp(source, { outDir: tempDir() });
  tarball = result.file;
  const dir = tempDir();
  await extractTarGzSafely(tarball, dir);
  charts = result.charts.map((c) => join(dir, 'charts', c.fileName));
  registry = await startRegistry();
}, 60_000);

afterAll(async () => registry?.stop());

describe('archives joined from pieces', () => {
  it('pass gunzip -t and decode with zlib to the tar our reader parses', () => {
    for (const file of [tarball, ...charts]) {
      execFileSync('gunzip', ['-t', file]);
      const files = parseTarSafely(gunzipSync(readFileSync(file)), file).filter((e) => e.type === 'file');
      expect(files.length).toBeGreaterThan(0);
    }
    const big = readFileSync(charts[0]!);
    expect(big.length).toBeGreaterThan(64 * 1024); // its stored piece in the app tarball spans several blocks
  });

  it('read the same in GNU tar, Python tarfile, node-tar and Go archive/tar', async () => {
    const go = readWithGo([tarball, ...charts]);
    for (const file of [tarball, ...charts]) {
      const expected: Listing = new Map(
        parseTarSafely(gunzipSync(readFileSync(file)), file)
          .filter((e) => e.type === 'file')
          .map((e) => [e.path, sha256(e.data)]),
      );

      const gnu = tempDir();
      execFileSync('tar', ['-xzf', file, '-C', gnu]);
      expect(sorted(walk(gnu)), `GNU tar: ${file}`).toEqual(sorted(expected));

      const python = execFileSync(
        'python3',
        [
          '-c',
          'import hashlib,sys,tarfile\nwith tarfile.open(sys.argv[1]) as t:\n  for m in t.getmembers():\n    if m.isfile(): print(m.name + "\\t" + hashlib.sha256(t.extractfile(m).read()).hexdigest())',
          file,
        ],
        { encoding: 'utf8' },
      );
      // Names as stored (the app tarball's start with ./); the other readers give them relative.
      const relativeName = (name: string) => name.replace(/^\.\//, '');
      const pythonListing: Listing = new Map(
        python
          .trim()
          .split('\n')
          .map((line) => line.split('\t') as [string, string])
          .map(([name, sum]) => [relativeName(name), sum]),
      );
      expect(sorted(pythonListing), `Python tarfile: ${file}`).toEqual(sorted(expected));

      const node = tempDir();
      mkdirSync(node, { recursive: true });
      await nodeTarExtract({ file, cwd: node, strict: true });
      expect(sorted(walk(node)), `node-tar: ${file}`).toEqual(sorted(expected));

      const goListing: Listing = new Map([...go.get(file)!].map(([name, sum]) => [relativeName(name), sum]));
      expect(sorted(goListing), `Go archive/tar: ${file}`).toEqual(sorted(expected));
    }
  });

  it('lint, render and show with helm, and survive a push to and pull from an OCI registry', async () => {
    for (const chart of charts) {
      await helm(['lint', chart]);
      expect((await helm(['template', 'x', chart])).stdout).toContain('kind: ConfigMap');
      const shown = (await helm(['show', 'chart', chart])).stdout;
      const name = /^name: (\S+)$/m.exec(shown)?.[1];
      expect(name).toMatch(/^(db|web)$/);
      await helm(['push', chart, `oci://${registry!.host}/charts`, '--plain-http']);
      const pulled = tempDir();
      await helm(['pull', `oci://${registry!.host}/charts/${name}`, '--version', '0.1.0', '--plain-http', '-d', pulled]);
      const back = join(pulled, `${name}-0.1.0.tgz`);
      expect(readFileSync(back).equals(readFileSync(chart))).toBe(true);
      expect((await helm(['show', 'chart', back])).stdout).toBe(shown);
      expect((await helm(['template', 'x', back])).stdout).toContain('kind: Deployment');
    }
  });
});
