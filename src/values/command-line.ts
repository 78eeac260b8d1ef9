/**
 * Values given on the command line, as Helm takes them: `-f/--values FILE`
 * (in order), then `--set PATH=VALUE[,PATH=VALUE…]` and `--set-string`
 * (typed as Helm's strvals types them: true/false, null, whole numbers;
 * `{a,b}` is a list; `a.b[0].c` reaches into maps and lists; `\,` and `\.`
 * escape). They form the top values layer, above the deployment spec, and
 * every value keeps where it was given, for `--explain`.
 */
import { FlotillaError } from '../diagnostics/index.js';
import { fromPlain, mapNode, parseYaml, seqNode, type ValueNode } from '../document/index.js';
import { mergeNodes } from './merge.js';

/** One command-line source of values, in the order given. */
export type CommandLineValues =
  | { readonly kind: 'file'; readonly file: string; readonly text: string }
  | { readonly kind: 'set' | 'set-string'; readonly expression: string };

export class SetExpressionError extends FlotillaError {
  constructor(flag: string, expression: string, reason: string) {
    super(`--${flag} ${expression}: ${reason}`, { exitCode: 2 });
  }
}

/** The label values of one source carry in their origin (`--explain` shows it as the layer). */
export function commandLineLabel(source: CommandLineValues): string {
  return source.kind === 'file' ? `-f ${source.file}` : `--${source.kind}`;
}

/** All sources merged, later ones winning; undefined when there are none. */
export function commandLineValues(sources: readonly CommandLineValues[]): ValueNode | undefined {
  let root: ValueNode | undefined;
  for (const source of sources) {
    const label = commandLineLabel(source);
    if (source.kind === 'file') {
      const file = parseYaml(source.text, source.file, { layer: label }).root;
      if (file) root = mergeNodes(root, file);
      continue;
    }
    for (const assignment of splitUnescaped(source.expression, ',', source)) {
      root = mergeNodes(root, parseAssignment(assignment, source, label));
    }
  }
  return root;
}

function splitUnescaped(text: string, separator: string, source: { kind: string; expression: string }): string[] {
  const parts: string[] = [];
  let current = '';
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\' && i + 1 < text.length) {
      current += c + (text[i + 1] as string);
      i++;
      continue;
    }
    if (c === '{') depth++;
    if (c === '}') depth--;
    if (c === separator && depth === 0) {
      parts.push(current);
      current = '';
      continue;
    }
    current += c;
  }
  parts.push(current);
  if (parts.some((p) => p === '')) throw new SetExpressionError(source.kind, source.expression, `empty assignment; expected PATH=VALUE${separator === ',' ? '[,PATH=VALUE…]' : ''}`);
  return parts;
}

const unescape = (text: string) => text.replace(/\\(.)/g, '$1');

function parseAssignment(assignment: string, source: { kind: 'set' | 'set-string'; expression: string }, label: string): ValueNode {
  const eq = assignment.search(/(?<!\\)=/);
  if (eq <= 0) throw new SetExpressionError(source.kind, source.expression, `"${assignment}" is not PATH=VALUE`);
  const path = parseSetPath(assignment.slice(0, eq), source);
  const raw = assignment.slice(eq + 1);
  const origin = { layer: label, location: { file: `--${source.kind} ${assignment}`, line: 0, column: 0 } };
  const value = source.kind === 'set-string' ? unescape(raw) : typedSetValue(raw);
  let node = fromPlain(value, origin);
  for (const part of [...path].reverse()) {
    if (typeof part === 'number') {
      // Helm fills the places before the index with null.
      node = seqNode([...Array.from({ length: part }, () => fromPlain(null, origin)), node], origin);
    } else node = mapNode(new Map([[part, node]]), origin);
  }
  return node;
}

/** Helm's own bounds on a --set path (its strvals parser): list indexes, and how deep names nest. */
const HELM_SET_MAX_INDEX = 65536;
const HELM_SET_MAX_NESTING = 30;

/** A --set path (`a.b[0].c`, `\\.` escaping a dot) within Helm's bounds: also what `override set --set` reads. */
export function parseSetPath(text: string, source: { kind: string; expression: string }): (string | number)[] {
  const path: (string | number)[] = [];
  const segments = text.split(/(?<!\\)\./);
  if (segments.length - 1 > HELM_SET_MAX_NESTING) {
    throw new SetExpressionError(source.kind, source.expression, `"${text}" nests ${segments.length - 1} levels of names; Helm takes at most ${HELM_SET_MAX_NESTING}`);
  }
  for (const segment of segments) {
    const m = /^((?:[^[\]\\]|\\.)+)((?:\[\d+\])*)$/.exec(segment);
    if (!m) throw new SetExpressionError(source.kind, source.expression, `"${text}" is not a value path such as a.b or a.list[0].c`);
    path.push(unescape(m[1] as string));
    for (const index of (m[2] as string).matchAll(/\[(\d+)\]/g)) {
      const value = Number(index[1]);
      // The places before an index are filled with null, as Helm fills them: a huge index would fill memory.
      if (value > HELM_SET_MAX_INDEX) throw new SetExpressionError(source.kind, source.expression, `index ${index[1]} in "${text}" is greater than the largest Helm takes, ${HELM_SET_MAX_INDEX}`);
      path.push(value);
    }
  }
  return path;
}

/** A --set value typed as Helm's strvals types it. */
export function typedSetValue(raw: string): unknown {
  if (raw.startsWith('{') && raw.endsWith('}')) {
    const inner = raw.slice(1, -1);
    return inner === '' ? [] : inner.split(/(?<!\\),/).map(typedSetValue);
  }
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw === 'null') return null;
  if (/^-?(0|[1-9]\d*)$/.test(raw) && Number.isSafeInteger(Number(raw))) return Number(raw);
  return unescape(raw);
}
