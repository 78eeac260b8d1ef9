/**
 * The shape docs/architecture.md describes, checked on the source: no import
 * cycle between files, the public plugin API self-contained, tarball paths
 * spelled only by the layout module, and no TLS client in the commands the
 * `flotilla` entry starts without NODE_EXTRA_CA_CERTS, and temporary folders
 * made only by src/files.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS_WITHOUT_TLS } from '../../src/cli/commands/index.js';

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

/** What a file loads from outside flotilla (Node's modules, packages): imported, static or dynamic, or required. */
function packagesOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s+['"]([^.'"][^'"]*)['"]/g),
    ...text.matchAll(/(?:^|\n)\s*import\s+['"]([^.'"][^'"]*)['"]/g),
    ...text.matchAll(/(?<![\w$.])(?:import|require|load)\(\s*['"]([^.'"][^'"]*)['"]\s*\)/g),
  ].map((m) => m[1]!);
}

/** A file's code without its comments (kept line for line: a block comment's lines stay, empty). */
function codeOf(file: string): string {
  return readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ''))
    .replace(/(^|[^:])\/\/.*$/gm, '$1');
}

/** Whether a file's code (not its comments) calls a client global Node gives without an import. */
function usesGlobalClient(file: string): boolean {
  const code = codeOf(file);
  return /(?<![\w$.])(fetch|WebSocket|EventSource)\s*\(|new\s+(WebSocket|EventSource)\b/.test(code);
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

  it('makes temporary folders only through the helper in src/files (0700, removed on exit and on a signal)', () => {
    const makers = /(?<![\w$])(mkdtemp|mkdtempSync|mkdtempDisposable|mkdtempDisposableSync)\b/;
    const offenders = files
      .filter((f) => !name(f).startsWith('files/'))
      .flatMap((f) =>
        codeOf(f)
          .split('\n')
          .map((line, i) => ({ line, at: `${name(f)}:${i + 1}` }))
          .filter(({ line }) => makers.test(line))
          .map(({ at }) => at),
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

  it('keeps every TLS client out of the commands started without NODE_EXTRA_CA_CERTS', () => {
    const registryFile = join(SRC, 'cli/commands/index.ts');
    const registry = readFileSync(registryFile, 'utf8');
    const moduleOf = new Map([...registry.matchAll(/^\s*'?([a-z-]+)'?: \(\) => import\('(\.\/[a-z-]+)\.js'\)/gm)].map((m) => [m[1]!, join(SRC, 'cli/commands', `${m[2]}.ts`)]));
    /**
     * The modules of flotilla and the TLS clients a command reaches, by any
     * chain of imports from its module or from the CLI's own (the launcher,
     * the program, the code cache, which every command runs; the program
     * loads only the named command of the registry).
     */
    const tlsReached = (command: string): string[] => {
      const start = moduleOf.get(command);
      if (start === undefined) return [`no command ${command}`];
      const reached = new Set<string>();
      const walk = (file: string): void => {
        // (A generated file's import, written by the code as text, names no source file.)
        if (reached.has(file) || !graph.has(file)) return;
        // The one exception, imported only when a build must fetch a chart dependency its cache lacks: a certificate
        // it cannot trust then gets the hint to run the command with NODE_EXTRA_CA_CERTS (src/cli/output.ts).
        if (file === join(SRC, 'dependencies/fetch.ts')) return;
        reached.add(file);
        if (file === registryFile) return;
        for (const next of graph.get(file) ?? []) walk(next);
      };
      for (const file of [start, ...['launch.ts', 'main.ts', 'program.ts', 'code-cache.ts'].map((f) => join(SRC, 'cli', f))]) walk(file);
      const clients = /^(node:)?(https|tls|http2)$|^@kubernetes\/client-node$|^undici$/;
      return [...reached].flatMap((f) => [
        ...(/^(oci|kube)\//.test(name(f)) ? [name(f)] : []),
        ...packagesOf(f)
          .filter((p) => clients.test(p))
          .map((p) => `${name(f)} imports ${p}`),
        ...(usesGlobalClient(f) ? [`${name(f)} calls fetch or opens a socket of the web`] : []),
      ]);
    };
    // The walk finds them where they are…
    for (const command of ['push', 'apply', 'images']) expect(tlsReached(command), command).not.toEqual([]);
    // …and nowhere in these.
    expect(COMMANDS_WITHOUT_TLS.length).toBeGreaterThan(0);
    expect(Object.fromEntries(COMMANDS_WITHOUT_TLS.map((command) => [command, tlsReached(command)]))).toEqual(Object.fromEntries(COMMANDS_WITHOUT_TLS.map((command) => [command, []])));
  });
});
