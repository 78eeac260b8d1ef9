/**
 * Type-checking an app's plugins/ with the TypeScript compiler (the `tsc` of
 * the `typescript` package, version 7: a native compiler driven through its
 * command line), `flotilla/plugin` resolved to flotilla's own API types. The
 * result is kept by a digest of every input, so a build pays for it only when
 * a plugin (or flotilla's API, or the compiler) changed.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { DiagnosticsError } from '../diagnostics/index.js';
import type { CacheFolder } from '../cache/index.js';
import { makeTempDir, removeTempDir } from '../files/index.js';
import { pluginApiTypes } from './bundle.js';
import { PLUGIN_TEST_SUFFIX, PLUGIN_TESTS_DIR, PLUGINS_DIR } from './discovery.js';
import { PluginError } from './errors.js';

export interface TypeProblem {
  /** Relative to the app root. */
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** `TS2322`. */
  readonly code: string;
  readonly message: string;
}

export interface TypecheckResult {
  /** False when there is nothing to check (no .ts file under plugins/). */
  readonly checked: boolean;
  /** Taken from the cache: no input changed since the last check. */
  readonly cached: boolean;
  readonly problems: readonly TypeProblem[];
}

export interface TypecheckOptions {
  /** The cache keeping results by input digest; none: always check. */
  readonly cache?: CacheFolder;
}

/** The compiler is missing: a development dependency the app (or flotilla) has not installed. */
export class TypeScriptMissingError extends PluginError {}

/** plugins/ does not type-check: every problem at its file:line. */
export class PluginTypeError extends DiagnosticsError {
  constructor(readonly problems: readonly TypeProblem[]) {
    super(
      `${PLUGINS_DIR}/ does not type-check (${problems.length} error${problems.length === 1 ? '' : 's'}):`,
      problems.map((p) => ({ severity: 'error', message: `${p.code}: ${p.message}`, location: { file: p.file, line: p.line, column: p.column } })),
    );
  }
}

export async function typecheckPlugins(appRoot: string, options: TypecheckOptions = {}): Promise<TypecheckResult> {
  const root = resolve(appRoot);
  const plugins = await typeScriptFiles(join(root, PLUGINS_DIR));
  if (plugins.length === 0) return { checked: false, cached: false, problems: [] };
  // The plugins' tests too (a test giving a context field the API does not have tests nothing), with the vitest they import.
  const vitest = packageFolder(root, 'vitest');
  const tests = vitest ? (await typeScriptFiles(join(root, PLUGIN_TESTS_DIR))).filter((file) => file.endsWith(PLUGIN_TEST_SUFFIX)) : [];
  const files = [...plugins, ...tests];
  const tsc = compilerPath(root);
  const config = compilerConfig(root, files, vitest);
  const key = await inputDigest(root, files, tsc, config);
  const cached = `typecheck-${key}.json`;
  const known = await options.cache?.read(cached, 'typecheck', key);
  if (known) return { checked: true, cached: true, problems: JSON.parse(known.toString('utf8')) as TypeProblem[] };

  const work = await makeTempDir('typecheck');
  let output: string;
  try {
    const project = join(work, 'tsconfig.json');
    await writeFile(project, JSON.stringify(config));
    output = await new Promise<string>((done, fail) => {
      execFile(process.execPath, [tsc.bin, '-p', project, '--pretty', 'false'], { cwd: root, maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => {
        // tsc exits non-zero when it found errors; only a compiler that did not run is a failure here.
        if (error && typeof error.code !== 'number') fail(new TypeScriptMissingError(`cannot run the TypeScript compiler (${tsc.bin}): ${error.message}`));
        else done(stdout);
      });
    });
  } finally {
    await removeTempDir(work);
  }
  const problems = parseCompilerOutput(output, root);
  await options.cache?.write(cached, 'typecheck', key, JSON.stringify(problems));
  return { checked: true, cached: false, problems };
}

async function typeScriptFiles(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) out.push(join(entry.parentPath, entry.name));
  }
  return out.sort();
}

/** The app's own TypeScript when it has one, else the one next to flotilla. */
function compilerPath(root: string): { bin: string; version: string } {
  const folder = packageFolder(root, 'typescript');
  if (!folder) throw new TypeScriptMissingError('type-checking plugins needs TypeScript: npm install --save-dev typescript (or build with --no-typecheck)');
  const { version, bin } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
  return { bin: join(folder, bin.tsc ?? 'bin/tsc'), version };
}

/** The folder of a package the app has installed, else the one next to flotilla; undefined when neither has it. */
function packageFolder(root: string, name: string): string | undefined {
  for (const from of [join(root, 'package.json'), import.meta.url]) {
    try {
      return dirname(createRequire(from).resolve(`${name}/package.json`));
    } catch {
      // not installed there
    }
  }
  return undefined;
}

/** A project of the plugin files and their tests, `flotilla/plugin` mapped to flotilla's API types (and `vitest` to the one found); Node's types when installed. */
function compilerConfig(root: string, files: readonly string[], vitest: string | undefined): object {
  const require = createRequire(import.meta.url);
  const typeRoots = [join(root, 'node_modules', '@types')];
  try {
    typeRoots.push(dirname(dirname(require.resolve('@types/node/package.json'))));
  } catch {
    // No Node types anywhere: plugins importing node: modules get errors saying so.
  }
  const existing = typeRoots.filter((dir) => existsSync(join(dir, 'node')));
  return {
    compilerOptions: {
      target: 'ES2022',
      module: 'ESNext',
      moduleResolution: 'Bundler',
      lib: ['ES2023'],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: existing.length > 0 ? ['node'] : [],
      typeRoots: existing,
      paths: { 'flotilla/plugin': [pluginApiTypes()], ...(vitest ? { vitest: [vitest] } : {}) },
    },
    files,
  };
}

async function inputDigest(root: string, files: readonly string[], tsc: { version: string }, config: object): Promise<string> {
  const hash = createHash('sha256').update(`tsc ${tsc.version}\0${JSON.stringify(config)}\0`);
  for (const file of [...files, pluginApiTypes()])
    hash
      .update(`${relative(root, file)}\0`)
      .update(await readFile(file))
      .update('\0');
  return hash.digest('hex');
}

/** `path(line,col): error TS1234: message` lines, continuation lines joined; only problems inside the app's plugins/. */
function parseCompilerOutput(output: string, root: string): TypeProblem[] {
  const problems: TypeProblem[] = [];
  for (const line of output.split('\n')) {
    const m = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line);
    if (m) {
      const file = relative(root, resolve(root, m[1] as string))
        .split(sep)
        .join('/');
      problems.push({ file, line: Number(m[2]), column: Number(m[3]), code: m[4] as string, message: m[5] as string });
    } else if (line.startsWith(' ') && problems.length > 0) {
      const last = problems.pop() as TypeProblem;
      problems.push({ ...last, message: `${last.message} ${line.trim()}` });
    }
  }
  return problems.filter((p) => p.file.startsWith(`${PLUGINS_DIR}/`) || p.file.startsWith(`${PLUGIN_TESTS_DIR}/`));
}
