/**
 * Parser for the oslo.policy rule language.
 *
 *   rule    := ""                       (allow everyone)
 *            | or
 *   or      := and ("or" and)*
 *   and     := unary ("and" unary)*
 *   unary   := "not" unary | "(" or ")" | check
 *   check   := "@" | "!" | KIND ":" MATCH
 *
 * `not` binds tighter than `and`, which binds tighter than `or`, as in
 * oslo.policy's shift-reduce parser; keywords are case-insensitive. KIND is
 * `rule`, `role`, `http`, `https`, Neutron's `field`, or anything else (a
 * generic check comparing a credential, or a literal, with MATCH). MATCH may
 * hold `%(key)s` substitutions filled from the target.
 *
 * Where oslo.policy logs a bad rule and silently denies, this parser throws
 * a PolicySyntaxError naming the column.
 */
import type { CheckExpr, GenericSubject, PolicyExpr, Span, Template, TemplatePart } from './ast.js';
import { PolicySyntaxError } from './errors.js';
import { tokenize, type Token } from './lexer.js';
import type { RuleSource } from './types.js';
import type { SourceLocation } from '../diagnostics/index.js';

/** Parses a rule's text. Errors carry the index inside the text, no file position. */
export function parseRuleText(text: string): PolicyExpr {
  if (text === '') return { kind: 'true', span: { start: 0, end: 0 } };
  if (text.trim() === '') {
    throw new PolicySyntaxError(
      'the rule is only whitespace: oslo.policy cannot parse it and denies every request (write "" to allow everyone, "!" to deny)',
      0,
    );
  }
  const tokens = tokenize(text);
  // Checks first: a parenthesis glued to a keyword makes a bad check, and
  // saying so explains the structural error it would otherwise cause.
  for (const token of tokens) if (token.kind === 'check') parseCheck(token.text, token.start);
  return new Parser(text, tokens).parse();
}

/** Parses a rule as written in a file; errors carry the file, line and column. */
export function parseRule(source: RuleSource): PolicyExpr {
  try {
    return source.legacy ? parseLegacyRule(source.legacy) : parseRuleText(source.text);
  } catch (error) {
    if (error instanceof PolicySyntaxError && !error.location) {
      throw new PolicySyntaxError(error.detail, error.index, locateInRule(source, error.index));
    }
    throw error;
  }
}

/** The file position of an index inside a rule's text. */
export function locateInRule(source: RuleSource, index: number): SourceLocation {
  if (source.locate) return source.locate(index);
  return { ...source.location, column: source.location.column + index };
}

/**
 * The text form of a legacy list-of-lists rule and where each item sits in
 * it: groups joined by `or`, items of a group by `and`. Loaders and the
 * parser share it so positions agree.
 */
export function legacyLayout(groups: readonly (readonly string[])[]): { text: string; offsets: number[][] } {
  const nonEmpty = groups.filter((g) => g.length > 0);
  if (groups.length === 0) return { text: '', offsets: [] };
  if (nonEmpty.length === 0) return { text: '!', offsets: groups.map(() => []) };
  let text = '';
  const offsets: number[][] = [];
  const wrap = nonEmpty.length > 1;
  let first = true;
  for (const group of groups) {
    const groupOffsets: number[] = [];
    offsets.push(groupOffsets);
    if (group.length === 0) continue;
    if (!first) text += ' or ';
    first = false;
    const paren = wrap && group.length > 1;
    if (paren) text += '(';
    group.forEach((item, i) => {
      if (i > 0) text += ' and ';
      groupOffsets.push(text.length);
      text += item;
    });
    if (paren) text += ')';
  }
  return { text, offsets };
}

/**
 * oslo.policy's list form: `[["role:admin"], ["project_id:%(project_id)s", "role:member"]]`.
 * Each item is one check (not a rule); an empty outer list allows everyone,
 * an outer list of only empty lists denies everyone.
 */
export function parseLegacyRule(groups: readonly (readonly string[])[]): PolicyExpr {
  const { text, offsets } = legacyLayout(groups);
  const whole: Span = { start: 0, end: text.length };
  if (groups.length === 0) return { kind: 'true', span: whole };
  const orList: PolicyExpr[] = [];
  groups.forEach((group, g) => {
    if (group.length === 0) return;
    const andList = group.map((item, i) => {
      const at = offsets[g]?.[i] ?? 0;
      if (/\s/.test(item) || item === '') {
        throw new PolicySyntaxError(`list item "${item}" must be exactly one check, without spaces (each item is one check)`, at);
      }
      return parseCheck(item, at);
    });
    const first = andList[0];
    const last = andList[andList.length - 1];
    if (andList.length === 1 && first) orList.push(first);
    else if (first && last) orList.push({ kind: 'and', operands: andList, span: { start: first.span.start, end: last.span.end } });
  });
  if (orList.length === 0) return { kind: 'false', span: whole };
  if (orList.length === 1 && orList[0]) return orList[0];
  return { kind: 'or', operands: orList, span: whole };
}

class Parser {
  private pos = 0;

  constructor(
    private readonly text: string,
    private readonly tokens: readonly Token[],
  ) {}

  parse(): PolicyExpr {
    const expr = this.parseOr();
    const extra = this.peek();
    if (extra) {
      if (extra.kind === ')') throw new PolicySyntaxError("')' has no matching '('", extra.start);
      throw new PolicySyntaxError(
        `expected "and", "or" or the end of the rule, found ${describe(extra)}`,
        extra.start,
      );
    }
    return expr;
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private parseOr(): PolicyExpr {
    const first = this.parseAnd();
    const operands = [first];
    while (this.peek()?.kind === 'or') {
      this.pos += 1;
      operands.push(this.parseAnd());
    }
    return operands.length === 1 ? first : { kind: 'or', operands, span: spanOf(operands) };
  }

  private parseAnd(): PolicyExpr {
    const first = this.parseUnary();
    const operands = [first];
    while (this.peek()?.kind === 'and') {
      this.pos += 1;
      operands.push(this.parseUnary());
    }
    return operands.length === 1 ? first : { kind: 'and', operands, span: spanOf(operands) };
  }

  private parseUnary(): PolicyExpr {
    const token = this.peek();
    if (!token) {
      const at = this.tokens.at(-1)?.end ?? this.text.length;
      const after = this.tokens.at(-1);
      throw new PolicySyntaxError(
        after ? `the rule ends after ${describe(after)}; a check, "not" or "(" must follow` : 'the rule is empty',
        at,
      );
    }
    switch (token.kind) {
      case 'not': {
        this.pos += 1;
        const operand = this.parseUnary();
        return { kind: 'not', operand, span: { start: token.start, end: operand.span.end } };
      }
      case '(': {
        this.pos += 1;
        const inner = this.parseOr();
        const close = this.peek();
        if (close?.kind !== ')') {
          if (!close) throw new PolicySyntaxError("'(' is never closed", token.start);
          throw new PolicySyntaxError(`expected "and", "or" or ")", found ${describe(close)}`, close.start);
        }
        this.pos += 1;
        return inner;
      }
      case 'check':
        this.pos += 1;
        return parseCheck(token.text, token.start);
      case 'string':
        throw new PolicySyntaxError(
          `a quoted string is not a check; to compare a literal write it before the colon, e.g. '${token.text}':%(field)s`,
          token.start,
        );
      default:
        throw new PolicySyntaxError(`expected a check, "not" or "(", found ${describe(token)}`, token.start);
    }
  }
}

function describe(token: Token): string {
  return `"${token.text}"`;
}

function spanOf(parts: readonly PolicyExpr[]): Span {
  return { start: parts[0]?.span.start ?? 0, end: parts[parts.length - 1]?.span.end ?? 0 };
}

/** Parses one check (`role:admin`, `@`, `project_id:%(project_id)s`) starting at `offset` in the rule. */
export function parseCheck(text: string, offset = 0): CheckExpr {
  const span: Span = { start: offset, end: offset + text.length };
  if (text === '@') return { kind: 'true', span };
  if (text === '!') return { kind: 'false', span };
  const colon = text.indexOf(':');
  if (colon < 0) {
    const paren = text.search(/[()]/);
    if (paren >= 0) throw parenError(text, offset + paren);
    throw new PolicySyntaxError(
      `"${text}" is not a check: expected KIND:MATCH (role:NAME, rule:NAME, FIELD:VALUE), "@" or "!"`,
      offset,
    );
  }
  const kind = text.slice(0, colon);
  const match = text.slice(colon + 1);
  const matchOffset = offset + colon + 1;
  const kindParen = kind.search(/[()]/);
  if (kindParen >= 0) throw parenError(text, offset + kindParen);
  if (kind === '') throw new PolicySyntaxError(`check "${text}" has nothing before ":"`, offset);
  if (match === '') throw new PolicySyntaxError(`check "${text}" has nothing after ":"`, offset + colon);
  switch (kind) {
    case 'rule':
      rejectParens(text, match, matchOffset);
      return { kind: 'rule', name: match, span };
    case 'role':
      return { kind: 'role', role: parseTemplate(text, match, matchOffset), span };
    case 'http':
    case 'https':
      return { kind: 'http', scheme: kind, url: match, span };
    case 'field': {
      rejectParens(text, match, matchOffset);
      const sep = match.indexOf(':');
      const eq = match.indexOf('=', sep + 1);
      if (sep <= 0 || eq < 0 || eq === sep + 1) {
        throw new PolicySyntaxError(
          `field check "${text}" must read field:RESOURCE:FIELD=VALUE (e.g. field:networks:shared=True)`,
          matchOffset,
        );
      }
      const value = match.slice(eq + 1);
      if (value.startsWith('~')) {
        try {
          new RegExp(value.slice(1));
        } catch (error) {
          throw new PolicySyntaxError(`field check "${text}": bad regular expression (${(error as Error).message})`, matchOffset + eq + 2);
        }
      }
      return {
        kind: 'field',
        resource: match.slice(0, sep),
        field: match.slice(sep + 1, eq),
        value,
        span,
      };
    }
    default:
      return {
        kind: 'generic',
        subject: genericSubject(kind),
        subjectText: kind,
        match: parseTemplate(text, match, matchOffset),
        span,
      };
  }
}

/**
 * oslo.policy first tries the left side as a Python literal (`'public'`,
 * `True`, `42`); anything else is a dotted path into the credentials.
 */
function genericSubject(kind: string): GenericSubject {
  const quoted = /^(['"])(.*)\1$/s.exec(kind);
  if (quoted) return { kind: 'literal', value: quoted[2] ?? '' };
  if (kind === 'True' || kind === 'False' || kind === 'None') return { kind: 'literal', value: kind };
  if (/^[-+]?\d+$/.test(kind)) return { kind: 'literal', value: String(BigInt(kind)) };
  if (/^[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?$/.test(kind)) {
    const n = Number(kind);
    return { kind: 'literal', value: Number.isInteger(n) ? `${n}.0` : String(n) };
  }
  return { kind: 'creds', path: kind.split('.') };
}

/** Splits a match into literal text and `%(key)s` substitutions (`%%` is a literal `%`). */
function parseTemplate(check: string, raw: string, offset: number): Template {
  const parts: TemplatePart[] = [];
  let text = '';
  let i = 0;
  while (i < raw.length) {
    const ch = raw[i];
    if (ch === '%') {
      if (raw[i + 1] === '%') {
        text += '%';
        i += 2;
        continue;
      }
      if (raw[i + 1] === '(') {
        const close = raw.indexOf(')', i + 2);
        if (close < 0) throw new PolicySyntaxError(`substitution in "${check}" is never closed: write %(key)s`, offset + i);
        if (raw[close + 1] !== 's') {
          throw new PolicySyntaxError(`substitution in "${check}" must end with ")s", as in %(key)s`, offset + close);
        }
        const key = raw.slice(i + 2, close);
        if (key === '') throw new PolicySyntaxError(`empty substitution %()s in "${check}"`, offset + i);
        if (text !== '') parts.push({ kind: 'text', text });
        text = '';
        parts.push({ kind: 'key', key, span: { start: offset + i, end: offset + close + 2 } });
        i = close + 2;
        continue;
      }
      throw new PolicySyntaxError(`stray "%" in "${check}": write %(key)s to substitute, %% for a percent sign`, offset + i);
    }
    if (ch === '(' || ch === ')') throw parenError(check, offset + i);
    text += ch;
    i += 1;
  }
  if (text !== '') parts.push({ kind: 'text', text });
  return { raw, parts };
}

function rejectParens(check: string, raw: string, offset: number): void {
  const at = raw.search(/[()]/);
  if (at >= 0) throw parenError(check, offset + at);
}

function parenError(check: string, index: number): PolicySyntaxError {
  return new PolicySyntaxError(
    `parenthesis inside "${check}": oslo.policy splits rules on whitespace only, so put spaces around "(", ")", "and", "or" and "not"`,
    index,
  );
}
