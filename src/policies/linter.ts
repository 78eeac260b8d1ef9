/**
 * Finds what makes a policy wrong before a user meets it in a live cloud:
 * rules that do not parse, references to rules no layer defines, cycles,
 * roles the policy set does not declare, helper rules nothing uses, write
 * actions anyone may call, and layers that disagree about a rule.
 */
import type { SourceLocation } from '../diagnostics/index.js';
import { formatExpr, referencedRules, walkExpr, type PolicyExpr } from './ast.js';
import { looksLikeAction, isWriteAction, WELL_KNOWN_RULES } from './heuristics.js';
import { nearest } from '../names/index.js';
import { locateInRule } from './parser.js';
import { resolvePolicy, type EffectivePolicy, type RuleDefinition } from './policy.js';
import type { PolicyLayer } from './types.js';

export type LintCode =
  /** A value in the file is not a rule, or a YAML trap changed it (error). */
  | 'bad-value'
  /** A rule oslo.policy cannot parse (error). */
  | 'syntax'
  /** `rule:X` where no layer defines X (error). */
  | 'undefined-rule'
  /** Rules that refer to each other in a circle (error). */
  | 'cycle'
  /** `role:X` where the policy set does not declare X (error). */
  | 'undeclared-role'
  /** A write action anyone may call: `""`, `@`, or a rule that always allows (warning). */
  | 'open-write'
  /** A helper rule no action uses (warning). */
  | 'unused-rule'
  /** Two override layers set the same rule differently; the higher one wins (warning). */
  | 'redefined'
  /** An override layer replaces the chart's default rule (info). */
  | 'overrides-default'
  /** A layer sets a rule exactly as the layer below it does (info). */
  | 'redundant-override'
  /** An `http:`/`https:` check: never evaluated by flotilla (info). */
  | 'http-check'
  /** A policy set file for a chart the app does not have (warning). */
  | 'unknown-chart'
  /** Horizon's copy of a service's rule decides differently from the service (warning). */
  | 'horizon-drift';

export type LintSeverity = 'error' | 'warning' | 'info';

export interface LintFinding {
  readonly code: LintCode;
  readonly severity: LintSeverity;
  readonly message: string;
  readonly location?: SourceLocation;
  /** The chart (and `/section`) the finding is about, when linting an app. */
  readonly scope?: string;
  readonly rule?: string;
}

export interface DeclaredRoles {
  /** Role names, compared case-insensitively (as oslo.policy compares roles). */
  readonly names: readonly string[];
  /** Who declares them, for messages: `policy set enhanced (policies/enhanced/set.yaml)`. */
  readonly declaredBy: string;
}

export interface LintOptions {
  /** When given, every `role:X` of the effective policy must name one of these. */
  readonly declaredRoles?: DeclaredRoles;
  /** Prefixed to findings (`nova`, `horizon/nova`). */
  readonly scope?: string;
}

/** Lints the layers of one section (see resolvePolicy). */
export function lintPolicy(layers: readonly PolicyLayer[], options: LintOptions = {}): LintFinding[] {
  return lintResolved(resolvePolicy(layers), options);
}

export function lintResolved(policy: EffectivePolicy, options: LintOptions = {}): LintFinding[] {
  const findings: LintFinding[] = [];
  const add = (finding: LintFinding): void => {
    findings.push(options.scope ? { ...finding, scope: options.scope } : finding);
  };
  for (const layer of policy.layers) {
    for (const problem of layer.problems ?? []) {
      add({ code: 'bad-value', severity: problem.severity, message: problem.message, ...loc(problem.location) });
    }
  }
  checkSyntax(policy, add);
  checkReferences(policy, add);
  checkCycles(policy, add);
  if (options.declaredRoles) checkRoles(policy, options.declaredRoles, add);
  checkOpenWrites(policy, add);
  checkUnused(policy, add);
  checkLayering(policy, add);
  checkHttp(policy, add);
  return sortFindings(findings);
}

type Add = (finding: LintFinding) => void;

function loc(location: SourceLocation | undefined): { location?: SourceLocation } {
  return location ? { location } : {};
}

function at(definition: RuleDefinition, index: number): SourceLocation {
  return locateInRule(definition.source, index);
}

function keyAt(definition: RuleDefinition): SourceLocation {
  return definition.source.keyLocation ?? definition.source.location;
}

function describeDefinition(definition: RuleDefinition): string {
  return `${definition.layer.label} (${shortLocation(definition.source.location)})`;
}

function shortLocation(location: SourceLocation): string {
  return `${location.file.split(/[\\/]/).slice(-2).join('/')}:${location.line}:${location.column}`;
}

/** Every definition that does not parse, also those a higher layer replaces. */
function checkSyntax(policy: EffectivePolicy, add: Add): void {
  for (const [name, entries] of policy.history) {
    for (const entry of entries) {
      if (entry.kind !== 'set' || !entry.definition.error) continue;
      const error = entry.definition.error;
      const shadowed = policy.rules.get(name) !== entry.definition;
      add({
        code: 'syntax',
        severity: 'error',
        rule: name,
        message: `rule "${name}": ${error.detail}${shadowed ? ' (a higher layer replaces this rule)' : ''}`,
        location: error.location ?? at(entry.definition, error.index),
      });
    }
  }
}

function checkReferences(policy: EffectivePolicy, add: Add): void {
  const fallback = policy.rules.get('default');
  for (const definition of policy.rules.values()) {
    if (!definition.expr) continue;
    for (const ref of referencedRules(definition.expr)) {
      if (policy.rules.has(ref.name)) continue;
      const guess = nearest(ref.name, policy.rules.keys());
      const consequence =
        fallback && ref.name !== 'default'
          ? 'oslo.policy falls back on the "default" rule'
          : 'oslo.policy treats it as false';
      add({
        code: 'undefined-rule',
        severity: 'error',
        rule: definition.name,
        message: `rule "${definition.name}" refers to rule:${ref.name}, which no layer defines; ${consequence}${guess ? ` (did you mean "${guess}"?)` : ''}`,
        location: at(definition, ref.span.start),
      });
    }
  }
}

/** Strongly connected components of the rule graph (Tarjan); each cycle is reported once. */
function checkCycles(policy: EffectivePolicy, add: Add): void {
  const edges = new Map<string, string[]>();
  for (const definition of policy.rules.values()) {
    const targets = definition.expr ? referencedRules(definition.expr).map((r) => r.name) : [];
    edges.set(definition.name, [...new Set(targets.filter((t) => policy.rules.has(t)))]);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      components.push(component);
    }
  };
  for (const name of edges.keys()) if (!index.has(name)) visit(name);
  for (const component of components) {
    const first = [...component].sort()[0];
    if (first === undefined) continue;
    const selfLoop = component.length === 1 && (edges.get(first) ?? []).includes(first);
    if (component.length === 1 && !selfLoop) continue;
    const path = shortestCycle(first, new Set(component), edges);
    const definition = policy.rules.get(first);
    const ref = definition?.expr ? referencedRules(definition.expr).find((r) => r.name === path[1]) : undefined;
    add({
      code: 'cycle',
      severity: 'error',
      rule: first,
      message: `rules refer to each other in a cycle: ${path.join(' → ')}; oslo.policy refuses such a policy`,
      ...loc(definition ? at(definition, ref?.span.start ?? 0) : undefined),
    });
  }
}

/** The shortest path from `start` back to itself inside one component (breadth first). */
function shortestCycle(start: string, members: ReadonlySet<string>, edges: ReadonlyMap<string, readonly string[]>): string[] {
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    if (node === undefined) break;
    for (const next of [...(edges.get(node) ?? [])].sort()) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [node];
        let step = node;
        while (step !== start) {
          step = parent.get(step) ?? start;
          path.unshift(step);
        }
        return [...path, start];
      }
      if (!parent.has(next)) {
        parent.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

function checkRoles(policy: EffectivePolicy, declared: DeclaredRoles, add: Add): void {
  const known = new Set(declared.names.map((n) => n.toLowerCase()));
  for (const definition of policy.rules.values()) {
    if (!definition.expr) continue;
    for (const node of walkExpr(definition.expr)) {
      if (node.kind !== 'role') continue;
      const [only] = node.role.parts;
      if (node.role.parts.length !== 1 || only?.kind !== 'text') continue; // substituted role names are not static
      if (known.has(only.text.toLowerCase())) continue;
      const guess = nearest(only.text, declared.names);
      add({
        code: 'undeclared-role',
        severity: 'error',
        rule: definition.name,
        message: `rule "${definition.name}" checks role "${only.text}", which ${declared.declaredBy} does not declare${guess ? ` (did you mean "${guess}"?)` : ''}`,
        location: at(definition, node.span.start),
      });
    }
  }
}

/** Whether an expression allows every request, following rule references; with the chain that shows it. */
function alwaysAllows(policy: EffectivePolicy): (expr: PolicyExpr) => string[] | undefined {
  const memo = new Map<string, string[] | null>();
  const rule = (name: string): string[] | undefined => {
    if (memo.has(name)) return memo.get(name) ?? undefined;
    memo.set(name, null); // cycles never allow
    const definition = policy.rules.get(name);
    const found = definition?.expr ? expr(definition.expr) : undefined;
    const result = found ? [`rule:${name} = "${definition?.source.text ?? ''}"`, ...found] : undefined;
    memo.set(name, result ?? null);
    return result;
  };
  const expr = (node: PolicyExpr): string[] | undefined => {
    switch (node.kind) {
      case 'true':
        return [];
      case 'rule':
        return rule(node.name);
      case 'or':
        for (const operand of node.operands) {
          const chain = expr(operand);
          if (chain) return chain;
        }
        return undefined;
      case 'and': {
        const chains: string[] = [];
        for (const operand of node.operands) {
          const chain = expr(operand);
          if (!chain) return undefined;
          chains.push(...chain);
        }
        return chains;
      }
      case 'not':
        return alwaysDenies(node.operand) ? [] : undefined;
      default:
        return undefined;
    }
  };
  const alwaysDenies = (node: PolicyExpr): boolean => {
    switch (node.kind) {
      case 'false':
        return true;
      case 'and':
        return node.operands.some(alwaysDenies);
      case 'or':
        return node.operands.every(alwaysDenies);
      case 'not':
        return expr(node.operand) !== undefined;
      default:
        return false;
    }
  };
  return expr;
}

function checkOpenWrites(policy: EffectivePolicy, add: Add): void {
  const allows = alwaysAllows(policy);
  for (const definition of policy.rules.values()) {
    if (!definition.expr || !isWriteAction(definition.name)) continue;
    const chain = allows(definition.expr);
    if (!chain) continue;
    const how = chain.length > 0 ? ` (through ${chain.join(' → ')})` : ` ("${definition.source.text}")`;
    add({
      code: 'open-write',
      severity: 'warning',
      rule: definition.name,
      message: `write action "${definition.name}" is open to every authenticated user${how}`,
      location: definition.source.location,
    });
  }
}

/**
 * A rule is a root when it looks like an API action, is a name services
 * read (`default`, `context_is_admin`), or comes from a defaults layer (the
 * chart's own rules mirror the service's registered policy). Any other rule
 * not reachable from a root through `rule:` references is unused.
 */
function checkUnused(policy: EffectivePolicy, add: Add): void {
  const fromDefaults = (name: string): boolean =>
    (policy.history.get(name) ?? []).some((e) => (e.kind === 'set' ? e.definition.layer : e.layer).kind === 'defaults');
  const reached = new Set<string>();
  const queue = [...policy.rules.keys()].filter((n) => looksLikeAction(n) || WELL_KNOWN_RULES.has(n) || fromDefaults(n));
  while (queue.length > 0) {
    const name = queue.pop();
    if (name === undefined || reached.has(name)) continue;
    reached.add(name);
    const expr = policy.rules.get(name)?.expr;
    if (expr) for (const ref of referencedRules(expr)) if (!reached.has(ref.name)) queue.push(ref.name);
  }
  for (const definition of policy.rules.values()) {
    if (reached.has(definition.name)) continue;
    add({
      code: 'unused-rule',
      severity: 'warning',
      rule: definition.name,
      message: `rule "${definition.name}" is never used: no action refers to it (directly or through other rules), and its name does not look like an API action`,
      location: keyAt(definition),
    });
  }
}

function canonical(definition: RuleDefinition): string {
  return definition.expr ? formatExpr(definition.expr) : definition.source.text.trim();
}

function checkLayering(policy: EffectivePolicy, add: Add): void {
  for (const [name, entries] of policy.history) {
    let previous: RuleDefinition | undefined;
    for (const entry of entries) {
      if (entry.kind === 'removed') {
        previous = undefined;
        continue;
      }
      const current = entry.definition;
      if (previous && previous.layer !== current.layer) {
        if (canonical(previous) === canonical(current)) {
          add({
            code: 'redundant-override',
            severity: 'info',
            rule: name,
            message: `rule "${name}" is set by ${current.layer.label} exactly as by ${describeDefinition(previous)}`,
            location: current.source.location,
          });
        } else if (previous.layer.kind === 'defaults' && current.layer.kind === 'override') {
          add({
            code: 'overrides-default',
            severity: 'info',
            rule: name,
            message: `rule "${name}" replaces the default "${previous.source.text}" of ${describeDefinition(previous)}`,
            location: current.source.location,
          });
        } else {
          add({
            code: 'redefined',
            severity: 'warning',
            rule: name,
            message: `rule "${name}" is defined differently by ${describeDefinition(previous)} as "${previous.source.text}"; ${current.layer.label} wins with "${current.source.text}"`,
            location: current.source.location,
          });
        }
      }
      previous = current;
    }
  }
}

function checkHttp(policy: EffectivePolicy, add: Add): void {
  for (const definition of policy.rules.values()) {
    if (!definition.expr) continue;
    for (const node of walkExpr(definition.expr)) {
      if (node.kind !== 'http') continue;
      add({
        code: 'http-check',
        severity: 'info',
        rule: definition.name,
        message: `rule "${definition.name}" asks ${node.scheme}:${node.url}; flotilla does not call remote checks (check and matrix count them as false)`,
        location: at(definition, node.span.start),
      });
    }
  }
}

const SEVERITY_ORDER: Record<LintSeverity, number> = { error: 0, warning: 1, info: 2 };

export function sortFindings(findings: readonly LintFinding[]): LintFinding[] {
  return [...findings].sort(
    (a, b) =>
      (a.location?.file ?? '').localeCompare(b.location?.file ?? '') ||
      (a.location?.line ?? 0) - (b.location?.line ?? 0) ||
      (a.location?.column ?? 0) - (b.location?.column ?? 0) ||
      SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] ||
      a.message.localeCompare(b.message),
  );
}

export interface LintSummary {
  readonly errors: number;
  readonly warnings: number;
  readonly infos: number;
}

export function summarize(findings: readonly LintFinding[]): LintSummary {
  return {
    errors: findings.filter((f) => f.severity === 'error').length,
    warnings: findings.filter((f) => f.severity === 'warning').length,
    infos: findings.filter((f) => f.severity === 'info').length,
  };
}
