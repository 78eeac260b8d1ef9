import { isMap, isScalar } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseYaml, parseYamlDocument, parseYamlStream, parseYamlValue, toPlain, YamlSyntaxError } from '../../src/document/index.js';

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
});
