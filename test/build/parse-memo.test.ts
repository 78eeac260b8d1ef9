/**
 * The build keeps the app's parsed YAML in its cache (src/yaml memo.ts,
 * src/session parse-cache.ts): a later build parses only what changed, and
 * gives the same bytes and the same errors as a build that parses everything.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CacheFolder } from '../../src/cache/index.js';
import { describe, expect, it } from 'vitest';
import { loadApp } from '../../src/app/index.js';
import { buildApp } from '../../src/build/index.js';
import { ParseMemo, parseYaml, type ParseOptions, type YamlParser } from '../../src/yaml/index.js';
import { computeReleaseValues } from '../../src/values/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

const MEMO = join('.flotilla-cache', 'parsed-yaml.bin');
/** The memo the build kept, out of its cache entry (src/cache). */
const readMemo = (out: string) => CacheFolder.open(join(out, '.flotilla-cache'))!.readSync('parsed-yaml.bin', 'parse-memo', 'flotilla-parse-memo');

async function failureOf(build: Promise<unknown>): Promise<Error> {
  try {
    await build;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the build to fail');
}

describe('the build keeps parsed YAML between runs', () => {
  it('parses and schema-checks again only the file that changed, and every tree it hands out stays as a fresh parse makes it', async () => {
    const source = writeApp();
    const out = tempDir();
    await buildApp(source, { outDir: out });
    appendFileSync(join(source, 'overrides/static/web.yaml'), 'extra: 1\n');

    // What a new process does: the memo read back from the cache, the app loaded and every release's values computed through it.
    const memo = ParseMemo.decode(readMemo(out));
    const handedOut: [string, string, ParseOptions, unknown][] = [];
    const parse = memo.parse;
    // Every tree the memo hands out is recorded, to compare with a fresh parse once all values are computed.
    (memo as { parse: YamlParser }).parse = (text, file, options) => {
      const parsed = parse(text, file, options);
      handedOut.push([text, file, options, parsed.root]);
      return parsed;
    };
    // Every schema check that runs is recorded too: the files that passed before and did not change are not checked again.
    const checked: string[] = [];
    const checkOnce = memo.checkOnce.bind(memo);
    memo.checkOnce = (root, check, run) => checkOnce(root, check, () => (checked.push(check), run()));
    const app = await loadApp(source, { parseMemo: memo });
    for (const release of app.releases) await computeReleaseValues(app, release);
    expect(memo.parsedFiles).toEqual(['overrides/static/web.yaml']);
    expect(checked).toEqual([]);
    // The same memo over another text of the release table checks it.
    const releases = join(source, 'fluxcd/releases.yaml');
    appendFileSync(releases, '# edited\n');
    await loadApp(source, { parseMemo: memo });
    expect(checked).toHaveLength(1);
    expect(handedOut.length).toBeGreaterThan(10);
    for (const [text, file, options, root] of handedOut) expect(root, file).toEqual(parseYaml(text, file, options).root);
  });

  it('writes the same bytes as a build without cache, whatever became of the kept trees', async () => {
    const source = writeApp();
    const out = tempDir();
    const cold = async () => readFileSync((await buildApp(source, { outDir: tempDir(), cacheDir: false })).file);
    await buildApp(source, { outDir: out });
    const memoFile = join(out, MEMO);
    const damage: [string, () => void][] = [
      ['nothing (a static override edited)', () => appendFileSync(join(source, 'overrides/static/web.yaml'), 'extra: 1\n')],
      ['torn', () => writeFileSync(memoFile, readFileSync(memoFile).subarray(0, 1000))],
      [
        'one byte changed',
        () => {
          const bytes = readFileSync(memoFile);
          bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
          writeFileSync(memoFile, bytes);
        },
      ],
      ['foreign', () => writeFileSync(memoFile, '{"format":"flotilla-parse-memo/1"}')],
    ];
    for (const [what, act] of damage) {
      act();
      appendFileSync(join(source, 'overrides/static/web.yaml'), `# ${what}\n`);
      const built = await buildApp(source, { outDir: out });
      expect(readFileSync(built.file).equals(await cold()), `memo ${what}`).toBe(true);
      // The damaged memo was replaced by a whole one.
      const rewritten = ParseMemo.decode(readMemo(out));
      rewritten.parse(readFileSync(join(source, 'fluxcd/releases.yaml'), 'utf8'), 'fluxcd/releases.yaml', { layer: 'releases', allowListEdits: false });
      expect(rewritten.parsedFiles, `memo ${what}`).toEqual([]);
    }
  });

  it('reports the same problems, at the same file:line, as a build that parses everything', async () => {
    const source = writeApp();
    const out = tempDir();
    await buildApp(source, { outDir: out });
    const deployment = join(source, 'overrides/deployment.yaml');
    const releases = join(source, 'fluxcd/releases.yaml');
    const originals = [deployment, releases, join(source, 'overrides/static/web.yaml')].map((file) => [file, readFileSync(file, 'utf8')] as const);
    const edits: [string, () => void, RegExp][] = [
      ['a syntax error', () => appendFileSync(join(source, 'overrides/static/web.yaml'), 'broken: [\n'), /overrides\/static\/web\.yaml:9:1: .*invalid YAML/],
      [
        'a schema error in the release table',
        () => writeFileSync(releases, readFileSync(releases, 'utf8').replace('timeout: 10m', 'timeout: [10m]')),
        /fluxcd\/releases\.yaml:4:3: error: expected a Flux duration .*got a list/,
      ],
      [
        'a missing chart in the release table',
        () => appendFileSync(join(source, 'fluxcd/releases.yaml'), '  - name: other\n    chart: missing\n'),
        /fluxcd\/releases\.yaml:15:5: error: release "other": no chart at charts\/missing/,
      ],
    ];
    for (const [what, edit, expected] of edits) {
      edit();
      const withMemo = await failureOf(buildApp(source, { outDir: out }));
      const without = await failureOf(buildApp(source, { outDir: tempDir(), cacheDir: false }));
      expect(withMemo.message, what).toBe(without.message);
      expect(withMemo.message, what).toMatch(expected);
      for (const [file, text] of originals) writeFileSync(file, text);
      await buildApp(source, { outDir: out });
    }
  });
});
