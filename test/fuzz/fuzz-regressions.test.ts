/**
 * Inputs the fuzz targets (fuzz.test.ts) once crashed on, kept so the
 * crash cannot come back. Each names what it used to do.
 */
import { describe, expect, it } from 'vitest';
import { DecompressionBudget } from '../../src/tarball/index.js';
import { FlotillaError } from '../../src/diagnostics/index.js';
import { parseYaml, YamlSyntaxError } from '../../src/yaml/index.js';
import { yamlOf } from '../../src/verify/bundle.js';

const bundleWith = (text: string) => ({
  path: 'fuzz.tgz',
  files: new Map([['x.yaml', Buffer.from(text)]]),
  directories: [],
  budget: new DecompressionBudget(1 << 30),
});

describe('fuzz regressions', () => {
  it('a map or list used as a map key is a YAML error at its line (was: "Merge sources must be maps" from the yaml library, uncaught)', () => {
    expect(() => parseYaml('? <<: *x', 'v.yaml', { layer: 'static' })).toThrow(YamlSyntaxError);
    expect(() => parseYaml('a: 1\n? [x, y]\n: 2\n', 'v.yaml', { layer: 'static' })).toThrow(
      /^v\.yaml:2:3: a map key must be a plain value, not a map or a list$/,
    );
  });

  it('an empty or comments-only bundle file is no document (was: an error without a line)', () => {
    expect(yamlOf(bundleWith(''), 'x.yaml') ?? null).toBeNull();
    expect(yamlOf(bundleWith('# only a comment\n'), 'x.yaml') ?? null).toBeNull();
  });

  it('several documents where one is expected name the file and line (was: no position)', () => {
    for (const text of ['---\n---\n', ' ...\n---\n', '(%YAML 1.1\n---\n']) {
      expect(() => yamlOf(bundleWith(text), 'x.yaml')).toThrow(FlotillaError);
      expect(() => yamlOf(bundleWith(text), 'x.yaml')).toThrow(/^x\.yaml:\d+:\d+: invalid YAML: /);
    }
  });
});
