/**
 * `.helmignore` exactly as Helm evaluates it (helm pkg/ignore), so that what
 * we stage and package is what `helm package` would take:
 * - one glob per line (Go `filepath.Match`: `*`, `?`, `[...]`, `\` escapes;
 *   `*` never crosses `/`), blank lines and `#` comments skipped, `**` refused;
 * - a pattern without `/` matches the base name at any depth; with `/` it
 *   matches the whole path from the chart root (a leading `/` is dropped);
 * - a trailing `/` restricts the rule to directories; an ignored directory
 *   is skipped with everything under it;
 * - rules run in order and the first hit decides. Negation is Helm's, not
 *   git's: a `!p` rule IGNORES every path that does NOT match `p` (so
 *   `*.txt` + `!keep.txt` ignores Chart.yaml too — `helm package` then fails
 *   with "Chart.yaml file is missing"). We reproduce it and explain it.
 * - Helm always adds `templates/.?*` (dotfiles directly in templates/).
 * `.helmignore` itself is packaged (Helm does not exclude it).
 */
import { posix } from 'node:path';
import { HelmignoreError } from './errors.js';

export const HELMIGNORE = '.helmignore';
const DEFAULT_RULES = ['templates/.?*'];

/** One parsed rule. */
export interface HelmignoreRule {
  /** The line as written (trimmed). */
  readonly raw: string;
  /** 1-based line in the .helmignore file; 0 for Helm's built-in default. */
  readonly line: number;
  readonly negate: boolean;
  readonly dirOnly: boolean;
  /** Whether the glob is matched against the whole relative path (else the base name). */
  readonly wholePath: boolean;
  readonly regex: RegExp;
}

class GlobSyntaxError extends Error {}

function escapeChar(c: string): string {
  return `\\u{${c.codePointAt(0)!.toString(16)}}`;
}

/** Translates a Go `filepath.Match` pattern (Unix) to an anchored RegExp, refusing what Go calls ErrBadPattern. */
export function goGlobToRegExp(pattern: string): RegExp {
  const chars = [...pattern];
  let out = '^';
  let i = 0;
  const next = (): string => {
    if (i >= chars.length) throw new GlobSyntaxError('unterminated pattern');
    return chars[i++]!;
  };
  const classChar = (): string => {
    const c = next();
    if (c === '\\') return next();
    if (c === '-' || c === ']') throw new GlobSyntaxError(`unexpected ${JSON.stringify(c)} in character class`);
    return c;
  };
  while (i < chars.length) {
    const c = chars[i++]!;
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '\\') {
      if (i >= chars.length) throw new GlobSyntaxError('pattern ends with a backslash');
      out += escapeChar(chars[i++]!);
    } else if (c === '[') {
      let cls = '';
      if (chars[i] === '^') {
        cls += '^';
        i++;
      }
      let ranges = 0;
      for (;;) {
        if (i >= chars.length) throw new GlobSyntaxError('unterminated character class');
        if (chars[i] === ']' && ranges > 0) {
          i++;
          break;
        }
        const lo = classChar();
        let hi = lo;
        if (chars[i] === '-') {
          i++;
          hi = classChar();
          if (hi.codePointAt(0)! < lo.codePointAt(0)!) throw new GlobSyntaxError(`bad range ${lo}-${hi}`);
        }
        cls += lo === hi ? escapeChar(lo) : `${escapeChar(lo)}-${escapeChar(hi)}`;
        ranges++;
      }
      out += `[${cls}]`;
    } else out += escapeChar(c);
  }
  return new RegExp(`${out}$`, 'u');
}

function parseRule(text: string, line: number): HelmignoreRule | { error: string } | undefined {
  const raw = text.trim();
  if (raw === '' || raw.startsWith('#')) return undefined;
  if (raw.includes('**')) return { error: 'double-star (**) syntax is not supported by Helm' };
  let rule = raw;
  const negate = rule.startsWith('!');
  if (negate) rule = rule.slice(1);
  const dirOnly = rule.endsWith('/');
  if (dirOnly) rule = rule.slice(0, -1);
  const rooted = rule.startsWith('/');
  if (rooted) rule = rule.slice(1);
  const wholePath = rooted || rule.includes('/');
  try {
    return { raw, line, negate, dirOnly, wholePath, regex: goGlobToRegExp(rule) };
  } catch (error) {
    if (error instanceof GlobSyntaxError) return { error: `bad pattern ${JSON.stringify(raw)}: ${error.message}` };
    throw error;
  }
}

export class HelmignoreRules {
  readonly rules: readonly HelmignoreRule[];
  /** The .helmignore file the rules came from, if any. */
  readonly file?: string;

  private constructor(rules: readonly HelmignoreRule[], file?: string) {
    this.rules = rules;
    this.file = file;
  }

  /** Parses `.helmignore` text; `file` names it in errors. Helm's default rule is appended. */
  static parse(text: string, file = HELMIGNORE): HelmignoreRules {
    const rules: HelmignoreRule[] = [];
    const lines = text.split(/\r?\n/);
    lines.forEach((lineText, index) => {
      const parsed = parseRule(lineText, index + 1);
      if (parsed === undefined) return;
      if ('error' in parsed) {
        const column = lineText.length - lineText.trimStart().length + 1;
        throw new HelmignoreError(parsed.error, { file, line: index + 1, column });
      }
      rules.push(parsed);
    });
    return new HelmignoreRules([...rules, ...HelmignoreRules.defaults()], file);
  }

  /** No .helmignore: only Helm's built-in default. */
  static defaultsOnly(): HelmignoreRules {
    return new HelmignoreRules(HelmignoreRules.defaults());
  }

  private static defaults(): HelmignoreRule[] {
    return DEFAULT_RULES.map((text) => parseRule(text, 0) as HelmignoreRule);
  }

  /**
   * Whether Helm would skip `path` (relative to the chart root, `/`-separated).
   * For a directory, `true` means the whole subtree is skipped.
   */
  ignores(path: string, isDir: boolean): boolean {
    return this.decidingRule(path, isDir) !== undefined;
  }

  /** The rule that makes Helm skip `path`, or undefined when it is kept. */
  decidingRule(path: string, isDir: boolean): HelmignoreRule | undefined {
    if (path === '' || path === '.' || path === './') return undefined;
    const base = posix.basename(path);
    for (const rule of this.rules) {
      const subject = rule.wholePath ? path : base;
      if (rule.negate) {
        // Helm: a negated rule ignores every path it does not match.
        if (rule.dirOnly && !isDir) return rule;
        if (!rule.regex.test(subject)) return rule;
        continue;
      }
      if (rule.dirOnly && !isDir) continue;
      if (rule.regex.test(subject)) return rule;
    }
    return undefined;
  }
}
