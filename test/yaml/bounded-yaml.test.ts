/**
 * Bounded YAML: every read limits alias expansion (count and depth, no
 * self-reference), nesting depth and document size, with an error at the
 * file and line. Through the CLI, bombs end with exit 1 and bounded memory;
 * memory stays bounded across nested archives too.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { writeTarGz } from '../../src/tarball/index.js';
import { parseYaml, parseYamlDocument, parseYamlStream, parseYamlValue, YamlSyntaxError, YAML_LIMITS } from '../../src/yaml/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');
const exec = promisify(execFile);

/** The classic: ten levels of ten aliases each, a billion strings from a few hundred bytes. */
const BILLION_LAUGHS = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...'bcdefghi'.split('').map((l, i) => `${l}: &${l} [${Array(10).fill(`*${'abcdefghi'[i]}`).join(',')}]`),
  'j: [*i,*i,*i,*i,*i,*i,*i,*i,*i,*i]',
].join('\n');

/**
 * The yaml library (its CommonJS build, the one Node loads) calls its two
 * quadratic steps through module objects, so counting wrappers put there see
 * them: `mapIncludes`, a new key compared with every key before it (counted
 * per comparison), and `visit`, a walk of the whole document (what
 * Alias.resolve does for each alias).
 */
const yamlLibrary = createRequire(import.meta.url)('yaml') as typeof import('yaml');
const libraryModule = <T>(path: string): T => createRequire(import.meta.url)(join(dirname(createRequire(import.meta.url).resolve('yaml')), path)) as T;
function countLibraryWalks(run: () => unknown): { keyComparisons: number; documentWalks: number } {
  type Some = (test: (item: unknown) => boolean) => boolean;
  const keys = libraryModule<{ mapIncludes: (ctx: unknown, items: unknown[], search: unknown) => boolean }>('compose/util-map-includes.js');
  const walks = libraryModule<{ visit: (...args: unknown[]) => void }>('visit.js');
  const [mapIncludes, visit] = [keys.mapIncludes, walks.visit];
  const counts = { keyComparisons: 0, documentWalks: 0 };
  const counted = (items: unknown[]) =>
    new Proxy(items, {
      get: (target, key) => (key === 'some' ? (((test) => target.some((item) => (counts.keyComparisons++, test(item)))) as Some) : Reflect.get(target, key)),
    });
  keys.mapIncludes = (ctx, items, search) => mapIncludes(ctx, counted(items), search);
  walks.visit = Object.assign((...args: unknown[]) => (counts.documentWalks++, visit(...args)), visit);
  try {
    run();
  } finally {
    [keys.mapIncludes, walks.visit] = [mapIncludes, visit];
  }
  return counts;
}

function refusal(text: string, file = 'values.yaml'): YamlSyntaxError {
  try {
    parseYaml(text, file, { layer: 'test' });
  } catch (error) {
    expect(error).toBeInstanceOf(YamlSyntaxError);
    return error as YamlSyntaxError;
  }
  throw new Error('parsed');
}

describe('bounded YAML reading', () => {
  it('stops an alias bomb at the expansion limit, naming file and line', () => {
    expect(refusal(BILLION_LAUGHS).message).toMatch(
      new RegExp(`^values\\.yaml:\\d+:\\d+: aliases expand to more than ${YAML_LIMITS.maxAliasExpansion} values \\(an alias bomb\\?\\)$`),
    );
    // merge keys are aliases too
    const merges = ['x0: &x0 {k: v}', ...Array.from({ length: 30 }, (_, i) => `x${i + 1}: &x${i + 1} {<<: [*x${i}], a${i}: [*x${i}, *x${i}, *x${i}]}`)].join(
      '\n',
    );
    expect(refusal(merges).message).toMatch(/aliases (expand to more than|nest more than)/);
  });

  it('refuses an alias to a value that contains it', () => {
    expect(refusal('a: &a [1, *a]\n').message).toBe('values.yaml:1:11: alias *a refers to a value that contains it');
    expect(refusal('a: &a\n  b:\n    c: *a\n').message).toBe('values.yaml:3:5: alias *a refers to a value that contains it');
  });

  // The yaml library compares each key with every key before it (`mapIncludes`) and walks the whole
  // document for each alias (`visit`, from Alias.resolve): 20,000 anchors and aliases took ~30 s. Both
  // readers keep keys in a set and find anchors in one walk, so neither quadratic step runs: counted
  // here, not timed.
  it("reads a map of 20,000 keys, anchors and aliases without the yaml library's per-key and per-alias walks, through either reader", () => {
    const flat = Array.from({ length: 10_000 }, (_, i) => `a${i}: &x${i} [${i}]\nb${i}: *x${i}`).join('\n');
    // The counters count: the library's own reading of a small map with an alias runs both steps: 0 + 1 + 2 key comparisons, one walk.
    expect(countLibraryWalks(() => yamlLibrary.parseDocument('a: &a 1\nb: *a\nc: 2\n').toJS())).toEqual({ keyComparisons: 3, documentWalks: 1 });
    // A tab before `[` sends the text to the document reader (js-yaml refuses it; Helm reads it).
    for (const text of [`${flat}\n`, `${flat}\nz:\t[1]\n`]) {
      let value: Record<string, unknown[]> = {};
      expect(countLibraryWalks(() => (value = parseYamlValue(text, 'big.yaml') as Record<string, unknown[]>))).toEqual({ keyComparisons: 0, documentWalks: 0 });
      expect(Object.keys(value)).toHaveLength(text.includes('\t') ? 20_001 : 20_000);
      expect(value.b9999).toEqual([9_999]);
      expect(refusal(`${text}a7: again\n`, 'big.yaml').message).toBe(`big.yaml:${text.split('\n').length}:1: invalid YAML: Map keys must be unique`);
    }
    // The document (CST) reader of editors and policy files too.
    expect(countLibraryWalks(() => expect(parseYamlDocument(`${flat}\n`, 'big.yaml').doc.contents).toBeDefined())).toEqual({
      keyComparisons: 0,
      documentWalks: 0,
    });
    expect(() => parseYamlDocument(`${flat}\nb3: again\n`, 'big.yaml')).toThrow(/^big\.yaml:20001:1: invalid YAML: Map keys must be unique$/);
  });

  it('refuses aliases nested too deep', () => {
    const chain = ['l0: &l0 x', ...Array.from({ length: 20 }, (_, i) => `l${i + 1}: &l${i + 1} [*l${i}]`)].join('\n');
    expect(refusal(chain).message).toMatch(new RegExp(`aliases nest more than ${YAML_LIMITS.maxAliasDepth} deep$`));
  });

  it('refuses nesting deeper than the limit, flow or block', () => {
    expect(refusal(`a: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`).message).toBe(
      `values.yaml:1:${YAML_LIMITS.maxDepth + 4}: values nest more than ${YAML_LIMITS.maxDepth} levels deep`,
    );
    const block = Array.from({ length: 400 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n');
    expect(refusal(block).message).toMatch(
      new RegExp(`^values\\.yaml:${YAML_LIMITS.maxDepth}:\\d+: values nest more than ${YAML_LIMITS.maxDepth} levels deep$`),
    );
  });

  it('refuses a document larger than the limit before parsing it', () => {
    const huge = `a: ${'x'.repeat(50 * 1024 * 1024)}\n`;
    expect(refusal(huge).message).toBe('values.yaml:1:1: the document is 50.0 MiB; YAML files are read up to 16 MiB');
    expect(() => parseYamlStream(huge, 'stream.yaml')).toThrow(/stream\.yaml:1:1: the document is 50\.0 MiB/);
  });

  it('still reads what real files do: anchors, merge keys, brackets in strings and comments', () => {
    const text = 'base: &base {image: nginx, tags: [a, b]}\nweb: {<<: *base, replicas: 2}\ndb: *base\nnote: "[[[ not nesting"\n# {{{ nor this\n';
    expect(parseYamlValue(text, 'ok.yaml')).toEqual({
      base: { image: 'nginx', tags: ['a', 'b'] },
      web: { image: 'nginx', tags: ['a', 'b'], replicas: 2 },
      db: { image: 'nginx', tags: ['a', 'b'] },
      note: '[[[ not nesting',
    });
  });
});

/** Runs the CLI, reporting its exit code, stderr and peak memory (MiB). */
async function measured(...args: string[]): Promise<{ code: number; stderr: string; stdout: string; rssMiB: number; ms: number }> {
  const hook = 'data:text/javascript,process.on("exit",()=>process.stderr.write("MAXRSS "+process.resourceUsage().maxRSS+"\\n"))';
  const started = Date.now();
  const result = await exec(process.execPath, ['--import', hook, cli, ...args], { maxBuffer: 1 << 26 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
  const ms = Date.now() - started;
  const rss = /MAXRSS (\d+)/.exec(result.stderr);
  return { ...result, stderr: result.stderr.replace(/MAXRSS \d+\n/, ''), rssMiB: rss ? Number(rss[1]) / 1024 : NaN, ms };
}

describe('hostile YAML through the CLI: exit 1, one line, bounded memory', () => {
  it.each([
    ['an alias bomb', BILLION_LAUGHS, /^flotilla: .*overrides\/deployment\.yaml:\d+:\d+: aliases expand to more than 100000 values/],
    [
      'deep nesting',
      `main: ${'['.repeat(50_000)}${']'.repeat(50_000)}\n`,
      /^flotilla: .*overrides\/deployment\.yaml:1:\d+: values nest more than 256 levels deep/,
    ],
    ['a 50 MB scalar', `main: ${'x'.repeat(50 * 1024 * 1024)}\n`, /^flotilla: .*overrides\/deployment\.yaml:1:1: the document is 50\.0 MiB/],
  ])('build stops %s in the deployment spec', async (_, text, line) => {
    const app = writeApp({ 'overrides/deployment.yaml': text });
    const run = await measured('build', app, '-d', tempDir());
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(line);
    expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(run.rssMiB).toBeLessThan(400);
    console.info(`${_}: exit ${run.code} in ${run.ms} ms, peak RSS ${run.rssMiB.toFixed(0)} MiB`);
  });

  it('verify names an alias bomb in a tarball file', async () => {
    const file = join(tempDir(), 'bomb-1.0.tgz');
    writeFileSync(file, writeTarGz([{ path: 'metadata.yaml', data: BILLION_LAUGHS }]));
    const run = await measured('inspect', file);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^flotilla: bomb-1\.0\.tgz: not a readable application tarball: metadata\.yaml:\d+:\d+: aliases expand to more than 100000 values/,
    );
    expect(run.rssMiB).toBeLessThan(400);
  });

  it('bounds memory in total across nested archives: ten small chart bombs cost no more than one', async () => {
    // Each chart archive: 64 MiB of zeros in a few dozen KiB. Per archive that is within bounds; together, not.
    const bomb = writeTarGz([
      { path: 'web/Chart.yaml', data: 'apiVersion: v2\nname: web\nversion: 1.0.0\n' },
      { path: 'web/zeros', data: Buffer.alloc(64 * 1024 * 1024) },
    ]);
    const charts = Array.from({ length: 10 }, (_, i) => ({ path: `charts/web${i}-1.0.0.tgz`, data: bomb }));
    const file = join(tempDir(), 'nested-1.0.tgz');
    writeFileSync(
      file,
      writeTarGz(
        [
          { path: 'metadata.yaml', data: 'app_name: nested\napp_version: "1.0"\n' },
          { path: 'fluxcd-manifests/kustomization.yaml', data: 'resources: []\n' },
          ...charts,
        ],
        { level: 9 },
      ),
    );
    const run = await measured('inspect', file);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/decompressed size exceeds the \d+ bytes the archive may expand to in total, the archives inside it included/);
    expect(run.rssMiB).toBeLessThan(400);
    console.info(
      `nested bombs (${(bomb.length / 1024).toFixed(0)} KiB each, 10 charts): exit ${run.code} in ${run.ms} ms, peak RSS ${run.rssMiB.toFixed(0)} MiB`,
    );
  });
});
