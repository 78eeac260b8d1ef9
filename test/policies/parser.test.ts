import { describe, expect, it } from 'vitest';
import {
  formatCheck,
  formatExpr,
  parseCheck,
  parseLegacyRule,
  parseRuleText,
  PolicySyntaxError,
  tokenize,
  type PolicyExpr,
} from '../../src/policies/index.js';

/** The tree as an S-expression, so tests see its shape, not a re-printed text. */
function tree(expr: PolicyExpr): string {
  switch (expr.kind) {
    case 'and':
    case 'or':
      return `(${expr.kind} ${expr.operands.map(tree).join(' ')})`;
    case 'not':
      return `(not ${tree(expr.operand)})`;
    default:
      return formatCheck(expr);
  }
}

const parse = (text: string) => tree(parseRuleText(text));

function syntaxError(text: string): PolicySyntaxError {
  try {
    parseRuleText(text);
  } catch (error) {
    if (error instanceof PolicySyntaxError) return error;
    throw error;
  }
  throw new Error(`"${text}" parsed`);
}

describe('precedence: not binds tighter than and, and tighter than or', () => {
  it('reads "a or b and c" as a or (b and c)', () => {
    expect(parse('role:a or role:b and role:c')).toBe('(or role:a (and role:b role:c))');
  });

  it('reads "a and b or c" as (a and b) or c', () => {
    expect(parse('role:a and role:b or role:c')).toBe('(or (and role:a role:b) role:c)');
  });

  it('applies not to the next check only', () => {
    expect(parse('not role:a and role:b')).toBe('(and (not role:a) role:b)');
    expect(parse('role:a or not role:b and role:c')).toBe('(or role:a (and (not role:b) role:c))');
  });

  it('nests not', () => {
    expect(parse('not not role:a')).toBe('(not (not role:a))');
  });

  it('flattens chains of the same operator', () => {
    expect(parse('role:a and role:b and role:c or role:d or role:e')).toBe('(or (and role:a role:b role:c) role:d role:e)');
  });

  it('takes keywords in any case, as oslo.policy does', () => {
    expect(parse('NOT role:a AND role:b Or role:c')).toBe('(or (and (not role:a) role:b) role:c)');
  });
});

describe('parentheses', () => {
  it('override precedence', () => {
    expect(parse('(role:a or role:b) and role:c')).toBe('(and (or role:a role:b) role:c)');
    expect(parse('not (role:a or role:b)')).toBe('(not (or role:a role:b))');
  });

  it('may hug their checks and nest', () => {
    expect(parse('((role:a and (role:b or role:c)))')).toBe('(and role:a (or role:b role:c))');
  });

  it('keep a substitution intact when it ends a parenthesised check', () => {
    expect(parse('(role:member and project_id:%(project_id)s)')).toBe('(and role:member project_id:%(project_id)s)');
  });

  it('reports an unclosed "(" at its column', () => {
    const error = syntaxError('role:a and (role:b or role:c');
    expect(error.index).toBe(11);
    expect(error.detail).toMatch(/never closed/);
  });

  it('reports a stray ")" at its column', () => {
    const error = syntaxError('role:a) or role:b');
    expect(error.index).toBe(6);
    expect(error.detail).toMatch(/no matching/);
  });

  it('refuses parentheses glued to keywords: oslo.policy splits on whitespace only', () => {
    const error = syntaxError('role:a or(role:b)');
    expect(error.index).toBe(9); // the "(" glued to "or"
    expect(error.detail).toMatch(/splits rules on whitespace/);
  });
});

describe('checks', () => {
  it('knows @, !, rule:, role:, http:, https:, field: and generic checks', () => {
    expect(parseCheck('@').kind).toBe('true');
    expect(parseCheck('!').kind).toBe('false');
    expect(parseCheck('rule:admin_api')).toMatchObject({ kind: 'rule', name: 'admin_api' });
    expect(parseCheck('role:admin')).toMatchObject({ kind: 'role', role: { parts: [{ kind: 'text', text: 'admin' }] } });
    expect(parseCheck('http://policy.example.com/check')).toMatchObject({ kind: 'http', scheme: 'http', url: '//policy.example.com/check' });
    expect(parseCheck('https://policy.example.com/check')).toMatchObject({ kind: 'http', scheme: 'https' });
    expect(parseCheck('field:networks:shared=True')).toMatchObject({ kind: 'field', resource: 'networks', field: 'shared', value: 'True' });
    expect(parseCheck('field:networks:router:external=True')).toMatchObject({ field: 'router:external', value: 'True' });
    expect(parseCheck('is_admin:True')).toMatchObject({ kind: 'generic', subject: { kind: 'creds', path: ['is_admin'] } });
  });

  it('an empty rule allows everyone; "@" too', () => {
    expect(parseRuleText('').kind).toBe('true');
    expect(parseRuleText('@').kind).toBe('true');
    expect(parseRuleText('!').kind).toBe('false');
  });

  it('splits a generic check at the first colon only', () => {
    expect(parseCheck('role:compute:admin')).toMatchObject({ kind: 'role', role: { raw: 'compute:admin' } });
  });

  it('reads %(key)s substitutions, with any characters but ")" in the key', () => {
    const check = parseCheck('user_id:%(target.user.id)s', 10);
    expect(check).toMatchObject({
      kind: 'generic',
      subject: { kind: 'creds', path: ['user_id'] },
      match: { parts: [{ kind: 'key', key: 'target.user.id', span: { start: 18, end: 36 } }] },
    });
    expect(parseCheck('project_id:%(network:project_id)s')).toMatchObject({
      match: { parts: [{ kind: 'key', key: 'network:project_id' }] },
    });
  });

  it('mixes literal text and substitutions, and reads %% as a percent sign', () => {
    expect(parseCheck('name:pre-%(a)s-%%-%(b)s')).toMatchObject({
      match: {
        parts: [
          { kind: 'text', text: 'pre-' },
          { kind: 'key', key: 'a' },
          { kind: 'text', text: '-%-' },
          { kind: 'key', key: 'b' },
        ],
      },
    });
  });

  it('reads Python literals on the left of a generic check', () => {
    expect(parseCheck("'public':%(visibility)s")).toMatchObject({ subject: { kind: 'literal', value: 'public' } });
    expect(parseCheck('"shared":%(visibility)s')).toMatchObject({ subject: { kind: 'literal', value: 'shared' } });
    expect(parseCheck('True:%(enabled)s')).toMatchObject({ subject: { kind: 'literal', value: 'True' } });
    expect(parseCheck('42:%(count)s')).toMatchObject({ subject: { kind: 'literal', value: '42' } });
    expect(parseCheck('token.user.id:%(user_id)s')).toMatchObject({ subject: { kind: 'creds', path: ['token', 'user', 'id'] } });
  });

  it('refuses bad substitutions and half checks with the column of the fault', () => {
    expect(syntaxError('role:a or user_id:%(user_id').index).toBe(18);
    expect(syntaxError('user_id:%(user_id)d').detail).toMatch(/must end with "\)s"/);
    expect(syntaxError('user_id:50%').detail).toMatch(/stray "%"/);
    expect(syntaxError('role:a or admin').index).toBe(10);
    expect(syntaxError('role:a or admin').detail).toMatch(/not a check/);
    expect(syntaxError('role:').detail).toMatch(/nothing after ":"/);
    expect(syntaxError(':admin').detail).toMatch(/nothing before ":"/);
    expect(syntaxError('field:networks:shared').detail).toMatch(/field:RESOURCE:FIELD=VALUE/);
    expect(syntaxError('field:port:device_owner=~network:[').detail).toMatch(/bad regular expression/);
  });

  it('refuses a quoted string where a check belongs', () => {
    expect(syntaxError("role:a or 'public'").detail).toMatch(/quoted string is not a check/);
  });

  it('refuses two checks without an operator, and a rule ending in an operator', () => {
    expect(syntaxError('role:a role:b')).toMatchObject({ index: 7 });
    expect(syntaxError('role:a or')).toMatchObject({ index: 9 });
    expect(syntaxError('and role:a').detail).toMatch(/expected a check/);
  });

  it('refuses a rule that is only whitespace (oslo.policy would deny everything)', () => {
    expect(syntaxError('   ').detail).toMatch(/only whitespace/);
  });
});

describe('tokens', () => {
  it('peel parentheses off words and keep their positions', () => {
    expect(tokenize('(role:a or role:b)').map((t) => [t.kind, t.start, t.end])).toEqual([
      ['(', 0, 1],
      ['check', 1, 7],
      ['or', 8, 10],
      ['check', 11, 17],
      [')', 17, 18],
    ]);
  });

  it('record the span of every node', () => {
    const expr = parseRuleText('role:a or (role:b and not role:c)');
    expect(expr.span).toEqual({ start: 0, end: 32 });
    if (expr.kind !== 'or') throw new Error('or expected');
    expect(expr.operands[1]?.span).toEqual({ start: 11, end: 32 });
  });
});

describe('legacy list-of-lists rules', () => {
  it('joins inner lists with and, the outer list with or', () => {
    expect(tree(parseLegacyRule([['role:admin'], ['project_id:%(project_id)s', 'role:member']]))).toBe(
      '(or role:admin (and project_id:%(project_id)s role:member))',
    );
  });

  it('allows everyone for [], denies everyone for [[]]', () => {
    expect(parseLegacyRule([]).kind).toBe('true');
    expect(parseLegacyRule([[]]).kind).toBe('false');
  });

  it('parses each item as one check', () => {
    expect(() => parseLegacyRule([['role:a or role:b']])).toThrow(PolicySyntaxError);
  });
});

describe('canonical text', () => {
  it('is the same for rules that differ only in spacing, case of keywords and redundant parentheses', () => {
    const a = formatExpr(parseRuleText('(role:a)  AND (role:b or role:c)'));
    const b = formatExpr(parseRuleText('role:a and (role:b OR role:c)'));
    expect(a).toBe(b);
    expect(a).toBe('role:a and (role:b or role:c)');
    expect(formatExpr(parseRuleText('role:a and (role:b and role:c)'))).toBe('role:a and role:b and role:c');
  });
});
