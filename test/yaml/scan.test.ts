/**
 * The line scanner (src/yaml/scan.ts) against js-yaml's event parser:
 * whatever text the scanner reads, it must give exactly js-yaml's events —
 * every offset, style, chomping and indentation — and js-yaml must read the
 * text too; whatever it does not read, it must leave to js-yaml
 * (undefined), never refuse. Held over this repository's YAML files, the
 * bench's generated apps, and tens of thousands of generated and mangled
 * documents.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_ID, SCALAR_STYLE, type Event } from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { parseYamlValue, YAML_LIMITS } from '../../src/yaml/index.js';
import { scanBlockEvents } from '../../src/yaml/scan.js';
import { generateBenchApp, generateLargeTemplateApp } from '../bench/generate.js';
import { eventDepthLimit } from '../../src/yaml/tree.js';
import { seededRandom } from '../support/random.js';
import { BLOCK_INSERTS, generatedBlockYaml, generatedYaml, mangled, scannedAsJsYaml, yamlFiles } from '../support/yaml-texts.js';

const MAX_DEPTH = eventDepthLimit(YAML_LIMITS);
const held = (text: string): boolean => scannedAsJsYaml(text) !== undefined;

/** What the scanner's events of the texts it read hold, by kind and style: to show each construct is met. */
function constructs(scanned: readonly Event[][]): Set<string> {
  const seen = new Set<string>();
  for (const events of scanned) {
    for (const event of events) {
      const block = event.type === EVENT_ID.SCALAR && (event.style === SCALAR_STYLE.LITERAL_BLOCK || event.style === SCALAR_STYLE.FOLDED_BLOCK);
      if (event.type === EVENT_ID.SCALAR) seen.add(`scalar ${event.style}${block ? ` chomping ${event.chomping}` : ''}`);
      else if (event.type === EVENT_ID.SEQUENCE || event.type === EVENT_ID.MAPPING)
        seen.add(`${event.type === EVENT_ID.SEQUENCE ? 'list' : 'map'} ${event.style}`);
    }
  }
  return seen;
}

const scratch = mkdtempSync(join(tmpdir(), 'flotilla-scan-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the line scanner against js-yaml', () => {
  it("reads nearly all of this repository's YAML files and the bench's apps, as js-yaml does", () => {
    generateBenchApp(join(scratch, 'library'), 4);
    generateLargeTemplateApp(join(scratch, 'large'), 4);
    const files = [...yamlFiles(), ...yamlFiles(scratch)];
    const left = files.filter((file) => !held(readFileSync(file, 'utf8')));
    // What it leaves holds escapes, anchors or multi-line scalars; an app's values, overrides and Chart.yaml files are read.
    expect(left.length, left.join('\n')).toBeLessThan(files.length / 20);
    expect(left.filter((file) => /\/(charts\/[^/]+\/(Chart|values)|overrides\/static\/[^/]+)\.yaml$/.test(file) && !file.includes('/fixtures/'))).toEqual([]);
  });

  it('gives js-yaml’s events for every generated block document it reads, and reads over a third of them', () => {
    const scanned = generatedBlockYaml(12000, 23)
      .map((text) => scannedAsJsYaml(text))
      .filter((events) => events !== undefined);
    expect(scanned.length).toBeGreaterThan(4000);
    // Every construct it reads is met: block and flow collections, plain, quoted, literal and folded scalars.
    expect([...constructs(scanned)]).toEqual(
      expect.arrayContaining([
        'list 1',
        'list 2',
        'map 1',
        'map 2',
        'scalar 1',
        'scalar 2',
        'scalar 3',
        'scalar 4 chomping 1',
        'scalar 4 chomping 2',
        'scalar 5 chomping 2',
      ]),
    );
  });

  it('gives js-yaml’s events for every document of every style it reads', () => {
    const read = generatedYaml(6000, 31).filter(held).length;
    expect(read).toBeGreaterThan(600);
  });

  it("gives js-yaml's events for mangled copies of this repository's files", () => {
    const sources = yamlFiles().map((file) => readFileSync(file, 'utf8'));
    const rnd = seededRandom(5);
    let read = 0;
    for (const source of sources) for (let copy = 0; copy < 6; copy++) if (held(mangled(source, rnd, 1 + Math.floor(rnd() * 2), BLOCK_INSERTS))) read++;
    expect(read).toBeGreaterThan(sources.length);
  });

  it.each([
    ['maps and lists, nested and compact', 'a: 1\nb:\n  - x\n  - y: 2\n    z: "q"\nc:\n- 1\n- k: v\n  l:\n  - 2\nd:\n'],
    ['comments everywhere a comment may be', '# head\na: 1 # tail\n\nb: # after a key\n    # indented\n  c: x#not-a-comment\n  d: "q" # tail\n# end\n'],
    ['keys with spaces, colons, dots and slashes', 'identity:get_user: "rule:admin"\napp.kubernetes.io/name: x\na b: c\nk : v\n'],
    ['quoted scalars', 'a: "yes"\nb: \'no\'\nc: ""\nd: \'#x\'\n'],
    ['block scalars', 'a: |\n  one\n\n  two\nb: >-\n  folded\n  text\n\nc: |+\n    kept\n\n'],
    ['flow collections on a line', 'a: []\nb: { }\nc: [x, "y", \'z\', [1, 2], {k: v}]\nd: {cpu: 250m, memory: 512Mi,}\n'],
    ['an indented root', '  a: 1\n  b:\n    - 2\n'],
  ])('reads %s as js-yaml does', (_title, text) => {
    expect(held(text)).toBe(true);
  });

  it.each([
    ['anchors and aliases', 'a: &x 1\nb: *x\n'],
    ['tags', 'a: !!str 1\n'],
    ['a plain scalar over several lines', 'a: one\n  two\n'],
    ['an indented comment after a value', 'a: 1\n  # c\nb: 2\n'],
    ['escapes', "a: \"x\\ty\"\nb: 'it''s'\n"],
    ['a tab', 'a:\t1\n'],
    ['a carriage return', 'a: 1\r\n'],
    ['document markers', '---\na: 1\n'],
    ['a document marker where a key would be', '    --- a: 1\n'],
    ['a last line of spaces only, unended', 'a: z\n    '],
    ['a flow collection over several lines', 'a: [1,\n  2]\n'],
    ['a complex key', '? a\n: b\n'],
    ['a list in a list on one line', '- - a\n'],
    ['a scalar as the whole document', 'just text\n'],
    ['an empty block scalar', 'a: |\nb: 1\n'],
    ['an indentation indicator', 'a: |2\n   x\n'],
    ['a map where a list entry belongs', '- a\nb: 1\n'],
    ['bad indentation', 'a:\n  b: 1\n c: 2\n'],
  ])('leaves %s to js-yaml', (_title, text) => {
    expect(scanBlockEvents(text, MAX_DEPTH)).toBeUndefined();
  });

  it('leaves to js-yaml what may nest deeper than js-yaml is allowed, at any limit', () => {
    const texts = ['a: b', 'a:', '- a', '-', 'a:\n  b: 1', '- a: 1', '- [a]\n- >\n a', 'a: [[x]]', 'a: {b: [c]}', 'a: |\n  x', '- a: |\n   a', 'a:\n- a'];
    const readAt = (limit: number) => texts.filter((text) => scannedAsJsYaml(text, limit) !== undefined).length;
    for (let limit = 0; limit < 10; limit++) readAt(limit);
    // Well within the limit, every one is read.
    expect(readAt(10)).toBe(texts.length);
  });

  it("reads maps and lists nested up to two levels short of flotilla's limit, and leaves deeper ones to js-yaml", () => {
    for (const line of [(i: number) => `${' '.repeat(i)}k:`, (i: number) => `${' '.repeat(i)}-`]) {
      const read: number[] = [];
      for (let levels = 1; levels <= YAML_LIMITS.maxDepth + 2; levels++) {
        if (held(`${Array.from({ length: levels }, (_, i) => line(i)).join('\n')}\n${' '.repeat(levels)}x: y\n`)) read.push(levels);
      }
      expect(read).toEqual(Array.from({ length: YAML_LIMITS.maxDepth - 2 }, (_, i) => i + 1));
    }
  });

  it('leaves nesting deeper than js-yaml is allowed to js-yaml, which refuses it', () => {
    const deep = Array.from({ length: MAX_DEPTH + 2 }, (_, i) => `${' '.repeat(i)}k:`).join('\n');
    expect(scanBlockEvents(deep, MAX_DEPTH)).toBeUndefined();
    expect(() => parseYamlValue(deep, 'f.yaml')).toThrow(/nest more than/);
  });

  // Each line's searches stop at its end: searching the whole text from every line took the square of its length.
  it('reads a long document at all', () => {
    const text = Array.from({ length: 400_000 }, (_, i) => `key${i}: value ${i} without a comment or a colon`).join('\n');
    const events = scanBlockEvents(text, MAX_DEPTH);
    expect(events?.length).toBe(2 + 2 * 400_000 + 2);
    expect(scanBlockEvents(`${'- "unclosed\n'.repeat(200_000)}`, MAX_DEPTH)).toBeUndefined();
  });
});
