import { Alias } from 'yaml';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  lintFiles,
  loadPolicyFile,
  parseRule,
  parseYamlText,
  policyLayersAt,
  PolicyFileError,
  PolicySyntaxError,
  type RuleSource,
} from '../../src/policies/index.js';
import { layer, writeTree } from './helpers.js';

function errorAt(source: RuleSource | undefined): { line: number; column: number; detail: string } {
  if (!source) throw new Error('no such rule');
  try {
    parseRule(source);
  } catch (error) {
    if (error instanceof PolicySyntaxError && error.location) {
      return { line: error.location.line, column: error.location.column, detail: error.detail };
    }
    throw error;
  }
  throw new Error('rule parsed');
}

describe('rule positions', () => {
  const yaml = [
    'conf:', //                                                         1
    '  policy:', //                                                     2
    '    plain: role:admin or admin', //                                3
    '    "double": "role:admin or admin"', //                           4
    "    single: 'role:it''s or admin'", //                             5
    '    block: |', //                                                  6
    '      role:admin', //                                              7
    '      or admin', //                                                8
    '    folded: >-', //                                                9
    '      role:admin', //                                              10
    '      or admin', //                                                11
  ].join('\n');
  const rules = layer(yaml, { file: 'nova.yaml' }).rules;

  it('point at the first character of the rule text, after quotes', () => {
    expect(rules.get('plain')?.location).toEqual({ file: 'nova.yaml', line: 3, column: 12 });
    expect(rules.get('double')?.location).toEqual({ file: 'nova.yaml', line: 4, column: 16 });
    expect(rules.get('single')?.location).toEqual({ file: 'nova.yaml', line: 5, column: 14 });
    expect(rules.get('plain')?.keyLocation).toEqual({ file: 'nova.yaml', line: 3, column: 5 });
  });

  it('put a syntax error at its line and column inside the rule', () => {
    expect(errorAt(rules.get('plain'))).toMatchObject({ line: 3, column: 26, detail: expect.stringMatching(/"admin" is not a check/) });
    expect(errorAt(rules.get('double'))).toMatchObject({ line: 4, column: 30 });
  });

  it('count an escaped quote as the two characters it takes in the file', () => {
    // 'role:it''s or admin' opens at column 13; the text is "role:it's or admin" (index 13 = "admin"),
    // but "''" takes two columns, so "admin" is at file column 14 + 13 + 1 = 28.
    expect(rules.get('single')?.text).toBe("role:it's or admin");
    expect(errorAt(rules.get('single'))).toMatchObject({ line: 5, column: 28 });
  });

  it('follow block scalars over their lines', () => {
    expect(rules.get('block')?.location).toMatchObject({ line: 7, column: 7 });
    expect(errorAt(rules.get('block'))).toMatchObject({ line: 8, column: 10 });
    expect(errorAt(rules.get('folded'))).toMatchObject({ line: 11, column: 10 });
  });
});

describe('policy maps', () => {
  it('read one map of rules as one layer with section ""', () => {
    const l = layer('conf:\n  policy:\n    a: "role:x"\n    b: ""\n');
    expect(l.section).toBe('');
    expect([...l.rules.keys()]).toEqual(['a', 'b']);
    expect(l.rules.get('b')?.text).toBe('');
  });

  it('read a map of rule maps (horizon) as one layer per section', () => {
    const doc = parseYamlText('horizon.yaml', 'conf:\n  policy:\n    nova:\n      a: "role:x"\n    keystone:\n      b: "role:y"\n');
    const layers = policyLayersAt(doc, ['conf', 'policy'], { label: 'x', kind: 'override' }) ?? [];
    expect(layers.map((l) => [l.section, [...l.rules.keys()]])).toEqual([
      ['nova', ['a']],
      ['keystone', ['b']],
    ]);
  });

  it('take null as "delete the rule below" (Helm deletes the key)', () => {
    const l = layer('conf:\n  policy:\n    a: null\n    b: ~\n    c:\n');
    expect(l.rules.size).toBe(0);
    expect([...(l.removed?.keys() ?? [])]).toEqual(['a', 'b', 'c']);
  });

  it('flag an unquoted "!": YAML reads it as a tag on an empty string, which allows everyone', () => {
    const l = layer('conf:\n  policy:\n    deny_all: !\n');
    expect(l.rules.get('deny_all')?.text).toBe('');
    expect(l.problems).toEqual([
      expect.objectContaining({ severity: 'error', message: expect.stringMatching(/unquoted "!" is a YAML tag/), location: expect.objectContaining({ line: 3 }) }),
    ]);
  });

  it('flag values that are not rules', () => {
    const l = layer('conf:\n  policy:\n    a: 1\n    b: true\n    c: "role:x"\n');
    expect([...l.rules.keys()]).toEqual(['c']);
    expect(l.problems?.map((p) => p.message)).toEqual([
      expect.stringMatching(/rule "a": the rule must be a string, not number 1/),
      expect.stringMatching(/rule "b": the rule must be a string, not boolean true/),
    ]);
  });

  it('read the legacy list form, with positions of each item', () => {
    const l = layer('conf:\n  policy:\n    a: [["role:admin"], ["role:member", "project_id:%(project_id)s"]]\n    b: [["role:x", "nope"]]\n');
    expect(l.rules.get('a')?.legacy).toEqual([['role:admin'], ['role:member', 'project_id:%(project_id)s']]);
    expect(l.rules.get('a')?.text).toBe('role:admin or (role:member and project_id:%(project_id)s)');
    expect(errorAt(l.rules.get('b'))).toMatchObject({ line: 4, column: 21, detail: expect.stringMatching(/"nope" is not a check/) });
  });
});

describe('files', () => {
  it('read conf.policy of an override file', async () => {
    const root = writeTree({ 'nova-overrides.yaml': 'conf:\n  policy:\n    "os_compute_api:servers:create": "role:member"\n' });
    const [only] = await loadPolicyFile(`${root}/nova-overrides.yaml`);
    expect(only?.rules.get('os_compute_api:servers:create')?.text).toBe('role:member');
    expect(only?.label).toBe('nova-overrides.yaml');
  });

  it('read a bare oslo.policy file when asked', async () => {
    const root = writeTree({ 'policy.yaml': '"identity:get_user": "role:admin"\n' });
    const [only] = await loadPolicyFile(`${root}/policy.yaml`, { requireValuesPath: false });
    expect(only?.rules.get('identity:get_user')?.text).toBe('role:admin');
  });

  it('refuse a file with neither', async () => {
    const root = writeTree({ 'values.yaml': 'images:\n  tags: {}\n' });
    await expect(loadPolicyFile(`${root}/values.yaml`, { requireValuesPath: false })).rejects.toThrow(/no conf.policy \(nor conf.<chart>.policy\) map/);
  });

  it('report invalid YAML with its position', async () => {
    const root = writeTree({ 'bad.yaml': 'conf:\n  policy:\n    a: "role:x"\n    a: "role:y"\n' });
    const error = await loadPolicyFile(`${root}/bad.yaml`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PolicyFileError);
    expect((error as PolicyFileError).location).toMatchObject({ line: 4, column: 5 });
    expect((error as PolicyFileError).message).toMatch(/Map keys must be unique/);
  });

  it('report a rule starting with an unquoted "@" (reserved in YAML)', async () => {
    const root = writeTree({ 'at.yaml': 'conf:\n  policy:\n    a: @\n' });
    await expect(loadPolicyFile(`${root}/at.yaml`)).rejects.toThrow(/invalid YAML/);
  });
});

describe('policy files with many aliases', () => {
  afterEach(() => vi.restoreAllMocks());

  it('lint in linear time: 10,000 aliases resolved from one walk of the document, none by the yaml library walking it again per alias', async () => {
    const lines = ['conf:', '  policy:'];
    for (let i = 0; i < 100; i++) lines.push(`    base${i}: &a${i} "role:admin or project_id:%(project_id)s"`);
    for (let i = 0; i < 10_000; i++) lines.push(`    rule${i}: *a${i % 100}`);
    const root = writeTree({ 'nova.yaml': `${lines.join('\n')}\n` });
    // Alias.resolve walks the whole document to find the anchor: once per alias, the lint took time in the square of the file.
    const walksPerAlias = vi.spyOn(Alias.prototype, 'resolve');
    const started = performance.now();
    const { policies } = await lintFiles([`${root}/nova.yaml`]);
    console.info(`10,000 policy aliases loaded and linted in ${Math.round(performance.now() - started)} ms`);
    expect(walksPerAlias).not.toHaveBeenCalled();
    const rules = policies[0]!.layers[0]!.rules;
    expect(rules.size).toBe(10_100);
    expect(rules.get('rule9999')).toMatchObject({ text: 'role:admin or project_id:%(project_id)s', location: { line: 102, column: 19 } }); // the text of base99, the anchor it refers to
  });
});
