import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bundlePlugins,
  loadPluginBundle,
  PluginBuildError,
  PluginBundleError,
  PluginLoadError,
  TamperedBundleError,
  verifyPluginBundle,
  writePluginBundle,
  type PluginBundle,
} from '../../src/plugins/index.js';
import { sha256 } from '../../src/plugins/manifest.js';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { chartPlugin } from './fixtures.js';

const text = (bundle: PluginBundle, file: string) => new TextDecoder().decode(bundle.files.get(file));

const marked = (chart: string) =>
  chartPlugin(
    chart,
    `  override getOverrides(ctx: ChartContext): Values {
    return { conf: { release: ctx.release.name, image: this.image(ctx, '${chart}') ?? null } };
  }`,
  );

const files = {
  'plugins/020_web.ts': marked('web'),
  'plugins/010_db.ts': marked('db').replace("readonly chart = 'db';", "readonly chart = 'db';\n  override readonly release = 'db';"),
  'plugins/lib/names.ts': `export const prefix = 'demo';\n`,
  'plugins/005_lifecycle.ts': `import { AppLifecycle, type LifecycleHooks } from 'flotilla/plugin';
import { prefix } from './lib/names.js';
export default class Lifecycle extends AppLifecycle {
  override readonly hooks: LifecycleHooks = { apply: { pre: { check: (ctx) => ctx.log.info(prefix) } } };
}
`,
};

describe('bundlePlugins', () => {
  it('writes one self-contained module and a manifest of the plugins in order, with sha256 of the bundle and of every source', async () => {
    const root = writeApp(files);
    const bundle = await bundlePlugins(root);
    expect([...bundle.files.keys()]).toEqual(['plugins.mjs', 'manifest.json']);
    const manifest = JSON.parse(text(bundle, 'manifest.json'));
    expect(manifest).toEqual({
      format: 'flotilla-plugin-bundle/v1',
      apiVersion: 1,
      entry: 'plugins.mjs',
      plugins: [
        { order: 5, name: 'lifecycle', file: 'plugins/005_lifecycle.ts', kind: 'lifecycle' },
        { order: 10, name: 'db', file: 'plugins/010_db.ts', kind: 'chart', chart: 'db', release: 'db', overridesLine: 6, chartLine: 4, releaseLine: 5 },
        { order: 20, name: 'web', file: 'plugins/020_web.ts', kind: 'chart', chart: 'web', overridesLine: 5, chartLine: 4 },
      ],
      files: { 'plugins.mjs': sha256(bundle.files.get('plugins.mjs')!) },
      sources: Object.fromEntries(
        Object.keys(files)
          .sort()
          .map((f) => [f, sha256(readFileSync(join(root, f)))]),
      ),
    });
    expect(bundle.manifest).toEqual(manifest);
    const code = text(bundle, 'plugins.mjs');
    // The API base classes are inside; nothing is left to resolve but node built-ins.
    expect(code).toContain('var ChartPlugin = class');
    expect(code).not.toMatch(/from\s+["'](?!node:)/);
    expect(code).not.toContain('flotilla/plugin');
    expect(code).not.toContain(root);
    expect(code).not.toContain(process.cwd());
  });

  it('gives the same bytes for the same sources, wherever the app lives', async () => {
    const root = writeApp(files);
    const copy = join(tempDir(), 'elsewhere');
    cpSync(root, copy, { recursive: true });
    const [a, b, c] = await Promise.all([bundlePlugins(root), bundlePlugins(root), bundlePlugins(copy)]);
    for (const other of [b, c]) {
      expect(Buffer.from(other.files.get('plugins.mjs')!).equals(Buffer.from(a.files.get('plugins.mjs')!))).toBe(true);
      expect(text(other, 'manifest.json')).toBe(text(a, 'manifest.json'));
    }
  });

  it('reports compile errors at file:line', async () => {
    const root = writeApp({
      'plugins/010_web.ts': `import { ChartPlugin } from 'flotilla/plugin';\nexport default class extends ChartPlugin {\n  readonly chart = 'web'\n  oops(: void {}\n}\n`,
    });
    const error = await bundlePlugins(root).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginBuildError);
    expect((error as Error).message).toMatch(/^cannot compile the app's plugins:\n {2}plugins\/010_web\.ts:4:\d+: /);
  });

  it('refuses imports of flotilla other than flotilla/plugin', async () => {
    const root = writeApp({ 'plugins/010_web.ts': `import { loadApp } from 'flotilla';\nexport default loadApp;\n` });
    await expect(bundlePlugins(root)).rejects.toThrow('import "flotilla/plugin", not "flotilla"');
  });

  describe('imports outside the app', () => {
    /** An app in `<dir>/app` and a file of the building machine in `<dir>/outside`. */
    function appBesideAFile(files: Record<string, string>): { root: string; outside: string } {
      const dir = tempDir();
      const outside = join(dir, 'outside');
      mkdirSync(outside);
      writeFileSync(join(outside, 'docker-config.json'), '{"auths": {"registry": {"auth": "c2VjcmV0"}}}\n');
      writeFileSync(join(outside, 'helper.js'), 'export const helper = 1;\n');
      const root = join(dir, 'app');
      cpSync(writeApp(files), root, { recursive: true });
      return { root, outside };
    }
    const importing = (specifier: string) =>
      chartPlugin('web', `  override getOverrides(): Values { return { conf: REG as Values }; }`, `import REG from '${specifier}';`);

    it('are refused at the importing file and line, by a relative path or through a link', async () => {
      const { root, outside } = appBesideAFile({ 'plugins/010_web.ts': importing('../../outside/docker-config.json') });
      const error = await bundlePlugins(root).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PluginBuildError);
      expect((error as Error).message).toBe(
        `cannot compile the app's plugins:\n  plugins/010_web.ts:2:17: import "../../outside/docker-config.json" resolves to ${realpathSync(outside)}/docker-config.json, outside the app (${realpathSync(root)}); plugins may import the app's own files and its node_modules packages only (--follow-external-symlinks allows it)`,
      );
      writeFileSync(join(root, 'plugins/010_web.ts'), importing('./lib/helper.js'));
      mkdirSync(join(root, 'plugins/lib'));
      symlinkSync(join(outside, 'helper.js'), join(root, 'plugins/lib/helper.js'));
      await expect(bundlePlugins(root)).rejects.toThrow(
        /plugins\/010_web\.ts:2:17: import "\.\/lib\/helper\.js" resolves to .*\/outside\/helper\.js, outside the app/,
      );
    });

    it("of the app's own node_modules packages, wherever they are linked from, are bundled; --follow-external-symlinks allows the rest", async () => {
      const { root, outside } = appBesideAFile({ 'plugins/010_web.ts': importing('registry-config') });
      mkdirSync(join(outside, 'registry-config'));
      writeFileSync(join(outside, 'registry-config', 'package.json'), '{"name": "registry-config", "main": "index.js", "type": "module"}\n');
      writeFileSync(join(outside, 'registry-config', 'index.js'), "import { helper } from './lib.js';\nexport default { helper };\n");
      writeFileSync(join(outside, 'registry-config', 'lib.js'), 'export const helper = 2;\n');
      mkdirSync(join(root, 'node_modules'));
      symlinkSync(join(outside, 'registry-config'), join(root, 'node_modules', 'registry-config'));
      expect(text(await bundlePlugins(root), 'plugins.mjs')).toContain('helper = 2');
      writeFileSync(join(root, 'plugins/010_web.ts'), importing('../../outside/docker-config.json'));
      expect(text(await bundlePlugins(root, { followExternalSymlinks: true }), 'plugins.mjs')).toContain('c2VjcmV0');
    });
  });

  it('refuses files that are not plugins, badly named plugin files and two plugins with one order', async () => {
    await expect(bundlePlugins(writeApp({ 'plugins/010_web.ts': `export default class NotAPlugin {}\n` }))).rejects.toThrow(
      'plugins/010_web.ts: the default export does not extend ChartPlugin, AppLifecycle or KustomizeOperator',
    );
    await expect(bundlePlugins(writeApp({ 'plugins/010_web.ts': `export const x = 1;\n` }))).rejects.toBeInstanceOf(PluginLoadError);
    await expect(bundlePlugins(writeApp({ 'plugins/10_web.ts': chartPlugin('web') }))).rejects.toThrow(
      'plugins/10_web.ts: a plugin file is named NNN_<name>.ts',
    );
    await expect(bundlePlugins(writeApp({ 'plugins/010_web.ts': chartPlugin('web'), 'plugins/010_db.ts': chartPlugin('db') }))).rejects.toThrow(
      'plugins/010_db.ts and plugins/010_web.ts share the order 010',
    );
  });

  it('bundles an app without plugins into an empty, loadable bundle, whose code is never run', async () => {
    const bundle = await bundlePlugins(writeApp());
    expect(bundle.manifest.plugins).toEqual([]);
    const dir = tempDir();
    await writePluginBundle(bundle, dir);
    expect((await loadPluginBundle(dir)).plugins).toEqual([]);
    // Its entry replaced by code that says when it runs, the manifest vouching for it: loading lists no plugin, so runs none of it.
    const entry = join(dir, bundle.manifest.entry);
    writeFileSync(entry, 'globalThis.emptyBundleRan = true;\nexport const plugins = [];\n');
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    manifest.files[bundle.manifest.entry] = createHash('sha256').update(readFileSync(entry)).digest('hex');
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    expect((await loadPluginBundle(dir)).plugins).toEqual([]);
    expect((globalThis as { emptyBundleRan?: boolean }).emptyBundleRan).toBeUndefined();
  });
});

describe('loadPluginBundle', () => {
  let bundles = 0;
  /** A bundle of `files`, made unique (a bundle's bytes are imported once per process). */
  async function built(): Promise<string> {
    const dir = tempDir('flotilla-bundle-');
    const unique = { ...files, 'plugins/lib/names.ts': `${files['plugins/lib/names.ts']}export const bundle = ${++bundles};\n` };
    await writePluginBundle(await bundlePlugins(writeApp(unique)), dir);
    return dir;
  }

  it('runs the same bytes in one plugin process per run, and instantiates the plugins anew for each load', async () => {
    const dir = await built(); // bundling runs the bundle once, to ask each plugin what it is
    const first = await loadPluginBundle(dir);
    const again = await loadPluginBundle(dir);
    expect(again.plugins.map((p) => p.name)).toEqual(first.plugins.map((p) => p.name));
    expect(again.instances?.sandbox).toBe(first.instances?.sandbox);
    expect(first.instances?.sandbox.starts).toBe(1);
    expect(again.instances?.set).not.toBe(first.instances?.set);
  });

  it('loads and instantiates the plugins in manifest order', async () => {
    const dir = await built();
    const { plugins, manifest } = await loadPluginBundle(dir);
    expect(plugins.map((p) => [p.name, p.kind, p.kind === 'chart' ? p.chart : '-', p.file, p.order])).toEqual([
      ['lifecycle', 'lifecycle', '-', 'plugins/005_lifecycle.ts', 5],
      ['db', 'chart', 'db', 'plugins/010_db.ts', 10],
      ['web', 'chart', 'web', 'plugins/020_web.ts', 20],
    ]);
    expect(manifest.entry).toBe('plugins.mjs');
    expect((await verifyPluginBundle(dir)).plugins).toEqual(manifest.plugins);
    const web = plugins[2]!;
    expect(web.kind === 'chart' && web.chart).toBe('web');
  });

  it('refuses a tampered bundle before importing any plugin code', async () => {
    const dir = await built();
    const entry = join(dir, 'plugins.mjs');
    writeFileSync(entry, readFileSync(entry, 'utf8').replace('release: ctx.release.name', 'release: "pwned"'));
    await expect(verifyPluginBundle(dir)).rejects.toBeInstanceOf(TamperedBundleError);
    const error = await loadPluginBundle(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TamperedBundleError);
    expect((error as Error).message).toMatch(
      /plugins\.mjs: sha256 [0-9a-f]{64} does not match the manifest \([0-9a-f]{64}\); the plugin bundle was changed after it was built, refusing to load it$/,
    );
  });

  it('refuses a file the manifest does not list, and reports a missing one', async () => {
    const dir = await built();
    writeFileSync(join(dir, 'extra.mjs'), 'export {}\n');
    await expect(loadPluginBundle(dir)).rejects.toThrow(TamperedBundleError);
    const other = await built();
    const manifest = JSON.parse(readFileSync(join(other, 'manifest.json'), 'utf8'));
    manifest.files['helpers.mjs'] = 'a'.repeat(64);
    writeFileSync(join(other, 'manifest.json'), JSON.stringify(manifest));
    await expect(loadPluginBundle(other)).rejects.toThrow('file(s) of the plugin manifest missing: helpers.mjs');
  });

  it('refuses a manifest that lies about the plugins, or points outside the folder', async () => {
    const dir = await built();
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    manifest.plugins[2].chart = 'db';
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    await expect(loadPluginBundle(dir)).rejects.toThrow(
      'plugins/020_web.ts: the manifest says a chart plugin for chart db, the code is a chart plugin for chart web',
    );

    manifest.plugins[2].chart = 'web';
    manifest.entry = '../plugins.mjs';
    manifest.files = { '../plugins.mjs': manifest.files['plugins.mjs'] };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    await expect(loadPluginBundle(dir)).rejects.toThrow('files: "../plugins.mjs" is not an acceptable file name');
  });

  it('refuses a bundle built for another plugin API, and a folder without a manifest', async () => {
    const dir = await built();
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    manifest.apiVersion = 2;
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    await expect(loadPluginBundle(dir)).rejects.toThrow('built for plugin API 2; this flotilla speaks 1: rebuild the app');
    await expect(loadPluginBundle(tempDir())).rejects.toBeInstanceOf(PluginBundleError);
  });
});
