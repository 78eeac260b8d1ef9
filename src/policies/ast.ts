/**
 * The syntax tree of one oslo.policy rule. Every node records the span of
 * rule text it came from (`start`..`end`, 0-based indexes into the rule
 * text) so a finding can point at the exact column in the YAML file.
 */

/** A half-open range of indexes into a rule's text. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/**
 * The right-hand side of a check (`project_id:%(project_id)s`): literal text
 * and `%(key)s` substitutions filled from the target, as Python's `%`
 * operator does in oslo.policy.
 */
export type TemplatePart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'key'; readonly key: string; readonly span: Span };

export interface Template {
  readonly raw: string;
  readonly parts: readonly TemplatePart[];
}

/**
 * The left-hand side of a generic check: either a literal that oslo.policy
 * compares with the substituted match (`'public':%(visibility)s`, `True:…`),
 * or a dotted path into the credentials (`project_id`, `token.user.id`).
 */
export type GenericSubject =
  | { readonly kind: 'literal'; readonly value: string }
  | { readonly kind: 'creds'; readonly path: readonly string[] };

export type PolicyExpr =
  /** `@`, or an empty rule: always true. */
  | { readonly kind: 'true'; readonly span: Span }
  /** `!`: always false. */
  | { readonly kind: 'false'; readonly span: Span }
  /** `rule:NAME`: the result of another rule. */
  | { readonly kind: 'rule'; readonly name: string; readonly span: Span }
  /** `role:NAME`: the caller holds the role (case-insensitive); the name may use substitutions. */
  | { readonly kind: 'role'; readonly role: Template; readonly span: Span }
  /** `http:URL` / `https:URL`: asks a remote server; recognised, never evaluated here. */
  | { readonly kind: 'http'; readonly scheme: 'http' | 'https'; readonly url: string; readonly span: Span }
  /**
   * Neutron's `field:RESOURCE:FIELD=VALUE` check: the target's FIELD equals
   * VALUE (or matches `~REGEX`).
   */
  | {
      readonly kind: 'field';
      readonly resource: string;
      readonly field: string;
      readonly value: string;
      readonly span: Span;
    }
  /** `LEFT:MATCH`: a credential (or literal) equals the substituted match. */
  | {
      readonly kind: 'generic';
      readonly subject: GenericSubject;
      readonly subjectText: string;
      readonly match: Template;
      readonly span: Span;
    }
  | { readonly kind: 'not'; readonly operand: PolicyExpr; readonly span: Span }
  | { readonly kind: 'and'; readonly operands: readonly PolicyExpr[]; readonly span: Span }
  | { readonly kind: 'or'; readonly operands: readonly PolicyExpr[]; readonly span: Span };

export type CheckExpr = Extract<PolicyExpr, { kind: 'true' | 'false' | 'rule' | 'role' | 'http' | 'field' | 'generic' }>;

/** Every node of a tree, depth first, parents before children. */
export function* walkExpr(expr: PolicyExpr): Generator<PolicyExpr> {
  yield expr;
  switch (expr.kind) {
    case 'not':
      yield* walkExpr(expr.operand);
      break;
    case 'and':
    case 'or':
      for (const operand of expr.operands) yield* walkExpr(operand);
      break;
    default:
      break;
  }
}

/** The names a rule refers to with `rule:NAME`, in order of appearance. */
export function referencedRules(expr: PolicyExpr): { name: string; span: Span }[] {
  const out: { name: string; span: Span }[] = [];
  for (const node of walkExpr(expr)) if (node.kind === 'rule') out.push({ name: node.name, span: node.span });
  return out;
}

function formatTemplate(t: Template): string {
  return t.parts.map((p) => (p.kind === 'key' ? `%(${p.key})s` : p.text.replace(/%/g, '%%'))).join('');
}

/** One check written back as oslo.policy text. */
export function formatCheck(expr: CheckExpr): string {
  switch (expr.kind) {
    case 'true':
      return '@';
    case 'false':
      return '!';
    case 'rule':
      return `rule:${expr.name}`;
    case 'role':
      return `role:${formatTemplate(expr.role)}`;
    case 'http':
      return `${expr.scheme}:${expr.url}`;
    case 'field':
      return `field:${expr.resource}:${expr.field}=${expr.value}`;
    case 'generic':
      return `${expr.subjectText}:${formatTemplate(expr.match)}`;
  }
}

/**
 * A canonical text for a tree: same tree, same text, whatever the spacing,
 * redundant parentheses or keyword case of the source. Used to tell whether
 * two layers really define a rule differently.
 */
export function formatExpr(expr: PolicyExpr, parent: 'or' | 'and' | 'not' | 'top' = 'top'): string {
  switch (expr.kind) {
    case 'not':
      return `not ${formatExpr(expr.operand, 'not')}`;
    case 'and': {
      const text = expr.operands.map((o) => formatExpr(o, 'and')).join(' and ');
      return parent === 'not' ? `(${text})` : text;
    }
    case 'or': {
      const text = expr.operands.map((o) => formatExpr(o, 'or')).join(' or ');
      return parent === 'and' || parent === 'not' ? `(${text})` : text;
    }
    default:
      return formatCheck(expr);
  }
}
