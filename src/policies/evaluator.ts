/**
 * Decides a request the way oslo.policy's Enforcer does, and records why:
 * which rules were consulted, in which file and layer, and what each check
 * found. `and` stops at the first false operand, `or` at the first true one,
 * as oslo.policy does, so the trace holds what decided the request.
 */
import type { SourceLocation } from '../diagnostics/index.js';
import { formatCheck, type CheckExpr, type PolicyExpr, type Template } from './ast.js';
import { PolicyLookupError } from './errors.js';
import { nearest } from '../names/index.js';
import type { EffectivePolicy, RuleDefinition } from './policy.js';
import type { Credentials, PolicyTarget, PolicyValue } from './types.js';

/** One step of a decision. */
export type TraceNode =
  | {
      /** A rule consulted: the action itself, or a `rule:NAME` reference. */
      readonly kind: 'rule';
      readonly name: string;
      readonly result: boolean;
      /** The definition used; absent when no layer defines the rule. */
      readonly text?: string;
      readonly location?: SourceLocation;
      readonly layer?: string;
      readonly note?: string;
      readonly children: readonly TraceNode[];
    }
  | { readonly kind: 'and' | 'or' | 'not'; readonly result: boolean; readonly children: readonly TraceNode[] }
  | { readonly kind: 'check'; readonly text: string; readonly result: boolean; readonly note?: string };

export interface Decision {
  readonly action: string;
  readonly allowed: boolean;
  /** The rule that decided: the action's own, or `default` when the action has none. */
  readonly rule?: RuleDefinition;
  readonly trace: TraceNode;
}

export interface EvaluateOptions {
  /**
   * What to do with an action no layer defines: `default` uses the rule
   * named `default` as oslo.policy does (deny if there is none); `error`
   * throws a PolicyLookupError naming the nearest defined action.
   */
  readonly undefinedAction?: 'default' | 'error';
  /** The rule oslo.policy falls back on (`[oslo_policy] policy_default_rule`). */
  readonly defaultRule?: string;
}

export function evaluate(
  policy: EffectivePolicy,
  action: string,
  creds: Credentials,
  target: PolicyTarget,
  options: EvaluateOptions = {},
): Decision {
  const defaultRule = options.defaultRule ?? 'default';
  const own = policy.rules.get(action);
  if (!own && options.undefinedAction === 'error') {
    const guess = nearest(action, policy.rules.keys());
    throw new PolicyLookupError(
      `no layer defines the action "${action}"${policy.section ? ` in section ${policy.section}` : ''}` +
        (guess ? ` (did you mean "${guess}"?)` : ''),
    );
  }
  const evaluator = new Evaluator(policy, creds, target, defaultRule);
  const trace = evaluator.rule(action, []);
  return {
    action,
    allowed: trace.result,
    ...((own ?? policy.rules.get(defaultRule)) ? { rule: own ?? policy.rules.get(defaultRule) } : {}),
    trace,
  };
}

class Evaluator {
  constructor(
    private readonly policy: EffectivePolicy,
    private readonly creds: Credentials,
    private readonly target: PolicyTarget,
    private readonly defaultRule: string,
  ) {}

  /** Looks a rule up as oslo.policy's Rules mapping does, falling back on the default rule. */
  rule(name: string, stack: readonly string[]): TraceNode {
    const definition = this.policy.rules.get(name);
    if (!definition) {
      const fallback = name === this.defaultRule ? undefined : this.policy.rules.get(this.defaultRule);
      if (!fallback) {
        return { kind: 'rule', name, result: false, note: 'not defined; oslo.policy denies', children: [] };
      }
      const inner = this.definition(fallback, stack);
      return {
        kind: 'rule',
        name,
        result: inner.result,
        note: `not defined; oslo.policy uses the "${this.defaultRule}" rule`,
        children: [inner],
      };
    }
    return this.definition(definition, stack);
  }

  private definition(definition: RuleDefinition, stack: readonly string[]): TraceNode {
    const base = {
      kind: 'rule' as const,
      name: definition.name,
      text: definition.source.text,
      location: definition.source.location,
      layer: definition.layer.label,
    };
    if (stack.includes(definition.name)) {
      return { ...base, result: false, note: `cycle: ${[...stack, definition.name].join(' → ')}`, children: [] };
    }
    if (!definition.expr) {
      return {
        ...base,
        result: false,
        note: `does not parse (${definition.error?.detail ?? 'syntax error'}); oslo.policy denies`,
        children: [],
      };
    }
    const child = this.expr(definition.expr, [...stack, definition.name]);
    return { ...base, result: child.result, children: [child] };
  }

  private expr(expr: PolicyExpr, stack: readonly string[]): TraceNode {
    switch (expr.kind) {
      case 'and': {
        const children: TraceNode[] = [];
        for (const operand of expr.operands) {
          const node = this.expr(operand, stack);
          children.push(node);
          if (!node.result) return { kind: 'and', result: false, children };
        }
        return { kind: 'and', result: true, children };
      }
      case 'or': {
        const children: TraceNode[] = [];
        for (const operand of expr.operands) {
          const node = this.expr(operand, stack);
          children.push(node);
          if (node.result) return { kind: 'or', result: true, children };
        }
        return { kind: 'or', result: false, children };
      }
      case 'not': {
        const node = this.expr(expr.operand, stack);
        return { kind: 'not', result: !node.result, children: [node] };
      }
      case 'rule':
        return this.rule(expr.name, stack);
      default:
        return this.check(expr);
    }
  }

  private check(expr: CheckExpr): TraceNode {
    const text = formatCheck(expr);
    const node = (result: boolean, note?: string): TraceNode => ({ kind: 'check', text, result, ...(note ? { note } : {}) });
    switch (expr.kind) {
      case 'true':
        return node(true);
      case 'false':
        return node(false);
      case 'rule':
        return node(false); // handled by expr(); kept for exhaustiveness
      case 'http':
        return node(false, 'remote check, not evaluated by flotilla: counted as false');
      case 'role': {
        const role = substitute(expr.role, this.target);
        if (role === undefined) return node(false, `target has no ${missingKeys(expr.role, this.target)}`);
        const roles = this.creds['roles'];
        const held = Array.isArray(roles) ? roles.map((r: PolicyValue) => pyStr(r).toLowerCase()) : [];
        return node(held.includes(role.toLowerCase()), `roles: [${held.join(', ')}]`);
      }
      case 'field': {
        const value = lookup(this.target, expr.field);
        if (value === undefined || value === null) return node(false, `target has no ${expr.field}`);
        const actual = pyStr(value);
        if (expr.value.startsWith('~')) {
          return node(new RegExp(`^(?:${expr.value.slice(1)})`).test(actual), `${expr.field} = ${actual}`);
        }
        return node(sameValue(actual, expr.value), `${expr.field} = ${actual}`);
      }
      case 'generic': {
        const match = substitute(expr.match, this.target);
        if (match === undefined) return node(false, `target has no ${missingKeys(expr.match, this.target)}`);
        if (expr.subject.kind === 'literal') {
          return node(expr.subject.value === match, `${expr.subjectText} vs "${match}"`);
        }
        const found = findInCreds(this.creds, expr.subject.path, match);
        const seen = lookupPath(this.creds, expr.subject.path);
        return node(found, `${expr.subject.path.join('.')} = ${seen === undefined ? '(unset)' : pyStr(seen)}, target "${match}"`);
      }
    }
  }
}

/** A value as Python's `str()` prints it, which is what oslo.policy compares. */
function pyStr(value: PolicyValue): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  return `{${Object.entries(value).map(([k, v]) => `'${k}': ${pyRepr(v)}`).join(', ')}}`;
}

function pyRepr(value: PolicyValue): string {
  return typeof value === 'string' ? `'${value}'` : pyStr(value);
}

function sameValue(actual: string, expected: string): boolean {
  if (actual === expected) return true;
  const bool = (s: string): boolean | undefined => (/^true$/i.test(s) ? true : /^false$/i.test(s) ? false : undefined);
  const a = bool(actual);
  return a !== undefined && a === bool(expected);
}

/** A target key: the flat key first (`target.user.id`, as keystone flattens), then a dotted path. */
function lookup(target: PolicyTarget, key: string): PolicyValue | undefined {
  if (Object.hasOwn(target, key)) return target[key];
  return key.includes('.') ? lookupPath(target, key.split('.')) : undefined;
}

function lookupPath(root: PolicyTarget, path: readonly string[]): PolicyValue | undefined {
  let value: PolicyValue | undefined = root;
  for (const part of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const map: { readonly [key: string]: PolicyValue } = value as { readonly [key: string]: PolicyValue };
    if (!Object.hasOwn(map, part)) return undefined;
    value = map[part];
  }
  return value;
}

/** `match % target` in Python: undefined when a key is missing (oslo.policy then says false). */
function substitute(template: Template, target: PolicyTarget): string | undefined {
  let out = '';
  for (const part of template.parts) {
    if (part.kind === 'text') {
      out += part.text;
      continue;
    }
    const value = lookup(target, part.key);
    if (value === undefined) return undefined;
    out += pyStr(value);
  }
  return out;
}

function missingKeys(template: Template, target: PolicyTarget): string {
  return template.parts
    .filter((p) => p.kind === 'key' && lookup(target, p.key) === undefined)
    .map((p) => (p.kind === 'key' ? p.key : ''))
    .join(', ');
}

/** oslo.policy's GenericCheck walk: lists on the way match when any element matches. */
function findInCreds(value: PolicyValue | undefined, path: readonly string[], match: string): boolean {
  if (value === undefined) return false;
  if (path.length === 0) return match === pyStr(value);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const [head = '', ...rest] = path;
  const map = value as { readonly [key: string]: PolicyValue };
  if (!Object.hasOwn(map, head)) return false;
  const next = map[head];
  if (Array.isArray(next)) return next.some((item: PolicyValue) => findInCreds(item, rest, match));
  return findInCreds(next, rest, match);
}
