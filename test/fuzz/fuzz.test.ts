/**
 * Fuzz targets, kept in the repository: the tar reader, the YAML readers and
 * the values merge, driven by fast-check. `npm test` runs a bounded number of
 * cases (FLOTILLA_FUZZ_RUNS, default 150 a property); `npm run fuzz` runs
 * many more. A failure prints the seed and path to replay it
 * (FLOTILLA_FUZZ_SEED, FLOTILLA_FUZZ_PATH); every crash found becomes a case
 * in fuzz-regressions.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ArchiveWriteError,
  checkEntryPath,
  DecompressionBudget,
  parseTarSafely,
  readTarGzEntriesSync,
  UnsafeArchiveError,
  writeTar,
} from '../../src/tarball/index.js';
import { FlotillaError } from '../../src/diagnostics/index.js';
import { fromPlain, parseYaml, toPlain, type PlainValue } from '../../src/yaml/index.js';
import { scannedAsJsYaml } from '../support/yaml-texts.js';
import { mergeNodes } from '../../src/values/index.js';
import { yamlOf } from '../../src/verify/bundle.js';

const RUNS = Number(process.env.FLOTILLA_FUZZ_RUNS ?? 150);
const settings: fc.Parameters<unknown> = {
  numRuns: RUNS,
  ...(process.env.FLOTILLA_FUZZ_SEED ? { seed: Number(process.env.FLOTILLA_FUZZ_SEED), path: process.env.FLOTILLA_FUZZ_PATH } : {}),
};
/** Large runs take their time; the bounded one is quick. */
const TIMEOUT = Math.max(60_000, RUNS * 100);

/** Runs `read`; a refusal of the expected kind is fine, any other exception is a crash. */
function refusesOrReads<T>(read: () => T, refusal: new (...args: never[]) => Error): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof refusal) return undefined;
    throw error;
  }
}

const segment = fc.oneof(
  fc.constantFrom('a', 'charts', 'values.yaml', '.', '..', '', 'é', 'e\u0301', ' ', 'x'.repeat(120), '日本'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
);
const entryName = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));
const entries = fc.uniqueArray(fc.record({ path: entryName, data: fc.uint8Array({ maxLength: 1200 }).map((b) => Buffer.from(b)) }), {
  maxLength: 6,
  selector: (e) => e.path,
});

describe('fuzz: tar reader', () => {
  it(
    'refuses or reads arbitrary bytes, never crashes',
    () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 3000 }), (bytes) => {
          refusesOrReads(() => parseTarSafely(Buffer.from(bytes), 'fuzz'), UnsafeArchiveError);
          const gzipLike = Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0]), Buffer.from(bytes)]);
          refusesOrReads(() => readTarGzEntriesSync(gzipLike, { label: 'fuzz' }), UnsafeArchiveError);
        }),
        settings,
      );
    },
    TIMEOUT,
  );

  it(
    'reads back exactly what the writer wrote',
    () => {
      fc.assert(
        fc.property(entries, (list) => {
          const tar = refusesOrReads(() => writeTar(list, { order: 'given' }), ArchiveWriteError);
          if (!tar) return;
          const read = parseTarSafely(tar, 'fuzz');
          expect(read.map((e) => [e.path, e.data.toString('hex')])).toEqual(list.map((e) => [e.path, e.data.toString('hex')]));
        }),
        settings,
      );
    },
    TIMEOUT,
  );

  it(
    'refuses or reads a written archive with bytes flipped; what it reads is always safe',
    () => {
      const flips = fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 8 });
      fc.assert(
        fc.property(entries, flips, (list, changes) => {
          const tar = refusesOrReads(() => writeTar(list, { order: 'given' }), ArchiveWriteError);
          if (!tar) return;
          for (const { at, byte } of changes) tar[at % tar.length] = byte;
          const read = refusesOrReads(() => parseTarSafely(tar, 'fuzz'), UnsafeArchiveError);
          const seen = new Set<string>();
          for (const entry of read ?? []) {
            expect(checkEntryPath(entry.path)).toEqual({ ok: true, path: entry.path });
            expect(seen.has(entry.path)).toBe(false);
            seen.add(entry.path);
          }
        }),
        settings,
      );
    },
    TIMEOUT,
  );
});

/** YAML-looking text: the tokens where parsers have their corner cases (anchors, merges, tags, flow, block scalars). */
const yamlish = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        'a: ',
        'b:',
        '- ',
        '&x ',
        '*x',
        '&y [*x, *x]',
        '<<: *x',
        '{',
        '}',
        '[',
        ']',
        ', ',
        '\n',
        '  ',
        '    ',
        '!append ',
        '!!str ',
        '!!binary ',
        '"',
        "'",
        '# c',
        '? ',
        ': ',
        '|',
        '>-',
        '---\n',
        '...\n',
        'null',
        '~',
        '1e3',
        '0x1F',
        '0o17',
        '.inf',
        'yes',
        '2001-12-14',
        '\t',
        '%YAML 1.1\n',
        '\\u0000',
      ),
      fc.string({ maxLength: 6 }),
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

describe('fuzz: YAML readers', () => {
  it(
    'the positional reader (values, overrides, metadata) parses or says where it fails',
    () => {
      fc.assert(
        fc.property(fc.oneof(yamlish, fc.string({ maxLength: 200 })), (text) => {
          refusesOrReads(() => parseYaml(text, 'fuzz.yaml', { layer: 'fuzz' }), FlotillaError);
        }),
        settings,
      );
    },
    TIMEOUT,
  );

  // Block YAML line by line (an indentation, a key or entry, a value), with odd pieces in the values: what the scanner reads must be what js-yaml reads.
  const blockLine = fc
    .tuple(
      fc.constantFrom('', '  ', '    ', ' '),
      fc.constantFrom('a: ', 'key b: ', 'c:d: ', '- ', '- k: ', '-', 'k:', '# c', ''),
      fc.array(fc.constantFrom('x', '1', '"q"', "'s'", '"', "'", '\\', '[', ']', '{', '}', ', ', '[]', '{}', ' #', ':', '|', '>-', '|+', ' y', '-'), {
        maxLength: 4,
      }),
    )
    .map(([indent, head, value]) => `${indent}${head}${value.join('')}`);
  const blockish = fc.array(blockLine, { minLength: 1, maxLength: 12 }).map((lines) => lines.join('\n'));

  it(
    "the line scanner gives js-yaml's events for what it reads, and leaves the rest",
    () => {
      let read = 0;
      fc.assert(
        fc.property(fc.oneof(blockish, yamlish), (text) => {
          if (scannedAsJsYaml(text) !== undefined) read++;
        }),
        settings,
      );
      // Enough of them are read for the comparison to mean something: about one in nine is (2,284 of 20,000), so a
      // bound of one in ten failed one run in three at the default 150 runs; one in thirty is three deviations below.
      expect(read).toBeGreaterThan(RUNS / 30);
    },
    TIMEOUT,
  );

  it(
    'the bundle reader (verify, inspect) parses or names file and line',
    () => {
      fc.assert(
        fc.property(fc.oneof(yamlish, fc.string({ maxLength: 200 })), (text) => {
          const bundle = { path: 'fuzz.tgz', files: new Map([['x.yaml', Buffer.from(text)]]), directories: [], budget: new DecompressionBudget(1 << 30) };
          try {
            yamlOf(bundle, 'x.yaml');
          } catch (error) {
            expect(error).toBeInstanceOf(FlotillaError);
            expect((error as FlotillaError).message).toMatch(/^x\.yaml:\d+:\d+: /);
          }
        }),
        settings,
      );
    },
    TIMEOUT,
  );
});

const origin = (layer: string) => ({ layer, location: { file: `${layer}.yaml`, line: 1, column: 1 } });
const plainTree: fc.Arbitrary<PlainValue> = fc.letrec<{ tree: PlainValue }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 5 })),
    fc.array(tie('tree'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c', 'image', 'conf'), tie('tree'), { maxKeys: 4 }),
  ),
})).tree;

describe('fuzz: values merge', () => {
  it(
    'upper layer wins, lower keys survive, inputs untouched; a clash is a FlotillaError',
    () => {
      fc.assert(
        fc.property(plainTree, plainTree, (lowerPlain, upperPlain) => {
          const lower = fromPlain(lowerPlain, origin('lower'));
          const upper = fromPlain(upperPlain, origin('upper'));
          const before = [JSON.stringify(toPlain(lower)), JSON.stringify(toPlain(upper))];
          const merged = refusesOrReads(() => mergeNodes(lower, upper), FlotillaError);
          expect([JSON.stringify(toPlain(lower)), JSON.stringify(toPlain(upper))]).toEqual(before);
          if (!merged) return;
          checkMerged(lowerPlain, upperPlain, toPlain(merged));
        }),
        settings,
      );
    },
    TIMEOUT,
  );
});

function isMap(value: PlainValue | undefined): value is { [key: string]: PlainValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** DESIGN's rules on plain trees: maps merge deeply, everything else from the upper layer replaces. */
function checkMerged(lower: PlainValue | undefined, upper: PlainValue, merged: PlainValue): void {
  if (!isMap(upper) || !isMap(lower)) {
    expect(merged).toEqual(upper);
    return;
  }
  expect(isMap(merged)).toBe(true);
  const out = merged as { [key: string]: PlainValue };
  expect(Object.keys(out).sort()).toEqual([...new Set([...Object.keys(lower), ...Object.keys(upper)])].sort());
  for (const key of Object.keys(out)) {
    if (key in upper) checkMerged(lower[key], upper[key]!, out[key]!);
    else expect(out[key]).toEqual(lower[key]);
  }
}
