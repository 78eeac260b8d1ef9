/**
 * The fast tree reader (js-yaml events, src/yaml/tree.ts) against the
 * document reader it falls back to (`yaml`'s CST): wherever the fast reader
 * accepts a text, both must give the same tree — values, map order, and
 * every node's layer, file, line and column. Held over the YAML files of
 * this repository (the default app, the fixtures) and over thousands of
 * generated and mangled documents.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseYamlValue, YamlSyntaxError, type ValueNode } from '../../src/yaml/index.js';
import { documentTree, fastTrees } from '../../src/yaml/parse.js';
import { generatedYaml, yamlFiles } from '../support/yaml-texts.js';

/**
 * A tree as comparable data: kinds, values, keys in order, and every origin
 * but one: where an empty key (`: v`, a degenerate map entry; its key reads
 * as "null") and a map it opens are placed, which the two readers put at
 * different blanks.
 */
function shape(node: ValueNode | undefined, emptyKey = false): unknown {
  if (node === undefined) return undefined;
  const opensWithEmptyKey = node.kind === 'map' && node.entries.keys().next().value === 'null';
  const at =
    emptyKey || opensWithEmptyKey
      ? '(an empty key)'
      : `${node.origin.layer}@${node.origin.location.file}:${node.origin.location.line}:${node.origin.location.column}`;
  switch (node.kind) {
    case 'scalar':
      return [at, Number.isNaN(node.value) ? 'NaN' : node.value];
    case 'seq':
      return [at, node.items.map((item) => shape(item))];
    case 'map':
      return [at, [...node.entries].map(([key, value]) => [key, shape(value, key === 'null')])];
    case 'edits':
      return [at, node.edits.map((edit) => [edit.op, `${edit.origin.location.line}:${edit.origin.location.column}`, edit.items.map((item) => shape(item))])];
  }
}

type Outcome = { readonly kind: 'fast' | 'fallback' | 'refused' | 'lenient' };

/**
 * Reads `text` both ways; fails the test if both accept it and disagree, or
 * if the fast reader refuses by itself what the document reader reads.
 * (Where both refuse, the fast reader's words may place a complex key
 * elsewhere, or name another of the text's faults first.)
 */
function compare(text: string, allowListEdits = false): Outcome {
  const options = { layer: 'l', allowListEdits };
  let fast: (ValueNode | undefined)[] | undefined;
  let fastRefusal: string | undefined;
  try {
    fast = fastTrees(text, 'f.yaml', options);
  } catch (error) {
    expect(error, text).toBeInstanceOf(YamlSyntaxError);
    fastRefusal = (error as Error).message;
  }
  let reference: ValueNode | undefined;
  try {
    reference = documentTree(text, 'f.yaml', options).root;
  } catch {
    // js-yaml reads a few texts the document reader refuses; only agreement where both read is required.
    return { kind: fast && fast.length <= 1 ? 'lenient' : 'refused' };
  }
  expect(fastRefusal, text).toBeUndefined();
  if (!fast || fast.length > 1) return { kind: 'fallback' };
  expect(shape(fast[0]), text).toEqual(shape(reference));
  return { kind: 'fast' };
}

describe('the fast tree reader against the document reader', () => {
  it('reads every YAML file of this repository as the document reader does, none falling back', () => {
    const files = yamlFiles();
    expect(files.length).toBeGreaterThan(50);
    for (const file of files) expect(compare(readFileSync(file, 'utf8'), true).kind, file).toBe('fast');
  });

  it('gives the same tree as the document reader for every generated document both read', () => {
    const counts = { fast: 0, fallback: 0, refused: 0, lenient: 0 };
    for (const text of generatedYaml(4000, 14)) counts[compare(text, true).kind]++;
    // Most are read fast; what js-yaml refuses goes to the document reader; it rarely reads what the document reader refuses.
    expect(counts.fast).toBeGreaterThan(2000);
    expect(counts.lenient).toBeLessThan(counts.fast / 200);
  });

  it.each([
    ['YAML 1.1 scalars', 'a: yes\nb: 0755\nc: 1_000\nd: 190:20:30\ne: .inf\nf: ~\ng: 2024-01-01\nh: 0b101\ni: 0x1F\nj: "yes"\nk: !!str 12\nl: !!int "12"\n'],
    ['keys as YAML 1.1 reads them', 'yes: 1\n1.0: 2\n0x10: 3\n~: 4\n"": 5\n? 6\n'],
    ['quoted and block scalars', 'a: "x\\ty"\nb: \'it\'\'s\'\nc: |\n  one\n  two\nd: >-\n  folded\n  text\ne:\n  - |+\n    kept\n\n  - "q"\n'],
    ['anchors, aliases and merge keys', 'base: &b {image: nginx, tags: [a, b]}\nweb:\n  <<: *b\n  replicas: 2\ndb: *b\nlist: &l [1, 2]\nagain: *l\n'],
    ['list edits', 'a: !append [1, 2]\nb: !prepend\n  - x\nc: !remove [{name: y}]\n'],
    ['empty values and keys', 'a:\nb: ~\nc: []\nd: {}\n? e\n: f\n'],
    ['tags on collections and props before keys', '!!map\n&k key: !!seq [1]\nx: !!map {a: 1}\n'],
  ])('%s', (_title, text) => {
    expect(compare(text, true).kind).toBe('fast');
  });

  it('resolves a word by its place (key or value) however often it was read before (resolutions are remembered)', () => {
    for (let round = 0; round < 2; round++) {
      for (const text of ['yes: yes\nno: [no, "no"]\n', 'on: off\noff: on\n', '1: 1\n0x10: 0x10\n~: ~\n', 'y: n\nn: y\n'])
        expect(compare(text).kind, text).toBe('fast');
    }
    // `<<` is a plain string as a value and a merge key as a key (the one tag that applies to keys alone): read as a value first, it still merges as a key.
    for (let round = 0; round < 2; round++) expect(parseYamlValue('a: <<\n&x <<: {c: 1}\n', 'f.yaml')).toEqual({ a: '<<', c: 1 });
  });

  it('falls back to the document reader where js-yaml is stricter than Helm, reading what Helm reads', () => {
    for (const [text, value] of [
      ['root: {\n  "a": 1\n}\n', { root: { a: 1 } }],
      ['root: [\n]\n', { root: [] }],
      ['a:\t[1]\n', { a: [1] }],
      ['x:\n  a: \t{}\n', { x: { a: {} } }],
    ] as const) {
      expect(fastTrees(text, 'f.yaml', { layer: 'l' }), text).toBeUndefined();
      expect(parseYamlValue(text, 'f.yaml'), text).toEqual(value);
    }
    // What both refuse is refused by the fast reader itself, in the document reader's words and place.
    for (const text of ['a: 1\na: 2\n', 'a: &x [*x]\n']) {
      expect(() => fastTrees(text, 'f.yaml', { layer: 'l' })).toThrow(YamlSyntaxError);
      expect(() => fastTrees(text, 'f.yaml', { layer: 'l' })).toThrow(
        (() => {
          try {
            documentTree(text, 'f.yaml', { layer: 'l' });
          } catch (error) {
            return (error as Error).message;
          }
          return 'the document reader read it';
        })(),
      );
    }
  });
});
