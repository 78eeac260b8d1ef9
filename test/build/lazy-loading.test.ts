/**
 * A build loads only what it uses: not the Kubernetes client, nor the policy
 * engine, the lifecycle, the importer, the verifier or the OCI client, nor
 * Handlebars, ajv's compiler or node-tar (not needed for flotilla's
 * precompiled schemas and plain names), and esbuild only to bundle plugins
 * whose sources changed (the bundle is reused otherwise).
 *
 * The shipped CLI is one script (scripts/bundle-cli.mjs) in which esbuild
 * initialises each module lazily, in a function named after the module;
 * V8 compiles a function only when it first runs. So "loads" means: the
 * files Node imports or requires, and the modules whose initialisation ran,
 * read from V8's coverage of the run.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, writeApp } from '../support/app-fixture.js';

const root = resolve(import.meta.dirname, '..', '..');
const cli = join(root, 'dist', 'cli', 'flotilla.cjs');
const hook = join(root, 'test', 'support', 'log-imports.mjs');
/** Folders of dist/ whose code a build has no use for. */
const NOT_FOR_A_BUILD = /^dist\/(policies|lifecycle|kube|import|verify|preflight|oci|edit|starlingx)\//;
/** The files of the shipped CLI: its entry and its bundle. */
const CLI_FILE = /\/dist\/cli\/flotilla(-[0-9a-f]+)?\.cjs$/;
const CLI_BUNDLE = /\/dist\/cli\/flotilla-[0-9a-f]+\.cjs$/;
/** Initialised modules a build, or help for it, has no use for: other commands', and code for other work. */
const notForABuild = (initialised: readonly string[]) =>
  initialised.filter((module) => NOT_FOR_A_BUILD.test(module) || /^dist\/cli\/commands\/(?!build\.js|index\.js)/.test(module));
/** What was imported beyond Node's built-ins and the CLI's own files. */
const importedBeyondTheCli = (imports: readonly string[]) => imports.filter((url) => !url.startsWith('node:') && !CLI_FILE.test(url));

/** Every module file reachable through static imports from `file` (the compiled, unbundled dist/). */
function staticGraph(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  for (const [, specifier] of text.matchAll(/^(?:import|export)\s+(?:[\w*{}\s,$]+\s+from\s+)?'([^'$]+)';$/gm)) {
    if (specifier!.startsWith('.')) staticGraph(resolve(dirname(file), specifier!), seen);
    else seen.add(specifier!);
  }
  return seen;
}

const relative = (paths: Iterable<string>) => [...paths].map((p) => (p.startsWith(root) ? p.slice(root.length + 1) : p));

interface Loaded {
  /** URLs Node resolved for an import. */
  readonly imports: string[];
  /** CommonJS files required, relative to the package. */
  readonly required: string[];
  /** The modules of the CLI bundle (dist/…, node_modules/…) whose initialisation ran. */
  readonly initialised: string[];
}

interface Coverage {
  result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
}

/** Runs the shipped CLI and reports what it loaded. */
function loadedBy(args: readonly string[]): Loaded {
  const coverage = tempDir('flotilla-coverage-');
  const run = spawnSync(process.execPath, ['--import', hook, cli, ...args], { encoding: 'utf8', env: { ...process.env, NODE_V8_COVERAGE: coverage } });
  expect(run.status, run.stderr).toBe(0);
  const imports = [...run.stderr.matchAll(/^IMPORT (\S+)$/gm)].map((m) => m[1]!);
  const required = relative([...run.stderr.matchAll(/^REQUIRE (\S+)$/gm)].map((m) => m[1]!));
  const scripts = readdirSync(coverage).flatMap((file) => (JSON.parse(readFileSync(join(coverage, file), 'utf8')) as Coverage).result);
  const bundle = scripts.filter((script) => CLI_BUNDLE.test(script.url));
  expect(bundle).toHaveLength(1);
  const initialised = bundle[0]!.functions.filter((f) => /^(dist|node_modules)\//.test(f.functionName) && f.ranges[0]!.count > 0).map((f) => f.functionName);
  return { imports, required, initialised };
}

/** `checksValues`: the first build of these inputs renders the app's values templates (build refuses what preflight refuses); later ones reuse that check. */
function loadedByBuild(app: string, out: string, checksValues = false): Loaded {
  const loaded = loadedBy(['build', app, '-d', out]);
  // (ajv's small runtime helpers serve the precompiled validators; its compiler must not load.)
  const unused = loaded.required.filter(
    (path) => new RegExp(`node_modules/(${checksValues ? '' : 'handlebars|'}ajv|tar)/`).test(path) && !path.includes('node_modules/ajv/dist/runtime/'),
  );
  expect(unused).toEqual([]);
  expect(loaded.initialised).toContain('dist/build/build.js');
  expect(notForABuild(loaded.initialised)).toEqual([]);
  // Precompiled validators run one by one, as their schema is met: one Flux version's, not every one.
  // (A rebuild checks only the files that changed: unchanged ones meet no schema.)
  const validators = loaded.initialised.filter((module) => module.startsWith('dist/app/validators/')).map((module) => basename(module));
  if (checksValues) expect(validators).toContain('metadata.cjs');
  expect(validators.filter((file) => /^releases/.test(file)).length).toBeLessThanOrEqual(1);
  expect(validators.filter((file) => /^flux-helmrelease/.test(file)).length).toBeLessThanOrEqual(1);
  return loaded;
}

const plugin = `import { ChartPlugin } from 'flotilla/plugin';\nexport default class Web extends ChartPlugin {\n  chart = 'web';\n  getOverrides() {\n    return { conf: { from: 'plugin' } };\n  }\n}\n`;

describe('lazy loading', () => {
  it('the command registry imports no command, and the build command statically imports no Kubernetes client, esbuild, policy engine, importer or verifier', () => {
    const registry = relative(staticGraph(join(root, 'dist', 'cli', 'main.js')));
    expect(registry).toContain('dist/cli/commands/index.js');
    expect(registry.filter((module) => /^dist\/(?!cli\/|diagnostics\/|files\/)/.test(module) || /^dist\/cli\/commands\/(?!index\.js)/.test(module))).toEqual(
      [],
    );
    const graph = relative(staticGraph(join(root, 'dist', 'cli', 'commands', 'build.js')));
    expect(graph).toContain('dist/build/build.js');
    for (const module of graph) {
      expect(module).not.toMatch(/^(esbuild|@kubernetes\/client-node)/);
      expect(module).not.toMatch(NOT_FOR_A_BUILD);
    }
  });

  it('a shipped CLI build loads esbuild only while plugins need bundling, and never the Kubernetes client nor code other commands need', () => {
    const app = writeApp({ 'plugins/010_web.ts': plugin });
    const out = tempDir();
    const first = loadedByBuild(app, out, true);
    expect(first.imports.some((url) => url.includes('/node_modules/esbuild/'))).toBe(true);
    const again = loadedByBuild(app, out);
    expect(importedBeyondTheCli(again.imports)).toEqual([]);
    for (const url of [...first.imports, ...again.imports]) expect(url).not.toContain('@kubernetes/client-node');
  });

  it('help for the build command initialises the build command only', () => {
    const { initialised, imports } = loadedBy(['build', '--help']);
    expect(initialised).toContain('dist/cli/commands/build.js');
    expect(notForABuild(initialised)).toEqual([]);
    expect(importedBeyondTheCli(imports)).toEqual([]);
  });
});
