/**
 * YAML texts the readers are held to one another over: this repository's
 * YAML files, and seeded generated documents with a mangled byte or two.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { dump, parseEvents, type Event } from 'js-yaml';
import { stringify } from 'yaml';
import { expect } from 'vitest';
import { YAML_LIMITS } from '../../src/yaml/index.js';
import { scanBlockEvents } from '../../src/yaml/scan.js';
import { eventDepthLimit } from '../../src/yaml/tree.js';
import { seededRandom } from './random.js';

const REPO = join(import.meta.dirname, '..', '..');

/** The YAML files below `dir` (the repository by default), templates left out. */
export function yamlFiles(dir = REPO, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.') || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yamlFiles(path, out);
    else if (/\.ya?ml$/.test(name) && !path.includes('/templates/')) out.push(path);
  }
  return out;
}

// Scalars whose reading differs between YAML 1.1 and 1.2, or between plain and quoted, and text that looks like syntax.
const WORDS = [
  'yes',
  'no',
  'y',
  'n',
  'on',
  'off',
  'true',
  'False',
  '0755',
  '0o17',
  '0x1F',
  '0b101',
  '1_000',
  '190:20:30',
  '1.5',
  '1e3',
  '.inf',
  '-.Inf',
  '.NaN',
  '~',
  'null',
  '',
  ' ',
  'a b',
  'a: b',
  '- x',
  '#c',
  'x #c',
  '"q"',
  "'s'",
  'line1\nline2',
  'tail\n',
  '  lead',
  'ünï',
  '2024-01-01',
  '12:30',
  '<<',
  '*a',
  '&a',
  '!t',
  '@x',
  '[1]',
  '{a: 1}',
  'x,y',
  '1.0',
  '-0',
  '+1',
  '007',
  'v1.2',
];
const INSERTS = [
  ' ',
  '\n',
  ':',
  '-',
  '#',
  '"',
  "'",
  '[',
  ']',
  '{',
  '}',
  ',',
  '&a ',
  '*a',
  '!!str ',
  '!!int ',
  '!append ',
  '? ',
  '\t',
  '|',
  '>',
  '<<: *a\n',
  '---\n',
];

/**
 * Scans `text` with the line scanner and, when it reads the text, holds it to
 * js-yaml's event parser (same events, and js-yaml must read it too).
 * The scanner's events, or undefined when it left the text to js-yaml.
 */
export function scannedAsJsYaml(text: string, maxDepth = eventDepthLimit(YAML_LIMITS)): Event[] | undefined {
  const scanned = scanBlockEvents(text, maxDepth);
  if (!scanned) return undefined;
  let reference;
  try {
    reference = parseEvents(text, { maxDepth });
  } catch (error) {
    throw new Error(`the scanner read a text js-yaml refuses (${(error as Error).message.split('\n')[0]}): ${JSON.stringify(text)}`);
  }
  expect(scanned, JSON.stringify(text)).toEqual(reference);
  return scanned;
}

type Random = () => number;
const picker =
  (rnd: Random) =>
  <T>(items: readonly T[]): T =>
    items[Math.floor(rnd() * items.length)]!;

/** Nested maps, lists and scalars from `words`. */
function randomValue(rnd: Random, words: readonly string[], maxDepth: number): unknown {
  const pick = picker(rnd);
  const value = (depth: number): unknown => {
    const r = rnd();
    if (depth > maxDepth || r < 0.5) {
      const s = rnd();
      return s < 0.6 ? pick(words) : s < 0.75 ? Math.floor(rnd() * 2000) - 1000 : s < 0.8 ? null : s < 0.85 ? rnd() < 0.5 : pick(words) + pick(words);
    }
    if (r < 0.75) return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 4) }, (_, i) => [pick(words) + i, value(depth + 1)]));
    return Array.from({ length: Math.floor(rnd() * 4) }, () => value(depth + 1));
  };
  return value(0);
}

/** `edits` edits of `text`: a character dropped, or one of `inserts` put in, at random places. */
export function mangled(text: string, rnd: Random, edits: number, inserts: readonly string[]): string {
  const pick = picker(rnd);
  for (let left = edits; left > 0; left--) {
    const at = Math.floor(rnd() * text.length);
    text = rnd() < 0.3 ? text.slice(0, at) + text.slice(at + 1) : text.slice(0, at) + pick(inserts) + text.slice(at);
  }
  return text;
}

/** Documents of every style (block, flow, anchors, aliases, merge keys), some mangled. */
export function generatedYaml(count: number, seed: number): string[] {
  const rnd = seededRandom(seed);
  const texts: string[] = [];
  while (texts.length < count) {
    const data = { root: randomValue(rnd, WORDS, 3), shared: { a: 1 } };
    const r = rnd();
    let text = r < 0.4 ? stringify(data, { version: '1.1' }) : r < 0.7 ? dump(data) : stringify(data, { collectionStyle: 'flow' });
    // Anchors, aliases and merge keys, then a mangled byte or two.
    if (rnd() < 0.3) text = text.replace('shared:', 'shared: &a').concat('alias: *a\nmerged:\n  <<: *a\n  b: 2\n');
    texts.push(mangled(text, rnd, Math.floor(rnd() * 3), INSERTS));
  }
  return texts;
}

// What values files hold, and text at the edges of one-line block YAML: block scalars, keys with spaces or colons, flow collections.
const BLOCK_WORDS = [
  ...WORDS,
  'multi\nline\n',
  'kept\n\n',
  '  indented\nx',
  'a\n\nb',
  'x: y\nz',
  '#x\n',
  'a.b/c-d',
  'x:y',
  '?x',
  '-x',
  ':x',
  'a:',
  'é',
  '250m',
  'role:admin or role:member',
];
export const BLOCK_INSERTS = [
  ' ',
  '  ',
  '\n',
  '\n  ',
  '\n- ',
  ':',
  ': ',
  '-',
  '- ',
  '#',
  ' #',
  '"',
  "'",
  '\\',
  '[',
  ']',
  '{',
  '}',
  '[]',
  '{}',
  ',',
  '|',
  '>',
  '|-\n',
  '>+\n',
  '+',
  '?',
  '2',
  '&a ',
  '*a',
  '!!str ',
  '\t',
  '---\n',
  'k: v\n',
  '  k:\n',
];

/** Documents as people and tools write values files (block style, some flow, block scalars), some mangled. */
export function generatedBlockYaml(count: number, seed: number): string[] {
  const rnd = seededRandom(seed);
  const texts: string[] = [];
  while (texts.length < count) {
    const r = rnd();
    const text =
      r < 0.5
        ? dump(
            { root: randomValue(rnd, BLOCK_WORDS, 4), x: randomValue(rnd, BLOCK_WORDS, 2) },
            {
              indent: 1 + Math.floor(rnd() * 3),
              seqNoIndent: rnd() < 0.5,
              seqInlineFirst: rnd() < 0.7,
              flowLevel: rnd() < 0.3 ? Math.floor(rnd() * 4) : -1,
              lineWidth: rnd() < 0.2 ? 20 : 80,
            },
          )
        : stringify({ root: randomValue(rnd, BLOCK_WORDS, 4) }, { version: '1.1', indentSeq: rnd() < 0.5 });
    texts.push(mangled(text, rnd, Math.floor(rnd() * 3), BLOCK_INSERTS));
  }
  return texts;
}
