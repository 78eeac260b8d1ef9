import { describe, expect, it } from 'vitest';
import { kustomizationResources, planApply, UnknownApplyModeError } from '../../src/lifecycle/index.js';
import { pluginFixture, releasesDbWeb } from '../plugins/fixtures.js';

/** Restore applies only the database; `lean` (a full mode) leaves web out. */
const operator = `import { KustomizeOperator, type PluginContext, type ReleaseRef } from 'flotilla/plugin';
export default class Operator extends KustomizeOperator {
  override readonly modes = ['restore', 'lean', 'broken'];
  override isEnabled(release: ReleaseRef, mode: string, ctx: PluginContext): boolean {
    ctx.log.debug(\`\${mode} \${release.name}\`);
    if (mode === 'restore') return release.chart === 'db';
    if (mode === 'lean') return release.name !== 'web';
    if (mode === 'broken') return release.name !== 'db';
    return true;
  }
  override isPartial(mode: string): boolean {
    return mode === 'restore';
  }
}
`;

describe('apply plans', () => {
  it('applies every enabled release in the normal mode, and queues deployed releases no longer wanted for removal', async () => {
    const { host } = await pluginFixture({ 'fluxcd/releases.yaml': releasesDbWeb });
    const plan = await planApply(host, { deployed: ['db', 'web', 'old-dashboard'] });
    expect(plan.mode).toBe('normal');
    expect(plan.releases.map((r) => r.name)).toEqual(['db', 'web']);
    expect(plan.removed).toEqual(['old-dashboard']);
    await expect(planApply(host, { mode: 'restore' })).rejects.toBeInstanceOf(UnknownApplyModeError);
  });

  it('lets the kustomize operator choose per mode, always starting from the original set', async () => {
    const { host } = await pluginFixture({ 'fluxcd/releases.yaml': releasesDbWeb, 'plugins/001_kustomize.ts': operator });
    const restore = await planApply(host, { mode: 'restore', deployed: ['db', 'web'] });
    expect(restore.releases.map((r) => r.name)).toEqual(['db']);
    expect(restore.skipped.map((r) => r.name)).toEqual(['web']);
    // A partial mode leaves the rest as deployed: nothing to remove.
    expect(restore).toMatchObject({ partial: true, removed: [] });
    const normal = await planApply(host, { deployed: ['db', 'web'] });
    expect(normal.releases.map((r) => r.name)).toEqual(['db', 'web']);
    const lean = await planApply(host, { mode: 'lean', deployed: ['db', 'web'] });
    expect(lean).toMatchObject({ partial: false, removed: ['web'] });
    await expect(planApply(host, { mode: 'broken' })).rejects.toThrow(
      'apply mode "broken": release web depends on db, which the kustomize operator (plugins/001_kustomize.ts) leaves out',
    );
    await expect(planApply(host, { mode: 'upgrade' })).rejects.toThrow('unknown apply mode "upgrade"; this app knows: normal, restore, lean, broken');
  });

  it('edits the kustomization resources from the original list each time', () => {
    const original = Object.freeze(['base', './db', 'web/', 'extra-configmaps']);
    const names = ['db', 'web'];
    const ref = (name: string) => ({ name, chart: name, namespace: 'demo', releaseName: name, dependsOn: [] });
    expect(kustomizationResources(original, names, { releases: [ref('db')] })).toEqual(['base', './db', 'extra-configmaps']);
    expect(kustomizationResources(original, names, { releases: [ref('db'), ref('web')] })).toEqual(['base', './db', 'web/', 'extra-configmaps']);
    expect(original).toEqual(['base', './db', 'web/', 'extra-configmaps']);
  });
});
