/**
 * `--set` paths within Helm's own bounds, held to the real helm: a list
 * index up to 65536, names nested up to 30 levels. Past them, helm refuses
 * and so does flotilla (exit 2, naming the expression), before a huge
 * index fills memory with the nulls before it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toPlain } from '../../src/document/index.js';
import { helm } from '../../src/tools/index.js';
import { applyOverrideChange, parseSet } from '../../src/lifecycle/index.js';
import { commandLineValues, SetExpressionError } from '../../src/values/index.js';

const set = (expression: string) => commandLineValues([{ kind: 'set', expression }]);
const names = (n: number) => Array.from({ length: n }, (_, i) => `n${i}`).join('.');

describe('--set within the bounds Helm sets', () => {
  it('takes index 65536 and names 31 deep, and refuses one more of either, as helm does', async () => {
    const list = toPlain(set('a[65536]=1')!) as { a: unknown[] };
    expect(list.a).toHaveLength(65537);
    expect(list.a[65536]).toBe(1);
    expect(set(`${names(31)}=1`)).toBeDefined();
    expect(() => set('a[65537]=1')).toThrow(new SetExpressionError('set', 'a[65537]=1', 'index 65537 in "a[65537]" is greater than the largest Helm takes, 65536'));
    expect(() => set('a[100000000000]=1')).toThrow(SetExpressionError);
    expect(() => set(`${names(32)}=1`)).toThrow(`"${names(32)}" nests 31 levels of names; Helm takes at most 30`);

    const chart = mkdtempSync(join(tmpdir(), 'flotilla-set-'));
    writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: c\nversion: 0.1.0\n');
    const helmSays = (expression: string) => helm(['template', 'x', chart, '--set', expression]).then(() => 'ok', (error: Error) => error.message);
    expect(await helmSays('a[65536]=1')).toBe('ok');
    expect(await helmSays('a[65537]=1')).toMatch(/index of 65537 is greater than maximum supported index of 65536/);
    expect(await helmSays(`${names(31)}=1`)).toBe('ok');
    expect(await helmSays(`${names(32)}=1`)).toMatch(/nested level is greater than maximum supported nested level of 30/);
  });
});

describe('override set --set (values layer 8)', () => {
  it('reads a path and a value as --set does, within the same bounds, before anything is assigned', () => {
    expect(applyOverrideChange(undefined, { files: [], sets: ['conf.a\\.b[1]=true', 'n=007', 'l={x,2}'], mode: 'reset' })).toEqual({ conf: { 'a.b': [undefined, true] }, n: '007', l: ['x', 2] });
    expect(() => applyOverrideChange(undefined, { files: [], sets: ['a[4000000000]=x'], mode: 'reset' })).toThrow(new SetExpressionError('set', 'a[4000000000]=x', 'index 4000000000 in "a[4000000000]" is greater than the largest Helm takes, 65536'));
    expect(() => parseSet(`${names(32)}=1`)).toThrow(/nests 31 levels of names; Helm takes at most 30/);
    expect(() => parseSet('novalue')).toThrow(/expected PATH=VALUE/);
  });
});
