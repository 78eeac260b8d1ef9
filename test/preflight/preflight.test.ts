import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadApp } from '../../src/app/index.js';
import { preflight } from '../../src/preflight/index.js';
import { pathsInHelmMessage } from '../../src/values/index.js';
import { tempDir, writeApp, writeFiles } from '../support/app-fixture.js';
import { Session } from '../../src/session/index.js';

const run = promisify(execFile);
const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');

describe('preflight through the real helm', () => {
  it('renders every enabled release with static then system values', async () => {
    const app = await loadApp(writeApp());
    const report = await preflight(Session.forApp(app));
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.release.name)).toEqual(['db', 'web']);
    const web = report.checks.find((c) => c.release.name === 'web');
    expect(web?.objects.map((o) => `${o.kind}/${o.name}`).sort()).toEqual(['ConfigMap/demo-web-conf', 'Deployment/demo-web']);
  });

  it("catches a broken override with Helm's own message and the layer that set the value", async () => {
    const dir = writeApp({
      'overrides/sizes/small.yaml': `services:\n  frontend:\n    web:\n      values:\n        pod:\n          replicas: two\n`,
    });
    const report = await preflight(await Session.fromDirectory(dir));
    expect(report.ok).toBe(false);
    const web = report.checks.find((c) => c.release.name === 'web');
    expect(web?.ok).toBe(false);
    expect(web?.error).toMatch(/values don't meet the specifications of the schema/);
    expect(web?.error).toMatch(/\/pod\/replicas/);
    expect(web?.culprits.map((l) => [l.path.join('.'), l.value, l.origin.layer, `${l.origin.location.file}:${l.origin.location.line}`])).toEqual([
      ['pod.replicas', 'two', 'services.frontend.web', 'overrides/sizes/small.yaml:6'],
    ]);
    // the other release still renders
    expect(report.checks.find((c) => c.release.name === 'db')?.ok).toBe(true);
  });

  it("reports a failing chart template with Helm's message", async () => {
    const broken = writeApp({ 'charts/web/templates/extra.yaml': `{{ .Values.pod.replicas.count | required "pod.replicas.count is required" }}\n` });
    const failing = (await preflight(await Session.fromDirectory(broken))).checks.find((c) => c.release.name === 'web');
    expect(failing?.ok).toBe(false);
    expect(failing?.error).toMatch(/web\/templates\/extra\.yaml:1:\d+\s+executing .* at <\.Values\.pod\.replicas\.count>/);
    // the value the template choked on, and the layer that set it
    expect(failing?.culprits.map((l) => `${l.path.join('.')}=${String(l.value)} ${l.origin.layer}`)).toEqual(['pod.replicas=2 common.groups.apps']);
    expect(failing?.unset).toEqual(['pod.replicas.count']); // no layer sets it: said so
    expect(failing?.error).not.toContain('--debug'); // helm's own flag, which flotilla does not have
  });

  it('reports a template or merge error of flotilla for that release only', async () => {
    const dir = writeApp({ 'overrides/templates/web.yaml.hbs': `conf:\n  x: {{features.nothing}}\n` });
    const report = await preflight(await Session.fromDirectory(dir));
    const web = report.checks.find((c) => c.release.name === 'web');
    expect(web?.error).toMatch(/overrides\/templates\/web\.yaml\.hbs:2:\d+: "features\.nothing" is not set \(templates are strict\)/);
    expect(report.checks.find((c) => c.release.name === 'db')?.ok).toBe(true);
  });

  it('renders charts from a directory outside the app, openstack-helm style (file://../helm-toolkit)', async () => {
    const root = tempDir();
    const osh = join(root, 'openstack-helm');
    writeFiles(osh, {
      'helm-toolkit/Chart.yaml': `apiVersion: v2\nname: helm-toolkit\nversion: 2025.1.0\ntype: library\n`,
      'helm-toolkit/templates/_labels.tpl': `{{- define "helm-toolkit.snippets.kubernetes_metadata_labels" -}}\napplication: {{ .Release.Name }}\n{{- end -}}\n`,
      'keystone/Chart.yaml': `apiVersion: v2\nname: keystone\nversion: 2025.1.3\ndependencies:\n  - name: helm-toolkit\n    repository: file://../helm-toolkit\n    version: ">= 0.1.0"\n`,
      'keystone/values.yaml': `images:\n  tags:\n    keystone_api: example/keystone:1\n`,
      'keystone/templates/configmap.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keystone-etc\n  labels:\n{{ include "helm-toolkit.snippets.kubernetes_metadata_labels" . | indent 4 }}\ndata:\n  image: {{ .Values.images.tags.keystone_api }}\n`,
    });
    const app = writeFiles(join(root, 'app'), {
      ...Object.fromEntries(
        Object.entries((await import('../support/app-fixture.js')).baseApp()).filter(
          ([k]) => !k.startsWith('charts/web') && !k.startsWith('overrides/templates') && !k.startsWith('overrides/static'),
        ),
      ),
      'fluxcd/releases.yaml': `releases:\n  - name: db\n    chart: db\n    service: database\n  - name: keystone\n    chart: keystone\n    path: ../openstack-helm/keystone\n    service: frontend\n    namespace: openstack\n    dependsOn: [db]\n`,
      'overrides/versions/images.yaml': `web:\n  keystone: images.tags.keystone_api\ndb:\n  db: images.tags.db\n`,
      'overrides/deployment.yaml': `main:\n  release: "2.0"\nfeatures:\n  services: [frontend]\n`,
    });
    const report = await preflight(await Session.fromDirectory(app));
    expect(report.checks.map((c) => [c.release.name, c.ok, c.error ?? ''])).toEqual([
      ['db', true, ''],
      ['keystone', true, ''],
    ]);
    expect(report.checks[1]?.objects).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', name: 'keystone-etc' }]);
  });

  it('finds value paths in Helm messages', () => {
    expect(pathsInHelmMessage('template: x/templates/a.yaml:3:9: executing "x" at <.Values.conf.db.host>: nil pointer')).toEqual([['conf', 'db', 'host']]);
    expect(pathsInHelmMessage("- at '/pod/replicas/0': got string, want integer")).toEqual([['pod', 'replicas', 0]]);
  });
});

describe('flotilla preflight (CLI)', () => {
  it('prints each release and exits 1 when one fails', async () => {
    const ok = await run(process.execPath, [cli, 'preflight', writeApp()]);
    expect(ok.stdout).toMatch(/ok\s+db\s+2 objects \(ConfigMap, Deployment\)/);
    expect(ok.stdout).toContain('all 2 releases render');
    const bad = writeApp({
      'overrides/deployment.yaml': `main:\n  release: "2.0"\n  preset: standard\n  domain: example.org\nfeatures:\n  services: [frontend]\ncommon:\n  groups:\n    apps:\n      values:\n        pod:\n          replicas: -1\n`,
    });
    const failed = await run(process.execPath, [cli, 'preflight', bad]).catch((e: { code: number; stdout: string }) => e);
    expect((failed as { code: number }).code).toBe(1);
    expect((failed as { stdout: string }).stdout).toMatch(/FAIL\s+web/);
    expect((failed as { stdout: string }).stdout).toMatch(/pod\.replicas = -1 {2}← common\.groups\.apps \(overrides\/deployment\.yaml:12:11\)/);
    expect((failed as { stdout: string }).stdout).toContain('1 of 2 releases failed to render');
  });
});
