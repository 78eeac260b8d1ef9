import { describe, expect, it } from 'vitest';
import { actionVerb, isWriteAction, lintPolicy, looksLikeAction, type LintFinding } from '../../src/policies/index.js';
import { layer } from './helpers.js';

/** Lints one override file given as `conf.policy` rule lines. */
function lintRules(lines: string[], options: Parameters<typeof lintPolicy>[1] = {}): LintFinding[] {
  return lintPolicy([layer(['conf:', '  policy:', ...lines.map((l) => `    ${l}`)].join('\n'), { file: 'nova.yaml' })], options);
}

const codes = (findings: readonly LintFinding[]) => findings.map((f) => f.code);
const only = (findings: readonly LintFinding[], code: string) => findings.filter((f) => f.code === code);

describe('a clean policy', () => {
  it('has no findings', () => {
    const findings = lintRules([
      'admin_required: "role:admin"',
      'project_member: "rule:admin_required or (role:member and project_id:%(project_id)s)"',
      '"os_compute_api:servers:create": "rule:project_member"',
      '"os_compute_api:servers:index": ""',
    ]);
    expect(findings).toEqual([]);
  });
});

describe('syntax', () => {
  it('is an error at the line and column of the fault inside the rule', () => {
    const [finding] = lintRules(['"os_compute_api:servers:create": "role:member or(role:admin)"']);
    expect(finding).toMatchObject({
      code: 'syntax',
      severity: 'error',
      location: { file: 'nova.yaml', line: 3, column: 53 }, // the "(" glued to "or"
      message: expect.stringMatching(/^rule "os_compute_api:servers:create": parenthesis inside/),
    });
  });

  it('is reported for a definition a higher layer replaces, saying so', () => {
    const low = layer('conf:\n  policy:\n    "a:get": "role:x or"\n', { file: 'static.yaml', label: 'static' });
    const high = layer('conf:\n  policy:\n    "a:get": "role:x"\n', { file: 'set.yaml', label: 'set' });
    const findings = lintPolicy([low, high]);
    expect(only(findings, 'syntax')).toEqual([
      expect.objectContaining({ location: expect.objectContaining({ file: 'static.yaml', line: 3 }), message: expect.stringMatching(/a higher layer replaces this rule/) }),
    ]);
  });
});

describe('values that are not rules', () => {
  it('are errors', () => {
    expect(only(lintRules(['"a:get": 42']), 'bad-value')).toEqual([
      expect.objectContaining({ severity: 'error', message: expect.stringMatching(/must be a string/) }),
    ]);
  });
});

describe('undefined rules', () => {
  it('are errors at the rule:NAME, with the nearest name and what oslo.policy will do', () => {
    const findings = lintRules(['admin_api: "role:admin"', '"os_compute_api:servers:create": "role:member or rule:admin_apo"']);
    expect(only(findings, 'undefined-rule')).toEqual([
      {
        code: 'undefined-rule',
        severity: 'error',
        rule: 'os_compute_api:servers:create',
        location: { file: 'nova.yaml', line: 4, column: 54 }, // "rule:admin_apo"
        message: expect.stringMatching(/rule:admin_apo, which no layer defines; oslo.policy treats it as false \(did you mean "admin_api"\?\)/),
      },
    ]);
  });

  it('mention the fallback on "default" when there is one', () => {
    const findings = lintRules(['default: "role:admin"', '"x:get": "rule:nothing"']);
    expect(only(findings, 'undefined-rule')[0]?.message).toMatch(/falls back on the "default" rule/);
  });
});

describe('cycles', () => {
  it('are reported once, with the circle of names', () => {
    const findings = lintRules(['a: "rule:b or role:x"', 'b: "rule:c"', 'c: "rule:a"', '"x:get": "rule:a"', 'self: "rule:self"', '"y:get": "rule:self"']);
    expect(only(findings, 'cycle').map((f) => [f.message, f.location?.line])).toEqual([
      [expect.stringContaining('a → b → c → a'), 3],
      [expect.stringContaining('self → self'), 7],
    ]);
  });
});

describe('roles', () => {
  const declared = { names: ['admin', 'member', 'project_admin'], declaredBy: 'policy set enhanced (policies/enhanced/set.yaml)' };

  it('not declared by the set are errors, with the nearest declared role', () => {
    const findings = lintRules(['"x:create": "role:projet_admin or role:Member"'], { declaredRoles: declared });
    expect(only(findings, 'undeclared-role')).toEqual([
      expect.objectContaining({
        severity: 'error',
        location: { file: 'nova.yaml', line: 3, column: 18 }, // "role:projet_admin"
        message: 'rule "x:create" checks role "projet_admin", which policy set enhanced (policies/enhanced/set.yaml) does not declare (did you mean "project_admin"?)',
      }),
    ]);
  });

  it('are not checked without declared roles, nor when the role name is substituted', () => {
    expect(lintRules(['"x:create": "role:anything"'])).toEqual([]);
    expect(lintRules(['"x:create": "role:%(target.role.name)s"'], { declaredRoles: declared })).toEqual([]);
  });
});

describe('write actions open to everyone', () => {
  it('are warnings for "" and "@"', () => {
    const findings = lintRules(['"volume:delete": ""', '"volume:create": "@"', '"volume:get": ""']);
    expect(only(findings, 'open-write').map((f) => [f.rule, f.severity])).toEqual([
      ['volume:delete', 'warning'],
      ['volume:create', 'warning'],
    ]);
  });

  it('are found through rules that always allow, and the chain is named', () => {
    const findings = lintRules(['anyone: "@"', 'public: "rule:anyone or role:x"', 'add_image: "rule:public"', 'closed: "not !"', '"x:update": "rule:closed and @"']);
    expect(only(findings, 'open-write').map((f) => [f.rule, f.message])).toEqual([
      ['add_image', expect.stringContaining('through rule:public = "rule:anyone or role:x" → rule:anyone = "@"')],
      ['x:update', expect.stringContaining('rule:closed = "not !"')],
    ]);
  });

  it('are not reported when a role or owner is required', () => {
    expect(only(lintRules(['"volume:delete": "@ and role:member"', '"volume:update": "role:member or not role:x"']), 'open-write')).toEqual([]);
  });
});

describe('unused helper rules', () => {
  it('are warnings at the rule name', () => {
    const findings = lintRules(['used: "role:admin"', 'orphan: "role:member"', 'orphan_chain: "rule:used"', '"x:get": "rule:used"']);
    expect(only(findings, 'unused-rule').map((f) => [f.rule, f.severity, f.location?.column])).toEqual([
      ['orphan', 'warning', 5],
      ['orphan_chain', 'warning', 5],
    ]);
  });

  it('leave actions, well-known names and rules of a defaults layer alone', () => {
    const defaults = layer('conf:\n  policy:\n    admin_or_owner: "role:admin"\n', { file: 'values.yaml', kind: 'defaults' });
    const overrides = layer('conf:\n  policy:\n    add_image: "role:x"\n    default: "role:x"\n    context_is_admin: "role:admin"\n    tasks_api_access: "role:x"\n');
    expect(only(lintPolicy([defaults, overrides]), 'unused-rule')).toEqual([]);
  });
});

describe('layers that disagree', () => {
  const defaults = layer('conf:\n  policy:\n    "x:get": "role:reader"\n    "x:delete": "role:admin"\n', { file: 'values.yaml', label: 'chart defaults', kind: 'defaults' });
  const staticLayer = layer('conf:\n  policy:\n    "x:get": "role:member"\n    "x:delete": "(role:admin)"\n', { file: 'static.yaml', label: 'static' });
  const setLayer = layer('conf:\n  policy:\n    "x:get": "role:project_readonly"\n', { file: 'set.yaml', label: 'policy set enhanced' });
  const findings = lintPolicy([defaults, staticLayer, setLayer]);

  it('warn when two override layers define a rule differently', () => {
    expect(only(findings, 'redefined')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        location: expect.objectContaining({ file: 'set.yaml', line: 3 }),
        message: 'rule "x:get" is defined differently by static (static.yaml:3:15) as "role:member"; policy set enhanced wins with "role:project_readonly"',
      }),
    ]);
  });

  it('note an override of the chart defaults, and an override that changes nothing', () => {
    expect(only(findings, 'overrides-default').map((f) => [f.rule, f.severity])).toEqual([['x:get', 'info']]);
    expect(only(findings, 'redundant-override').map((f) => [f.rule, f.severity])).toEqual([['x:delete', 'info']]);
  });

  it('start over after a layer deletes the rule with null', () => {
    const remove = layer('conf:\n  policy:\n    "x:get": null\n', { file: 'rm.yaml', label: 'rm' });
    const again = layer('conf:\n  policy:\n    "x:get": "role:y"\n', { file: 'again.yaml', label: 'again' });
    expect(codes(lintPolicy([staticLayer, remove, again])).filter((c) => c === 'redefined')).toEqual([]);
  });
});

describe('http checks', () => {
  it('are noted: flotilla does not call remote servers', () => {
    const [finding] = lintRules(['"x:get": "http://authz.example.com/check"']);
    expect(finding).toMatchObject({ code: 'http-check', severity: 'info' });
  });
});

describe('naming heuristics', () => {
  it('tell actions from helpers', () => {
    expect(looksLikeAction('os_compute_api:servers:create')).toBe(true);
    expect(looksLikeAction('add_image')).toBe(true);
    expect(looksLikeAction('tasks_api_access')).toBe(true);
    expect(looksLikeAction('context_is_admin')).toBe(true);
    expect(looksLikeAction('admin_or_owner')).toBe(false);
    expect(looksLikeAction('project_reader')).toBe(false);
  });

  it('find the verb from the last segment back', () => {
    expect(actionVerb('os_compute_api:servers:create:forced_host')).toEqual({ verb: 'create', write: true });
    expect(actionVerb('identity:check_grant')).toEqual({ verb: 'check', write: false });
    expect(actionVerb('os_compute_api:os-attach-interfaces:list')).toEqual({ verb: 'list', write: false });
    expect(actionVerb('volume_extension:volume_type_access:addProjectAccess')).toEqual({ verb: 'add', write: true });
    expect(isWriteAction('volume_extension:volume_admin_actions:force_delete')).toBe(true);
    expect(isWriteAction('get_image_location')).toBe(false);
    expect(isWriteAction('default')).toBe(false);
  });
});

describe("nova's discoverable rules", () => {
  it('are no write actions: open, as nova ships them, they give no finding; a real write action beside them still does', () => {
    // The shape of StarlingX's horizon-nova policy file: an extension's rules, its `:discoverable` switch left empty.
    const findings = lintRules([
      '"os_compute_api:os-attach-interfaces": "rule:admin_api"',
      'admin_api: "role:admin"',
      '"os_compute_api:os-attach-interfaces:discoverable": ""',
      '"os_compute_api:os-migrate-server:discoverable": "@"',
      '"os_compute_api:os-shelve:discoverable": ""',
      '"os_compute_api:os-shelve:shelve": ""',
    ]);
    expect(only(findings, 'open-write').map((f) => f.rule)).toEqual(['os_compute_api:os-shelve:shelve']);
    expect(isWriteAction('os_compute_api:os-attach-interfaces:discoverable')).toBe(false);
    expect(isWriteAction('os_compute_api:os-attach-interfaces:create')).toBe(true);
  });
});
