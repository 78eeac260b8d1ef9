import { describe, expect, it } from 'vitest';
import { HelmignoreError, HelmignoreRules } from '../../src/charts/index.js';
import { goGlobToRegExp } from '../../src/charts/helmignore.js';

describe('goGlobToRegExp (Go filepath.Match)', () => {
  it('keeps * and ? inside one path segment', () => {
    expect(goGlobToRegExp('*.yaml').test('a.yaml')).toBe(true);
    expect(goGlobToRegExp('*.yaml').test('dir/a.yaml')).toBe(false);
    expect(goGlobToRegExp('a?c').test('abc')).toBe(true);
    expect(goGlobToRegExp('a?c').test('a/c')).toBe(false);
  });

  it('supports classes, ranges, negated classes and escapes', () => {
    expect(goGlobToRegExp('[abc].txt').test('b.txt')).toBe(true);
    expect(goGlobToRegExp('[a-c]x').test('dx')).toBe(false);
    expect(goGlobToRegExp('[^a-c]x').test('dx')).toBe(true);
    expect(goGlobToRegExp('\\*lit').test('*lit')).toBe(true);
    expect(goGlobToRegExp('\\*lit').test('xlit')).toBe(false);
    expect(goGlobToRegExp('a.b').test('axb')).toBe(false); // regex metacharacters are literal
  });

  it('refuses what Go calls ErrBadPattern', () => {
    for (const bad of ['[', '[]', '[a-]', 'abc\\', '[z-a]']) expect(() => goGlobToRegExp(bad), bad).toThrow();
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
