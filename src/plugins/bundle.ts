/**
 * Packaging: the app's plugins/ compiled by esbuild into ONE self-contained
 * ES module (the plugin API base classes included, so nothing has to resolve
 * `flotilla/plugin` at run time), plus manifest.json. Same sources and the
 * same flotilla give the same bytes: no timestamps, no absolute paths (the
 * API files are loaded under a virtual `flotilla:` namespace), fixed order.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join, posix, relative, resolve, sep } from 'node:path';
import type { Message, Plugin } from 'esbuild';
import { PLUGIN_API_VERSION } from './brand.js';
import { HOST_ROOT } from './host-root.js';
import { discoverPluginFiles, PLUGINS_DIR, type PluginFile } from './discovery.js';
import { PluginBuildError } from './errors.js';
import { instantiate, type LoadedPlugin } from './instantiate.js';
import { sandboxFor } from './sandbox.js';
import { ENTRY_FILE, MANIFEST_FILE, MANIFEST_FORMAT, serializeManifest, sha256, type ManifestPlugin, type PluginManifest } from './manifest.js';

export interface PluginBundle {
  readonly manifest: PluginManifest;
  /** File name → bytes: the entry module and manifest.json, to be written as they are (e.g. into the tarball's plugins/). */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

const NAMESPACE = 'flotilla';
/** flotilla's folder holding the plugin API, relative to HOST_ROOT. */
const API_DIR = 'plugins';

/** The file declaring `flotilla/plugin`'s types (the API's source, or its declarations once built), for type-checking plugins. */
export function pluginApiTypes(): string {
  const source = join(HOST_ROOT, API_DIR, 'api.ts');
  return existsSync(source) ? source : join(HOST_ROOT, API_DIR, 'api.d.ts');
}

export interface BundleOptions {
  /** Bundle what imports resolving outside the app point at instead of refusing them (`--follow-external-symlinks`). */
  readonly followExternalSymlinks?: boolean;
}

export async function bundlePlugins(appRoot: string, options: BundleOptions = {}): Promise<PluginBundle> {
  const root = resolve(appRoot);
  const pluginFiles = await discoverPluginFiles(root);
  const sources = await hashSources(root);
  // No plugins: nothing to compile or run, and no reason to start esbuild.
  const code = pluginFiles.length > 0 ? await compile(root, pluginFiles, options) : new TextEncoder().encode(entrySource([]));
  // What each plugin is (kind, chart, release) is asked of its code, run in the plugin process like any plugin code.
  const modules = pluginFiles.length > 0 ? (await sandboxFor(code, `${PLUGINS_DIR}/`).instantiate()).facts : [];
  const plugins = await Promise.all(
    pluginFiles.map(async (pf, i): Promise<ManifestPlugin> => {
      const module = modules[i];
      if (!module || module.file !== pf.file)
        throw new PluginBuildError([{ message: `bundle lists ${module?.file ?? 'nothing'} where ${pf.file} was expected` }]);
      const source = await readFile(join(root, pf.file), 'utf8');
      return manifestEntry(
        instantiate(module, {
          name: pf.name,
          order: pf.order,
          overridesLine: findOverridesLine(source),
          chartLine: findFieldLine(source, 'chart'),
          releaseLine: findFieldLine(source, 'release'),
          index: i,
        }),
      );
    }),
  );
  const manifest: PluginManifest = {
    format: MANIFEST_FORMAT,
    apiVersion: PLUGIN_API_VERSION,
    entry: ENTRY_FILE,
    plugins,
    files: { [ENTRY_FILE]: sha256(code) },
    sources,
  };
  return {
    manifest,
    files: new Map([
      [ENTRY_FILE, code],
      [MANIFEST_FILE, new TextEncoder().encode(serializeManifest(manifest))],
    ]),
  };
}

/**
 * A digest of everything a bundle is made from: the app's plugins/ files,
 * flotilla's own modules (the plugin API is bundled in), and the bundler's
 * version. Equal digests give equal bundles, so a build may reuse one.
 */
export async function pluginBundleKey(appRoot: string): Promise<string> {
  const hash = createHash('sha256');
  hash.update(`${MANIFEST_FORMAT}\0${PLUGIN_API_VERSION}\0esbuild ${esbuildVersion()}\0`);
  for (const [file, digest] of Object.entries(await hashSources(resolve(appRoot)))) hash.update(`${file}\0${digest}\n`);
  // The API's own files: the resolver keeps its run-time imports inside API_DIR.
  const apiDir = join(HOST_ROOT, API_DIR);
  for (const name of readdirSync(apiDir).sort()) {
    if (/\.(js|ts)$/.test(name) && !name.endsWith('.d.ts')) hash.update(`${name}\0${sha256(readFileSync(join(apiDir, name)))}\n`);
  }
  return hash.digest('hex');
}

function esbuildVersion(): string {
  try {
    return (createRequire(import.meta.url)('esbuild/package.json') as { version: string }).version;
  } catch {
    return 'missing';
  }
}

/** Writes the bundle's files into `dir` (created when missing). */
export async function writePluginBundle(bundle: PluginBundle, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [name, bytes] of bundle.files) await writeFile(join(dir, name), bytes);
}

function manifestEntry(plugin: LoadedPlugin): ManifestPlugin {
  const common = { order: plugin.order, name: plugin.name, file: plugin.file, kind: plugin.kind };
  if (plugin.kind !== 'chart') return common;
  return {
    ...common,
    chart: plugin.chart,
    ...(plugin.release !== undefined ? { release: plugin.release } : {}),
    ...(plugin.overridesLine > 0 ? { overridesLine: plugin.overridesLine } : {}),
    ...(plugin.chartLine > 0 ? { chartLine: plugin.chartLine } : {}),
    ...(plugin.release !== undefined && plugin.releaseLine > 0 ? { releaseLine: plugin.releaseLine } : {}),
  };
}

/** The line declaring `getOverrides`: where `--explain` points for plugin values (a value's own line would need source maps). */
export function findOverridesLine(source: string): number {
  return lineMatching(source, /^\s*(?:(?:override|public|async)\s+)*getOverrides\s*[(<]/);
}

/** The line setting a chart plugin's `chart` or `release` field: where an error binding it to the app's releases points. */
function findFieldLine(source: string, field: 'chart' | 'release'): number {
  return lineMatching(source, new RegExp(`^\\s*(?:(?:override|public|readonly)\\s+)*${field}\\s*[:=]`));
}

/** 1-based; 0 when no line matches. */
function lineMatching(source: string, pattern: RegExp): number {
  return source.split('\n').findIndex((l) => pattern.test(l)) + 1;
}

async function hashSources(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string): Promise<void> => {
    if (!existsSync(dir)) return;
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const abs = join(dir, entry.name);
      if (entry.isDirectory()) await walk(abs);
      else if (entry.isFile()) out[relative(root, abs).split(sep).join('/')] = sha256(await readFile(abs));
    }
  };
  await walk(join(root, PLUGINS_DIR));
  return out;
}

/** The generated entry: every plugin module, in order, with its file. */
function entrySource(pluginFiles: readonly PluginFile[]): string {
  const imports = pluginFiles.map((pf, i) => `import * as plugin${i} from ${JSON.stringify(`./${pf.file}`)};`);
  const list = pluginFiles.map((pf, i) => `  { file: ${JSON.stringify(pf.file)}, exports: plugin${i} },`);
  return [...imports, 'export const plugins = [', ...list, '];', ''].join('\n');
}

async function compile(root: string, pluginFiles: readonly PluginFile[], options: BundleOptions): Promise<Uint8Array> {
  // Loaded on use: loading a shipped bundle needs no compiler.
  const { build } = await import('esbuild');
  const result = await build({
    stdin: { contents: entrySource(pluginFiles), resolveDir: root, sourcefile: 'flotilla-plugins-entry.ts', loader: 'ts' },
    absWorkingDir: root,
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Class names stay readable in errors and logs.
    keepNames: true,
    // A plugin that throws is reported at its own source line (the loader turns source maps on).
    sourcemap: 'inline',
    sourceRoot: '',
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
    plugins: [flotillaApi(), ...(options.followExternalSymlinks ? [] : [insideTheApp(root)])],
  }).catch((error: unknown) => {
    const errors = (error as { errors?: Message[] }).errors;
    if (!errors) throw error;
    throw new PluginBuildError(errors.map(toProblem));
  });
  const output = result.outputFiles[0];
  if (!output) throw new PluginBuildError([{ message: 'esbuild produced no output' }]);
  return output.contents;
}

function toProblem(message: Message): { message: string; location?: { file: string; line: number; column: number } } {
  const loc = message.location;
  return loc ? { message: message.text, location: { file: loc.file, line: loc.line, column: loc.column + 1 } } : { message: message.text };
}

/** Marks the resolution insideTheApp asks esbuild for itself, so that it does not ask again. */
const RESOLVING_INSIDE = Symbol('resolving inside the app');

/**
 * Every import must resolve (symbolic links followed) inside the app, or
 * inside one of the app's own node_modules packages: otherwise a file of the
 * building machine (`import REG from '../../../outside/docker-config.json'`)
 * would ship in the bundle. esbuild places the error at the import's
 * file:line.
 */
function insideTheApp(root: string): Plugin {
  const realRoot = realpathSync(root);
  let dependencies: string[] | undefined;
  const allowed = (path: string) => {
    if (within(realRoot, path)) return true;
    dependencies ??= dependencyRoots(root);
    return dependencies.some((dir) => within(dir, path));
  };
  return {
    name: 'flotilla-inside-app',
    setup(b) {
      b.onResolve({ filter: /.*/, namespace: 'file' }, async (args) => {
        if (args.pluginData === RESOLVING_INSIDE) return undefined;
        const result = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: RESOLVING_INSIDE });
        if (result.errors.length > 0 || result.external || result.namespace !== 'file') return result;
        const real = existsSync(result.path) ? realpathSync(result.path) : result.path;
        if (allowed(real)) return result;
        return {
          errors: [
            {
              text: `import "${args.path}" resolves to ${real}, outside the app (${realRoot}); plugins may import the app's own files and its node_modules packages only (--follow-external-symlinks allows it)`,
            },
          ],
        };
      });
    },
  };
}

function within(dir: string, path: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}

/** Where the app's own node_modules packages really are (a linked package lives elsewhere). */
function dependencyRoots(root: string): string[] {
  const modules = join(root, 'node_modules');
  if (!existsSync(modules)) return [];
  const roots = [realpathSync(modules)];
  for (const entry of readdirSync(modules, { withFileTypes: true })) {
    const path = join(modules, entry.name);
    if (entry.name.startsWith('@') && entry.isDirectory()) {
      for (const scoped of readdirSync(path)) roots.push(realpathOr(join(path, scoped)));
    } else if (entry.isSymbolicLink()) roots.push(realpathOr(path));
  }
  return roots;
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Resolves `flotilla/plugin` to this package's own API module (api.ts from
 * sources, api.js once built), loaded under the `flotilla:` namespace with a
 * path relative to the package, so the bundle never mentions where flotilla
 * is installed.
 */
function flotillaApi(): Plugin {
  const realPath = (virtual: string) => join(HOST_ROOT, ...virtual.split('/'));
  const existing = (virtual: string): string | undefined => {
    for (const candidate of [virtual.replace(/\.js$/, '.ts'), virtual]) if (existsSync(realPath(candidate))) return candidate;
    return undefined;
  };
  return {
    name: 'flotilla-plugin-api',
    setup(b) {
      b.onResolve({ filter: /^flotilla(\/.*)?$/ }, (args) => {
        if (args.path !== 'flotilla/plugin') return { errors: [{ text: `import "flotilla/plugin", not "${args.path}": plugins see only the plugin API` }] };
        const path = existing('plugins/api.js');
        return path ? { path, namespace: NAMESPACE } : { errors: [{ text: `flotilla's plugin API is missing from ${HOST_ROOT}` }] };
      });
      b.onResolve({ filter: /.*/, namespace: NAMESPACE }, (args) => {
        if (args.path.startsWith('node:')) return { path: args.path, external: true };
        if (!args.path.startsWith('.')) return { errors: [{ text: `the plugin API must not import "${args.path}" at run time (only relative modules)` }] };
        const target = posix.join(posix.dirname(args.importer), args.path);
        // The API's run-time code stays inside plugins/, so pluginBundleKey knows every file a bundle is made of.
        if (!target.startsWith(`${API_DIR}/`))
          return { errors: [{ text: `the plugin API must not import ${args.path} from ${args.importer}: it leaves ${API_DIR}/` }] };
        const path = existing(target);
        return path ? { path, namespace: NAMESPACE } : { errors: [{ text: `cannot resolve ${args.path} from ${args.importer}` }] };
      });
      b.onLoad({ filter: /.*/, namespace: NAMESPACE }, async (args) => ({
        contents: await readFile(realPath(args.path), 'utf8'),
        loader: args.path.endsWith('.ts') ? 'ts' : 'js',
      }));
    },
  };
}
