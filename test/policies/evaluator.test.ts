import { describe, expect, it } from 'vitest';
import { evaluate, PolicyLookupError, type Credentials, type PolicyTarget, type TraceNode } from '../../src/policies/index.js';
import { policyOf } from './helpers.js';

const owned = policyOf({
  admin_required: 'role:admin',
  in_project: 'project_id:%(project_id)s',
  owner: 'user_id:%(user_id)s',
  project_member: 'rule:admin_required or (role:member and rule:in_project)',
  'os_compute_api:servers:show': 'rule:project_member',
  'os_compute_api:servers:delete': 'rule:admin_required or (role:member and rule:in_project and rule:owner)',
  'identity:change_password': 'rule:admin_required or user_id:%(target.user.id)s',
  'identity:get_user': 'rule:admin_required or token.user.id:%(target.user.id)s',
  get_image: "rule:admin_required or rule:in_project or 'public':%(visibility)s",
  get_network: 'rule:admin_required or field:networks:shared=True',
  create_port: 'not field:port:device_owner=~^network:',
  remote: 'http://policy.example.com/check',
  noisy: 'role:ADMIN',
  substituted_role: 'role:%(target.role.name)s',
});

const allowed = (action: string, creds: Credentials, target: PolicyTarget = {}) => evaluate(owned, action, creds, target).allowed;
const member = (project: string, user: string): Credentials => ({ roles: ['member'], project_id: project, user_id: user });

describe('owner-scoped rules', () => {
  it('project_id:%(project_id)s compares the caller with the target', () => {
    expect(allowed('os_compute_api:servers:show', member('p1', 'u1'), { project_id: 'p1' })).toBe(true);
    expect(allowed('os_compute_api:servers:show', member('p1', 'u1'), { project_id: 'p2' })).toBe(false);
  });

  it('user_id:%(user_id)s limits a member to what it created', () => {
    expect(allowed('os_compute_api:servers:delete', member('p1', 'u1'), { project_id: 'p1', user_id: 'u1' })).toBe(true);
    expect(allowed('os_compute_api:servers:delete', member('p1', 'u1'), { project_id: 'p1', user_id: 'u2' })).toBe(false);
    expect(allowed('os_compute_api:servers:delete', { roles: ['admin'] }, { project_id: 'p9', user_id: 'u9' })).toBe(true);
  });

  it('user_id:%(target.user.id)s reads the flat key keystone builds, or a nested target', () => {
    expect(allowed('identity:change_password', member('p1', 'u1'), { 'target.user.id': 'u1' })).toBe(true);
    expect(allowed('identity:change_password', member('p1', 'u1'), { target: { user: { id: 'u1' } } })).toBe(true);
    expect(allowed('identity:change_password', member('p1', 'u1'), { 'target.user.id': 'u2' })).toBe(false);
  });

  it('a target key that is missing makes the check false, as oslo.policy does', () => {
    const decision = evaluate(owned, 'identity:change_password', member('p1', 'u1'), {});
    expect(decision.allowed).toBe(false);
    expect(JSON.stringify(decision.trace)).toContain('target has no target.user.id');
  });

  it('a dotted credential path walks nested credentials', () => {
    expect(allowed('identity:get_user', { roles: [], token: { user: { id: 'u1' } } }, { 'target.user.id': 'u1' })).toBe(true);
    expect(allowed('identity:get_user', { roles: [], token: { user: { id: 'u1' } } }, { 'target.user.id': 'u2' })).toBe(false);
  });
});

describe('checks', () => {
  it('compares a literal with the target', () => {
    expect(allowed('get_image', member('p1', 'u1'), { project_id: 'p2', visibility: 'public' })).toBe(true);
    expect(allowed('get_image', member('p1', 'u1'), { project_id: 'p2', visibility: 'private' })).toBe(false);
  });

  it('compares roles case-insensitively', () => {
    expect(allowed('noisy', { roles: ['Admin'] })).toBe(true);
  });

  it('substitutes the target into a role check', () => {
    expect(allowed('substituted_role', { roles: ['auditor'] }, { 'target.role.name': 'auditor' })).toBe(true);
    expect(allowed('substituted_role', { roles: ['auditor'] }, { 'target.role.name': 'admin' })).toBe(false);
  });

  it("evaluates neutron's field checks, with True/true alike and ~regex", () => {
    expect(allowed('get_network', member('p1', 'u1'), { shared: true })).toBe(true);
    expect(allowed('get_network', member('p1', 'u1'), { shared: 'true' })).toBe(true);
    expect(allowed('get_network', member('p1', 'u1'), { shared: false })).toBe(false);
    expect(allowed('create_port', member('p1', 'u1'), { device_owner: 'network:router_interface' })).toBe(false);
    expect(allowed('create_port', member('p1', 'u1'), { device_owner: 'compute:nova' })).toBe(true);
  });

  it('counts http checks as false and says so', () => {
    const decision = evaluate(owned, 'remote', member('p1', 'u1'), {});
    expect(decision.allowed).toBe(false);
    expect(JSON.stringify(decision.trace)).toContain('not evaluated');
  });

  it('matches a list credential when any element matches', () => {
    const policy = policyOf({ 'x:y': 'groups:ops' });
    expect(evaluate(policy, 'x:y', { groups: ['dev', 'ops'] }, {}).allowed).toBe(true);
    expect(evaluate(policy, 'x:y', { groups: ['dev'] }, {}).allowed).toBe(false);
  });
});

describe('operators', () => {
  const p = policyOf({
    a: 'role:x or role:y and role:z',
    b: 'not role:x and role:y',
    c: 'not (role:x or role:y)',
    d: '',
    e: '!',
  });
  const can = (rule: string, roles: string[]) => evaluate(p, rule, { roles }, {}).allowed;

  it('follow the precedence of the parser', () => {
    expect(can('a', ['x'])).toBe(true);
    expect(can('a', ['y'])).toBe(false);
    expect(can('a', ['y', 'z'])).toBe(true);
    expect(can('b', ['y'])).toBe(true);
    expect(can('b', ['x', 'y'])).toBe(false);
    expect(can('c', [])).toBe(true);
    expect(can('c', ['y'])).toBe(false);
    expect(can('d', [])).toBe(true);
    expect(can('e', ['x'])).toBe(false);
  });

  it('stop at the first deciding operand, as oslo.policy does', () => {
    const decision = evaluate(p, 'a', { roles: ['x'] }, {});
    const top = decision.trace.kind === 'rule' ? decision.trace.children[0] : undefined;
    expect(top?.kind).toBe('or');
    expect(top && 'children' in top ? top.children.length : 0).toBe(1);
  });
});

describe('rule lookup', () => {
  it('uses the "default" rule for an action without one, like oslo.policy', () => {
    const p = policyOf({ default: 'role:admin', 'x:y': 'role:member' });
    const decision = evaluate(p, 'x:unknown', { roles: ['admin'] }, {});
    expect(decision.allowed).toBe(true);
    expect(decision.trace).toMatchObject({ kind: 'rule', name: 'x:unknown', note: expect.stringMatching(/uses the "default" rule/) });
  });

  it('denies an undefined action without a default rule', () => {
    expect(evaluate(policyOf({ a: '@' }), 'b', { roles: [] }, {}).allowed).toBe(false);
  });

  it('throws with a suggestion when asked to refuse undefined actions', () => {
    const p = policyOf({ 'os_compute_api:servers:create': '@' });
    expect(() => evaluate(p, 'os_compute_api:server:create', { roles: [] }, {}, { undefinedAction: 'error' })).toThrow(PolicyLookupError);
    expect(() => evaluate(p, 'os_compute_api:server:create', { roles: [] }, {}, { undefinedAction: 'error' })).toThrow(
      /did you mean "os_compute_api:servers:create"/,
    );
  });

  it('survives a cycle and reports it in the trace', () => {
    const p = policyOf({ a: 'rule:b', b: 'rule:a' });
    const decision = evaluate(p, 'a', { roles: [] }, {});
    expect(decision.allowed).toBe(false);
    expect(JSON.stringify(decision.trace)).toContain('cycle: a → b → a');
  });

  it('denies a rule that does not parse', () => {
    const p = policyOf({ a: 'role:x or' });
    const decision = evaluate(p, 'a', { roles: ['x'] }, {});
    expect(decision.allowed).toBe(false);
    expect(decision.trace).toMatchObject({ note: expect.stringMatching(/does not parse/) });
  });
});

describe('the trace', () => {
  it('names each rule consulted with its text, file position and layer', () => {
    const decision = evaluate(owned, 'os_compute_api:servers:delete', member('p1', 'u1'), { project_id: 'p1', user_id: 'u2' });
    const rules: string[] = [];
    const walk = (node: TraceNode): void => {
      if (node.kind === 'rule') rules.push(`${node.name}@${node.location?.line}:${node.result}`);
      if ('children' in node) node.children.forEach(walk);
    };
    walk(decision.trace);
    // Line numbers follow the order of the rules in policyOf's YAML.
    expect(rules).toEqual(['os_compute_api:servers:delete@6:false', 'admin_required@1:false', 'in_project@2:true', 'owner@3:false']);
    expect(decision.trace).toMatchObject({ text: 'rule:admin_required or (role:member and rule:in_project and rule:owner)', layer: 'policy.yaml' });
  });
});
