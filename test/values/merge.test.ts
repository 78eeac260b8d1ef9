import { describe, expect, it } from 'vitest';
import { leaves, parseYaml, toPlain, type ValueNode } from '../../src/yaml/index.js';
import { formatPath } from '../../src/diagnostics/index.js';
import { coalesceWithChart, mergeAll, mergeNodes, mergePlain, ValueClashError, type KindClash } from '../../src/values/index.js';

const layer = (label: string, text: string): ValueNode => {
  const root = parseYaml(text, `${label}.yaml`, { layer: label, allowListEdits: true }).root;
  if (!root) throw new Error('empty');
  return root;
};
const merged = (...texts: string[]) => toPlain(mergeAll(texts.map((t, i) => ({ root: layer(`l${i}`, t) }))) as ValueNode);

describe('merge rules', () => {
  it('merges maps deeply, the higher layer winning on scalars', () => {
    expect(merged('a: {x: 1, k: {p: 1, q: 2}}\nb: 1', 'a: {k: {q: 3, r: 4}}\nc: 2')).toEqual({ a: { x: 1, k: { p: 1, q: 3, r: 4 } }, b: 1, c: 2 });
  });

  it('replaces lists from a higher layer (Helm rule)', () => {
    expect(merged('l: [a, b, c]', 'l: [z]')).toEqual({ l: ['z'] });
    expect(merged('l: [a]', 'l: []')).toEqual({ l: [] });
  });

  it('keeps null so Helm deletes the chart default', () => {
    expect(merged('a: {x: 1, k: 2}', 'a: {x: null}')).toEqual({ a: { x: null, k: 2 } });
    expect(merged('a: {x: 1}', 'a: null')).toEqual({ a: null });
    // a map may come back on top of null
    expect(merged('a: {x: 1}', 'a: null', 'a: {k: 2}')).toEqual({ a: { k: 2 } });
  });

  it('!append, !prepend and !remove edit the list below', () => {
    expect(merged('l: [a, b]', 'l: !append [c]')).toEqual({ l: ['a', 'b', 'c'] });
    expect(merged('l: [a, b]', 'l: !prepend [z]')).toEqual({ l: ['z', 'a', 'b'] });
    expect(merged('l: [a, b, a, c]', 'l: !remove [a]')).toEqual({ l: ['b', 'c'] });
  });

  it('!remove matches maps by the fields it names', () => {
    expect(merged('l: [{name: x, v: 1}, {name: w, v: 2}]', 'l: !remove [{name: x}]')).toEqual({ l: [{ name: 'w', v: 2 }] });
  });

  it('keeps list edits with nothing below until a list appears, applying them in order', () => {
    // a spec layer edits a list that only the chart defaults (merged later, below it) hold
    const edits = mergeNodes(layer('size', 'l: !append [c]'), layer('user', 'l: !remove [a]'));
    expect(toPlain(mergeNodes(layer('chart', 'l: [a, b]'), edits))).toEqual({ l: ['b', 'c'] });
    // alone, appends become the list and a lone remove drops the key
    expect(toPlain(layer('x', 'l: !append [c]\nm: !remove [d]'))).toEqual({ l: ['c'] });
  });

  it('treats null below a list edit as an empty list', () => {
    expect(merged('l: null', 'l: !append [a]')).toEqual({ l: ['a'] });
  });

  it('records for every leaf the layer and line that set it, items of edited lists included', () => {
    const result = mergeAll([{ root: layer('low', 'a:\n  x: 1\nl: [a]\n') }, { root: layer('high', 'a:\n  w: 2\nl: !append [b]\n') }]) as ValueNode;
    const where = Object.fromEntries(leaves(result).map((l) => [l.path.join('.'), `${l.origin.layer}@${l.origin.location.file}:${l.origin.location.line}`]));
    expect(where).toEqual({ 'a.x': 'low@low.yaml:2', 'a.w': 'high@high.yaml:2', 'l.0': 'low@low.yaml:3', 'l.1': 'high@high.yaml:3' });
  });

  it('a map against a non-map is an error naming the dotted path and both layers with file:line', () => {
    const low = layer('static', 'conf:\n  policy:\n    rule: "role:admin"\n');
    const high = layer('services.image.glance', 'conf:\n  policy: open\n');
    expect(() => mergeNodes(low, high)).toThrow(ValueClashError);
    try {
      mergeNodes(low, high);
    } catch (error) {
      const e = error as ValueClashError;
      expect(e.message).toContain('type clash at conf.policy');
      expect(e.message).toContain('static (static.yaml:2:3) sets a map');
      expect(e.message).toContain('services.image.glance (services.image.glance.yaml:2:3) sets a string;');
      expect(e.message).not.toContain('open'); // kinds, never values
      expect(e.path).toEqual(['conf', 'policy']);
    }
    // the other direction, and lists against maps
    expect(() => mergeNodes(layer('a', 'x: 1'), layer('b', 'x: {w: 1}'))).toThrow(
      /type clash at x: a \(a.yaml:1:1\) sets a number, but b \(b.yaml:1:1\) sets a map/,
    );
    expect(() => mergeNodes(layer('a', 'x: {w: 1}'), layer('b', 'x: [1]'))).toThrow(/sets a list/);
    expect(() => mergeNodes(layer('a', 'x: {w: 1}'), layer('b', 'x: !append [1]'))).toThrow(
      /cannot edit a list at x: b \(b.yaml:1:1\) uses list edits \(!append\), but a \(a.yaml:1:1\) sets a map/,
    );
    expect(() => mergeNodes(layer('a', 'x: 3'), layer('b', 'x: !append [1]'))).toThrow(/cannot edit a list at x/);
  });

  it('with a sink, a kind clash is reported and the higher layer wins whatever its kind', () => {
    const clashes: KindClash[] = [];
    const sink = (c: KindClash) => clashes.push(c);
    expect(toPlain(mergeNodes(layer('a', 'x: {w: 1}\nz: 2'), layer('b', 'x: [1]'), sink))).toEqual({ x: [1], z: 2 });
    expect(toPlain(mergeNodes(layer('a', 'x: 3'), layer('b', 'x: {w: 1}'), sink))).toEqual({ x: { w: 1 } });
    // null is no kind: it clashes with nothing
    expect(toPlain(mergeNodes(layer('a', 'x: {w: 1}'), layer('b', 'x: null'), sink))).toEqual({ x: null });
    expect(clashes.map((c) => [formatPath(c.path), c.lowerKind, c.upperKind, c.lower.location.file, c.upper.location.file])).toEqual([
      ['x', 'a map', 'a list', 'a.yaml', 'b.yaml'],
      ['x', 'a number', 'a map', 'a.yaml', 'b.yaml'],
    ]);
  });

  it('coalesces with the chart as Helm does: nulls delete defaults, the overrides win every clash with the warning Helm gives', () => {
    const clashes: KindClash[] = [];
    const chart = layer('chart', 'top: 1\nt: {a: {b: 1}, s: 2, m: null, k: 1}\nl: [a, b]\ngone: {x: 1}\nkeep: null');
    const over = layer('static', 'top: {x: 1}\nt: {a: 5, s: {w: 1}, m: null, k: null}\nl: !append [c]\ngone: null\nnew: null');
    const merged = coalesceWithChart(chart, over, { onClash: (c) => clashes.push(c) }) as ValueNode;
    expect(toPlain(merged)).toEqual({ top: { x: 1 }, t: { a: 5, s: { w: 1 }, m: null }, l: ['a', 'b', 'c'], keep: null, new: null });
    expect(clashes.map((c) => `${c.helm} ${formatPath(c.path)}`)).toEqual(['skipped top', 'overwrite t.a', 'destination t.s']);
    // the shipped form keeps the nulls, so Helm deletes what they name
    expect(toPlain(coalesceWithChart(chart, over, { keepNulls: true }) as ValueNode)).toMatchObject({ t: { k: null }, gone: null });
  });

  it('never mutates its inputs', () => {
    const low = layer('low', 'a: {x: 1, l: [1]}\n');
    const high = layer('high', 'a: {y: 2, l: !append [2]}\n');
    const before = [JSON.stringify(toPlain(low)), JSON.stringify(toPlain(high))];
    mergeNodes(low, high);
    mergeNodes(high, low);
    expect([JSON.stringify(toPlain(low)), JSON.stringify(toPlain(high))]).toEqual(before);
  });
});

describe('YAML as Helm reads it', () => {
  it('reads YAML 1.1 booleans and octals, keeps timestamps as strings, resolves anchors and merge keys', () => {
    const root = parseYaml('a: yes\nb: 0755\nc: 2024-01-01\nd: &x {k: v}\ne: *x\nf:\n  <<: *x\n  z: 1\n', 'f.yaml', { layer: 'x' }).root as ValueNode;
    // like Helm's go-yaml v2, `y`/`n` are booleans too (quote them to keep strings)
    expect(toPlain(parseYaml('k: y\nq: "y"\n', 'f.yaml', { layer: 'x' }).root as ValueNode)).toEqual({ k: true, q: 'y' });
    expect(toPlain(root)).toEqual({ a: true, b: 493, c: '2024-01-01', d: { k: 'v' }, e: { k: 'v' }, f: { k: 'v', z: 1 } });
  });

  it('refuses duplicate keys, unknown tags, and list edits where they are not allowed, with file:line', () => {
    expect(() => parseYaml('a: 1\na: 2\n', 'f.yaml', { layer: 'x' })).toThrow(/f\.yaml:2:1: invalid YAML: Map keys must be unique/);
    expect(() => parseYaml('a: !foo 1\n', 'f.yaml', { layer: 'x' })).toThrow(/f\.yaml:1:4: .*!foo/);
    expect(() => parseYaml('a: !append [1]\n', 'static.yaml', { layer: 'static' })).toThrow(/static\.yaml:1:1: !append is only allowed in values layers/);
    expect(() => parseYaml('a: !append 1\n', 'f.yaml', { layer: 'x', allowListEdits: true })).toThrow(/!append takes a list/);
  });
});

describe('mergePlain (user overrides kept in the cluster)', () => {
  it('is the same merge: lists and other kinds replaced, maps merged, inputs untouched', () => {
    const lower = { a: { x: 1, l: [1, 2] }, k: { m: 1 } };
    const upper = { a: { l: [3] }, k: 'flat' };
    const before = JSON.stringify([lower, upper]);
    expect(mergePlain(lower, upper)).toEqual({ a: { x: 1, l: [3] }, k: 'flat' });
    expect(JSON.stringify([lower, upper])).toBe(before);
  });
});
