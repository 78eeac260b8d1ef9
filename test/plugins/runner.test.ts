import { describe, expect, it } from 'vitest';
import { OperationRefusedError, PluginAbortedError, PluginHookError, PluginTimeoutError } from '../../src/plugins/index.js';
import { baseApp } from '../support/app-fixture.js';
import { pluginFixture, releasesWithTwoWebs } from './fixtures.js';

/** A lifecycle plugin logging every hook it has; `extra` goes into the hooks table. */
const lifecycle = (extra = '') => `import { AppLifecycle, refuse, type LifecycleContext, type LifecycleHooks } from 'flotilla/plugin';
const say = (ctx: LifecycleContext) => ctx.log.info(\`\${ctx.operation}.\${ctx.timing}.\${ctx.kind}\`);
export default class Lifecycle extends AppLifecycle {
  override readonly hooks: LifecycleHooks = {
    apply: {
      pre: { check: say, resource: say, manifest: say, operation: say },
      post: { operation: say },
    },
    remove: { pre: { check: say }, post: { resource: say } },
    update: { pre: { check: say } },
    ${extra}
  };
}
void refuse;
`;

/** A chart plugin logging its hooks as `<hook> <release>`; `body` adds methods, replacing the logging ones of the same name. */
const loggingChart = (chart: string, body = '') => {
  const logging: Record<string, string> = {
    check: `  override check(operation: Operation, ctx: ChartContext): Verdict { ctx.log.info(\`check(\${operation}) \${ctx.release.name}\`); }`,
    preApply: `  override preApply(ctx: ChartContext): void { ctx.log.info(\`preApply \${ctx.release.name}\`); }`,
    postApply: `  override postApply(ctx: ChartContext): void { ctx.log.info(\`postApply \${ctx.release.name}\`); }`,
    preRemove: `  override preRemove(ctx: ChartContext): void { ctx.log.info(\`preRemove \${ctx.release.name}\`); }`,
    postRemove: `  override postRemove(ctx: ChartContext): void { ctx.log.info(\`postRemove \${ctx.release.name}\`); }`,
  };
  const kept = Object.entries(logging).filter(([name]) => !new RegExp(`override (async )?${name}\\(`).test(body));
  return `import { ChartPlugin, refuse, type ChartContext, type Operation, type Verdict } from 'flotilla/plugin';
export default class Logging extends ChartPlugin {
  readonly chart = '${chart}';
${kept.map(([, code]) => code).join('\n')}
${body}
}
void refuse;
`;
};

const lines = (log: readonly { plugin: string; message: string }[]) => log.map((e) => `${e.plugin}: ${e.message}`);

describe('hook order', () => {
  const files = {
    'fluxcd/releases.yaml': releasesWithTwoWebs,
    'plugins/005_lifecycle.ts': lifecycle(),
    'plugins/010_db.ts': loggingChart('db'),
    'plugins/020_web.ts': loggingChart('web'),
  };

  it('runs a stage kind by kind, checks first; plugins in file order; a chart plugin once per release in table order', async () => {
    const { host, log } = await pluginFixture(files);
    const records = await host.runStage({ operation: 'apply', timing: 'pre' });
    expect(lines(log)).toEqual([
      'lifecycle: apply.pre.check',
      'db: check(apply) db',
      'web: check(apply) web',
      'web: check(apply) web-admin',
      'lifecycle: apply.pre.resource',
      'lifecycle: apply.pre.manifest',
      'lifecycle: apply.pre.operation',
      'db: preApply db',
      'web: preApply web',
      'web: preApply web-admin',
    ]);
    expect(records.map((r) => `${r.plugin} ${r.hook}${r.release ? ` ${r.release}` : ''}`)).toEqual([
      'lifecycle apply.pre.check',
      'db check(apply) db',
      'web check(apply) web',
      'web check(apply) web-admin',
      'lifecycle apply.pre.resource',
      'lifecycle apply.pre.manifest',
      'lifecycle apply.pre.operation',
      'db preApply db',
      'web preApply web',
      'web preApply web-admin',
    ]);
    expect(records[0]?.file).toBe('plugins/005_lifecycle.ts');
  });

  it('runs post hooks after, and remove hooks in reverse plugin order', async () => {
    const { host, log } = await pluginFixture(files);
    await host.runStage({ operation: 'apply', timing: 'post' });
    await host.runStage({ operation: 'remove', timing: 'pre' });
    await host.runStage({ operation: 'remove', timing: 'post' });
    expect(lines(log)).toEqual([
      'lifecycle: apply.post.operation',
      'db: postApply db',
      'web: postApply web',
      'web: postApply web-admin',
      'web: check(remove) web',
      'web: check(remove) web-admin',
      'db: check(remove) db',
      'lifecycle: remove.pre.check',
      'web: preRemove web',
      'web: preRemove web-admin',
      'db: preRemove db',
      'lifecycle: remove.post.resource',
      'web: postRemove web',
      'web: postRemove web-admin',
      'db: postRemove db',
    ]);
  });

  it('runs one kind at a time with runHooks, and chart checks for every operation', async () => {
    const { host, log } = await pluginFixture(files);
    expect(host.plannedHooks({ operation: 'update', timing: 'pre', kind: 'check' })).toEqual([
      { plugin: 'lifecycle', file: 'plugins/005_lifecycle.ts', hook: 'update.pre.check' },
      { plugin: 'db', file: 'plugins/010_db.ts', hook: 'check(update)', release: 'db' },
      { plugin: 'web', file: 'plugins/020_web.ts', hook: 'check(update)', release: 'web' },
      { plugin: 'web', file: 'plugins/020_web.ts', hook: 'check(update)', release: 'web-admin' },
    ]);
    expect(log).toEqual([]);
    await host.runHooks({ operation: 'update', timing: 'pre', kind: 'check' });
    expect(lines(log)).toEqual(['lifecycle: update.pre.check', 'db: check(update) db', 'web: check(update) web', 'web: check(update) web-admin']);
    // Chart plugins have no work hooks for update, upload or recover; nothing defined, nothing runs.
    expect(await host.runHooks({ operation: 'upload', timing: 'post', kind: 'operation' })).toEqual([]);
  });

  it('runs the status hook of the release that became Ready, and none for a plugin without one', async () => {
    const { host, log } = await pluginFixture({
      ...files,
      'plugins/020_web.ts': loggingChart('web', `  override status(ctx: ChartContext): void { ctx.log.info(\`ready \${ctx.release.releaseName}\`); }`),
    });
    expect(await host.runStatus('web-admin')).toMatchObject([{ plugin: 'web', hook: 'status', release: 'web-admin' }]);
    expect(await host.runStatus('db')).toEqual([]);
    expect(lines(log)).toEqual(['web: ready demo-web-admin']);
  });

  it('runs only enabled releases', async () => {
    const { host, log } = await pluginFixture({
      ...files,
      'overrides/deployment.yaml': baseApp()['overrides/deployment.yaml']!.replace('services: [frontend]', 'services: [database]'),
      'overrides/presets/standard.yaml': 'features: {}\n',
    });
    await host.runHooks({ operation: 'apply', timing: 'pre', kind: 'operation' });
    expect(lines(log)).toEqual(['lifecycle: apply.pre.operation', 'db: preApply db']);
  });
});

describe('a check hook refuses', () => {
  it('stops the operation with the plugin name and its reason; nothing after the check runs', async () => {
    const { host, log } = await pluginFixture({
      'plugins/005_lifecycle.ts': lifecycle().replace(
        'pre: { check: say, resource: say',
        'pre: { check: (ctx) => { say(ctx); return refuse(\'features.storage names backend "nfs", which the spec does not define\'); }, resource: say',
      ),
      'plugins/010_db.ts': loggingChart('db'),
    });
    const error = await host.runStage({ operation: 'apply', timing: 'pre' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationRefusedError);
    const refused = error as OperationRefusedError;
    expect(refused.reason).toBe('features.storage names backend "nfs", which the spec does not define');
    expect(refused.operation).toBe('apply');
    expect(refused.message).toBe(
      'apply refused by plugin lifecycle (plugins/005_lifecycle.ts): features.storage names backend "nfs", which the spec does not define',
    );
    expect(lines(log)).toEqual(['lifecycle: apply.pre.check']);
  });

  it('a chart plugin check refuses for its release, before any work hook of any plugin', async () => {
    const { host, log } = await pluginFixture({
      'plugins/010_db.ts': loggingChart('db'),
      'plugins/020_web.ts': loggingChart(
        'web',
        `  override check(operation: Operation, ctx: ChartContext): Verdict {
    ctx.log.info(\`check(\${operation}) \${ctx.release.name}\`);
    if (operation === 'remove') return refuse('2 sessions are still open');
  }`,
      ),
    });
    await host.runStage({ operation: 'apply', timing: 'pre' });
    log.length = 0;
    await expect(host.runStage({ operation: 'remove', timing: 'pre' })).rejects.toThrow(
      'remove refused by plugin web (plugins/020_web.ts) for release web: 2 sessions are still open',
    );
    // Remove runs in reverse order: web's check is first, and refuses; db is never asked.
    expect(lines(log)).toEqual(['web: check(remove) web']);
  });
});

describe('a hook that fails', () => {
  const files = (dbBody: string, webBody = '') => ({
    'plugins/010_db.ts': loggingChart('db', dbBody),
    'plugins/020_web.ts': loggingChart('web', webBody),
  });

  it('fails the operation with the plugin name and message; nothing after it runs', async () => {
    const failing = await pluginFixture(files(`  override preApply(): void { throw new Error('database unreachable'); }`));
    const error = await failing.host.runStage({ operation: 'apply', timing: 'pre' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginHookError);
    expect((error as PluginHookError).message).toBe(
      'plugins/010_db.ts:8:37: plugin db (plugins/010_db.ts) preApply for release db failed: database unreachable',
    );
    expect((error as PluginHookError).site).toEqual({ plugin: 'db', file: 'plugins/010_db.ts', hook: 'preApply', release: 'db' });
    expect(((error as PluginHookError).cause as Error).message).toBe('database unreachable');
    expect(lines(failing.log)).toEqual(['db: check(apply) db', 'web: check(apply) web']);
  });

  it('treats a rejected promise, a thrown non-Error and a synchronous throw alike', async () => {
    for (const body of [
      `  override async preApply(): Promise<void> { await new Promise((r) => setTimeout(r, 5)); throw new Error('late failure'); }`,
      `  override preApply(): void { throw 'a string'; }`,
    ]) {
      const { host } = await pluginFixture(files(body));
      await expect(host.runHooks({ operation: 'apply', timing: 'pre', kind: 'operation' })).rejects.toBeInstanceOf(PluginHookError);
    }
  });

  it('a lifecycle check that throws fails rather than refuses', async () => {
    const { host } = await pluginFixture({
      'plugins/005_lifecycle.ts': lifecycle("upload: { pre: { check: () => { throw new Error('cannot read the spec'); } } },"),
    });
    const error = await host.runHooks({ operation: 'upload', timing: 'pre', kind: 'check' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginHookError);
    expect(error).not.toBeInstanceOf(OperationRefusedError);
    expect((error as Error).message).toBe(
      'plugins/005_lifecycle.ts:11:43: plugin lifecycle (plugins/005_lifecycle.ts) upload.pre.check failed: cannot read the spec',
    );
  });
});

describe('time limits', () => {
  const hanging = `  override preApply(ctx: ChartContext): Promise<void> {
    ctx.log.info('preApply started');
    return new Promise((resolve) => ctx.signal.addEventListener('abort', () => { ctx.log.info('aborted: ' + String((ctx.signal.reason as Error).name)); resolve(); }));
  }`;

  it('a hook past its limit fails the operation, its plugin process is stopped, and nothing after it runs', async () => {
    const { host, log } = await pluginFixture(
      { 'plugins/010_db.ts': loggingChart('db', hanging), 'plugins/020_web.ts': loggingChart('web') },
      { timeLimits: { preApply: 50 } },
    );
    // The hook never ends by itself: only its limit ends the wait.
    const error = await host.runHooks({ operation: 'apply', timing: 'pre', kind: 'operation' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginTimeoutError);
    expect((error as PluginTimeoutError).message).toBe('plugin db (plugins/010_db.ts) preApply for release db failed: no answer within its time limit of 50ms');
    expect((error as PluginTimeoutError).limitMs).toBe(50);
    // The process was stopped (the hook's own abort handler had no time to log); the next call gets a new one.
    // Whether the hook's first line reached the host before the stop depends on the machine's load: it may or may not be there.
    const before = lines(log);
    expect(['db: preApply started'].slice(0, before.length)).toEqual(before);
    expect(host.bundle.instances?.sandbox.starts).toBe(1);
    await host.runHooks({ operation: 'apply', timing: 'post', kind: 'operation' });
    expect(lines(log)).toEqual([...before, 'db: postApply db', 'web: postApply web']);
    expect(host.bundle.instances?.sandbox.starts).toBe(2);
  });

  it("a plugin's own time limit wins over the host's, by hook name", async () => {
    const { host } = await pluginFixture(
      { 'plugins/010_db.ts': loggingChart('db', `${hanging}\n  override readonly timeouts = { preApply: 30 };`) },
      { timeLimits: { operation: 60_000 } },
    );
    await expect(host.runHooks({ operation: 'apply', timing: 'pre', kind: 'operation' })).rejects.toThrow('time limit of 30ms');
  });

  it('a hook that never settles and ignores its signal still stops the operation', async () => {
    const { host } = await pluginFixture(
      { 'plugins/010_db.ts': loggingChart('db', `  override preApply(): Promise<void> { return new Promise(() => {}); }`) },
      { timeLimits: { preApply: 40 } },
    );
    await expect(host.runHooks({ operation: 'apply', timing: 'pre', kind: 'operation' })).rejects.toBeInstanceOf(PluginTimeoutError);
  });

  it('cancelling the operation stops the running hook', async () => {
    const controller = new AbortController();
    const { host, log } = await pluginFixture({ 'plugins/010_db.ts': loggingChart('db', hanging) }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('operator pressed ctrl-c')), 30);
    const error = await host.runHooks({ operation: 'apply', timing: 'pre', kind: 'operation' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginAbortedError);
    expect((error as Error).message).toContain('the operation was cancelled (operator pressed ctrl-c)');
    expect(lines(log)).toEqual(['db: preApply started']);
    // Once cancelled, nothing more starts.
    await expect(host.runHooks({ operation: 'apply', timing: 'post', kind: 'operation' })).rejects.toBeInstanceOf(PluginAbortedError);
  });
});
