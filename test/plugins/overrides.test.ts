import { describe, expect, it } from 'vitest';
import { PluginHookError, PluginTimeoutError } from '../../src/plugins/index.js';
import { preflight } from '../../src/preflight/index.js';
import { computeReleaseValues, explain } from '../../src/values/index.js';
import { baseApp } from '../support/app-fixture.js';
import { chartPlugin, pluginFixture } from './fixtures.js';
import { Session } from '../../src/session/index.js';
import { toPlain } from '../../src/yaml/index.js';

const webPlugin = chartPlugin(
  'web',
  `  // Layer 5: above the template (conf.mode) and below the service values (conf.banner).
  override async getOverrides(ctx: ChartContext): Promise<Values> {
    return {
      conf: { mode: ctx.version.serviceDefaults.modern ? 'plugin-modern' : 'plugin-classic', banner: 'from-plugin', url: this.endpoints(ctx, { name: 'web', service: 'web-api', port: 8080 }).public.host },
      pod: { replicas: 3 },
      db: { password: await this.password(ctx, 'web-db') },
    };
  }`,
);

const origins = (values: Awaited<ReturnType<typeof computeReleaseValues>>) =>
  Object.fromEntries(explain(values).map((l) => [l.path.join('.'), `${l.origin.layer} ${l.origin.location.file}:${l.origin.location.line}`]));

describe('the plugin layer (values layer 5)', () => {
  it("sees the resolved images: the target release's with custom images on top", async () => {
    const imagePlugin = chartPlugin(
      'web',
      `  override getOverrides(ctx: ChartContext): Values {\n    return { seen: { web: ctx.version.images.web, db: ctx.version.images.db } };\n  }`,
    );
    const deployment = baseApp()['overrides/deployment.yaml']!.replace(
      '  domain: example.org\n',
      '  domain: example.org\n  customImages:\n    web: registry.example.org/web:hotfix-2\n',
    );
    const { app, host } = await pluginFixture({ 'plugins/010_web.ts': imagePlugin, 'overrides/deployment.yaml': deployment });
    const values = await computeReleaseValues(app, app.graph.byName.get('web')!, { plugin: host.overridesProvider() });
    expect(values.systemOverrides).toMatchObject({ seen: { web: 'registry.example.org/web:hotfix-2', db: 'docker.io/library/mariadb:11.4' } });
  });

  it('attributes plugin values to the plugin, at its file and the line of getOverrides', async () => {
    const { app, host } = await pluginFixture({ 'plugins/010_web.ts': webPlugin });
    const values = await computeReleaseValues(app, app.graph.byName.get('web')!, { plugin: host.overridesProvider() });
    const by = origins(values);
    expect(by['conf.mode']).toBe('plugin web plugins/010_web.ts:6');
    expect(by['conf.url']).toBe('plugin web plugins/010_web.ts:6');
    expect(by['db.password']).toBe('plugin web plugins/010_web.ts:6');
    // The group layer (common.groups.apps sets pod.replicas: 2) and the service layer are above the plugin.
    expect(by['pod.replicas']).toMatch(/^common\.groups\.apps overrides\/deployment\.yaml:\d+$/);
    expect(by['conf.banner']).toMatch(/^services\.frontend\.web overrides\/deployment\.yaml:\d+$/);
    expect(values.systemOverrides).toMatchObject({ conf: { mode: 'plugin-modern', banner: 'from-service', url: 'web.example.org' } });
  });

  it('is part of the system overrides, and its secrets are redacted for printing', async () => {
    const { app, host } = await pluginFixture({ 'plugins/010_web.ts': webPlugin });
    const values = await computeReleaseValues(app, app.graph.byName.get('web')!, { plugin: host.overridesProvider() });
    const password = (values.systemOverrides as { db: { password: string } }).db.password;
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(host.redact(values.systemOverrides)).toMatchObject({ db: { password: '<secret>' } });
    expect(host.redact({ url: `mysql://web:${password}@db/web` })).toEqual({ url: 'mysql://web:<secret>@db/web' });
  });

  it('follows the target release: serviceDefaults of 1.0 and 2.0 give different values', async () => {
    const modern = await pluginFixture({ 'plugins/010_web.ts': webPlugin });
    const classic = await pluginFixture({
      'plugins/010_web.ts': webPlugin,
      'overrides/deployment.yaml': baseApp()['overrides/deployment.yaml']!.replace('release: "2.0"', 'release: "1.0"'),
    });
    const mode = async (f: typeof modern) =>
      (
        (await computeReleaseValues(f.app, f.app.graph.byName.get('web')!, { plugin: f.host.overridesProvider() })).systemOverrides as {
          conf: { mode: string };
        }
      ).conf.mode;
    expect(await mode(modern)).toBe('plugin-modern');
    expect(await mode(classic)).toBe('plugin-classic');
  });

  it('gives nothing for a chart without a plugin, and no layer for a plugin returning {}', async () => {
    const { app, host } = await pluginFixture({ 'plugins/010_web.ts': chartPlugin('web') });
    expect(await host.overrides(app.graph.byName.get('db')!)).toBeUndefined();
    expect(await host.overrides(app.graph.byName.get('web')!)).toBeUndefined();
  });

  it('refuses values Helm cannot take, naming the plugin and the path', async () => {
    const { app, host } = await pluginFixture({
      'plugins/010_web.ts': chartPlugin('web', `  override getOverrides(): Values { return { conf: { when: new Date(0) as unknown as string } }; }`),
    });
    await expect(host.overrides(app.graph.byName.get('web')!)).rejects.toThrow(
      'plugin web (plugins/010_web.ts) getOverrides for release web failed: returned a Date object at conf.when; Helm values are maps, lists, strings, numbers, booleans and null',
    );
  });

  it('refuses values that contain themselves or nest past what YAML may hold, naming the path; takes a value shared by two keys', async () => {
    const cases: [string, string][] = [
      [
        'const conf: Record<string, unknown> = { a: 1 }; conf.self = { back: conf }; return { conf } as Values;',
        'returned a map or list that contains itself at conf.self.back; Helm values are a tree',
      ],
      [
        'const list: unknown[] = [1]; list.push(list); return { list } as unknown as Values;',
        'returned a map or list that contains itself at list.1; Helm values are a tree',
      ],
      ['return { list: [1, undefined, 2] } as unknown as Values;', 'returned undefined in a list at list[1]'],
      ['return { list: [1, , 2] } as unknown as Values;', 'returned undefined in a list at list[1]'],
      [
        'let deep: Record<string, unknown> = {}; const top = deep; for (let i = 0; i < 300; i++) { deep.d = {}; deep = deep.d as Record<string, unknown>; } return top as Values;',
        'returned values nested more than 256 levels deep at ' + Array(256).fill('d').join('.'),
      ],
    ];
    for (const [body, message] of cases) {
      const { app, host } = await pluginFixture({ 'plugins/010_web.ts': chartPlugin('web', `  override getOverrides(): Values { ${body} }`) });
      await expect(host.overrides(app.graph.byName.get('web')!)).rejects.toThrow(
        `plugin web (plugins/010_web.ts) getOverrides for release web failed: ${message}`,
      );
    }
    const shared = await pluginFixture({
      'plugins/010_web.ts': chartPlugin('web', `  override getOverrides(): Values { const tls = { enabled: true }; return { a: { tls }, b: { tls } }; }`),
    });
    expect(toPlain((await shared.host.overrides(shared.app.graph.byName.get('web')!))!)).toEqual({
      a: { tls: { enabled: true } },
      b: { tls: { enabled: true } },
    });
  });

  it('fails computeReleaseValues when getOverrides throws or runs past its limit', async () => {
    const throwing = await pluginFixture({ 'plugins/010_web.ts': chartPlugin('web', `  override getOverrides(): Values { throw new Error('no keystone'); }`) });
    await expect(
      computeReleaseValues(throwing.app, throwing.app.graph.byName.get('web')!, { plugin: throwing.host.overridesProvider() }),
    ).rejects.toBeInstanceOf(PluginHookError);
    const slow = await pluginFixture(
      { 'plugins/010_web.ts': chartPlugin('web', `  override getOverrides(): Promise<Values> { return new Promise(() => {}); }`) },
      { timeLimits: { getOverrides: 30 } },
    );
    await expect(slow.host.overrides(slow.app.graph.byName.get('web')!)).rejects.toBeInstanceOf(PluginTimeoutError);
  });

  it('gives plugins a frozen spec: a plugin cannot change what later plugins see', async () => {
    const { app, host } = await pluginFixture({
      'plugins/010_web.ts': chartPlugin(
        'web',
        `  override getOverrides(ctx: ChartContext): Values { (ctx.spec.features as Record<string, unknown>).services = []; return {}; }`,
      ),
    });
    await expect(host.overrides(app.graph.byName.get('web')!)).rejects.toThrow(/read.only|not extensible|Cannot assign/);
    expect(app.spec.features.services).toEqual(['frontend']);
  });
});

describe('preflight runs the plugins offline', () => {
  it('renders with the plugin layer', async () => {
    const { app } = await pluginFixture({
      'plugins/010_web.ts': chartPlugin('web', `  override getOverrides(): Values { return { pod: { replicas: 'many' } }; }`),
      // The spec would otherwise set replicas above the plugin.
      'overrides/deployment.yaml': baseApp()['overrides/deployment.yaml']!.replace('replicas: 2', 'other: 2'),
    });
    const report = await preflight(Session.forApp(app));
    const web = report.checks.find((c) => c.release.name === 'web')!;
    expect(web.ok).toBe(false);
    expect(web.culprits.map((l) => `${l.path.join('.')} ${l.origin.layer} ${l.origin.location.file}`)).toContain('pod.replicas plugin web plugins/010_web.ts');
  });
});
