/**
 * `flotilla plugin new CHART`: a typed chart plugin with the next free order
 * number, and a test next to the app's other tests
 * (test/plugins/<chart>.plugin.test.ts) that passes as generated.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { discoverPluginFiles, nextFreeOrder, PLUGIN_TEST_SUFFIX, PLUGIN_TESTS_DIR, PLUGINS_DIR } from './discovery.js';
import { servesRelease } from './binding.js';
import { PluginLoadError } from './errors.js';
import { loadAppPlugins, type PluginAppView } from './host.js';
import { isLabelCharacters, unknownName } from '../names/index.js';

export interface ScaffoldOptions {
  /** Bind the plugin to this release only (when the chart has several). */
  readonly release?: string;
}

export interface ScaffoldResult {
  /** Relative to the app root. */
  readonly pluginFile: string;
  readonly testFile: string;
  readonly order: number;
  /** Set-up files written or completed so the plugin's test runs with `npm install && npm test` (package.json, tsconfig.json). */
  readonly setup: readonly string[];
}

export async function scaffoldPlugin(app: PluginAppView & { readonly root: string }, chart: string, options: ScaffoldOptions = {}): Promise<ScaffoldResult> {
  if (!isLabelCharacters(chart)) throw new PluginLoadError(`"${chart}" is not a chart name (lower-case letters, digits, dashes)`);
  const ofChart = app.releases.filter((r) => r.chart === chart);
  if (ofChart.length === 0) {
    throw new PluginLoadError(
      `${unknownName(
        'chart',
        chart,
        app.releases.map((r) => r.chart),
      )}: no release uses it; add it to fluxcd/releases.yaml first`,
    );
  }
  const release = options.release === undefined ? undefined : ofChart.find((r) => r.name === options.release);
  if (options.release !== undefined && !release)
    throw new PluginLoadError(`chart "${chart}" has no release "${options.release}" (releases: ${ofChart.map((r) => r.name).join(', ')})`);

  // Loading the existing plugins finds one already serving the chart (and proves they still build).
  const host = await loadAppPlugins(app, { mode: 'offline', passwords: { getOrGenerate: async () => '' } });
  for (const r of ofChart.filter((r) => servesRelease({ kind: 'chart', chart, release: options.release }, r))) {
    const existing = host.pluginFor(r.name);
    if (existing) throw new PluginLoadError(`${existing.file} already serves chart ${chart} (release ${r.name})`);
  }

  const order = nextFreeOrder((await discoverPluginFiles(app.root)).map((f) => f.order));
  const base = `${String(order).padStart(3, '0')}_${chart}`;
  const pluginFile = `${PLUGINS_DIR}/${base}.ts`;
  const testFile = `${PLUGIN_TESTS_DIR}/${chart}${PLUGIN_TEST_SUFFIX}`;
  for (const file of [pluginFile, testFile]) if (existsSync(join(app.root, file))) throw new PluginLoadError(`${file} already exists`);

  const className = `${chart.replace(/(^|-)([a-z0-9])/g, (_, __: string, c: string) => c.toUpperCase())}Plugin`;
  const target = release ?? (ofChart[0] as (typeof ofChart)[number]);
  await write(app.root, pluginFile, pluginSource(chart, className, release?.name));
  await write(app.root, testFile, testSource(chart, className, base, target));
  return { pluginFile, testFile, order, setup: await ensureTestSetup(app.root) };
}

/** The folder of the flotilla running now (its package.json, and `flotilla/plugin` in dist/). */
const FLOTILLA_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** flotilla's own package.json: the versions of the test tools an app's set-up asks for. */
function flotillaPackage(): { name: string; version: string; devDependencies?: Record<string, string> } {
  return JSON.parse(readFileSync(join(FLOTILLA_ROOT, 'package.json'), 'utf8')) as ReturnType<typeof flotillaPackage>;
}

/**
 * How an app's package.json asks for `flotilla/plugin`: the flotilla running
 * now, as a `file:` dependency (npm links the folder, offline), since no
 * registry need hold this flotilla. A version range (what earlier scaffolds
 * wrote) is replaced by it.
 */
function flotillaDependency(current: string | undefined): string {
  return current === undefined || /^[\^~]?\d/.test(current) ? `file:${FLOTILLA_ROOT}` : current;
}

/**
 * What a stand-alone app needs for its plugin tests (docs/plugins.md,
 * "Testing plugins"): a package.json whose devDependencies make
 * `flotilla/plugin`, vitest and TypeScript resolvable and whose `test` script
 * runs vitest, and a tsconfig.json for editors and tsc. Existing files are
 * completed, never overwritten; flotilla's own repository needs nothing.
 */
async function ensureTestSetup(root: string): Promise<string[]> {
  const own = flotillaPackage();
  const file = join(root, 'package.json');
  const existing = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : undefined;
  if (existing?.name === own.name) return [];
  const written: string[] = [];
  const manifest: Record<string, unknown> = existing ?? {
    name:
      basename(root)
        .toLowerCase()
        .replace(/[^a-z0-9-]+/g, '-') || 'app',
    private: true,
  };
  manifest.type ??= 'module';
  const scripts = (manifest.scripts ?? {}) as Record<string, string>;
  scripts.test ??= 'vitest run';
  manifest.scripts = scripts;
  const dev = (manifest.devDependencies ?? {}) as Record<string, string>;
  dev[own.name] = flotillaDependency(dev[own.name]);
  for (const tool of ['vitest', 'typescript']) dev[tool] ??= own.devDependencies?.[tool] ?? 'latest';
  manifest.devDependencies = dev;
  const text = `${JSON.stringify(manifest, null, 2)}\n`;
  if (!existing || text !== readFileSync(file, 'utf8')) {
    await writeFile(file, text);
    written.push('package.json');
  }
  if (!existsSync(join(root, 'tsconfig.json'))) {
    const tsconfig = {
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        strict: true,
        noImplicitOverride: true,
        noEmit: true,
        skipLibCheck: true,
      },
      include: [`${PLUGINS_DIR}/**/*.ts`, `${PLUGIN_TESTS_DIR}/**/*.ts`],
    };
    await writeFile(join(root, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
    written.push('tsconfig.json');
  }
  return written;
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
    ctx.log.debug(\`overrides of release \${ctx.release.name} for catalog release \${ctx.version.release}\`);
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
