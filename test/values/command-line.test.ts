/**
 * `--set` paths within Helm's own bounds, held to the real helm: a list
 * index up to 65536, names nested up to 30 levels. Past them, helm refuses
 * and so does flotilla (exit 2, naming the expression), before a huge
 * index fills memory with the nulls before it.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toPlain } from '../../src/yaml/index.js';
import { helm } from '../../src/tools/index.js';
import { applyOverrideChange } from '../../src/lifecycle/index.js';
import { commandLineValues, SetExpressionError } from '../../src/values/index.js';

const set = (expression: string) => commandLineValues([{ kind: 'set', expression }]);
const names = (n: number) => Array.from({ length: n }, (_, i) => `n${i}`).join('.');

describe('--set within the bounds Helm sets', () => {
  it('takes index 65536 and names 31 deep, and refuses one more of either, as helm does', async () => {
    const list = toPlain(set('a[65536]=1')!) as { a: unknown[] };
    expect(list.a).toHaveLength(65537);
    expect(list.a[65536]).toBe(1);
    expect(set(`${names(31)}=1`)).toBeDefined();
    expect(() => set('a[65537]=1')).toThrow(
      new SetExpressionError('set', 'a[65537]=1', 'index 65537 in "a[65537]" is greater than the largest Helm takes, 65536'),
    );
    expect(() => set('a[100000000000]=1')).toThrow(SetExpressionError);
    expect(() => set(`${names(32)}=1`)).toThrow(`"${names(32)}" nests 31 levels of names; Helm takes at most 30`);

    const chart = mkdtempSync(join(tmpdir(), 'flotilla-set-'));
    writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: c\nversion: 0.1.0\n');
    const helmSays = (expression: string) =>
      helm(['template', 'x', chart, '--set', expression]).then(
        () => 'ok',
        (error: Error) => error.message,
      );
    expect(await helmSays('a[65536]=1')).toBe('ok');
    expect(await helmSays('a[65537]=1')).toMatch(/index of 65537 is greater than maximum supported index of 65536/);
    expect(await helmSays(`${names(31)}=1`)).toBe('ok');
    expect(await helmSays(`${names(32)}=1`)).toMatch(/nested level is greater than maximum supported nested level of 30/);
  });
});

describe('--set made into the values given before it', () => {
  it('sets list items and map keys in place, over files and earlier --set, as helm does', async () => {
    const chart = mkdtempSync(join(tmpdir(), 'flotilla-set-'));
    writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: c\nversion: 0.1.0\n');
    mkdirSync(join(chart, 'templates'));
    writeFileSync(join(chart, 'templates', 'values.yaml'), 'values: {{ toJson .Values }}\n');
    const file = join(chart, 'given.yaml');
    const fileText = 'list: [a, b, c]\nitems: [{a: 1, c: 3}]\nm: {k: 1, l: [1]}\nz: null\nll: [[1, 2]]\n';
    writeFileSync(file, fileText);
    const cases: { readonly f?: true; readonly sets: readonly string[] }[] = [
      { sets: ['list[2]=x,list[0]=y'] },
      { sets: ['list[2]=x', 'list[0]=y'] },
      { sets: ['l={a,b}', 'l[3]=d'] },
      { sets: ['l[1].a=1,l[1].b=2'] },
      { f: true, sets: ['list[1]=z'] },
      { f: true, sets: ['items[0].b=2', 'm.j=2'] },
      { sets: ['l[2]=x,l[0][1]=y', 'l[1].a=1'] },
      { f: true, sets: ['m=1'] },
      // A list item that is no map, where the path goes on into a map, is replaced by one.
      { f: true, sets: ['list[0].k.j=1', 'll[0].a=1'] },
    ];
    for (const { f, sets } of cases) {
      const ours = commandLineValues([
        ...(f ? [{ kind: 'file' as const, file, text: fileText }] : []),
        ...sets.map((expression) => ({ kind: 'set' as const, expression })),
      ]);
      const rendered = await helm(['template', 'x', chart, ...(f ? ['-f', file] : []), ...sets.flatMap((expression) => ['--set', expression])]);
      const helms = JSON.parse(/^values: (.*)$/m.exec(rendered.stdout)![1]!) as unknown;
      expect(toPlain(ours!), `${f ? '-f ' : ''}${sets.join(' ')}`).toEqual(helms);
    }
    // Anywhere else, a path through a value that is not the map or list it needs: helm refuses it too.
    const given = { kind: 'file' as const, file, text: fileText };
    const refusals = [
      ['m[0]=z', /^--set m\[0\]=z: m is a map, set by -f .*given\.yaml:3:1\): not a list to index$/],
      ['m.k.a=1', /^--set m\.k\.a=1: m\.k is a number, set by -f .*: not a map to go into$/],
      ['m.l.a=1', /: m\.l is a list, .*: not a map to go into$/],
      ['list[0][1]=x', /: list\[0\] is a string, .*: not a list to index$/],
      ['z.x=1', /: z is null, set by -f .*: not a map to go into$/],
    ] as const;
    for (const [expression, message] of refusals) {
      expect(() => commandLineValues([given, { kind: 'set', expression }]), expression).toThrow(message);
      await expect(helm(['template', 'x', chart, '-f', file, '--set', expression]), expression).rejects.toThrow(/unable to parse key/);
    }
  });
});

describe('override set --set (values layer 8)', () => {
  it('reads an expression as --set does: its commas, escapes, types and bounds', () => {
    const override = (expression: string) =>
      JSON.parse(JSON.stringify(applyOverrideChange(undefined, { files: [], sets: [expression], mode: 'reset' }))) as unknown;
    for (const expression of ['conf.a\\.b[1]=true', 'n=007', 'l={x,2}', 'a\\=b=1', 'a=1,b=2', 'list[2]=x,list[0]=y', 'u=null,s=a\\,b']) {
      expect(override(expression), expression).toEqual(toPlain(set(expression)!));
    }
    expect(override('a=1,b=2')).toEqual({ a: 1, b: 2 });
    expect(override('a\\=b=1')).toEqual({ 'a=b': 1 });
    expect(() => override('a[4000000000]=x')).toThrow(
      new SetExpressionError('set', 'a[4000000000]=x', 'index 4000000000 in "a[4000000000]" is greater than the largest Helm takes, 65536'),
    );
    expect(() => override(`${names(32)}=1`)).toThrow(/nests 31 levels of names; Helm takes at most 30/);
    expect(() => override('novalue')).toThrow(new SetExpressionError('set', 'novalue', '"novalue" is not PATH=VALUE'));
  });
});
