/**
 * From bundle bytes to plugin instances. Shared by the build (which reads the
 * plugins' chart/release/kind into the manifest) and by the loader (which
 * checks them against the manifest): one code path imports plugin code.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AppLifecycle } from './app-lifecycle.js';
import { PLUGIN_API_VERSION, type PluginKind } from './brand.js';
import type { ChartPlugin } from './chart-plugin.js';
import { PluginBundleError, PluginLoadError } from './errors.js';
import type { KustomizeOperator } from './kustomize-operator.js';
import { sha256 } from './manifest.js';
import { makeTempDir, removeTempDir } from '../files/index.js';

interface PluginBase {
  readonly name: string;
  readonly file: string;
  readonly order: number;
  /** Lines in the source (0 when unknown): `getOverrides`, and a chart plugin's `chart` and `release` fields. */
  readonly overridesLine: number;
  readonly chartLine: number;
  readonly releaseLine: number;
}

export type LoadedPlugin =
  | (PluginBase & { readonly kind: 'chart'; readonly chart: string; readonly release?: string; readonly instance: ChartPlugin })
  | (PluginBase & { readonly kind: 'lifecycle'; readonly instance: AppLifecycle })
  | (PluginBase & { readonly kind: 'kustomize'; readonly instance: KustomizeOperator });

export type LoadedChartPlugin = Extract<LoadedPlugin, { kind: 'chart' }>;

/** One plugin module of the bundle, as the generated entry lists it. */
export interface BundledModule {
  readonly file: string;
  readonly exports: Readonly<Record<string, unknown>>;
}

/**
 * Bundles imported by this process, by the sha256 of their bytes. Node never
 * frees an imported module: importing the same bytes once per load would
 * grow a long-lived process (`build --watch`, the build server) with each
 * rebuild. Plugins are instantiated anew on every load; what the same bytes
 * share within one process is only their modules' top-level state.
 */
const imported = new Map<string, Promise<BundledModule[]>>();

/**
 * Imports bundle bytes. The exact bytes given (already verified by the
 * caller) are written to a fresh private folder and imported from there, so
 * nothing can swap the file between the check and the import; the same
 * bytes again get the modules already imported.
 */
export function importBundle(bytes: Uint8Array): Promise<BundledModule[]> {
  const digest = sha256(bytes);
  let modules = imported.get(digest);
  if (!modules) {
    modules = importOnce(bytes, digest);
    imported.set(digest, modules);
    modules.catch(() => imported.delete(digest));
  }
  return modules;
}

async function importOnce(bytes: Uint8Array, digest: string): Promise<BundledModule[]> {
  // Stacks of plugin errors point at the plugins' TypeScript lines, through the bundle's inline source map.
  process.setSourceMapsEnabled(true);
  const dir = await makeTempDir('plugins');
  try {
    const file = join(dir, `plugins-${digest.slice(0, 16)}.mjs`);
    await writeFile(file, bytes, { mode: 0o600 });
    const module = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as { plugins?: unknown };
    if (!Array.isArray(module.plugins)) throw new PluginBundleError('the bundle module does not export its plugin list; rebuild the app');
    return module.plugins as BundledModule[];
  } finally {
    await removeTempDir(dir);
  }
}

const KINDS: readonly PluginKind[] = ['chart', 'lifecycle', 'kustomize'];

/** Instantiates the default export of a plugin module and checks it is a flotilla plugin. */
export function instantiate(module: BundledModule, meta: Omit<PluginBase, 'file'>): LoadedPlugin {
  const fail = (what: string): never => {
    throw new PluginLoadError(`${module.file}: ${what}`);
  };
  const Class = module.exports.default;
  if (typeof Class !== 'function') {
    return fail('a plugin file must `export default` a class extending ChartPlugin, AppLifecycle or KustomizeOperator (from flotilla/plugin)');
  }
  let instance: unknown;
  try {
    instance = new (Class as new () => unknown)();
  } catch (error) {
    return fail(`constructing the plugin failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  const branded = instance as { pluginKind?: unknown; apiVersion?: unknown; chart?: unknown; release?: unknown };
  if (!KINDS.includes(branded.pluginKind as PluginKind)) {
    return fail('the default export does not extend ChartPlugin, AppLifecycle or KustomizeOperator (from flotilla/plugin)');
  }
  if (branded.apiVersion !== PLUGIN_API_VERSION) fail(`built against plugin API ${String(branded.apiVersion)}, this flotilla speaks ${PLUGIN_API_VERSION}`);
  const base = { ...meta, file: module.file };
  switch (branded.pluginKind as PluginKind) {
    case 'chart': {
      if (typeof branded.chart !== 'string' || branded.chart === '') return fail('a chart plugin must set `chart` to the chart it serves');
      if (branded.release !== undefined && (typeof branded.release !== 'string' || branded.release === '')) return fail('`release`, when set, must name a release');
      return { ...base, kind: 'chart', chart: branded.chart, ...(branded.release !== undefined ? { release: branded.release as string } : {}), instance: instance as ChartPlugin };
    }
    case 'lifecycle':
      return { ...base, kind: 'lifecycle', instance: instance as AppLifecycle };
    case 'kustomize':
      return { ...base, kind: 'kustomize', instance: instance as KustomizeOperator };
  }
}

export function describePlugin(plugin: LoadedPlugin, line = 0): string {
  return `plugin ${plugin.name} (${plugin.file}${line > 0 ? `:${line}` : ''})`;
}
