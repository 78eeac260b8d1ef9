import { isMap, isScalar } from 'yaml';
import { load as jsYamlLoad } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { parseYaml, parseYamlDocument, parseYamlStream, parseYamlValue, toPlain, YamlSyntaxError } from '../../src/yaml/index.js';

// Words YAML 1.1 (Helm, Kubernetes) reads as booleans or numbers and YAML 1.2 as strings.
const TEXT = 'a: yes\nb: n\nc: on\nmode: 0755\nwhen: 2025-01-01\nname: "y"\n';

describe('one YAML reading for every purpose', () => {
  it('reads values, plain data and documents to edit as Helm does (YAML 1.1)', () => {
    const expected = { a: true, b: false, c: true, mode: 493, when: '2025-01-01', name: 'y' };
    expect(toPlain(parseYaml(TEXT, 'v.yaml', { layer: 'test' }).root!)).toEqual(expected);
    expect(parseYamlValue(TEXT, 'v.yaml')).toEqual(expected);
    expect(parseYamlStream(`${TEXT}---\n---\nkind: x\n`, 'stream')).toEqual([expected, null, { kind: 'x' }]);
    const { doc } = parseYamlDocument(TEXT, 'v.yaml');
    expect(isMap(doc.contents) && doc.contents.items.map((p) => (isScalar(p.value) ? p.value.value : undefined))).toEqual(Object.values(expected));
  });

  it('names the file and line of a syntax error in a stream', () => {
    expect(() => parseYamlStream('a: 1\n---\nb: [\n', 'out')).toThrow(YamlSyntaxError);
    expect(() => parseYamlStream('a: 1\n---\nb: [\n', 'out')).toThrow(/^out:4:1: invalid YAML/);
    expect(() => parseYamlDocument('a: !custom 1\n', 'c.yaml')).toThrow(/c\.yaml:1:4: .*the only tags flotilla reads are !append, !prepend, !remove/);
  });

  it('refuses keys that are one key once resolved (1 and "1"), as js-yaml does, in every reader', () => {
    for (const text of ['1: a\n"1": b\n', 'x:\n  "true": a\n  yes: b\n', '~: a\nnull: b\n', '0x10: a\n"16": b\n', '.nan: a\n.NaN: b\n']) {
      // The oracle: js-yaml keys a map by the string of each key and refuses the second.
      expect(() => jsYamlLoad(text.replace(/\byes\b/, 'true').replace(/0x10/, '16')), text).toThrow(/duplicated mapping key/);
      expect(() => parseYamlValue(text, 'k.yaml'), text).toThrow(/^k\.yaml:\d+:\d+: invalid YAML: Map keys must be unique$/);
      expect(() => parseYamlDocument(text, 'k.yaml'), text).toThrow(/^k\.yaml:\d+:\d+: invalid YAML: Map keys must be unique$/);
    }
    expect(() => parseYamlValue('1: a\n"1": b\n', 'k.yaml')).toThrow(/^k\.yaml:2:1: /);
    expect(parseYamlValue('1: a\n"2": b\n', 'k.yaml')).toEqual({ 1: 'a', 2: 'b' });
  });

  it('refuses a __proto__ key instead of making it the prototype of the object read', () => {
    for (const text of ['__proto__: {polluted: yes}\na: 1\n', 'a:\n  "__proto__": {polluted: yes}\n', 'a: {__proto__: [1]}\n']) {
      expect(() => parseYamlValue(text, 'p.yaml'), text).toThrow(/^p\.yaml:\d+:\d+: invalid YAML: the key "__proto__" is refused/);
      expect(() => parseYamlDocument(text, 'p.yaml'), text).toThrow(/^p\.yaml:\d+:\d+: invalid YAML: the key "__proto__" is refused/);
    }
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
});
