/**
 * Actions × roles: what a user holding one role may do, against a resource
 * of their own, of their project, and of another project.
 *
 * The owner checks of the policy (`project_id:%(project_id)s`,
 * `user_id:%(target.user.id)s`: a credential compared with a target key)
 * tell which target keys name an owner. Each cell is evaluated three times:
 *   own      every owner key of the target is the caller's own value;
 *   project  keys compared with user credentials name another user, the others the caller's project;
 *   other    every owner key names someone else.
 */
import { walkExpr } from './ast.js';
import { evaluate } from './evaluator.js';
import { isDiscoverableRule, looksLikeAction, WELL_KNOWN_RULES } from './heuristics.js';
import type { EffectivePolicy } from './policy.js';
import { expandRoles } from './roles.js';
import type { Credentials, PolicyTarget, PolicyValue } from './types.js';

/**
 * `yes` any resource; `project` resources of the caller's project; `own`
 * only the caller's own resources; `no` never; `others` allowed on someone
 * else's resource but not on the caller's (an unusual rule worth reading).
 */
export type MatrixCell = 'yes' | 'project' | 'own' | 'no' | 'others';

export interface MatrixRow {
  readonly action: string;
  readonly cells: readonly MatrixCell[];
}

export interface PolicyMatrix {
  readonly roles: readonly string[];
  readonly rows: readonly MatrixRow[];
}

/** What every cell's request carries besides the role and the owner keys. */
export interface ScenarioExtras {
  /** Extra credentials (e.g. `is_admin_project: True`); they win over the generated ones. */
  readonly creds?: Credentials;
  /** Extra target fields (e.g. `visibility: public`); they win over the generated ones. */
  readonly target?: PolicyTarget;
  /** Keystone implied roles (see PolicySet.impliedRoles). */
  readonly implied?: ReadonlyMap<string, readonly string[]>;
}

export interface MatrixOptions extends ScenarioExtras {
  /** Actions to show; default: every rule whose name looks like an API action. */
  readonly actions?: readonly string[];
}

/** An owner check found in the policy: the target key and the credential it is compared with. */
export interface OwnerKey {
  readonly targetKey: string;
  readonly credsPath: readonly string[];
  /** Compared with a user credential (`user_id`), rather than a project/domain one. */
  readonly user: boolean;
}

const ownerKeyCache = new WeakMap<EffectivePolicy, OwnerKey[]>();

function ownerKeys(policy: EffectivePolicy): OwnerKey[] {
  const cached = ownerKeyCache.get(policy);
  if (cached) return cached;
  const keys = new Map<string, OwnerKey>();
  for (const definition of policy.rules.values()) {
    if (!definition.expr) continue;
    for (const node of walkExpr(definition.expr)) {
      if (node.kind !== 'generic' || node.subject.kind !== 'creds') continue;
      const [part] = node.match.parts;
      if (node.match.parts.length !== 1 || part?.kind !== 'key' || keys.has(part.key)) continue;
      const path = node.subject.path;
      keys.set(part.key, { targetKey: part.key, credsPath: path, user: /user/i.test(path.join('.')) });
    }
  }
  const sorted = [...keys.values()].sort((a, b) => a.targetKey.localeCompare(b.targetKey));
  ownerKeyCache.set(policy, sorted);
  return sorted;
}

export type OwnerContext = 'own' | 'project' | 'other';

/** The caller holding `roles`, and a target in the given relation to them. */
function ownerScenario(
  policy: EffectivePolicy,
  roles: readonly string[],
  context: OwnerContext,
  extra: ScenarioExtras = {},
): { creds: Credentials; target: PolicyTarget } {
  const creds: Record<string, PolicyValue> = {
    user_id: 'caller-user',
    project_id: 'caller-project',
    domain_id: 'caller-domain',
    project_domain_id: 'caller-domain',
    user_domain_id: 'caller-domain',
  };
  const keys = ownerKeys(policy);
  for (const key of keys) if (getPath(creds, key.credsPath) === undefined) setPath(creds, key.credsPath, `caller-${key.credsPath.join('.')}`);
  Object.assign(creds, extra.creds ?? {});
  creds['roles'] = expandRoles(roles, extra.implied);
  const target: Record<string, PolicyValue> = {};
  for (const key of keys) {
    const mine = context === 'own' || (context === 'project' && !key.user);
    target[key.targetKey] = mine ? (getPath(creds, key.credsPath) ?? `caller-${key.targetKey}`) : `other-${key.targetKey}`;
  }
  Object.assign(target, extra.target ?? {});
  return { creds, target };
}

/** The cell of one action for one role. */
export function matrixCell(
  policy: EffectivePolicy,
  action: string,
  role: string,
  extra: ScenarioExtras = {},
): MatrixCell {
  const allowed = (context: OwnerContext): boolean => {
    const { creds, target } = ownerScenario(policy, [role], context, extra);
    return evaluate(policy, action, creds, target).allowed;
  };
  const own = allowed('own');
  const project = allowed('project');
  const other = allowed('other');
  if (own && project && other) return 'yes';
  if (own && project) return 'project';
  if (own && !other) return 'own';
  if (!own && !project && !other) return 'no';
  return 'others';
}

/** The actions a matrix shows by default: rules named like API actions, not `default`/`context_is_*` nor nova's `:discoverable` switches. */
export function matrixActions(policy: EffectivePolicy): string[] {
  return [...policy.rules.keys()].filter((n) => looksLikeAction(n) && !WELL_KNOWN_RULES.has(n) && !isDiscoverableRule(n)).sort();
}

export function policyMatrix(policy: EffectivePolicy, roles: readonly string[], options: MatrixOptions = {}): PolicyMatrix {
  const actions = options.actions ?? matrixActions(policy);
  const { actions: _actions, ...extra } = options;
  return {
    roles,
    rows: actions.map((action) => ({ action, cells: roles.map((role) => matrixCell(policy, action, role, extra)) })),
  };
}

function getPath(root: Record<string, PolicyValue>, path: readonly string[]): PolicyValue | undefined {
  let value: PolicyValue | undefined = root;
  for (const part of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const map = value as { readonly [key: string]: PolicyValue };
    if (!Object.hasOwn(map, part)) return undefined;
    value = map[part];
  }
  return value;
}

function setPath(root: Record<string, PolicyValue>, path: readonly string[], value: PolicyValue): void {
  let node: Record<string, PolicyValue> = root;
  path.slice(0, -1).forEach((part) => {
    const next = node[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, PolicyValue>;
  });
  const last = path[path.length - 1];
  if (last !== undefined) node[last] = value;
}
