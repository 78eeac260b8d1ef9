import { Command } from 'commander';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EXIT_DENY, register, runCheck, runLint, runMatrix } from '../../src/cli/commands/policy.js';
import { PolicyLookupError } from '../../src/policies/index.js';
import { capture, writeAppTree, writeTree } from './helpers.js';


const NOVA = [
  'conf:',
  '  policy:',
  '    admin_required: "role:admin"',
  '    in_project: "project_id:%(project_id)s"',
  '    "os_compute_api:servers:show": "rule:admin_required or (role:member and rule:in_project)"',
  '    "os_compute_api:servers:delete": "rule:admin_required or (role:member and rule:in_project and user_id:%(user_id)s)"',
  '',
].join('\n');

describe('policy lint', () => {
  it('prints file:line:col for each finding and exits 1 on errors', async () => {
    const root = writeTree({ 'bad.yaml': 'conf:\n  policy:\n    "volume:get": "rule:missing"\n' });
    const io = capture();
    const code = await runLint([join(root, 'bad.yaml')], {}, io);
    expect(code).toBe(1);
    const file = relative(process.cwd(), join(root, 'bad.yaml'));
    expect(io.stdout).toEqual([
      `${file}:3:20: error: rule "volume:get" refers to rule:missing, which no layer defines; oslo.policy treats it as false [undefined-rule]`,
    ]);
    expect(io.stderr.at(-1)).toMatch(/1 error, 0 warnings/);
  });

  it('exits 0 on warnings, 1 with --strict', async () => {
    const root = writeTree({ 'open.yaml': 'conf:\n  policy:\n    "volume:delete": ""\n' });
    const file = join(root, 'open.yaml');
    expect(await runLint([file], {}, capture())).toBe(0);
    expect(await runLint([file], { strict: true }, capture())).toBe(1);
  });

  it('shows notes with --verbose only', async () => {
    const root = writeTree({
      'values.yaml': 'conf:\n  policy:\n    "x:get": "role:admin"\n',
      'over.yaml': 'conf:\n  policy:\n    "x:get": "role:member"\n',
    });
    const quiet = capture();
    await runLint([join(root, 'over.yaml')], { defaults: [join(root, 'values.yaml')] }, quiet);
    expect(quiet.stdout).toEqual([]);
    expect(quiet.stderr.at(-1)).toMatch(/1 note not shown/);
    const verbose = capture();
    await runLint([join(root, 'over.yaml')], { defaults: [join(root, 'values.yaml')], verbose: true }, verbose);
    expect(verbose.stdout).toEqual([expect.stringMatching(/over.yaml:3:15: note: rule "x:get" replaces the default "role:admin".*\[overrides-default\]$/)]);
  });

  it('lints each file on its own, or stacked with --stack', async () => {
    const root = writeTree({
      'a.yaml': 'conf:\n  policy:\n    "x:get": "role:admin"\n',
      'b.yaml': 'conf:\n  policy:\n    "x:get": "role:member"\n',
    });
    const files = [join(root, 'a.yaml'), join(root, 'b.yaml')];
    const apart = capture();
    expect(await runLint(files, {}, apart)).toBe(0);
    expect(apart.stdout).toEqual([]);
    const stacked = capture();
    await runLint(files, { stack: true }, stacked);
    expect(stacked.stdout).toEqual([expect.stringMatching(/b.yaml:3:15: warning: rule "x:get" is defined differently by a.yaml/)]);
  });

  it('checks declared roles of the set a file belongs to, and skips the set declaration', async () => {
    const root = writeTree({
      'policies/s/set.yaml': 'roles: {admin: x, member: z}\n',
      'policies/s/nova.yaml': 'conf:\n  policy:\n    "x:get": "role:membre"\n',
    });
    const io = capture();
    const code = await runLint([join(root, 'policies/s/set.yaml'), join(root, 'policies/s/nova.yaml')], {}, io);
    expect(code).toBe(1);
    expect(io.stdout).toEqual([expect.stringMatching(/checks role "membre", which policy set s .* \(did you mean "member"\?\) \[undeclared-role\]$/)]);
  });

  it('prints JSON with -o json', async () => {
    const root = writeTree({ 'bad.yaml': 'conf:\n  policy:\n    "volume:get": "role:a or"\n' });
    const io = capture();
    await runLint([join(root, 'bad.yaml')], { output: 'json' }, io);
    expect(JSON.parse(io.stdout.join('\n'))).toEqual({
      apiVersion: 'flotilla/v1',
      kind: 'PolicyFindings',
      items: [expect.objectContaining({ code: 'syntax', severity: 'error', location: expect.objectContaining({ line: 3, column: 29 }) })],
    });
  });
});

describe('policy check', () => {
  it('allows with exit 0 and prints the deciding rules with their positions', async () => {
    const root = writeTree({ 'nova.yaml': NOVA });
    const io = capture();
    const code = await runCheck(
      [join(root, 'nova.yaml')],
      { action: 'os_compute_api:servers:show', roles: 'member', creds: ['project_id=p1'], target: ['project_id=p1'] },
      io,
    );
    expect(code).toBe(0);
    expect(io.stdout[0]).toBe('ALLOW  os_compute_api:servers:show  roles: member');
    expect(io.stdout[1]).toMatch(/^ {2}true {2}os_compute_api:servers:show = "rule:admin_required or \(role:member and rule:in_project\)" {2}\(.*nova.yaml:5:37, nova.yaml\)$/);
    expect(io.stdout).toContainEqual(expect.stringMatching(/true {2}project_id:%\(project_id\)s {2}\(project_id = p1, target "p1"\)/));
  });

  it('denies an owner-scoped action on someone else\'s server with exit 3', async () => {
    const root = writeTree({ 'nova.yaml': NOVA });
    const io = capture();
    const code = await runCheck(
      [join(root, 'nova.yaml')],
      { action: 'os_compute_api:servers:delete', roles: 'member', creds: ['project_id=p1', 'user_id=u1'], target: ['project_id=p1', 'user_id=u2'] },
      io,
    );
    expect(code).toBe(EXIT_DENY);
    expect(io.stdout[0]).toMatch(/^DENY/);
    expect(io.stdout).toContainEqual(expect.stringMatching(/false user_id:%\(user_id\)s {2}\(user_id = u1, target "u2"\)/));
  });

  it('adds the implied roles of the set and says so', async () => {
    const root = writeTree({
      'policies/s/set.yaml': 'roles: {admin: x}\nknownRoles: {member: z}\nimpliedRoles: {admin: [member]}\n',
      'policies/s/nova.yaml': 'conf:\n  policy:\n    "x:get": "role:member"\n',
    });
    const io = capture();
    expect(await runCheck([join(root, 'policies/s/nova.yaml')], { action: 'x:get', roles: 'admin' }, io)).toBe(0);
    expect(io.stdout[0]).toBe('ALLOW  x:get  roles: admin (implied: member)');
  });

  it('refuses an unknown action with a suggestion (exit 2)', async () => {
    const root = writeTree({ 'nova.yaml': NOVA });
    const error = await runCheck([join(root, 'nova.yaml')], { action: 'os_compute_api:servers:shw', roles: 'member' }, capture()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PolicyLookupError);
    expect((error as PolicyLookupError).exitCode).toBe(2);
    expect((error as PolicyLookupError).message).toMatch(/did you mean "os_compute_api:servers:show"/);
  });

  it('asks for --chart in an app, and for --section in a chart with one policy per service', async () => {
    const root = writeAppTree({ 'charts/dash/values.yaml': 'conf:\n  policy:\n    nova:\n      "x:get": "@"\n    glance:\n      "y:get": "@"\n' }, ['dash']);
    await expect(runCheck([root], { action: 'x:get' }, capture())).rejects.toThrow(/--chart is required/);
    await expect(runCheck([root], { action: 'x:get', chart: 'dash' }, capture())).rejects.toThrow(/choose one with --section \(nova, glance\)/);
    expect(await runCheck([root], { action: 'x:get', chart: 'dash/nova' }, capture())).toBe(0);
  });
});

describe('policy matrix', () => {
  it('prints actions × roles, with own/project/yes/no cells', async () => {
    const root = writeTree({ 'nova.yaml': NOVA });
    const io = capture();
    expect(await runMatrix([join(root, 'nova.yaml')], { roles: 'admin,member,reader' }, io)).toBe(0);
    expect(io.stdout.join('\n').split('\n').slice(0, 3)).toEqual([
      'ACTION                         admin  member   reader',
      'os_compute_api:servers:delete  yes    own      no',
      'os_compute_api:servers:show    yes    project  no',
    ]);
  });

  it('prints CSV with --output csv, one row per chart and action of an app', async () => {
    const root = writeAppTree(
      {
        'charts/nova/values.yaml': NOVA,
        'charts/glance/values.yaml': 'conf:\n  policy:\n    get_image: "role:admin or \'public\':%(visibility)s"\n',
      },
      ['nova', 'glance'],
    );
    const io = capture();
    await runMatrix([root], { roles: 'admin,member', output: 'csv', target: ['visibility=public'] }, io);
    expect(io.stdout).toEqual([
      'chart,action,admin,member',
      'glance,get_image,yes,yes',
      'nova,os_compute_api:servers:delete,yes,own',
      'nova,os_compute_api:servers:show,yes,project',
    ]);
  });

  it('filters actions with --actions', async () => {
    const root = writeTree({ 'nova.yaml': NOVA });
    const io = capture();
    await runMatrix([join(root, 'nova.yaml')], { roles: 'member', actions: '*:delete', output: 'csv' }, io);
    expect(io.stdout.slice(1)).toEqual([expect.stringMatching(/,os_compute_api:servers:delete,own$/)]);
  });
});

describe('commander wiring', () => {
  afterEach(() => {
    process.exitCode = undefined;
    vi.restoreAllMocks();
  });

  it('parses repeated KEY=VALUE options and sets the exit code of a denial', async () => {
    const root = writeTree({ 'nova.yaml': NOVA });
    const written: string[] = [];
    const program = new Command().exitOverride();
    register(program, { io: { out: (line) => void written.push(line), err: () => undefined } });
    await program.parseAsync(
      ['policy', 'check', join(root, 'nova.yaml'), '--action', 'os_compute_api:servers:delete', '--roles', 'member', '--creds', 'project_id=p1', 'user_id=u1', '--target', 'project_id=p1', 'user_id=u2'],
      { from: 'user' },
    );
    expect(process.exitCode).toBe(EXIT_DENY);
    expect(written[0]).toMatch(/^DENY {2}os_compute_api:servers:delete/);
  });
});
