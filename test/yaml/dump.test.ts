/**
 * flotilla's own YAML writer for plain values (src/yaml/dump.ts,
 * `plainYaml`) against js-yaml's `dump`, which it stands in for: wherever it
 * writes a value, the text must be js-yaml's byte for byte. Held over the
 * manifests a build writes and over thousands of generated values whose
 * strings are the ones a writer gets wrong (YAML 1.1 booleans and numbers,
 * indicators, spaces at the ends, long lines, line breaks).
 */
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { dumpYaml } from '../../src/yaml/index.js';
import { plainYaml } from '../../src/yaml/dump.js';
import { fluxManifestTree } from '../../src/flux/index.js';
import { loadApp } from '../../src/app/index.js';
import { seededRandom } from '../support/random.js';

const jsYaml = (value: unknown): string => dump(value, { noRefs: true });

/** Strings that look like other types, indicators, ends and lengths that change js-yaml's style. */
const TRICKY = [
  '',
  ' ',
  'a',
  'svc00',
  'svc00-static-overrides.yaml',
  '0.1.0',
  '1.10',
  '1m',
  '30m',
  '5',
  '0755',
  '0o17',
  '0x1F',
  '0b101',
  '1_000',
  '1e5',
  '1E-3',
  '+1',
  '-1',
  '.5',
  '5.',
  '190:20:30',
  '1:2',
  '12:30',
  'a:b',
  'a:',
  ':a',
  'http://10.0.0.1:8080/helm_charts/stx-platform',
  'oci://registry.local/charts',
  'a: b',
  'a #b',
  'a#b',
  '#a',
  'yes',
  'Yes',
  'YES',
  'no',
  'No',
  'on',
  'On',
  'off',
  'OFF',
  'y',
  'Y',
  'n',
  'N',
  'true',
  'True',
  'FALSE',
  'null',
  'Null',
  'NULL',
  '~',
  '.inf',
  '-.inf',
  '.Inf',
  '.nan',
  '.NaN',
  '2001-12-14',
  '2001-12-14t21:59:43.10-05:00',
  '2001-12-14 21:59:43.10 -5',
  '<<',
  '=',
  'a=b',
  'x+y',
  '-',
  '--',
  '---',
  '---a',
  '...',
  '...a',
  '.a',
  './a',
  '/etc/x',
  '- a',
  '-a',
  '? a',
  '?a',
  '[a]',
  '{a}',
  'a,b',
  'a, b',
  '*a',
  '&a',
  '!a',
  '|',
  '>',
  "'a'",
  '"a"',
  '%a',
  '@a',
  '`a',
  'a b',
  'a  b',
  ' a',
  'a ',
  'a\tb',
  'a\nb',
  'a\n',
  '\n',
  'ünïcödé',
  'a\u2028b',
  'a\x7fb',
  'a\u00a0b',
  'the quick brown fox jumps over the lazy',
  'the quick brown fox jumps over the lazy dog',
  'the quick brown fox jumps over the lazy dog and runs far away from here',
  'x'.repeat(39),
  'x'.repeat(41),
  'x'.repeat(90),
  `${'x'.repeat(30)} ${'y'.repeat(30)}`,
  'k'.repeat(1025),
  '010',
  '0',
  '-0',
  '00',
  '1__0',
  '0.',
  '1.2.3',
  'v1.2',
  'nan',
  'inf',
];

function generate(rnd: () => number, depth: number): unknown {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const roll = rnd();
  if (depth > 0 && roll < 0.25) {
    const map: Record<string, unknown> = {};
    const size = Math.floor(rnd() * 4);
    for (let i = 0; i < size; i++)
      map[rnd() < 0.6 ? pick(['name', 'kind', 'spec', 'labels', 'a', 'b-c', 'x.y']) + String(i) : pick(TRICKY)] = generate(rnd, depth - 1);
    return map;
  }
  if (depth > 0 && roll < 0.45) return Array.from({ length: Math.floor(rnd() * 4) }, () => generate(rnd, depth - 1));
  if (roll < 0.75) return pick(TRICKY);
  return pick<unknown>([0, 1, -7, 42, 2 ** 53, 2 ** 60, -0, 0.5, 1e21, 1e-7, Number.NaN, Infinity, -Infinity, true, false, null, undefined]);
}

describe('plainYaml (js-yaml dump, written by flotilla)', () => {
  it('writes every generated value as js-yaml does, or hands it over', () => {
    const rnd = seededRandom(7);
    let written = 0;
    for (let i = 0; i < 6000; i++) {
      const value = generate(rnd, 1 + (i % 5));
      const own = plainYaml(value);
      let expected: string | undefined;
      try {
        expected = jsYaml(value);
      } catch {
        // js-yaml refuses it (undefined at the top): so must dumpYaml, through js-yaml.
        expect(own, JSON.stringify(value)).toBeUndefined();
        expect(() => dumpYaml(value)).toThrow();
        continue;
      }
      expect(dumpYaml(value), JSON.stringify(value)).toBe(expected);
      if (own !== undefined) {
        expect(own, JSON.stringify(value)).toBe(expected);
        written++;
      }
    }
    // Most of them are written without js-yaml, so the comparison above means something.
    expect(written).toBeGreaterThan(1500);
  });

  it('writes each tricky string alone, as a key, in a list and deep down (where lines are shorter) as js-yaml does', () => {
    const deep = (value: unknown, levels: number): unknown => (levels === 0 ? value : deep(levels % 2 ? { a: value } : [value], levels - 1));
    for (const text of TRICKY) {
      for (const value of [text, { [text]: text }, [text], { a: [{ [text]: [text] }] }, deep({ [text]: text }, 21), deep([text], 30)]) {
        const own = plainYaml(value);
        if (own !== undefined) expect(own, JSON.stringify(value)).toBe(jsYaml(value));
      }
    }
  });

  it("writes every Flux manifest of the repository's app itself", async () => {
    const app = await loadApp(join(import.meta.dirname, '..', '..'));
    const dumped: unknown[] = [];
    fluxManifestTree({
      releases: app.releases,
      chartVersions: new Map(app.releases.map((r) => [r.chart, '0.1.0'])),
      repository: { name: 'starlingx', url: 'http://192.168.206.1:8080/helm_charts/stx-openstack', interval: '1m', namespace: 'openstack' },
      staticOverrides: new Map(),
      namespace: 'openstack',
      dump: (value) => (dumped.push(value), jsYaml(value)),
    });
    expect(dumped.length).toBeGreaterThan(2 * app.releases.length);
    for (const manifest of dumped) expect(plainYaml(manifest), JSON.stringify(manifest)).toBe(jsYaml(manifest));
  });

  it('hands over what it does not write: floats, quoted and multi-line strings, instances, holes, cycles', () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    for (const value of [{ a: 0.5 }, { a: 'yes' }, { a: 'x\ny' }, { a: new Date(0) }, [1, , 3], { a: undefined }, cycle, { a: 10n }]) {
      expect(plainYaml(value)).toBeUndefined();
    }
    expect(dumpYaml({ a: 'yes', b: 0.5, c: 'x\ny' })).toBe(jsYaml({ a: 'yes', b: 0.5, c: 'x\ny' }));
  });
});
