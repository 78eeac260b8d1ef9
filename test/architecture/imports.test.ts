/**
 * The shape docs/architecture.md describes, checked on the source: no import
 * cycle between files, the public plugin API self-contained, and tarball
 * paths spelled only by the layout module.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Relative imports of a file (static `import`/`export … from`, and dynamic `import()`), resolved to .ts files. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s+'(\.[^']+)'/g), ...text.matchAll(/import\('(\.[^']+)'\)/g)].map((m) => m[1]!);
  return specs.map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const name = (f: string) => relative(SRC, f);

describe('source structure', () => {
  it('has no import cycle between files', () => {
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].map(name).join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('keeps the public plugin API (flotilla/plugin) inside src/plugins', () => {
    const reached = new Set<string>();
    const walk = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const next of graph.get(file) ?? []) walk(next);
    };
    walk(join(SRC, 'plugins/api.ts'));
    expect([...reached].map(name).filter((f) => !f.startsWith('plugins/'))).toEqual([]);
  });

  it('reads YAML only through src/document', () => {
    const readers = /import\s*\{([^}]*)\}\s*from\s*'(yaml|js-yaml)'/g;
    const offenders = files
      .filter((f) => !name(f).startsWith('document/'))
      .flatMap((f) =>
        [...readFileSync(f, 'utf8').matchAll(readers)]
          .filter((m) => m[1]!.split(',').some((n) => /^\s*(parse|parseDocument|parseAllDocuments|parseEvents|constructFromEvents|load|loadAll|Parser|Composer|Lexer)\s*$/.test(n)))
          .map(() => name(f)),
      );
    expect(offenders).toEqual([]);
  });

  it('names tarball paths only in the layout module', () => {
    const tarballPath = /['"`](?:metadata\.yaml|fluxcd-manifests|checksum\.(?:md5|sha256)(?:\.sig)?|app\/|plugins\/manifest\.json)['"`/]/;
    const offenders = files
      .filter((f) => name(f) !== 'bundle/layout.ts')
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .map((line, i) => ({ line, at: `${name(f)}:${i + 1}` }))
          .filter(({ line }) => !/^\s*(\*|\/\/|\/\*)/.test(line) && tarballPath.test(line))
          .map(({ at }) => at),
      );
    expect(offenders).toEqual([]);
  });
});
