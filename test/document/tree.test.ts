/**
 * The fast tree reader (js-yaml events, src/document/tree.ts) against the
 * document reader it falls back to (`yaml`'s CST): wherever the fast reader
 * accepts a text, both must give the same tree — values, map order, and
 * every node's layer, file, line and column. Held over the YAML files of
 * this repository (the default app, the fixtures) and over thousands of
 * generated and mangled documents.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseYamlValue, YamlSyntaxError, type ValueNode } from '../../src/document/index.js';
import { documentTree, fastTrees } from '../../src/document/parse.js';
import { seededRandom } from '../support/random.js';

const REPO = join(import.meta.dirname, '..', '..');

/**
 * A tree as comparable data: kinds, values, keys in order, and every origin
 * but one: where an empty key (`: v`, a degenerate map entry; its key reads
 * as "null") and a map it opens are placed, which the two readers put at
 * different blanks.
 */
function shape(node: ValueNode | undefined, emptyKey = false): unknown {
  if (node === undefined) return undefined;
  const opensWithEmptyKey = node.kind === 'map' && node.entries.keys().next().value === 'null';
  const at = emptyKey || opensWithEmptyKey ? '(an empty key)' : `${node.origin.layer}@${node.origin.location.file}:${node.origin.location.line}:${node.origin.location.column}`;
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

function yamlFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.') || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yamlFiles(path, out);
    else if (/\.ya?ml$/.test(name) && !path.includes('/templates/')) out.push(path);
  }
  return out;
}

// Scalars whose reading differs between YAML 1.1 and 1.2, or between plain and quoted, and text that looks like syntax.
const WORDS = ['yes', 'no', 'y', 'n', 'on', 'off', 'true', 'False', '0755', '0o17', '0x1F', '0b101', '1_000', '190:20:30', '1.5', '1e3', '.inf', '-.Inf', '.NaN', '~', 'null', '', ' ', 'a b', 'a: b', '- x', '#c', 'x #c', '"q"', "'s'", 'line1\nline2', 'tail\n', '  lead', 'ünï', '2024-01-01', '12:30', '<<', '*a', '&a', '!t', '@x', '[1]', '{a: 1}', 'x,y', '1.0', '-0', '+1', '007', 'v1.2'];
const INSERTS = [' ', '\n', ':', '-', '#', '"', "'", '[', ']', '{', '}', ',', '&a ', '*a', '!!str ', '!!int ', '!append ', '? ', '\t', '|', '>', '<<: *a\n', '---\n'];

function generated(count: number, seed: number): string[] {
  const rnd = seededRandom(seed);
  const pick = <T,>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]!;
  const value = (depth: number): unknown => {
    const r = rnd();
    if (depth > 3 || r < 0.5) {
      const s = rnd();
      return s < 0.6 ? pick(WORDS) : s < 0.75 ? Math.floor(rnd() * 2000) - 1000 : s < 0.8 ? null : s < 0.85 ? rnd() < 0.5 : pick(WORDS) + pick(WORDS);
    }
    if (r < 0.75) return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 4) }, (_, i) => [pick(WORDS) + i, value(depth + 1)]));
    return Array.from({ length: Math.floor(rnd() * 4) }, () => value(depth + 1));
  };
  const texts: string[] = [];
  while (texts.length < count) {
    const data = { root: value(0), shared: { a: 1 } };
    const r = rnd();
    let text = r < 0.4 ? stringify(data, { version: '1.1' }) : r < 0.7 ? dump(data) : stringify(data, { collectionStyle: 'flow' });
    // Anchors, aliases and merge keys, then a mangled byte or two.
    if (rnd() < 0.3) text = text.replace('shared:', 'shared: &a').concat('alias: *a\nmerged:\n  <<: *a\n  b: 2\n');
    for (let edits = Math.floor(rnd() * 3); edits > 0; edits--) {
      const at = Math.floor(rnd() * text.length);
      text = rnd() < 0.3 ? text.slice(0, at) + text.slice(at + 1) : text.slice(0, at) + pick(INSERTS) + text.slice(at);
    }
    texts.push(text);
  }
  return texts;
}

describe('the fast tree reader against the document reader', () => {
  it("reads every YAML file of this repository as the document reader does, none falling back", () => {
    const files = yamlFiles(REPO);
    expect(files.length).toBeGreaterThan(50);
    for (const file of files) expect(compare(readFileSync(file, 'utf8'), true).kind, file).toBe('fast');
  });

  it('gives the same tree as the document reader for every generated document both read', () => {
    const counts = { fast: 0, fallback: 0, refused: 0, lenient: 0 };
    for (const text of generated(4000, 14)) counts[compare(text, true).kind]++;
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
      expect(() => fastTrees(text, 'f.yaml', { layer: 'l' })).toThrow((() => {
        try {
          documentTree(text, 'f.yaml', { layer: 'l' });
        } catch (error) {
          return (error as Error).message;
        }
        return 'the document reader read it';
      })());
    }
  });
});
