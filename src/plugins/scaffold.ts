/**
 * `flotilla plugin new CHART`: a typed chart plugin with the next free order
 * number, and a test next to the app's other tests
 * (test/plugins/<chart>.plugin.test.ts) that passes as generated.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { discoverPluginFiles, nextFreeOrder, PLUGINS_DIR } from './discovery.js';
import { PluginLoadError } from './errors.js';
import { loadAppPlugins, type PluginAppView } from './host.js';
import { isDns1123Label } from '../names/index.js';

export const PLUGIN_TESTS_DIR = 'test/plugins';

export interface ScaffoldOptions {
  /** Bind the plugin to this release only (when the chart has several). */
  readonly release?: string;
}

export interface ScaffoldResult {
  /** Relative to the app root. */
  readonly pluginFile: string;
  readonly testFile: string;
  readonly order: number;
}


export async function scaffoldPlugin(app: PluginAppView & { readonly root: string }, chart: string, options: ScaffoldOptions = {}): Promise<ScaffoldResult> {
  if (!isDns1123Label(chart)) throw new PluginLoadError(`"${chart}" is not a chart name (lower-case letters, digits, dashes)`);
  const ofChart = app.releases.filter((r) => r.chart === chart);
  if (ofChart.length === 0) {
    throw new PluginLoadError(`no release uses chart "${chart}" (charts: ${[...new Set(app.releases.map((r) => r.chart))].sort().join(', ')}); add it to fluxcd/releases.yaml first`);
  }
  const release = options.release === undefined ? undefined : ofChart.find((r) => r.name === options.release);
  if (options.release !== undefined && !release) throw new PluginLoadError(`chart "${chart}" has no release "${options.release}" (releases: ${ofChart.map((r) => r.name).join(', ')})`);

  // Loading the existing plugins finds one already serving the chart (and proves they still build).
  const host = await loadAppPlugins(app, { mode: 'offline', passwords: { getOrGenerate: async () => '' } });
  for (const r of release ? [release] : ofChart) {
    const existing = host.pluginFor(r.name);
    if (existing) throw new PluginLoadError(`${existing.file} already serves chart ${chart} (release ${r.name})`);
  }

  const order = nextFreeOrder((await discoverPluginFiles(app.root)).map((f) => f.order));
  const base = `${String(order).padStart(3, '0')}_${chart}`;
  const pluginFile = `${PLUGINS_DIR}/${base}.ts`;
  const testFile = `${PLUGIN_TESTS_DIR}/${chart}.plugin.test.ts`;
  for (const file of [pluginFile, testFile]) if (existsSync(join(app.root, file))) throw new PluginLoadError(`${file} already exists`);

  const className = `${chart.replace(/(^|-)([a-z0-9])/g, (_, __: string, c: string) => c.toUpperCase())}Plugin`;
  const target = release ?? (ofChart[0] as (typeof ofChart)[number]);
  await write(app.root, pluginFile, pluginSource(chart, className, release?.name));
  await write(app.root, testFile, testSource(chart, className, base, target));
  return { pluginFile, testFile, order };
}

async function write(root: string, file: string, text: string): Promise<void> {
  await mkdir(dirname(join(root, file)), { recursive: true });
  await writeFile(join(root, file), text, { flag: 'wx' });
}

function pluginSource(chart: string, className: string, release: string | undefined): string {
  return `/**
 * Chart plugin for ${chart}: values layer 5 of its release${release ? ` ${release}` : 's'}, and hooks
 * around apply and remove. See docs/plugins.md.
 */
import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';

export default class ${className} extends ChartPlugin {
  readonly chart = '${chart}';
${release ? `  override readonly release = '${release}';\n` : ''}
  /**
   * Values computed from the deployment: merged over the static overrides,
   * template, images and policy layers, under the spec's common and service values.
   * Helpers: this.password(ctx, name), this.endpoints(ctx, {...}), this.imageTags(ctx, {...}).
   */
  override getOverrides(ctx: ChartContext): Values {
    ctx.log.debug(\`overrides of release \${ctx.release.name} for OpenStack \${ctx.version.release}\`);
    return {};
  }
}
`;
}

function testSource(chart: string, className: string, base: string, release: PluginAppView['releases'][number]): string {
  return `import { describe, expect, it } from 'vitest';
import { testChartContext } from 'flotilla/plugin';
import ${className} from '../../${PLUGINS_DIR}/${base}.js';

describe('plugin ${base}', () => {
  const ctx = () =>
    testChartContext('${chart}', {
      release: { name: '${release.name}', namespace: '${release.namespace}', releaseName: '${release.releaseName}' },
      version: { release: '2025.1', images: {}, serviceDefaults: {} },
    });

  it('serves chart ${chart}', () => {
    expect(new ${className}().chart).toBe('${chart}');
  });

  it('computes its overrides offline', async () => {
    // Describe here the values the plugin should produce for this context.
    expect(await new ${className}().getOverrides(ctx())).toEqual({});
  });
});
`;
}
