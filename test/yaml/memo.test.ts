import { createHash } from 'node:crypto';
import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { getNode, ParseMemo, parseYaml, YamlSyntaxError, type ParseOptions, type ValueNode } from '../../src/yaml/index.js';

const VALUES = `# every kind of node the parser makes
defaults: &defaults
  replicas: 1
  mode: 0755
  enabled: yes
  when: 2025-01-01
  ratio: -1.5
  none: ~
api:
  <<: *defaults
  replicas: 3
  hosts: [a, b]
  more: !append [c]
  drop: !remove [{ name: x }]
empty: {}
`;

const FILES: Record<string, string> = {
  'overrides/static/web.yaml': VALUES,
  'overrides/static/db.yaml': 'pod:\n  replicas: 2\n',
  'overrides/empty.yaml': '# nothing but a comment\n',
};
const OPTIONS: ParseOptions = { layer: 'static', allowListEdits: true };

function parseAll(memo: ParseMemo, files: Record<string, string> = FILES) {
  return Object.entries(files).map(([file, text]) => memo.parse(text, file, OPTIONS));
}

interface Forgeable {
  index: { format: string; parser: string; entries: [string, string, number, string[], number][] };
  trees: Uint8Array[];
}

/** The memo's bytes with `change` applied to its index and trees, and a digest that matches again (someone who knows the format). */
function forged(bytes: Buffer, change: (memo: Forgeable) => void): Buffer {
  const headerEnd = 4 + bytes.readUInt32BE(0);
  const index = JSON.parse(bytes.toString('utf8', 4, headerEnd)) as Forgeable['index'];
  let offset = headerEnd;
  const trees = index.entries.map((entry) => bytes.subarray(offset, (offset += entry[4])));
  const memo: Forgeable = { index, trees };
  change(memo);
  memo.index.entries.forEach((entry, i) => (entry[4] = memo.trees[i]?.length ?? entry[4])); // a tree taken away leaves its length claimed
  const header = Buffer.from(JSON.stringify(memo.index));
  const body = Buffer.concat([Buffer.from([0, 0, 0, 0]), header, ...memo.trees]);
  body.writeUInt32BE(header.length);
  return Buffer.concat([body, createHash('sha256').update(body).digest()]);
}

describe('the parse memo', () => {
  it('answers a parse of the same input with the tree a fresh parse gives, in memory and decoded in another run', () => {
    const fresh = Object.entries(FILES).map(([file, text]) => parseYaml(text, file, OPTIONS));
    const memo = ParseMemo.empty();
    expect(parseAll(memo)).toEqual(fresh);
    expect(memo.parsedFiles).toEqual(Object.keys(FILES));
    expect(parseAll(memo)).toEqual(fresh);
    const again = ParseMemo.decode(memo.encode());
    expect(memo.parsedFiles).toEqual([]);
    const decoded = parseAll(again);
    expect(decoded).toEqual(fresh);
    expect(again.parsedFiles).toEqual([]);
    // Origins say file:line:column and layer exactly as a fresh parse does.
    const api = getNode(decoded[0]!.root, ['api']);
    expect(api?.origin).toEqual({ layer: 'static', location: { file: 'overrides/static/web.yaml', line: 9, column: 1 } });
  });

  it('parses again exactly the file whose text changed, and keeps a tree per layer and per list-edit permission', () => {
    const first = ParseMemo.empty();
    parseAll(first);
    const memo = ParseMemo.decode(first.encode());
    const edited = { ...FILES, 'overrides/static/db.yaml': 'pod:\n  replicas: 3\n' };
    expect(toValues(parseAll(memo, edited))).toEqual(toValues(Object.entries(edited).map(([file, text]) => parseYaml(text, file, OPTIONS))));
    expect(memo.parsedFiles).toEqual(['overrides/static/db.yaml']);

    const other = memo.parse(FILES['overrides/static/db.yaml']!, 'overrides/static/db.yaml', { layer: 'chart db' });
    expect(other.root?.origin.layer).toBe('chart db');
    expect(() => memo.parse(VALUES, 'overrides/static/web.yaml', { layer: 'static' })).toThrow(/!append is only allowed in values layers/);
    expect(memo.parsedFiles).toEqual(['overrides/static/db.yaml', 'overrides/static/db.yaml', 'overrides/static/web.yaml']);
  });

  it('keeps nothing of a text that fails: the same error at the same file:line every time, bounds included', () => {
    const memo = ParseMemo.empty();
    const bad = 'a: 1\nb: [\n';
    const bomb = `a: &a [x, x, x, x, x, x, x, x, x, x]\n${Array.from(
      { length: 8 },
      (_, i) =>
        `l${i + 1}: &l${i + 1} [${Array(10)
          .fill(i === 0 ? '*a' : `*l${i}`)
          .join(', ')}]`,
    ).join('\n')}\n`;
    for (const [text, expected] of [
      [bad, /^bad\.yaml:3:1: invalid YAML/],
      [bomb, /^bad\.yaml:\d+:\d+: aliases expand to more than 100000 values/],
    ] as const) {
      const fresh = failure(() => parseYaml(text, 'bad.yaml', OPTIONS));
      expect(fresh.message).toMatch(expected);
      for (let round = 0; round < 2; round++) {
        const again = failure(() => memo.parse(text, 'bad.yaml', OPTIONS));
        expect(again).toBeInstanceOf(YamlSyntaxError);
        expect(again.message).toBe(fresh.message);
      }
    }
    expect(memo.encode()).toBeUndefined(); // nothing parsed, nothing to keep
  });

  it('ignores memo bytes that are torn, altered, foreign or from another parser, and parses instead', () => {
    const first = ParseMemo.empty();
    parseAll(first);
    const bytes = first.encode()!;
    const flipped = Buffer.from(bytes);
    flipped[Math.floor(flipped.length / 2)]! ^= 0xff;
    const cases: [string, Buffer | undefined][] = [
      ['missing', undefined],
      ['empty', Buffer.alloc(0)],
      ['torn', bytes.subarray(0, bytes.length - 100)],
      ['one byte changed', flipped],
      ['foreign', Buffer.from('{"format":"something else"}')],
      ['another format', forged(bytes, (memo) => (memo.index.format = 'flotilla-parse-memo/0'))],
      ['another parser', forged(bytes, (memo) => (memo.index.parser = 'f'.repeat(64)))],
      ['entries of another shape', forged(bytes, (memo) => (memo.index.entries = [['a', 'b'] as never]))],
      ['trees longer than the file', forged(bytes, (memo) => memo.trees.pop())],
    ];
    for (const [what, data] of cases) {
      const memo = ParseMemo.decode(data);
      expect(toValues(parseAll(memo)), what).toEqual(toValues(parseAll(ParseMemo.empty())));
      expect(memo.parsedFiles, what).toEqual(Object.keys(FILES));
    }
  });

  it('parses a file again when its kept tree is not one this file and layer could give', () => {
    const first = ParseMemo.empty();
    parseAll(first);
    const bytes = first.encode()!;
    const origin = { layer: 'static', location: { file: 'overrides/static/db.yaml', line: 1, column: 1 } };
    const trees: [string, unknown][] = [
      ['another file', { kind: 'scalar', value: 'forged', origin: { ...origin, location: { ...origin.location, file: 'elsewhere.yaml' } } }],
      ['another layer', { kind: 'scalar', value: 'forged', origin: { ...origin, layer: 'user' } }],
      ['not a node', { kind: 'map', entries: { pod: 1 }, origin }],
      ['a scalar of an unknown type', { kind: 'scalar', value: { nested: true }, origin }],
      ['not v8 data', Buffer.from('garbage')],
      ['a tree of shared subtrees that would take 2^60 steps to walk', bomb(origin, 60)],
      ['a cycle', cycle(origin)],
    ];
    for (const [what, tree] of trees) {
      const memo = ParseMemo.decode(
        forged(bytes, (memo) => {
          memo.index.entries.forEach((entry, i) => {
            if (entry[0].endsWith('overrides/static/db.yaml')) memo.trees[i] = tree instanceof Buffer ? tree : serialize(tree);
          });
        }),
      );
      expect(toValues(parseAll(memo)), what).toEqual(toValues(parseAll(ParseMemo.empty())));
      expect(memo.parsedFiles, what).toEqual(['overrides/static/db.yaml']);
    }
  });

  it('skips a check that passed on the same text before, in this run or a later one; a failure is checked again', () => {
    const memo = ParseMemo.empty();
    const runs: string[] = [];
    const check = (root: ValueNode | undefined, name: string, problems: string[]) => memo.checkOnce(root, name, () => (runs.push(name), problems));
    const web = memo.parse(VALUES, 'overrides/static/web.yaml', OPTIONS).root;
    const db = memo.parse(FILES['overrides/static/db.yaml']!, 'overrides/static/db.yaml', OPTIONS).root;
    expect(check(web, 'schema A', [])).toEqual([]);
    expect(check(db, 'schema A', ['db is wrong'])).toEqual(['db is wrong']);
    expect(check(web, 'schema A', ['never run'])).toEqual([]);
    expect(check(web, 'schema B', [])).toEqual([]);
    // A tree the memo did not hand out is always checked.
    expect(check(parseYaml(VALUES, 'overrides/static/web.yaml', OPTIONS).root, 'schema A', ['checked'])).toEqual(['checked']);
    expect(runs).toEqual(['schema A', 'schema A', 'schema B', 'schema A']);

    const later = ParseMemo.decode(memo.encode());
    runs.length = 0;
    const webAgain = later.parse(VALUES, 'overrides/static/web.yaml', OPTIONS).root;
    const dbAgain = later.parse(FILES['overrides/static/db.yaml']!, 'overrides/static/db.yaml', OPTIONS).root;
    const check2 = (root: ValueNode | undefined, name: string, problems: string[]) => later.checkOnce(root, name, () => (runs.push(name), problems));
    expect(check2(webAgain, 'schema A', ['never run'])).toEqual([]);
    expect(check2(dbAgain, 'schema A', ['db is wrong'])).toEqual(['db is wrong']);
    const edited = later.parse(`${VALUES}extra: 1\n`, 'overrides/static/web.yaml', OPTIONS).root;
    expect(check2(edited, 'schema A', ['edited is wrong'])).toEqual(['edited is wrong']);
    expect(runs).toEqual(['schema A', 'schema A']);
  });

  it('keeps entries of files not parsed lately, and drops them once the memo has been rewritten many times without them', () => {
    let memo = ParseMemo.empty();
    memo.parse('gone: 1\n', 'gone.yaml', OPTIONS);
    for (let i = 0; i < 110; i++) {
      memo.parse(`n: ${i}\n`, 'edited.yaml', OPTIONS);
      const bytes = memo.encode();
      memo = ParseMemo.decode(bytes);
      if (i === 50) {
        // Unused for a while, not yet for long: still kept (a copy is asked, so this use does not count).
        const copy = ParseMemo.decode(bytes);
        copy.parse('gone: 1\n', 'gone.yaml', OPTIONS);
        expect(copy.parsedFiles).toEqual([]);
      }
    }
    memo.parse('gone: 1\n', 'gone.yaml', OPTIONS);
    expect(memo.parsedFiles).toEqual(['gone.yaml']);
  });
});

/** A list of two references to a list of two references to … : tiny once serialized, endless to walk. */
function bomb(origin: object, levels: number): unknown {
  let node: unknown = { kind: 'scalar', value: 1, origin };
  for (let i = 0; i < levels; i++) node = { kind: 'seq', items: [node, node], origin };
  return node;
}

function cycle(origin: object): unknown {
  const items: unknown[] = [];
  const node = { kind: 'seq', items, origin };
  items.push(node);
  return node;
}

function failure(parse: () => unknown): YamlSyntaxError {
  try {
    parse();
  } catch (error) {
    return error as YamlSyntaxError;
  }
  throw new Error('expected a parse error');
}

function toValues(parsed: readonly { readonly root: unknown }[]): unknown[] {
  return parsed.map((p) => p.root);
}
