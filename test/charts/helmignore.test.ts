import { describe, expect, it } from 'vitest';
import { HelmignoreError, HelmignoreRules } from '../../src/charts/index.js';
import { GoGlob } from '../../src/charts/helmignore.js';
import { seededRandom } from '../support/random.js';

const glob = (pattern: string) => GoGlob.compile(pattern);

describe('GoGlob (Go filepath.Match)', () => {
  it('keeps * and ? inside one path segment', () => {
    expect(glob('*.yaml').test('a.yaml')).toBe(true);
    expect(glob('*.yaml').test('dir/a.yaml')).toBe(false);
    expect(glob('a?c').test('abc')).toBe(true);
    expect(glob('a?c').test('a/c')).toBe(false);
  });

  it('supports classes, ranges, negated classes and escapes', () => {
    expect(glob('[abc].txt').test('b.txt')).toBe(true);
    expect(glob('[a-c]x').test('dx')).toBe(false);
    expect(glob('[^a-c]x').test('dx')).toBe(true);
    expect(glob('\\*lit').test('*lit')).toBe(true);
    expect(glob('\\*lit').test('xlit')).toBe(false);
    expect(glob('a.b').test('axb')).toBe(false); // regex metacharacters are literal
  });

  it('refuses what Go calls ErrBadPattern', () => {
    for (const bad of ['[', '[]', '[a-]', 'abc\\', '[z-a]']) expect(() => glob(bad), bad).toThrow();
  });

  // Matched by one RegExp of the whole pattern, 28 characters took 0.2 s and 2,000 would not end: neither would this test.
  it('matches a pattern of many stars against a long name at all', () => {
    const hostile = glob('*a*a*a*a*a*a*a*a*a*a*a*a*c');
    for (const n of [28, 200, 2000]) expect(hostile.test('a'.repeat(n))).toBe(false);
    expect(hostile.test(`${'a'.repeat(2000)}c`)).toBe(true);
  });

  it("agrees with glob semantics on 20,000 random patterns and names (a backtracking reference, fine at this size)", () => {
    /** Go's Match semantics by brute force: every way a star can take characters, none of them a /. */
    const reference = (pattern: readonly string[], name: readonly string[]): boolean => {
      if (pattern.length === 0) return name.length === 0;
      const [p, ...rest] = pattern;
      if (p === '*') {
        for (let k = 0; k <= name.length; k++) {
          if (k > 0 && name[k - 1] === '/') break;
          if (reference(rest, name.slice(k))) return true;
        }
        return false;
      }
      if (name.length === 0) return false;
      const ok = p === '?' ? name[0] !== '/' : p === name[0];
      return ok && reference(rest, name.slice(1));
    };
    const random = seededRandom(7);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    for (let n = 0; n < 20_000; n++) {
      const pattern = Array.from({ length: 1 + Math.floor(random() * 7) }, () => pick(['*', '?', 'a', 'b', '/', 'é', '😀']));
      // Stars in a row are one star (and ** is refused before a glob is made).
      const text = pattern.join('').replace(/\*+/g, '*');
      const name = Array.from({ length: Math.floor(random() * 8) }, () => pick(['a', 'b', '/', 'é', 'c', '😀']));
      expect(glob(text).test(name.join('')), `${text} ${name.join('')}`).toBe(reference([...text], name));
    }
  });
});

describe('HelmignoreRules (Helm semantics)', () => {
  it('matches patterns without / against the base name at any depth', () => {
    const rules = HelmignoreRules.parse('*.bak\n');
    expect(rules.ignores('a.bak', false)).toBe(true);
    expect(rules.ignores('templates/deep/x.bak', false)).toBe(true);
    expect(rules.ignores('x.yaml', false)).toBe(false);
  });

  it('matches patterns with / against the whole path, and a leading / anchors at the root', () => {
    const rules = HelmignoreRules.parse('templates/tests/*\n/notes.txt\n');
    expect(rules.ignores('templates/tests/pod.yaml', false)).toBe(true);
    expect(rules.ignores('other/templates/tests/pod.yaml', false)).toBe(false);
    expect(rules.ignores('notes.txt', false)).toBe(true);
    expect(rules.ignores('files/notes.txt', false)).toBe(false);
  });

  it('applies a trailing / only to directories', () => {
    const rules = HelmignoreRules.parse('docs/\n');
    expect(rules.ignores('docs', true)).toBe(true);
    expect(rules.ignores('docs', false)).toBe(false);
    expect(rules.ignores('sub/docs', true)).toBe(true);
  });

  it('skips comments and blank lines and always adds Helm\'s templates/.?* rule', () => {
    const rules = HelmignoreRules.parse('# comment\n\n   \n');
    expect(rules.rules.map((r) => r.raw)).toEqual(['templates/.?*']);
    expect(rules.ignores('templates/.hidden', false)).toBe(true);
    expect(rules.ignores('templates/sub/.hidden', false)).toBe(false);
    expect(rules.ignores('.hidden', false)).toBe(false);
    expect(HelmignoreRules.defaultsOnly().ignores('templates/.x', false)).toBe(true);
  });

  it('evaluates negation like Helm: a "!" rule ignores everything it does not match', () => {
    const rules = HelmignoreRules.parse('*.txt\n!keep.txt\n');
    // first matching rule wins: keep.txt is ignored by *.txt before the negation is reached
    expect(rules.ignores('keep.txt', false)).toBe(true);
    // and every other path is ignored by the negated rule
    const rule = rules.decidingRule('Chart.yaml', false);
    expect(rule?.raw).toBe('!keep.txt');
    expect(rule?.line).toBe(2);
  });

  it('treats a negated directory rule as ignoring every file (Helm)', () => {
    const rules = HelmignoreRules.parse('!docs/\n');
    expect(rules.ignores('Chart.yaml', false)).toBe(true);
    expect(rules.ignores('docs', true)).toBe(false);
  });

  it('never ignores the chart root', () => {
    const rules = HelmignoreRules.parse('*\n');
    expect(rules.ignores('', true)).toBe(false);
    expect(rules.ignores('.', true)).toBe(false);
  });

  it('refuses ** and malformed globs with the line and column', () => {
    expect(() => HelmignoreRules.parse('ok\n  docs/**\n', '/c/.helmignore')).toThrow(HelmignoreError);
    try {
      HelmignoreRules.parse('ok\n  docs/**\n', '/c/.helmignore');
    } catch (error) {
      expect((error as HelmignoreError).location).toEqual({ file: '/c/.helmignore', line: 2, column: 3 });
      expect((error as Error).message).toMatch(/double-star/);
    }
    expect(() => HelmignoreRules.parse('a[\n', '/c/.helmignore')).toThrow(/\.helmignore:1:1: bad pattern "a\["/);
  });
});
