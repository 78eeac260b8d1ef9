/**
 * The plugin process (src/plugins/sandbox.ts): plugin code runs outside
 * flotilla's process under Node's permission model, and whatever it tries
 * beyond computing fails with an error naming the plugin and what it tried.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app/index.js';
import { PluginBundleError, PluginHookError, PluginTimeoutError } from '../../src/plugins/index.js';
import { tempDir } from '../support/app-fixture.js';
import { chartPlugin, pluginFixture } from './fixtures.js';

const releaseOf = (app: App, name: string) => app.releases.find((r) => r.name === name)!;
/** The web plugin's getOverrides doing `body` (which may return), and the error its host gives. */
async function overridesError(body: string, imports = ''): Promise<Error> {
  const { host, app } = await pluginFixture({
    'plugins/010_web.ts': chartPlugin('web', `  override async getOverrides(ctx: ChartContext): Promise<Values> {\n${body}\n    return {};\n  }`, imports),
  });
  return host.overrides(releaseOf(app, 'web')).then(
    () => new Error('getOverrides succeeded'),
    (error: unknown) => error as Error,
  );
}
/** The message without the plugin's file:line:column in front. */
const said = (error: Error) => error.message.replace(/^plugins\/010_web\.ts:\d+:\d+: /, '');
const failed = 'plugin web (plugins/010_web.ts) getOverrides for release web failed:';

describe('the plugin process refuses what plugins may not do', () => {
  it('writing a file', async () => {
    const target = join(tempDir(), 'pwned');
    const error = await overridesError(`    writeFileSync(${JSON.stringify(target)}, 'x');`, "import { writeFileSync } from 'node:fs';");
    expect(error).toBeInstanceOf(PluginHookError);
    expect(error.message).toBe(`plugins/010_web.ts:6:5: ${failed} tried to write ${target}: plugins may not write files`);
    expect(existsSync(target)).toBe(false);
  });

  it('reading a file other than its bundle', async () => {
    const error = await overridesError(`    readFileSync('/etc/passwd');`, "import { readFileSync } from 'node:fs';");
    expect(said(error)).toBe(`${failed} tried to read /etc/passwd: plugins may read no file but their own bundle`);
  });

  it('starting a process or a worker thread', async () => {
    expect(said(await overridesError(`    execFileSync('true');`, "import { execFileSync } from 'node:child_process';"))).toBe(
      `${failed} tried to start a process: plugins may not start processes`,
    );
    expect(said(await overridesError(`    new Worker('0', { eval: true });`, "import { Worker } from 'node:worker_threads';"))).toBe(
      `${failed} tried to start a worker thread: plugins may not start threads`,
    );
  });

  describe('the network', () => {
    let connections = 0;
    const server = createServer((_, res) => res.end('reached'));
    server.on('connection', () => connections++);
    afterEach(() => new Promise<void>((done) => server.close(() => done())));

    it('by fetch, net, dns or a server of its own; no connection is made', async () => {
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      const { port } = server.address() as AddressInfo;
      const net = "import net from 'node:net';\nimport dns from 'node:dns';";
      expect(said(await overridesError(`    await fetch('http://127.0.0.1:${port}/');`))).toBe(
        `${failed} tried to open a network connection to 127.0.0.1:${port}: plugins have no network (the cluster is ctx.kube)`,
      );
      expect(said(await overridesError(`    net.connect(${port}, '127.0.0.1');`, net))).toBe(
        `${failed} tried to open a network connection to 127.0.0.1:${port}: plugins have no network (the cluster is ctx.kube)`,
      );
      expect((await overridesError(`    await dns.promises.lookup('example.org');`, net)).message).toMatch(
        /tried to open a network connection to example\.org: plugins have no network/,
      );
      expect((await overridesError(`    net.createServer().listen(0);`, net)).message).toMatch(
        /tried to open a network connection to localhost:0: plugins have no network/,
      );
      expect(connections).toBe(0);
    });
  });

  it("sees none of the user's environment", async () => {
    process.env.FLOTILLA_TEST_TOKEN = 'secret-token';
    try {
      const error = await overridesError(`    throw new Error(Object.keys(process.env).join(',') || 'nothing');`);
      expect(error.message).toMatch(/failed: (nothing|(LANG|LC_ALL|TZ)(,(LANG|LC_ALL|TZ))*)$/);
    } finally {
      delete process.env.FLOTILLA_TEST_TOKEN;
    }
  });

  it('a bundle whose top level writes fails to load, naming the plugin file and what it tried', async () => {
    const target = join(tempDir(), 'pwned');
    const error = await pluginFixture({
      'plugins/010_web.ts': chartPlugin('web', '', `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(target)}, 'x');`),
    }).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(PluginBundleError);
    expect((error as Error).message).toBe(`plugins/: loading the plugins failed (plugins/010_web.ts:3): tried to write ${target}: plugins may not write files`);
    expect(existsSync(target)).toBe(false);
  });
});

describe('limits', () => {
  it('a hook in an endless loop is stopped at its time limit; the next call runs in a new process', async () => {
    const { host, app } = await pluginFixture(
      {
        'plugins/010_web.ts': chartPlugin(
          'web',
          '  override getOverrides(ctx: ChartContext): Values { if (ctx.spec.main.release !== "none") for (;;) {} return {}; }',
        ),
        'plugins/005_db.ts': chartPlugin('db', '  override getOverrides(): Values { return { up: true }; }'),
      },
      { timeLimits: { getOverrides: 300 } },
    );
    const sandbox = host.bundle.instances!.sandbox;
    expect(sandbox.starts).toBe(1);
    const error = await host.overrides(releaseOf(app, 'web')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginTimeoutError);
    // The looping process cannot answer: without being stopped, this call would wait on it until its own limit.
    expect(await host.overrides(releaseOf(app, 'db'))).toBeDefined();
    expect(sandbox.starts).toBe(2);
  });

  it('a plugin using more memory than FLOTILLA_PLUGIN_MEMORY fails, saying so', async () => {
    process.env.FLOTILLA_PLUGIN_MEMORY = '48';
    try {
      const error = await overridesError('    const kept: string[][] = [];\n    for (;;) kept.push(new Array(100_000).fill("x".repeat(8)));');
      expect(said(error)).toBe(`${failed} the plugin process ran out of memory (its limit is 48 MiB; FLOTILLA_PLUGIN_MEMORY raises it)`);
    } finally {
      delete process.env.FLOTILLA_PLUGIN_MEMORY;
    }
  });
});
