/**
 * Policies where real charts keep them: openstack-helm's dashboard chart keeps
 * per-service rule copies under conf.horizon.policy.<service>, and StarlingX
 * publishes override files in that shape. policy lint|check|matrix read such
 * files as they are (--section picks a service), an app's horizon chart is
 * found by convention, and a policy set can declare another place.
 */
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_DENY, runCheck, runLint, runMatrix } from '../../src/cli/commands/policy.js';
import { lintApp, loadAppPolicies } from '../../src/policies/index.js';
import { capture, writeAppTree, writeTree } from './helpers.js';


/** A dashboard override file shaped as StarlingX publishes them (conf.horizon.policy.<service>). */
const DASHBOARD = [
  '# Horizon policy overrides: the dashboard keeps a copy of each service\'s rules.',
  'conf:',
  '  horizon:',
  '    local_settings:',
  '      config:',
  '        openstack_keystone_multidomain_support: "True"',
  '    policy:',
  '      nova:',
  '        context_is_admin: "role:admin"',
  '        project_member: "role:member and project_id:%(project_id)s"',
  '        "os_compute_api:servers:create": "rule:project_member"',
  '        "os_compute_api:servers:delete": "rule:context_is_admin or rule:project_membr"',
  '      keystone:',
  '        admin_required: "role:admin or is_admin:1"',
  '        "identity:list_projects": "rule:admin_required"',
  '        "identity:create_project": "rule:admin_required"',
  '',
].join('\n');

describe('policy files in the dashboard shape (conf.horizon.policy.<service>)', () => {
  it('lint reads every service section, at file:line', async () => {
    const root = writeTree({ 'horizon-policy-overrides.yaml': DASHBOARD });
    const file = join(root, 'horizon-policy-overrides.yaml');
    const io = capture();
    expect(await runLint([file], {}, io)).toBe(1);
    expect(io.stdout).toEqual([
      `${relative(process.cwd(), file)}:12:68: error: nova: rule "os_compute_api:servers:delete" refers to rule:project_membr, which no layer defines; oslo.policy treats it as false (did you mean "project_member"?) [undefined-rule]`,
    ]);
  });

  it('check answers for the section --section names, with the trace', async () => {
    const root = writeTree({ 'dashboard.yaml': DASHBOARD });
    const file = join(root, 'dashboard.yaml');
    const allowed = capture();
    expect(await runCheck([file], { section: 'nova', action: 'os_compute_api:servers:create', roles: 'member', creds: ['project_id=p1'], target: ['project_id=p1'] }, allowed)).toBe(0);
    expect(allowed.stdout[0]).toBe('ALLOW  nova  os_compute_api:servers:create  roles: member');
    const denied = capture();
    expect(await runCheck([file], { section: 'keystone', action: 'identity:create_project', roles: 'member' }, denied)).toBe(EXIT_DENY);
    await expect(runCheck([file], { action: 'identity:create_project', roles: 'admin' }, capture())).rejects.toThrow(/keeps one policy per service; choose one with --section \(nova, keystone\)/);
  });

  it('matrix tabulates one section, or each', async () => {
    const root = writeTree({ 'dashboard.yaml': DASHBOARD });
    const io = capture();
    expect(await runMatrix([join(root, 'dashboard.yaml')], { section: 'keystone', roles: 'admin,member' }, io)).toBe(0);
    expect(io.stdout[0]).toMatch(/ACTION\s+admin\s+member/);
    expect(io.stdout.join('\n')).toMatch(/identity:create_project\s+yes\s+no/);
    const all = capture();
    await runMatrix([join(root, 'dashboard.yaml')], { roles: 'admin' }, all);
    expect(all.stdout.filter((l) => l.endsWith('/nova') || l.endsWith('/keystone'))).toHaveLength(2);
  });

  it('--values-path reads rules from any place; a wrong place is one clear error', async () => {
    const root = writeTree({ 'custom.yaml': 'dashboard:\n  rules:\n    "x:get": "rule:nowhere"\n' });
    const file = join(root, 'custom.yaml');
    const io = capture();
    expect(await runLint([file], { valuesPath: 'dashboard.rules' }, io)).toBe(1);
    expect(io.stdout[0]).toMatch(/custom\.yaml:3:15: error: rule "x:get" refers to rule:nowhere/);
    await expect(runLint([file], { valuesPath: 'conf.policy' }, capture())).rejects.toThrow(/no conf\.policy map here/);
  });
});

describe('an app whose horizon chart keeps its rules as openstack-helm does', () => {
  const novaValues = 'conf:\n  policy:\n    "os_compute_api:servers:create": "role:member"\n    "os_compute_api:servers:delete": "role:admin"\n';
  const set = 'roles:\n  admin: Cloud administrator.\n  member: Runs workloads.\n';

  it('finds conf.horizon.policy by convention, sections map to the service charts (by name or service type) for drift', async () => {
    const root = writeAppTree(
      {
        'charts/nova/values.yaml': novaValues,
        'charts/horizon/values.yaml': 'conf:\n  horizon:\n    policy:\n      compute:\n        "os_compute_api:servers:create": "role:member"\n        "os_compute_api:servers:delete": "role:member"\n',
        'policies/strict/set.yaml': set,
      },
      ['nova', 'horizon'],
      '  policies: strict\n',
    );
    const policies = await loadAppPolicies(root);
    expect([...policies.charts.get('horizon')!.sections.keys()]).toEqual(['compute']);
    const { findings } = await lintApp(root);
    expect(findings.map((f) => `${f.scope}: ${f.code}: ${f.message}`)).toEqual([
      'horizon/compute: horizon-drift: "os_compute_api:servers:delete" decides differently from chart nova\'s own policy (admin: no here, yes in nova; member: yes here, no in nova); the dashboard will offer what the API refuses, or hide what it allows',
    ]);
  });

  it('a policy set declares where a chart keeps its rules (policyPaths), and its file is read there', async () => {
    const root = writeAppTree(
      {
        'charts/nova/values.yaml': novaValues,
        'charts/horizon/values.yaml': 'conf:\n  dashboard:\n    rules:\n      nova:\n        "os_compute_api:servers:create": "role:member"\n',
        'policies/strict/set.yaml': `${set}policyPaths:\n  horizon: conf.dashboard.rules\n`,
        'policies/strict/horizon.yaml': 'conf:\n  dashboard:\n    rules:\n      nova:\n        "os_compute_api:servers:create": "role:admin"\n',
      },
      ['nova', 'horizon'],
      '  policies: strict\n',
    );
    const policies = await loadAppPolicies(root);
    const nova = policies.charts.get('horizon')!.sections.get('nova')!;
    expect(nova.rules.get('os_compute_api:servers:create')?.source.text).toBe('role:admin');
    expect(nova.rules.get('os_compute_api:servers:create')?.layer.label).toBe('policy set strict');
    const { findings } = await lintApp(root);
    expect(findings.map((f) => `${f.scope}: ${f.code}`)).toContain('horizon/nova: horizon-drift');
  });

  it('a chart declares where it keeps its rules (Chart.yaml annotation)', async () => {
    const root = writeAppTree(
      {
        'charts/horizon/Chart.yaml': 'apiVersion: v2\nname: horizon\nversion: 0.1.0\nannotations:\n  flotilla.io/policy-values-path: conf.dashboard.rules\n',
        'charts/horizon/values.yaml': 'conf:\n  dashboard:\n    rules:\n      nova:\n        "os_compute_api:servers:create": "rule:nowhere"\n',
      },
      ['horizon'],
    );
    const { findings } = await lintApp(root);
    expect(findings.map((f) => `${f.scope}: ${f.code}`)).toEqual(['horizon/nova: undefined-rule']);
  });
});
