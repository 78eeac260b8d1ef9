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
  readonly glob: GoGlob;
}

class GlobSyntaxError extends Error {}

function escapeChar(c: string): string {
  return `\\u{${c.codePointAt(0)!.toString(16)}}`;
}

/** A run of a glob between stars: whether a star comes before it, and its characters as a sticky RegExp (none after a last star). */
interface Chunk {
  readonly star: boolean;
  readonly text?: RegExp;
}

/**
 * A Go `filepath.Match` pattern (Unix), matched as Go matches it: chunk by
 * chunk, each chunk after a star at the first place it fits (the last one
 * where it ends the name). A single RegExp of the whole pattern backtracks:
 * `*a*a*a*a*a*a*a*a*a*a*a*a*c` took 0.2 s on a name of 28 `a`s, and grows
 * without bound; this takes time in proportion to the name times the pattern.
 */
export class GoGlob {
  private constructor(private readonly chunks: readonly Chunk[]) {}

  /** Compiles `pattern`, refusing what Go calls ErrBadPattern. */
  static compile(pattern: string): GoGlob {
    const chars = [...pattern];
    const chunks: { star: boolean; source: string }[] = [];
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
    let current = { star: false, source: '' };
    chunks.push(current);
    while (i < chars.length) {
      const c = chars[i++]!;
      if (c === '*') {
        // Stars in a row are one star.
        if (current.source !== '' || !current.star) chunks.push((current = { star: true, source: '' }));
      } else if (c === '?') current.source += '[^/]';
      else if (c === '\\') {
        if (i >= chars.length) throw new GlobSyntaxError('pattern ends with a backslash');
        current.source += escapeChar(chars[i++]!);
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
        current.source += `[${cls}]`;
      } else current.source += escapeChar(c);
    }
    return new GoGlob(chunks.filter((chunk, index) => index > 0 || chunk.source !== '' || chunks.length === 1).map(({ star, source }) => (source === '' && star ? { star } : { star, text: new RegExp(source, 'uy') })));
  }

  /** Whether `name` matches (Go's Match, its loop over chunks). */
  test(name: string): boolean {
    let at = 0;
    for (const [index, { star, text }] of this.chunks.entries()) {
      // A star last matches the rest of the name, unless it holds a `/`.
      if (!text) return !name.includes('/', at);
      const last = index === this.chunks.length - 1;
      const end = matchAt(text, name, at);
      if (end !== undefined && (!last || end === name.length)) {
        at = end;
        continue;
      }
      if (!star) return false;
      let found: number | undefined;
      // The star takes one more character at a time, never a `/`.
      for (let skip = at; skip < name.length && name[skip] !== '/'; skip += name.codePointAt(skip)! > 0xffff ? 2 : 1) {
        const after = skip + (name.codePointAt(skip)! > 0xffff ? 2 : 1);
        const fit = matchAt(text, name, after);
        if (fit !== undefined && (!last || fit === name.length)) {
          found = fit;
          break;
        }
      }
      if (found === undefined) return false;
      at = found;
    }
    return at === name.length;
  }
}

function matchAt(text: RegExp, name: string, at: number): number | undefined {
  text.lastIndex = at;
  return text.test(name) ? text.lastIndex : undefined;
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
    return { raw, line, negate, dirOnly, wholePath, glob: GoGlob.compile(rule) };
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
        if (!rule.glob.test(subject)) return rule;
        continue;
      }
      if (rule.dirOnly && !isDir) continue;
      if (rule.glob.test(subject)) return rule;
    }
    return undefined;
  }
}
