/**
 * Splits a rule into tokens exactly as oslo.policy does: on whitespace only,
 * then peeling `(` off the front and `)` off the back of each word. So
 * `(role:a or role:b)` is five tokens, but `role:a)or(role:b` is one check —
 * the parser reports that instead of guessing.
 */
import type { Span } from './ast.js';

export type TokenKind = '(' | ')' | 'and' | 'or' | 'not' | 'string' | 'check';

export interface Token extends Span {
  readonly kind: TokenKind;
  /** The token's text; for a quoted string, without its quotes. */
  readonly text: string;
}

export function tokenize(rule: string): Token[] {
  const tokens: Token[] = [];
  for (const word of rule.matchAll(/\S+/g)) {
    const start = word.index;
    const raw = word[0];
    let lead = 0;
    while (lead < raw.length && raw[lead] === '(') {
      tokens.push({ kind: '(', text: '(', start: start + lead, end: start + lead + 1 });
      lead += 1;
    }
    if (lead === raw.length) continue;
    const tok = raw.slice(lead);
    let cleanEnd = tok.length;
    while (cleanEnd > 0 && tok[cleanEnd - 1] === ')') cleanEnd -= 1;
    const clean = tok.slice(0, cleanEnd);
    const cleanStart = start + lead;
    const lowered = clean.toLowerCase();
    if (lowered === 'and' || lowered === 'or' || lowered === 'not') {
      tokens.push({ kind: lowered, text: clean, start: cleanStart, end: cleanStart + clean.length });
    } else if (clean.length > 0) {
      // oslo.policy tests the quotes on the word before trailing parentheses are peeled.
      const quoted = tok.length >= 2 && (tok[0] === '"' || tok[0] === "'") && tok[tok.length - 1] === tok[0];
      if (quoted) {
        tokens.push({ kind: 'string', text: tok.slice(1, -1), start: cleanStart, end: cleanStart + tok.length });
      } else {
        tokens.push({ kind: 'check', text: clean, start: cleanStart, end: cleanStart + clean.length });
      }
    }
    // (A quoted word ends with its quote, so it never has trailing parentheses.)
    for (let i = cleanEnd; i < tok.length; i += 1) {
      tokens.push({ kind: ')', text: ')', start: cleanStart + i, end: cleanStart + i + 1 });
    }
  }
  return tokens;
}
