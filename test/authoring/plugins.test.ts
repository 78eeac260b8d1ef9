/**
 * Issue 13 item 4: plugins fail at their own line, are type-checked, and
 * `plugin new` works in a stand-alone app outside this repository.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { chartPlugin } from '../plugins/fixtures.js';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { failure, flotilla } from '../support/cli.js';

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, '../..');

describe('plugin errors at their own source line', () => {
  it('a plugin that throws is reported at plugins/<file>:line (source maps in the bundle); --debug shows its stack', async () => {
    const plugin = chartPlugin(
      'web',
      `  override getOverrides(ctx: ChartContext): Values {\n    if (ctx.release.name === 'web') throw new Error('no endpoint for web');\n    return {};\n  }`,
    );
    const app = writeApp({ 'plugins/010_web.ts': plugin });
    const e = await failure('build', app, '-d', tempDir());
    expect(e.code).toBe(1);
    expect(e.stderr).toContain(
      'plugins/010_web.ts:6:43: error: release "web": plugin web (plugins/010_web.ts) getOverrides for release web failed: no endpoint for web',
    );
    expect(e.stderr).not.toMatch(/\n\s+at /);
    const overrides = await failure('overrides', app, 'web');
    expect(overrides.stderr).toContain('flotilla: plugins/010_web.ts:6:43: plugin web');
    // --debug: the plugin's own stack, at its TypeScript lines
    const debug = await failure('overrides', app, 'web', '--debug');
    expect(debug.stderr).toMatch(/Caused by: Error: no endpoint for web\n\s+at .*plugins\/010_web\.ts:6:43/);
  });
});

describe('type-checking plugins', () => {
  const broken = chartPlugin(
    'web',
    `  override getOverrides(ctx: ChartContext): Values {\n    const replicas: number = ctx.release.name;\n    return { pod: { replicas } };\n  }`,
  );

  it('plugin check and build report TypeScript errors at file:line; --no-typecheck skips them', async () => {
    const app = writeApp({ 'plugins/010_web.ts': broken });
    const check = await failure('plugin', 'check', app);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain("plugins/010_web.ts:6:11: error: TS2322: Type 'string' is not assignable to type 'number'.");
    const json = JSON.parse((await failure('plugin', 'check', app, '-o', 'json')).stdout) as { problems: { file: string; line: number; code: string }[] };
    expect(json.problems).toEqual([expect.objectContaining({ file: 'plugins/010_web.ts', line: 6, code: 'TS2322' })]);
    const build = await failure('build', app, '-d', tempDir());
    expect(build.stderr).toContain('plugins/ does not type-check (1 error):');
    expect(build.stderr).toContain('plugins/010_web.ts:6:11: error: TS2322');
    await flotilla('build', app, '-d', tempDir(), '--no-typecheck');
    expect((await flotilla('plugin', 'check', writeApp({ 'plugins/010_web.ts': chartPlugin('web') }))).stdout).toBe('plugins/ type-checks\n');
  });
});

describe("type-checking the plugins' tests", () => {
  it('plugin check checks test/plugins/ too: a context field the API does not have is an error at the test line', async () => {
    const app = writeApp();
    await flotilla('plugin', 'new', app, 'web');
    expect((await flotilla('plugin', 'check', app)).stdout).toBe('plugins/ type-checks\n');
    const test = join(app, 'test/plugins/web.plugin.test.ts');
    const source = readFileSync(test, 'utf8');
    // `services` at the top of the context, where the deployment spec's `spec.services` was meant: a test that tests nothing.
    writeFileSync(test, source.replace("version: { release: '2025.1'", "services: { frontend: {} },\n      version: { release: '2025.1'"));
    const line =
      readFileSync(test, 'utf8')
        .split('\n')
        .findIndex((l) => l.includes('services: { frontend')) + 1;
    const check = await failure('plugin', 'check', app);
    expect(check.code).toBe(1);
    expect(check.stderr).toMatch(
      new RegExp(
        `test/plugins/web\\.plugin\\.test\\.ts:${line}:\\d+: error: TS2353: Object literal may only specify known properties, and 'services' does not exist`,
      ),
    );
  });
});

describe('plugin new in a stand-alone app', () => {
  it('writes the set-up its test needs, and the scaffolded test passes with npm test', async () => {
    const app = writeApp();
    const { stdout } = await flotilla('plugin', 'new', app, 'web');
    expect(stdout).toContain('created plugins/010_web.ts');
    expect(stdout).toContain('wrote package.json');
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(manifest.scripts.test).toBe('vitest run');
    expect(Object.keys(manifest.devDependencies).sort()).toEqual(['flotilla', 'typescript', 'vitest']);
    // `npm install` links what package.json names; here, offline, the same links by hand (flotilla from this checkout)
    mkdirSync(join(app, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(REPO, join(app, 'node_modules', 'flotilla'));
    for (const tool of ['vitest', 'typescript']) symlinkSync(join(REPO, 'node_modules', tool), join(app, 'node_modules', tool));
    symlinkSync(join('..', 'vitest', 'vitest.mjs'), join(app, 'node_modules', '.bin', 'vitest'));
    // the environment without this vitest's own variables, so the nested run is a fresh one
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_OPTIONS' && k !== 'TEST'));
    const test = await run('npm', ['test', '--silent'], { cwd: app, env });
    expect(`${test.stdout}${test.stderr}`).toMatch(/2 passed/);
    expect((await flotilla('plugin', 'check', app)).stdout).toBe('plugins/ type-checks\n');
  }, 60_000);
});
