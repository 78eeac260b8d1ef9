import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTarGzSafely, writeTarGz } from '../../src/tarball/index.js';
import { loadApp } from '../../src/app/index.js';
import { buildApp } from '../../src/build/index.js';
import { Session } from '../../src/session/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { chartPlugin } from '../plugins/fixtures.js';

describe('the session', () => {
  it('assembles the App of a built tarball in memory, the same App as its source tree, with the same values', async () => {
    const root = writeApp({
      'plugins/010_web.ts': chartPlugin(
        'web',
        `  override async getOverrides(ctx: ChartContext): Promise<Values> { return { conf: { secret: await ctx.passwords.getOrGenerate('web-db') } }; }`,
      ),
    });
    const built = await buildApp(root, { outDir: tempDir(), cacheDir: false });
    const stateDir = tempDir('flotilla-state-');
    const fromTarball = await Session.fromBundle(built.file, { plugins: { stateDir } });
    const fromSource = await Session.fromDirectory(root, { plugins: { stateDir } });
    const { app } = fromTarball;
    expect(app.source.files.kind).toBe('tarball');
    expect(app.root).toBe(built.file);
    const source = await loadApp(root);
    expect(app.metadata).toEqual(source.metadata);
    expect(app.releases.map((r) => [r.name, r.chart, r.namespace, r.releaseName, r.dependsOn])).toEqual(
      source.releases.map((r) => [r.name, r.chart, r.namespace, r.releaseName, r.dependsOn]),
    );
    expect(app.enabled.map((r) => r.name)).toEqual(source.enabled.map((r) => r.name));
    expect(app.spec).toEqual(source.spec);
    expect([...app.images]).toEqual([...source.images]);

    const web = app.graph.byName.get('web')!;
    const shipped = await fromTarball.releaseValues(web);
    const local = await fromSource.releaseValues(source.graph.byName.get('web')!);
    expect(shipped.systemOverrides).toEqual(local.systemOverrides);
    expect(shipped.staticOverrides).toEqual(local.staticOverrides);
    // The chart's own values come from the chart archive the HelmRelease names.
    expect(shipped.layers[0]).toMatchObject({ kind: 'chart', file: `charts/web-0.1.0.tgz#web/values.yaml` });
    expect(shipped.merged && shipped.layers[0]?.root).toBeDefined();
    // The plugin ran as shipped in plugins/, and its password is redacted for printing.
    expect((shipped.systemOverrides as { conf: { secret: string } }).conf.secret).toMatch(/\S{8,}/);
    expect(fromTarball.redact(shipped.systemOverrides)).toMatchObject({ conf: { secret: '<secret>' } });
  });

  it('reports a tarball whose app/ is not a valid app the way the source tree would be, naming file and line', async () => {
    const built = await buildApp(writeApp(), { outDir: tempDir(), cacheDir: false });
    const files = await readTarGzSafely(built.file);
    files.set('app/overrides/deployment.yaml', Buffer.from('main:\n  release: "2.0"\n  size: huge\n'));
    const broken = join(tempDir(), 'demo-1.0-1.tgz');
    writeFileSync(broken, writeTarGz([...files].map(([path, data]) => ({ path, data }))));
    await expect(Session.fromBundle(broken)).rejects.toThrow(
      /overrides\/deployment\.yaml:3:\d+: error: size "huge" not found \(overrides\/sizes\/huge\.yaml\); available: small/,
    );
    await expect(Session.fromBundle(broken.replace(/\.tgz$/, '.zip'))).rejects.toThrow(/must end in \.tgz or \.tar\.gz/);
  });
});
