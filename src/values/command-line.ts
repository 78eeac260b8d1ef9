/**
 * Values given on the command line, as Helm takes them: `-f/--values FILE`
 * (in order), then `--set PATH=VALUE[,PATH=VALUE…]` and `--set-string`
 * (typed as Helm's strvals types them: true/false, null, whole numbers;
 * `{a,b}` is a list; `a.b[0].c` reaches into maps and lists; `\,` and `\.`
 * escape). They form the top values layer, above the deployment spec, and
 * every value keeps where it was given, for `--explain`.
 */
import { FlotillaError, formatPath } from '../diagnostics/index.js';
import { describeKind, fromPlain, mapNode, parseYaml, seqNode, type Origin, type ValueNode } from '../yaml/index.js';
import { describeOrigin, mergeNodes } from './merge.js';

/** One command-line source of values, in the order given. */
export type CommandLineValues =
  { readonly kind: 'file'; readonly file: string; readonly text: string } | { readonly kind: 'set' | 'set-string'; readonly expression: string };

export class SetExpressionError extends FlotillaError {
  constructor(flag: string, expression: string, reason: string) {
    super(`--${flag} ${expression}: ${reason}`, { exitCode: 2 });
  }
}

/** The label values of one source carry in their origin (`--explain` shows it as the layer). */
export function commandLineLabel(source: CommandLineValues): string {
  return source.kind === 'file' ? `-f ${source.file}` : `--${source.kind}`;
}

/**
 * All sources in order, as Helm takes them: each file merged over what came
 * before (later wins), each `--set` made into it (setExpressionInto);
 * undefined when there are none.
 */
export function commandLineValues(sources: readonly CommandLineValues[]): ValueNode | undefined {
  let root: ValueNode | undefined;
  for (const source of sources) {
    const label = commandLineLabel(source);
    if (source.kind === 'file') {
      const file = parseYaml(source.text, source.file, { layer: label }).root;
      if (file) root = mergeNodes(root, file);
    } else root = setExpressionInto(root, source, label);
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
  if (parts.some((p) => p === ''))
    throw new SetExpressionError(source.kind, source.expression, `empty assignment; expected PATH=VALUE${separator === ',' ? '[,PATH=VALUE…]' : ''}`);
  return parts;
}

const unescape = (text: string) => text.replace(/\\(.)/g, '$1');

type SetSource = { readonly kind: 'set' | 'set-string'; readonly expression: string };

/**
 * `root` with one `--set` or `--set-string` expression made into it as
 * Helm's strvals makes it into the values given before: its assignments in
 * order (split at unescaped commas, each at its first unescaped `=`), each
 * going into the maps and lists on its path, where a list index sets that
 * item (a new one after null places) and the value at the end replaces what
 * was there. A path through a value that is neither (`a.b` where `a` is a
 * number, or null) is refused, as helm refuses it, but in a list a null
 * item is no value yet, and an item the path goes on into as a map is
 * replaced by one. The values engine's, and
 * `override set --set`'s (src/lifecycle/overrides.ts).
 */
export function setExpressionInto(root: ValueNode | undefined, source: SetSource, label: string): ValueNode {
  for (const text of splitUnescaped(source.expression, ',', source)) {
    const eq = text.search(/(?<!\\)=/);
    if (eq <= 0) throw new SetExpressionError(source.kind, source.expression, `"${text}" is not PATH=VALUE`);
    const path = parseSetPath(text.slice(0, eq), source);
    const raw = text.slice(eq + 1);
    const origin = { layer: label, location: { file: `--${source.kind} ${text}`, line: 0, column: 0 } };
    root = setInto(root, path, fromPlain(source.kind === 'set-string' ? unescape(raw) : typedSetValue(raw), origin), { source, origin, path });
  }
  return root!;
}

/** What {@link setInto} needs to make nodes and say what it refuses. */
interface SetPlace {
  readonly source: SetSource;
  readonly origin: Origin;
  /** The assignment's whole path. */
  readonly path: readonly (string | number)[];
}

function setInto(node: ValueNode | undefined, path: readonly (string | number)[], value: ValueNode, place: SetPlace): ValueNode {
  const [part, ...rest] = path;
  if (part === undefined) return value;
  const wanted = typeof part === 'number' ? 'seq' : 'map';
  if (node !== undefined && node.kind !== wanted) {
    const at = place.path.slice(0, place.path.length - path.length);
    throw new SetExpressionError(
      place.source.kind,
      place.source.expression,
      `${at.length > 0 ? formatPath(at) : 'the values'} is ${describeKind(node)}, set by ${describeOrigin(node.origin)}: not ${wanted === 'seq' ? 'a list to index' : 'a map to go into'}`,
    );
  }
  if (typeof part === 'number') {
    const items = node?.kind === 'seq' ? [...node.items] : [];
    // Helm fills the places before a new index with null.
    while (items.length < part) items.push(fromPlain(null, place.origin));
    // A null item is no value yet, and one that is not a map, where the path goes on into one, is
    // replaced by a new map (Helm's strvals; a null or other value in a map is refused instead).
    const item = items[part];
    const kept =
      item === undefined || (item.kind === 'scalar' && item.value === null) || (typeof rest[0] === 'string' && item.kind !== 'map') ? undefined : item;
    items[part] = setInto(kept, rest, value, place);
    return seqNode(items, node?.kind === 'seq' ? node.origin : place.origin);
  }
  const entries = new Map(node?.kind === 'map' ? node.entries : []);
  entries.set(part, setInto(entries.get(part), rest, value, place));
  return mapNode(entries, node?.kind === 'map' ? node.origin : place.origin);
}

/** Helm's own bounds on a --set path (its strvals parser): list indexes, and how deep names nest. */
const HELM_SET_MAX_INDEX = 65536;
const HELM_SET_MAX_NESTING = 30;

/** A --set path (`a.b[0].c`, `\\.` escaping a dot) within Helm's bounds. */
function parseSetPath(text: string, source: { kind: string; expression: string }): (string | number)[] {
  const path: (string | number)[] = [];
  const segments = text.split(/(?<!\\)\./);
  if (segments.length - 1 > HELM_SET_MAX_NESTING) {
    throw new SetExpressionError(
      source.kind,
      source.expression,
      `"${text}" nests ${segments.length - 1} levels of names; Helm takes at most ${HELM_SET_MAX_NESTING}`,
    );
  }
  for (const segment of segments) {
    const m = /^((?:[^[\]\\]|\\.)+)((?:\[\d+\])*)$/.exec(segment);
    if (!m) throw new SetExpressionError(source.kind, source.expression, `"${text}" is not a value path such as a.b or a.list[0].c`);
    path.push(unescape(m[1] as string));
    for (const index of (m[2] as string).matchAll(/\[(\d+)\]/g)) {
      const value = Number(index[1]);
      // The places before an index are filled with null, as Helm fills them: a huge index would fill memory.
      if (value > HELM_SET_MAX_INDEX)
        throw new SetExpressionError(
          source.kind,
          source.expression,
          `index ${index[1]} in "${text}" is greater than the largest Helm takes, ${HELM_SET_MAX_INDEX}`,
        );
      path.push(value);
    }
  }
  return path;
}

/** A --set value typed as Helm's strvals types it. */
function typedSetValue(raw: string): unknown {
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
