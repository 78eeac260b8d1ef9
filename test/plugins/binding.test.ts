import { describe, expect, it } from 'vitest';
import { DuplicatePluginError, nextFreeOrder, PluginLoadError } from '../../src/plugins/index.js';
import { chartPlugin, pluginFixture, releasesWithTwoWebs } from './fixtures.js';

const forRelease = (chart: string, release: string) =>
  chartPlugin(chart).replace(`readonly chart = '${chart}';`, `readonly chart = '${chart}';\n  override readonly release = '${release}';`);

describe('binding plugins to releases', () => {
  it('lets charts go without a plugin', async () => {
    const { host } = await pluginFixture({ 'plugins/010_web.ts': chartPlugin('web') });
    expect(host.pluginFor('web')?.file).toBe('plugins/010_web.ts');
    expect(host.pluginFor('db')).toBeUndefined();
  });

  it('serves every release of the chart, or the one release named', async () => {
    const all = await pluginFixture({ 'fluxcd/releases.yaml': releasesWithTwoWebs, 'plugins/010_web.ts': chartPlugin('web') });
    expect([all.host.pluginFor('web')?.name, all.host.pluginFor('web-admin')?.name]).toEqual(['web', 'web']);
    const split = await pluginFixture({
      'fluxcd/releases.yaml': releasesWithTwoWebs,
      'plugins/010_web.ts': forRelease('web', 'web'),
      'plugins/020_admin.ts': forRelease('web', 'web-admin'),
    });
    expect([split.host.pluginFor('web')?.name, split.host.pluginFor('web-admin')?.name]).toEqual(['web', 'admin']);
  });

  it('refuses two plugins for one chart', async () => {
    const error = await pluginFixture({ 'plugins/010_web.ts': chartPlugin('web'), 'plugins/020_frontend.ts': chartPlugin('web') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicatePluginError);
    expect((error as Error).message).toBe(
      'plugin web (plugins/010_web.ts) and plugin frontend (plugins/020_frontend.ts) both serve chart web; one chart release has at most one plugin',
    );
    // A chart-wide plugin and a release plugin overlap on that release.
    await expect(
      pluginFixture({
        'fluxcd/releases.yaml': releasesWithTwoWebs,
        'plugins/010_web.ts': chartPlugin('web'),
        'plugins/020_admin.ts': forRelease('web', 'web-admin'),
      }),
    ).rejects.toThrow('both serve chart web (release web-admin)');
  });

  it('refuses a plugin for a chart or release the app does not have', async () => {
    await expect(pluginFixture({ 'plugins/010_wbe.ts': chartPlugin('wbe') })).rejects.toThrow(
      'plugin wbe (plugins/010_wbe.ts:4): chart: no chart "wbe"; did you mean "web"? (charts: db, web) — no release uses it',
    );
    await expect(pluginFixture({ 'plugins/010_web.ts': forRelease('web', 'db') })).rejects.toThrow('release "db" uses chart db, not web');
    await expect(pluginFixture({ 'plugins/010_web.ts': forRelease('web', 'nope') })).rejects.toBeInstanceOf(PluginLoadError);
  });

  it('allows at most one kustomize operator', async () => {
    const operator = `import { KustomizeOperator } from 'flotilla/plugin';\nexport default class Operator extends KustomizeOperator {}\n`;
    await expect(pluginFixture({ 'plugins/001_a.ts': operator, 'plugins/002_b.ts': operator })).rejects.toThrow(
      'are both kustomize operators; an app has at most one',
    );
  });

  it('picks the next free order for a new plugin', () => {
    expect(nextFreeOrder([])).toBe(10);
    expect(nextFreeOrder([10, 20, 25])).toBe(30);
    expect(nextFreeOrder([5])).toBe(10);
    expect(nextFreeOrder([990, 1, 2])).toBe(3);
  });
});
