/**
 * From what the plugin process found (sandbox-protocol.ts `PluginFacts`) to
 * the plugins the host binds and calls. Shared by the build (which reads the
 * plugins' chart/release/kind into the manifest) and by the loader (which
 * checks them against the manifest): one code path judges plugin code.
 */
import { PLUGIN_API_VERSION, type PluginKind } from './brand.js';
import type { HookTimeouts } from './context.js';
import { PluginLoadError } from './errors.js';
import { CHART_METHODS, type ChartMethod, type FieldFact, type PluginFacts } from './sandbox-protocol.js';

interface PluginBase {
  readonly name: string;
  readonly file: string;
  readonly order: number;
  /** Lines in the source (0 when unknown): `getOverrides`, and a chart plugin's `chart` and `release` fields. */
  readonly overridesLine: number;
  readonly chartLine: number;
  readonly releaseLine: number;
  /** Its place in the bundle: how calls name it to the plugin process. */
  readonly index: number;
  /** The plugin's own time limits (ms) by hook name or kind. */
  readonly timeouts?: HookTimeouts;
}

export type LoadedPlugin =
  | (PluginBase & { readonly kind: 'chart'; readonly chart: string; readonly release?: string; readonly methods: ReadonlySet<ChartMethod> })
  | (PluginBase & { readonly kind: 'lifecycle'; readonly stages: ReadonlySet<string> })
  | (PluginBase & { readonly kind: 'kustomize'; readonly modes: readonly string[]; readonly partial: Readonly<Record<string, boolean>> });

export type LoadedChartPlugin = Extract<LoadedPlugin, { kind: 'chart' }>;

const KINDS: readonly PluginKind[] = ['chart', 'lifecycle', 'kustomize'];

/** Checks what the plugin process found of one module's default export is a flotilla plugin, and describes it. */
export function instantiate(facts: PluginFacts, meta: Omit<PluginBase, 'file' | 'timeouts'>): LoadedPlugin {
  const fail = (what: string): never => {
    throw new PluginLoadError(`${facts.file}: ${what}`);
  };
  if (facts.problem === 'no default export class') {
    return fail('a plugin file must `export default` a class extending ChartPlugin, AppLifecycle or KustomizeOperator (from flotilla/plugin)');
  }
  if (facts.problem !== undefined) return fail(facts.problem);
  if (!KINDS.includes(facts.pluginKind as PluginKind)) {
    return fail('the default export does not extend ChartPlugin, AppLifecycle or KustomizeOperator (from flotilla/plugin)');
  }
  if (facts.apiVersion !== PLUGIN_API_VERSION) fail(`built against plugin API ${String(facts.apiVersion)}, this flotilla speaks ${PLUGIN_API_VERSION}`);
  const timeouts = numbers(facts.timeouts);
  const base = { ...meta, file: facts.file, ...(timeouts ? { timeouts } : {}) };
  const named = (value: FieldFact): value is string => typeof value === 'string' && value !== '';
  switch (facts.pluginKind as PluginKind) {
    case 'chart': {
      if (!named(facts.chart)) return fail('a chart plugin must set `chart` to the chart it serves');
      if (facts.release !== undefined && !named(facts.release)) return fail('`release`, when set, must name a release');
      const methods = new Set(CHART_METHODS.filter((m) => strings(facts.methods).includes(m)));
      return { ...base, kind: 'chart', chart: facts.chart, ...(facts.release !== undefined ? { release: facts.release } : {}), methods };
    }
    case 'lifecycle':
      return { ...base, kind: 'lifecycle', stages: new Set(strings(facts.stages)) };
    case 'kustomize': {
      const partial = Object.entries(typeof facts.partial === 'object' && facts.partial !== null ? facts.partial : {}).filter(
        (e): e is [string, boolean] => typeof e[1] === 'boolean',
      );
      return { ...base, kind: 'kustomize', modes: strings(facts.modes), partial: Object.fromEntries(partial) };
    }
  }
}

/** What the plugin process sent, held to its type: it is trusted no more than the plugin. */
function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function numbers(value: unknown): Record<string, number> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] > 0));
}

export function describePlugin(plugin: LoadedPlugin, line = 0): string {
  return `plugin ${plugin.name} (${plugin.file}${line > 0 ? `:${line}` : ''})`;
}
