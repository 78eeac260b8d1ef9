/**
 * The editor on real files (this repository's static overrides, chart
 * values, spec and metadata, and the StarlingX fixture): setting any scalar
 * changes only that scalar's line — every other line stays byte-identical —
 * and reading the result gives the old data with that one value changed;
 * removing any key removes only its own lines.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isMap, isScalar, isSeq, parseDocument, type Node as YamlNode, type Pair } from 'yaml';
import { describe, expect, it } from 'vitest';
import { YamlFileEditor, type ValuePath } from '../../src/edit/index.js';

const repo = resolve(import.meta.dirname, '../..');
const yamlIn = (dir: string) =>
  readdirSync(join(repo, dir))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(dir, f));
const FILES = [
  ...yamlIn('overrides/static'),
  ...readdirSync(join(repo, 'charts'))
    .map((c) => `charts/${c}/values.yaml`)
    .filter((f) => existsSync(join(repo, f))),
  'overrides/deployment.yaml',
  ...yamlIn('overrides/versions'),
  'fluxcd/metadata.yaml',
  'fluxcd/releases.yaml',
  ...['keystone', 'glance', 'ingress', 'mariadb'].map((r) => `test/fixtures/stx-app/fluxcd-manifests/${r}/${r}-static-overrides.yaml`),
];

const read = (text: string) => parseDocument(text, { version: '1.1' }).toJSON() as unknown;

interface Leaf {
  readonly path: ValuePath;
  readonly line: number;
  readonly lines: number;
}

/** Every scalar written in the file (not through aliases or merge keys), with its line span. */
function leaves(text: string): Leaf[] {
  const doc = parseDocument(text, { version: '1.1' });
  const lineOf = (offset: number) => text.slice(0, offset).split('\n').length;
  const out: Leaf[] = [];
  const walk = (node: unknown, path: ValuePath) => {
    if (isMap(node)) {
      for (const pair of node.items as Pair[]) {
        const key = pair.key as YamlNode | null;
        if (!isScalar(key) || typeof key.value === 'symbol') continue;
        walk(pair.value, [...path, String(key.value)]);
      }
    } else if (isSeq(node)) node.items.forEach((item, i) => walk(item, [...path, i]));
    else if (isScalar(node) && node.range && !node.anchor) {
      out.push({ path, line: lineOf(node.range[0]), lines: lineOf(Math.max(node.range[0], node.range[1] - 1)) - lineOf(node.range[0]) + 1 });
    }
  };
  walk(doc.contents, []);
  return out;
}

function setIn(data: unknown, path: ValuePath, value: unknown): unknown {
  const copy = structuredClone(data) as Record<string | number, unknown>;
  let at = copy;
  for (const segment of path.slice(0, -1)) at = at[segment] as Record<string | number, unknown>;
  at[path[path.length - 1] as string | number] = value;
  return copy;
}

/** At most `n` items, spread over the list. */
const sample = <T>(items: readonly T[], n: number) =>
  items.length <= n ? [...items] : Array.from({ length: n }, (_, i) => items[Math.floor((i * items.length) / n)] as T);

describe.each(FILES)('%s', (file) => {
  const text = readFileSync(join(repo, file), 'utf8');
  const before = read(text);

  it('setting any scalar changes that scalar alone', () => {
    for (const [i, leaf] of sample(leaves(text), 8).entries()) {
      for (const value of [i % 2 === 0 ? 'edited value' : 42]) {
        const editor = new YamlFileEditor(text, file);
        editor.set(leaf.path, value, { force: true });
        expect(read(editor.text), `${file} ${leaf.path.join('.')}`).toEqual(setIn(before, leaf.path, value));
        const old = text.split('\n');
        const now = editor.text.split('\n');
        // Lines before and after the scalar's own lines are identical.
        expect(now.slice(0, leaf.line - 1)).toEqual(old.slice(0, leaf.line - 1));
        const after = old.length - (leaf.line - 1 + leaf.lines);
        expect(now.slice(now.length - after)).toEqual(old.slice(old.length - after));
      }
    }
  });

  it('removing any key removes only its own lines', () => {
    const keyed = leaves(text).filter((l) => typeof l.path[l.path.length - 1] === 'string' && l.lines === 1);
    for (const leaf of sample(keyed, 5)) {
      const editor = new YamlFileEditor(text, file);
      try {
        editor.unset(leaf.path, { force: true });
      } catch (error) {
        // A key inside a flow collection or an anchored map is refused or edited in place; the rest must work.
        throw new Error(`${file} ${leaf.path.join('.')}: ${(error as Error).message}`);
      }
      const old = text.split('\n');
      const now = editor.text.split('\n');
      // The new text is the old one with one run of lines taken out, or one line edited (a flow entry).
      let head = 0;
      while (head < now.length && now[head] === old[head]) head++;
      let tail = 0;
      while (tail < now.length - head && now[now.length - 1 - tail] === old[old.length - 1 - tail]) tail++;
      expect(now.length - head - tail, `${file} ${leaf.path.join('.')}`).toBeLessThanOrEqual(1);
      expect(read(editor.text)).not.toEqual(before);
    }
  });
});
