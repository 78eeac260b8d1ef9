import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChartError, loadChart, stageChart } from '../../src/charts/index.js';
import { helm } from '../../src/tools/index.js';
import { tempDir, writeCheckout, writeTree } from './fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => cleanup());

async function listTree(root: string): Promise<string[]> {
  const out: string[] = [];
  const visit = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true })) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) await visit(full);
      else out.push(`${relative(root, full)} ${(await stat(full)).size}`);
    }
  };
  await visit(root);
  return out.sort();
}

describe('stageChart', () => {
  it('writes a renderable copy with file:// dependencies vendored as folders', async () => {
    const checkout = await writeCheckout(join(dir, 'checkout'), ['keystone']);
    const before = await listTree(checkout);
    const chart = await loadChart(join(checkout, 'keystone'));
    const staged = await stageChart(chart, join(dir, 'work', 'stage-1'));

    expect(staged).toBe(join(dir, 'work', 'stage-1', 'keystone'));
    expect((await listTree(staged)).map((l) => l.split(' ')[0])).toEqual([
      'Chart.yaml',
      'charts/helm-toolkit/.helmignore',
      'charts/helm-toolkit/Chart.yaml',
      'charts/helm-toolkit/templates/_endpoints.tpl',
      'charts/helm-toolkit/templates/_labels.tpl',
      'charts/helm-toolkit/values.yaml',
      'files/local-notes.txt',
      'templates/configmap.yaml',
      'values.yaml',
    ]);
    // the source checkout is untouched
    expect(await listTree(checkout)).toEqual(before);

    const { stdout } = await helm(['template', 'keystone', staged, '--namespace', 'openstack', '--set', 'replicas=3']);
    expect(stdout).toContain('name: keystone-etc');
    expect(stdout).toContain('host: "api.openstack.svc"');
    expect(stdout).toContain('app.kubernetes.io/managed-by: flotilla');
    expect(stdout).toContain('replicas: "3"');
    await helm(['lint', staged]);
  });

  it('stages several charts sharing one library without interference', async () => {
    const checkout = await writeCheckout(join(dir, 'checkout'), ['glance', 'cinder']);
    const work = join(dir, 'work');
    const [glance, cinder] = await Promise.all(['glance', 'cinder'].map(async (n, i) => stageChart(await loadChart(join(checkout, n)), join(work, String(i)))));
    for (const [name, staged] of [['glance', glance!], ['cinder', cinder!]] as const) {
      const { stdout } = await helm(['template', name, staged]);
      expect(stdout).toContain(`name: ${name}-etc`);
    }
  });

  it('keeps vendored dependency files that the parent .helmignore would drop (no second filtering)', async () => {
    await writeCheckout(join(dir, 'checkout'), []);
    await writeTree(join(dir, 'checkout', 'app'), {
      'Chart.yaml': 'apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n  - {name: helm-toolkit, repository: "file://../helm-toolkit"}\n',
      // would also match charts/helm-toolkit/templates/_labels.tpl if Helm re-applied it
      '.helmignore': '_labels.tpl\n',
      'templates/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n{{ include "helm-toolkit.labels" . | indent 4 }}\n',
    });
    const staged = await stageChart(await loadChart(join(dir, 'checkout', 'app')), join(dir, 'out'));
    await expect(stat(join(staged, '.helmignore'))).rejects.toThrow();
    const { stdout } = await helm(['template', 'app', staged]);
    expect(stdout).toContain('managed-by: flotilla');
  });

  it('renders a chart with a vendored .tgz dependency', async () => {
    await writeCheckout(join(dir, 'checkout'), []);
    await helm(['package', join(dir, 'checkout', 'helm-toolkit'), '-d', join(dir, 'checkout', 'app', 'charts')]);
    await writeTree(join(dir, 'checkout', 'app'), {
      'Chart.yaml': 'apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n  - {name: helm-toolkit, repository: "https://example.invalid", version: 0.2.5}\n',
      'templates/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include "helm-toolkit.endpoints.host" (dict "name" "a" "namespace" "b") }}\n',
    });
    const staged = await stageChart(await loadChart(join(dir, 'checkout', 'app')), join(dir, 'out'));
    expect(await readFile(join(staged, 'charts', 'helm-toolkit', 'Chart.yaml'), 'utf8')).toContain('name: helm-toolkit');
    const { stdout } = await helm(['template', 'app', staged]);
    expect(stdout).toContain('name: a.b.svc');
  });

  it('never writes into the source and never into a non-empty folder', async () => {
    const checkout = await writeCheckout(join(dir, 'checkout'), ['keystone']);
    const chart = await loadChart(join(checkout, 'keystone'));
    await expect(stageChart(chart, join(checkout, 'keystone', 'build'))).rejects.toThrow(/overlaps the source folder/);
    await expect(stageChart(chart, join(checkout, 'helm-toolkit'))).rejects.toThrow(ChartError);
    await expect(stageChart(chart, checkout)).rejects.toThrow(/overlaps the source folder/);
    await writeTree(join(dir, 'busy', 'keystone'), { 'old.txt': 'x' });
    await expect(stageChart(chart, join(dir, 'busy'))).rejects.toThrow(/is not empty/);
  });
});
