/**
 * Binding plugins to the app's releases: a chart plugin serves the releases
 * of its chart (or the one release it names). A plugin for a chart no release
 * uses is an error (a typo would silently do nothing); so are two plugins
 * serving one release, and two kustomize operators.
 */
import type { ReleaseRef } from './context.js';
import { DuplicatePluginError, PluginLoadError } from './errors.js';
import { unknownName } from '../names/index.js';
import { describePlugin, type LoadedChartPlugin, type LoadedPlugin } from './instantiate.js';

export type LoadedKustomizeOperator = Extract<LoadedPlugin, { kind: 'kustomize' }>;

export interface PluginBinding {
  /** release name → the chart plugin serving it. */
  readonly byRelease: ReadonlyMap<string, LoadedChartPlugin>;
  readonly kustomize?: LoadedKustomizeOperator;
}

/** The binding rule: a chart plugin serves the releases of its chart, or only the one of them it names. */
export function servesRelease(
  plugin: { readonly kind: string; readonly chart?: string; readonly release?: string },
  release: { readonly name: string; readonly chart: string },
): boolean {
  return plugin.kind === 'chart' && plugin.chart === release.chart && (plugin.release === undefined || plugin.release === release.name);
}

export function bindPlugins(plugins: readonly LoadedPlugin[], releases: readonly ReleaseRef[]): PluginBinding {
  const byRelease = new Map<string, LoadedChartPlugin>();
  let kustomize: LoadedKustomizeOperator | undefined;
  for (const plugin of plugins) {
    if (plugin.kind === 'kustomize') {
      if (kustomize)
        throw new DuplicatePluginError(`${describePlugin(kustomize)} and ${describePlugin(plugin)} are both kustomize operators; an app has at most one`);
      kustomize = plugin;
      continue;
    }
    if (plugin.kind !== 'chart') continue;
    const served = servedReleases(plugin, releases);
    for (const release of served) {
      const other = byRelease.get(release.name);
      if (other) {
        throw new DuplicatePluginError(
          `${describePlugin(other)} and ${describePlugin(plugin)} both serve chart ${plugin.chart}${release.name !== plugin.chart ? ` (release ${release.name})` : ''}; one chart release has at most one plugin`,
        );
      }
      byRelease.set(release.name, plugin);
    }
  }
  return { byRelease, ...(kustomize ? { kustomize } : {}) };
}

function servedReleases(plugin: LoadedChartPlugin, releases: readonly ReleaseRef[]): ReleaseRef[] {
  if (plugin.release !== undefined) {
    const release = releases.find((r) => r.name === plugin.release);
    if (!release)
      throw new PluginLoadError(
        `${describePlugin(plugin, plugin.releaseLine)}: release: ${unknownName(
          'release',
          plugin.release,
          releases.map((r) => r.name),
        )}`,
      );
    if (release.chart !== plugin.chart)
      throw new PluginLoadError(`${describePlugin(plugin, plugin.releaseLine)}: release "${release.name}" uses chart ${release.chart}, not ${plugin.chart}`);
  }
  const served = releases.filter((release) => servesRelease(plugin, release));
  if (served.length === 0) {
    throw new PluginLoadError(
      `${describePlugin(plugin, plugin.chartLine)}: chart: ${unknownName(
        'chart',
        plugin.chart,
        releases.map((r) => r.chart),
      )} — no release uses it`,
    );
  }
  return served;
}
