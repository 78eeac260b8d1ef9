import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChartDependencyError, compareVersions, loadChart, parseConstraint, parseVersion, type SemVer } from '../../src/charts/index.js';
import { helm } from '../../src/tools/index.js';
import { tempDir, writeTree } from './fixtures.js';
import { seededRandom } from '../support/random.js';

const v = (text: string) => {
  const parsed = parseVersion(text);
  if (!parsed) throw new Error(`bad version ${text}`);
  return parsed;
};

describe('parseVersion (lenient, like Helm)', () => {
  it('accepts short and v-prefixed versions, refuses leading-zero pre-release numbers', () => {
    expect(v('1')).toMatchObject({ major: 1, minor: 0, patch: 0 });
    expect(v('v1.2')).toMatchObject({ major: 1, minor: 2, patch: 0 });
    expect(v('01.2.3')).toMatchObject({ major: 1 });
    expect(v('1.2.3-rc.1+build.5')).toMatchObject({ prerelease: ['rc', '1'], build: 'build.5' });
    for (const bad of ['', '1.2.3.4', '1.2.3-01', 'x1', '1.2.3-', 'latest']) expect(parseVersion(bad), bad).toBeUndefined();
  });

  it('orders by SemVer precedence', () => {
    const sorted = ['1.0.0', '1.0.0-rc.1', '1.0.0-alpha', '0.9.9', '1.0.0-alpha.10', '1.0.0-alpha.2', '2.0.0', '1.10.0']
      .map(v)
      .sort(compareVersions)
      .map((x) => x.original);
    expect(sorted).toEqual(['0.9.9', '1.0.0-alpha', '1.0.0-alpha.2', '1.0.0-alpha.10', '1.0.0-rc.1', '1.0.0', '1.10.0', '2.0.0']);
  });
});

describe('parseConstraint (Masterminds semantics)', () => {
  const table: [string, string, boolean][] = [
    ['>= 0.1.0', '0.2.5', true],
    ['>= 0.3.0', '0.2.5', false],
    ['~0.2', '0.2.5', true],
    ['~0.2', '0.3.0', false],
    ['~1.2.3', '1.2.9', true],
    ['~1.2.3', '1.3.0', false],
    ['^0.2.0', '0.2.5', true],
    ['^0.2.0', '0.3.0', false],
    ['^1.2', '1.9.0', true],
    ['^1.2', '2.0.0', false],
    ['^0.0.3', '0.0.4', false],
    ['0.2.x', '0.2.5', true],
    ['0.2.x', '0.3.0', false],
    ['>0.2', '0.2.5', false],
    ['>0.2', '0.3.0', true],
    ['<=1.2', '1.2.9', true],
    ['<=1.2', '1.3.0', false],
    ['!= 0.2.x', '0.2.5', false],
    ['!= 0.2.x', '0.3.1', true],
    ['!= 1.2.3', '1.2.4', true],
    ['1.x || 0.2.5', '0.2.5', true],
    ['1.x || 0.2.5', '0.2.6', false],
    ['0.1 - 0.3', '0.2.5', true],
    ['0.1 - 0.3', '0.3.9', true], // 0.3 is 0.3.x on the upper bound
    ['0.1 - 0.3', '0.4.0', false],
    ['>=1.0, <2.0', '1.5.0', true],
    ['>=1.0 <2.0', '2.0.0', false],
    ['*', '3.1.4', true],
    ['', '3.1.4', true],
    ['>= 1.0.0', '1.1.0-rc.1', false], // pre-releases only match pre-release constraints
    ['>= 1.1.0-rc.0', '1.1.0-rc.1', true],
    ['=1.2.3', '1.2.3', true],
  ];
  it.each(table)('%s against %s is %s', (constraint, version, expected) => {
    const parsed = parseConstraint(constraint);
    expect(parsed, constraint).toBeDefined();
    expect(parsed!.satisfiedBy(v(version))).toBe(expected);
  });

  it('refuses what Helm calls an improper constraint', () => {
    for (const bad of ['junk', '>= ', '1.2.3.4', '>>1', '1 ||| 2']) expect(parseConstraint(bad), bad).toBeUndefined();
  });

  // Read by one RegExp of the whole group, 20 conditions and a bad character took 0.1 s and 200 would not end: neither would this test.
  it('reads a long constraint at all, good or bad', () => {
    expect(parseConstraint(`${'>=1.0 '.repeat(200)}!`)).toBeUndefined();
    expect(parseConstraint(`${'>=1.0 '.repeat(200)}<2`)!.satisfiedBy(v('1.5.0'))).toBe(true);
    expect(parseConstraint(`${' '.repeat(5000)}1.0 , !`)).toBeUndefined();
  });

  it('takes exactly the constraints, and the conditions, that the grammar as one RegExp took (20,000 random short texts)', () => {
    // The reference: the group as one regular expression, and its items found by a global search, as before;
    // each item then judged alone (a one-condition constraint), so that how a group is split is the reference's.
    const CVERSION = 'v?[0-9xX*]+(?:\\.[0-9xX*]+)?(?:\\.[0-9xX*]+)?(?:-[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?';
    const ITEM = `(!=|>=|=>|<=|=<|~>|=|>|<|~|\\^|)\\s*(${CVERSION})`;
    const GROUP = new RegExp(`^\\s*${ITEM}\\s*(?:(?:\\s+|,\\s*)${ITEM}\\s*)*$`);
    const reference = (text: string): ((version: SemVer) => boolean) | undefined => {
      const groups = text.split('||');
      if (!groups.every((group) => GROUP.test(group))) return undefined;
      const items = groups.map((group) => [...group.matchAll(new RegExp(ITEM, 'g'))].map((m) => parseConstraint(`${m[1]}${m[2]}`)));
      if (items.some((group) => group.some((item) => item === undefined))) return undefined;
      return (version) => items.some((group) => group.every((item) => item!.satisfiedBy(version)));
    };
    const random = seededRandom(11);
    const tokens = ['>=', '<', '~', '^', '=', '!=', '1', '2', '0', '.', 'x', '-', 'a', ' ', '  ', ',', '||', 'v', '+'];
    const versions = ['0.9.0', '1.0.0', '1.2.0', '2.0.0', '2.1.0-a', '10.0.0'].map(v);
    let accepted = 0;
    for (let n = 0; n < 20_000; n++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 9) }, () => tokens[Math.floor(random() * tokens.length)]!).join('');
      if (/\s-\s/.test(text) || text.trim() === '') continue; // hyphen ranges and empty texts have tests of their own
      const expected = reference(text);
      const parsed = parseConstraint(text);
      expect(parsed === undefined, text).toBe(expected === undefined);
      if (!parsed || !expected) continue;
      accepted++;
      for (const version of versions) expect(parsed.satisfiedBy(version), `${text} ${version.original}`).toBe(expected(version));
    }
    expect(accepted).toBeGreaterThan(800);
  });

  // The hyphen-range search was quadratic: 80,000 spaces took 6 s, so a million would not end on it.
  it('reads hyphen ranges, and a long text around one, at all', () => {
    const range = parseConstraint('1.2 - 2.3.4, !=2.0.0 || 5 - 6')!;
    expect(['1.1.0', '1.2.0', '2.0.0', '2.3.4', '2.3.5', '5.5.0', '6.0.0', '6.0.1'].map((t) => range.satisfiedBy(v(t)))).toEqual([false, true, false, true, false, true, true, true]); // `<= 6` takes every 6.x
    expect(parseConstraint(`${' '.repeat(1_000_000)}!`)).toBeUndefined();
    expect(parseConstraint(`${'1'.repeat(1_000_000)} -!`)).toBeUndefined();
  });
});

describe('file:// dependency versions', () => {
  it('refuses the same file:// versions helm dependency update refuses', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      await writeTree(join(dir, 'lib'), { 'Chart.yaml': 'apiVersion: v2\nname: lib\nversion: 0.2.5\ntype: library\n' });
      for (const [i, constraint] of ['>= 0.3.0', '~0.2', '>0.2', '1.x || 0.2.5', 'junk'].entries()) {
        const app = join(dir, `app${i}`);
        await writeTree(app, {
          'Chart.yaml': `apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n  - name: lib\n    repository: file://../lib\n    version: "${constraint}"\n`,
        });
        const ours = await loadChart(app).then(
          () => 'ok',
          (e: unknown) => e,
        );
        const theirs = await helm(['dependency', 'update', app]).then(
          () => 'ok',
          () => 'refused',
        );
        expect(ours === 'ok' ? 'ok' : 'refused', constraint).toBe(theirs);
        if (ours !== 'ok') {
          expect(ours).toBeInstanceOf(ChartDependencyError);
          expect((ours as Error).message).toMatch(constraint === 'junk' ? /not a valid version constraint/ : /holds version 0\.2\.5, which does not satisfy/);
          expect((ours as ChartDependencyError).location?.line).toBe(5);
        }
      }
    } finally {
      await cleanup();
    }
  });
});
