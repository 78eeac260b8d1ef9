import { execFile } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadApp } from '../../src/app/index.js';
import { loadAppPlugins, PluginLoadError, scaffoldPlugin } from '../../src/plugins/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/** The fixture app as its own project: ESM package, flotilla's node_modules, `flotilla/plugin` mapped to the sources. */
function asProject(root: string): void {
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'demo-app', private: true, type: 'module' }));
  const api = join(ROOT, 'src', 'plugins', 'api.ts');
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023'],
        types: ['node'],
        strict: true,
        noUnusedLocals: true,
        noUnusedParameters: true,
        noImplicitOverride: true,
        skipLibCheck: true,
        noEmit: true,
        paths: { 'flotilla/plugin': [api] },
      },
      include: ['plugins/**/*.ts', 'test/**/*.ts'],
    }),
  );
  writeFileSync(
    join(root, 'vitest.config.mjs'),
    `export default { resolve: { alias: { 'flotilla/plugin': ${JSON.stringify(api)} } }, test: { include: ['test/**/*.test.ts'] } };\n`,
  );
}

/** The environment without this vitest's own variables, so the nested run is a fresh one. */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_OPTIONS' && k !== 'TEST'));

describe('flotilla plugin new', () => {
  it('scaffolds a typed plugin with the next free order and a test; both compile and the test passes', async () => {
    const root = writeApp({
      'plugins/010_db.ts': `import { ChartPlugin } from 'flotilla/plugin';\nexport default class Db extends ChartPlugin {\n  readonly chart = 'db';\n}\n`,
    });
    asProject(root);
    const app = await loadApp(root);
    const result = await scaffoldPlugin(app, 'web');
    expect(result).toEqual({ pluginFile: 'plugins/020_web.ts', testFile: 'test/plugins/web.plugin.test.ts', order: 20, setup: ['package.json'] }); // its own tsconfig.json is kept
    expect(readFileSync(join(root, result.pluginFile), 'utf8')).toContain("export default class WebPlugin extends ChartPlugin {\n  readonly chart = 'web';");

    const tsc = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.json')], { cwd: root }).catch(
      (e: { stdout?: string; stderr?: string }) => ({ stdout: `${e.stdout ?? ''}${e.stderr ?? ''}`, failed: true }),
    );
    expect(tsc).not.toHaveProperty('failed');

    const vitest = await run(
      process.execPath,
      [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', root, '--config', join(root, 'vitest.config.mjs')],
      {
        cwd: root,
        env: cleanEnv(),
      },
    ).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: `${e.stdout ?? ''}${e.stderr ?? ''}`, failed: true }));
    expect(vitest).not.toHaveProperty('failed');
    expect(vitest.stdout).toMatch(/Tests\s+.*2 passed/);

    // And it bundles and loads like any plugin.
    const host = await loadAppPlugins(app, { mode: 'offline', stateDir: tempDir() });
    expect(host.plugins.map((p) => p.file)).toEqual(['plugins/010_db.ts', 'plugins/020_web.ts']);
    expect(await host.overrides(app.graph.byName.get('web')!)).toBeUndefined();
  });

  it('binds to one release when asked, and refuses a chart that has a plugin, or no release', async () => {
    const root = writeApp();
    const app = await loadApp(root);
    const web = await scaffoldPlugin(app, 'web', { release: 'web' });
    expect(web.pluginFile).toBe('plugins/010_web.ts');
    expect(readFileSync(join(root, web.pluginFile), 'utf8')).toContain("override readonly release = 'web';");
    await expect(scaffoldPlugin(app, 'web')).rejects.toThrow('plugins/010_web.ts already serves chart web (release web)');
    await expect(scaffoldPlugin(app, 'nova')).rejects.toThrow('no chart "nova" (charts: db, web): no release uses it; add it to fluxcd/releases.yaml first');
    await expect(scaffoldPlugin(app, 'db', { release: 'web' })).rejects.toBeInstanceOf(PluginLoadError);
    expect((await scaffoldPlugin(app, 'db')).pluginFile).toBe('plugins/020_db.ts');
  });
});

describe('a stand-alone app after flotilla plugin new', () => {
  it('installs with plain npm install (flotilla as a file: dependency, no registry holding it) and its test passes with npm test', async () => {
    const root = writeApp(); // no package.json: the app's own folder, as a new user has it
    const cli = join(ROOT, 'dist', 'cli', 'flotilla.cjs');
    await run(process.execPath, [cli, 'plugin', 'new', root, 'web']);
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    expect(manifest.devDependencies.flotilla).toBe(`file:${ROOT}`);
    // From npm's cache when it holds the test tools (as after flotilla's own install), else from the registry.
    const npm = (args: string[]) =>
      run('npm', args, { cwd: root, env: cleanEnv(), maxBuffer: 1 << 24 }).catch((e: { stdout?: string; stderr?: string }) => ({
        stdout: `${e.stdout ?? ''}${e.stderr ?? ''}`,
        failed: true,
      }));
    const install = await npm(['install', '--prefer-offline', '--no-audit', '--no-fund']);
    expect(install, install.stdout).not.toHaveProperty('failed');
    const test = await npm(['test']);
    expect(test, test.stdout).not.toHaveProperty('failed');
    expect(test.stdout).toMatch(/Tests\s+.*2 passed/);
  }, 300_000);
});
