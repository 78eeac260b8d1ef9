import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appPolicyLayers,
  enclosingPolicySet,
  lintApp,
  loadAppPolicies,
  loadPolicySet,
  PolicyLookupError,
  PolicySetError,
} from '../../src/policies/index.js';
import { loadApp, type App } from '../../src/app/index.js';
import { writeTree } from './helpers.js';

const releaseOf = (app: App, name: string) => app.graph.byName.get(name)!;

const SET_YAML = `description: Test set.
roles:
  admin: Everything.
  member: Project work.
knownRoles:
  reader: Keystone's reader.
impliedRoles:
  admin: [member]
  member: [reader]
`;

/** A small app: a compute chart, a dashboard chart keeping one policy per service, a static override and a set. */
function demoApp(overrides: Record<string, string> = {}): string {
  return writeTree({
    'charts/compute/Chart.yaml': 'apiVersion: v2\nname: compute\nversion: 0.1.0\n',
    'charts/compute/values.yaml': [
      'conf:',
      '  policy:',
      '    admin_required: "role:admin"',
      '    "compute:servers:create": "role:member and project_id:%(project_id)s"',
      '    "compute:servers:delete": "rule:admin_required"',
      '    "compute:servers:show": "role:reader and project_id:%(project_id)s"',
      '',
    ].join('\n'),
    'charts/dash/Chart.yaml': 'apiVersion: v2\nname: dash\nversion: 0.1.0\n',
    'charts/dash/values.yaml': 'conf:\n  policy: {}\n',
    'fluxcd/metadata.yaml': 'app_name: demo\napp_version: "1"\nsupported_k8s_version: {minimum: v1.29}\n',
    'fluxcd/releases.yaml': 'releases:\n  - {name: compute, chart: compute, service: compute}\n  - {name: dash, chart: dash, service: dashboard}\n',
    'overrides/versions/2025.1.yaml': 'release: "2025.1"\nimages: {}\n',
    'overrides/deployment.yaml': 'main:\n  release: "2025.1"\nfeatures:\n  services: [compute, dashboard]\n  policies: demo\n',
    'overrides/static/compute.yaml': 'conf:\n  policy:\n    "compute:servers:delete": "role:admin or role:member"\n',
    'policies/demo/set.yaml': SET_YAML,
    'policies/demo/compute.yaml': [
      'conf:',
      '  policy:',
      '    "compute:servers:delete": "rule:admin_required or (role:member and user_id:%(user_id)s)"',
      '',
    ].join('\n'),
    'policies/demo/dash.yaml': [
      'conf:',
      '  policy:',
      '    compute:',
      '      "compute:servers:create": "role:member and project_id:%(project_id)s"',
      '      "compute:servers:delete": "role:admin or role:member"',
      '',
    ].join('\n'),
    ...overrides,
  });
}

describe('policy sets', () => {
  it('declare roles, known roles and implied roles, and list one file per chart', async () => {
    const root = demoApp();
    const set = await loadPolicySet(root, 'demo');
    expect(set.description).toBe('Test set.');
    expect([...set.roles.keys()]).toEqual(['admin', 'member']);
    expect(set.roles.get('member')).toMatchObject({ description: 'Project work.', location: { line: 4, column: 3 } });
    expect([...set.knownRoles.keys()]).toEqual(['reader']);
    expect([...set.impliedRoles]).toEqual([
      ['admin', ['member']],
      ['member', ['reader']],
    ]);
    expect([...set.files]).toEqual([
      ['compute', join(root, 'policies/demo/compute.yaml')],
      ['dash', join(root, 'policies/demo/dash.yaml')],
    ]);
  });

  it('accept roles as a list', async () => {
    const root = writeTree({ 'policies/x/set.yaml': 'roles: [admin, {name: member, description: Works.}]\n' });
    const set = await loadPolicySet(root, 'x');
    expect([...set.roles.values()].map((r) => [r.name, r.description])).toEqual([
      ['admin', undefined],
      ['member', 'Works.'],
    ]);
  });

  it('refuse an unknown set, naming the sets there are', async () => {
    const root = demoApp();
    await expect(loadPolicySet(root, 'dmeo')).rejects.toThrow(/no policy set "dmeo".*sets: demo; did you mean "demo"\?/);
    await expect(loadPolicySet(root, '../charts')).rejects.toThrow(PolicySetError);
  });

  it('refuse a set without set.yaml, or with a wrong one', async () => {
    const root = writeTree({
      'policies/bare/nova.yaml': 'conf: {policy: {}}\n',
      'policies/typo/set.yaml': 'rolse: [admin]\n',
      'policies/empty/set.yaml': 'roles: {}\n',
      'policies/implied/set.yaml': 'roles: {admin: x}\nimpliedRoles: {admin: [membr]}\n',
      'policies/twice/set.yaml': 'roles: {admin: x}\nknownRoles: {Admin: y}\n',
    });
    await expect(loadPolicySet(root, 'bare')).rejects.toThrow(/has no set.yaml/);
    await expect(loadPolicySet(root, 'typo')).rejects.toThrow(/set.yaml:1:1: .*unknown key "rolse" in set.yaml \(did you mean "roles"\?\)/);
    await expect(loadPolicySet(root, 'empty')).rejects.toThrow(/"roles" is empty/);
    await expect(loadPolicySet(root, 'implied')).rejects.toThrow(/set.yaml:2:24: .*names role "membr", which neither/);
    await expect(loadPolicySet(root, 'twice')).rejects.toThrow(/role "Admin" is declared twice/);
  });

  it('are found from one of their files', async () => {
    const root = demoApp();
    expect((await enclosingPolicySet(join(root, 'policies/demo/compute.yaml')))?.name).toBe('demo');
    expect(await enclosingPolicySet(join(root, 'overrides/static/compute.yaml'))).toBeUndefined();
  });
});

describe('app layers', () => {
  it('come from the chart, the static overrides and the set the deployment spec selects, in that order', async () => {
    const root = demoApp();
    const app = await loadApp(root);
    expect(app.policySet).toBe('demo');
    const layers = await appPolicyLayers(app, releaseOf(app, 'compute'));
    expect(layers.map((l) => [l.label, l.kind, l.file.slice(root.length + 1)])).toEqual([
      ['chart defaults', 'defaults', 'charts/compute/values.yaml'],
      ['static', 'override', 'overrides/static/compute.yaml'],
      ['policy set demo', 'override', 'policies/demo/compute.yaml'],
    ]);
  });

  it('follow the release table to a chart kept elsewhere', async () => {
    const root = demoApp({
      'fluxcd/releases.yaml': 'releases:\n  - name: compute\n    chart: compute\n    path: vendor/compute\n    service: compute\n',
      'vendor/compute/Chart.yaml': 'apiVersion: v2\nname: compute\nversion: 0.1.0\n',
      'vendor/compute/values.yaml': 'conf:\n  policy:\n    "compute:get": "role:admin"\n',
      'overrides/static/compute.yaml': '{}\n',
      'overrides/deployment.yaml': 'main:\n  release: "2025.1"\nfeatures:\n  services: [compute]\n',
    });
    const app = await loadApp(root);
    const layers = await appPolicyLayers(app, releaseOf(app, 'compute'));
    expect(layers.map((l) => l.file.slice(root.length + 1))).toEqual(['vendor/compute/values.yaml']);
  });

  it('leave the set out with set "none" (null)', async () => {
    const app = await loadApp(demoApp());
    const layers = await appPolicyLayers(app, releaseOf(app, 'compute'), { set: null });
    expect(layers.map((l) => l.label)).toEqual(['chart defaults', 'static']);
  });

  it('include every values layer that sets conf.policy: templates and the spec too, set from the merged spec', async () => {
    const root = demoApp({
      'overrides/presets/strict.yaml': 'features:\n  policies: demo\n',
      'overrides/templates/compute.yaml.hbs': 'conf:\n  policy:\n    "compute:servers:show": "role:{{features.viewer}}"\n',
      'overrides/deployment.yaml': [
        'main:',
        '  release: "2025.1"',
        '  preset: strict',
        'features:',
        '  services: [compute, dashboard]',
        '  viewer: reader',
        'services:',
        '  compute:',
        '    compute:',
        '      values:',
        '        conf:',
        '          policy:',
        '            "compute:servers:create": "role:admin"',
        '',
      ].join('\n'),
    });
    const app = await loadApp(root);
    const layers = await appPolicyLayers(app, releaseOf(app, 'compute'));
    expect(layers.map((l) => l.label)).toEqual(['chart defaults', 'static', 'template', 'policy set demo', 'services.compute.compute']);
    const service = layers.at(-1)!.rules.get('compute:servers:create');
    expect(service).toMatchObject({ text: 'role:admin', location: { file: 'overrides/deployment.yaml', line: 13 } });
    expect(layers[2]!.rules.get('compute:servers:show')).toMatchObject({ text: 'role:reader', location: { file: 'overrides/templates/compute.yaml.hbs', line: 3 } });
  });

  it('give the effective rule with the layer and file that set it', async () => {
    const policies = await loadAppPolicies(demoApp());
    const rule = policies.charts.get('compute')?.sections.get('')?.rules.get('compute:servers:delete');
    expect(rule?.layer.label).toBe('policy set demo');
    expect(rule?.source.location).toMatchObject({ line: 3, column: 32 });
    expect([...(policies.charts.get('dash')?.sections.keys() ?? [])]).toEqual(['compute']);
  });

  it('refuse a chart the app does not have', async () => {
    await expect(loadAppPolicies(demoApp(), { chart: 'compte' })).rejects.toThrow(PolicyLookupError);
    await expect(loadAppPolicies(demoApp(), { chart: 'compte' })).rejects.toThrow(/did you mean "compute"/);
  });
});

describe('app lint', () => {
  it('reports layers that disagree, and horizon-style copies that decide differently from the service', async () => {
    const { findings } = await lintApp(demoApp());
    expect(findings.filter((f) => f.severity !== 'info').map((f) => [f.code, f.scope, f.location?.file.split('/').slice(-2).join('/'), f.location?.line])).toEqual([
      ['redefined', 'compute', 'demo/compute.yaml', 3],
      ['horizon-drift', 'dash/compute', 'demo/dash.yaml', 5],
    ]);
    const drift = findings.find((f) => f.code === 'horizon-drift');
    expect(drift?.message).toMatch(/member: yes here, own in compute/);
  });

  it('checks the roles of every effective rule against the set, chart defaults included', async () => {
    const root = demoApp({
      'charts/compute/values.yaml': 'conf:\n  policy:\n    "compute:servers:show": "role:auditor"\n',
    });
    const { findings } = await lintApp(root, { chart: 'compute' });
    expect(findings.filter((f) => f.code === 'undeclared-role').map((f) => f.message)).toEqual([
      expect.stringMatching(/checks role "auditor", which policy set demo \(.*set.yaml\) does not declare/),
    ]);
  });

  it('warns about a set file for a chart the app does not have', async () => {
    const root = demoApp({ 'policies/demo/computer.yaml': 'conf:\n  policy:\n    "x:get": "role:admin"\n' });
    const { findings } = await lintApp(root);
    expect(findings.filter((f) => f.code === 'unknown-chart')).toEqual([
      expect.objectContaining({ severity: 'warning', message: expect.stringMatching(/chart "computer", which the app does not have \(did you mean "compute"\?\)/) }),
    ]);
  });

  it('lints without a set when asked', async () => {
    const { findings, policies } = await lintApp(demoApp(), { set: null });
    expect(policies.set).toBeUndefined();
    expect(findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });
});
