/**
 * Comment-keeping edits of one YAML file.
 *
 * `yaml`'s Document round-trip re-spaces comments, flow collections and
 * document markers, so edits are made on the source text instead: the file is
 * parsed (YAML 1.1, as Helm reads it) only to find the exact byte range of the
 * node a path names, and only that range is replaced. Every other byte of the
 * file stays as it was; a new key is inserted after the last entry of its map,
 * with the map's indentation. After each edit the text is parsed again, so
 * several edits compose.
 */
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  stringify,
  visit,
  type Document,
  type LineCounter,
  type Node as YamlNode,
  type Pair,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { BUILD_TOKEN } from '../build/index.js';
import { FlotillaError, type SourceLocation } from '../diagnostics/index.js';
import { parseYamlDocument, parseYamlValue, YamlSyntaxError } from '../yaml/index.js';
import { formatValuePath, type PathSegment, type ValuePath } from './path.js';

/** An edit the rules refuse; the message names the file:line and how to go ahead anyway. */
export class EditRefusedError extends FlotillaError {}

export type ValueKind = 'map' | 'list' | 'scalar';

export interface EditOptions {
  /** Allow a change of kind (map ↔ scalar ↔ list) and dropping a build token. */
  readonly force?: boolean;
}

/** What a path holds in a file. */
export interface Lookup {
  readonly exists: boolean;
  readonly value?: unknown;
  readonly kind?: ValueKind;
  readonly location?: SourceLocation;
  /** Set when the value is inherited through a merge key (`<<: *anchor`), not written under the path itself. */
  readonly viaMerge?: boolean;
  /** Set when a scalar sits where the path needs a map or list. */
  readonly blocked?: boolean;
}

/** One change made to a file, for the report. */
export interface EditRecord {
  readonly path: ValuePath;
  readonly before: unknown;
  readonly after: unknown;
  /** Where the edited value sits in the new text. */
  readonly line: number;
  readonly action: 'set' | 'added' | 'removed';
}

/** Writing YAML as it is read: version 1.1 (Helm's), so `yes` or `1.0` as strings get quotes. */
const YAML_VERSION = { version: '1.1' as const };

/** A value typed on the command line: YAML unless `asString`; build tokens and empty text stay strings (as Helm's --set). */
export function parseValueArgument(raw: string, asString: boolean): unknown {
  if (asString || raw === '' || BUILD_TOKEN.test(raw)) return raw;
  try {
    return parseYamlValue(raw, 'VALUE') ?? null;
  } catch (error) {
    const reason = error instanceof YamlSyntaxError ? error.reason : (error as Error).message;
    throw new FlotillaError(`value ${JSON.stringify(raw)} is not valid YAML (${reason}); pass --string to take it as text`, { exitCode: 2 });
  }
}

function kindOf(value: unknown): ValueKind {
  if (Array.isArray(value)) return 'list';
  if (value !== null && typeof value === 'object') return 'map';
  return 'scalar';
}

function nodeKind(node: YamlNode | null | undefined): ValueKind {
  if (isMap(node)) return 'map';
  if (isSeq(node)) return 'list';
  return 'scalar';
}

const holdsToken = (value: unknown): boolean => typeof value === 'string' && BUILD_TOKEN.test(value);

interface Located {
  /** The node at the path as written (an alias stays an alias), or undefined when the path ends in a missing key/index. */
  readonly node?: YamlNode | null;
  /** What the node reads as (an alias resolved to its anchor). */
  readonly resolved?: YamlNode | null;
  /** The pair holding the node, when its parent is a map. */
  readonly pair?: Pair;
  /** The deepest existing collection on the way and the rest of the path below it. */
  readonly parent?: YAMLMap | YAMLSeq;
  readonly rest: ValuePath;
  /** A scalar met before the path ended (a kind change to get through). */
  readonly blockingScalar?: { node: YamlNode | null; pair?: Pair; depth: number };
  readonly inherited?: YamlNode | null;
}

/** One YAML file being edited: its text, and edits applied one after another. */
export class YamlFileEditor {
  #text: string;
  readonly file: string;
  readonly records: EditRecord[] = [];
  #doc!: Document;
  #lines!: LineCounter;

  readonly #crlf: boolean;

  constructor(text: string, file: string) {
    this.#text = text;
    this.#crlf = text.includes('\r\n');
    this.file = file;
    this.#parse();
  }

  get text(): string {
    return this.#text;
  }

  #parse(): void {
    try {
      const parsed = parseYamlDocument(this.#text, this.file);
      this.#doc = parsed.doc;
      this.#lines = parsed.lineCounter;
    } catch (error) {
      if (error instanceof YamlSyntaxError && /multiple documents/.test(error.reason)) {
        throw new EditRefusedError('holds several YAML documents; flotilla edits files with one (values files have one)', {
          location: error.location ?? { file: this.file, line: 1, column: 1 },
        });
      }
      throw error;
    }
  }

  #at(offset: number): SourceLocation {
    const { line, col } = this.#lines.linePos(offset);
    return { file: this.file, line, column: col };
  }

  #lineOf(node: YamlNode | null | undefined, pair?: Pair): number {
    const key = pair?.key as YamlNode | null | undefined;
    const offset = key?.range?.[0] ?? node?.range?.[0] ?? 0;
    return this.#lines.linePos(offset).line;
  }

  #resolve(node: YamlNode | null | undefined, path: ValuePath, depth: number): YamlNode | null | undefined {
    if (!isAlias(node)) return node;
    const anchor = node.resolve(this.#doc) as YamlNode | undefined;
    if (depth < path.length) {
      throw new EditRefusedError(
        `${formatValuePath(path.slice(0, depth))} is an alias (*${node.source}) of the anchor &${node.source} at line ${this.#lineOf(anchor)}: editing through it would change every use of the anchor; edit it there`,
        { location: this.#at(node.range?.[0] ?? 0) },
      );
    }
    return anchor;
  }

  #findPair(map: YAMLMap, key: PathSegment): Pair | undefined {
    return map.items.find((p) => {
      const k = p.key as YamlNode | null;
      if (!isScalar(k) || typeof k.value === 'symbol') return false;
      // YAML 1.1 reads a plain `y`, `no` or `on` key as a boolean: match the key as written too.
      const written = k.type === 'PLAIN' && k.range ? this.#text.slice(k.range[0], k.range[1]) : undefined;
      return written === String(key) || String(k.value) === String(key);
    }) as Pair | undefined;
  }

  /** A key a map inherits through `<<: *anchor`. */
  #inherited(map: YAMLMap, key: PathSegment): YamlNode | null | undefined {
    for (const pair of map.items) {
      const k = pair.key as YamlNode | null;
      if (!isScalar(k) || typeof k.value !== 'symbol') continue;
      const sources = isSeq(pair.value) ? pair.value.items : [pair.value];
      for (const source of sources) {
        const resolved = isAlias(source) ? (source.resolve(this.#doc) as YamlNode | undefined) : (source as YamlNode);
        if (!isMap(resolved)) continue;
        const found = this.#findPair(resolved, key) ?? undefined;
        if (found) return found.value as YamlNode | null;
        const deeper = this.#inherited(resolved, key);
        if (deeper !== undefined) return deeper;
      }
    }
    return undefined;
  }

  #locate(path: ValuePath): Located {
    let node = this.#doc.contents as YamlNode | null;
    let pair: Pair | undefined;
    if (node === null && path.length > 0) return { rest: path };
    for (let depth = 0; depth < path.length; depth++) {
      node = this.#resolve(node, path, depth) ?? null;
      const segment = path[depth] as PathSegment;
      if (isMap(node)) {
        if (typeof segment === 'number') {
          throw new EditRefusedError(`${formatValuePath(path.slice(0, depth)) || 'the document'} is a map, not a list: write .key instead of [${segment}]`, {
            location: this.#at(node.range?.[0] ?? 0),
          });
        }
        const found = this.#findPair(node, segment);
        if (!found) return { parent: node, rest: path.slice(depth), inherited: this.#inherited(node, segment) };
        pair = found;
        node = found.value as YamlNode | null;
      } else if (isSeq(node)) {
        if (typeof segment !== 'number') {
          throw new EditRefusedError(`${formatValuePath(path.slice(0, depth)) || 'the document'} is a list: address an item as [n]`, {
            location: this.#at(node.range?.[0] ?? 0),
          });
        }
        if (segment >= node.items.length) return { parent: node, rest: path.slice(depth) };
        pair = undefined;
        node = node.items[segment] as YamlNode | null;
      } else {
        return { rest: path.slice(depth), blockingScalar: { node, pair, depth } };
      }
    }
    return { node, resolved: this.#resolve(node, path, path.length), pair, rest: [] };
  }

  lookup(path: ValuePath): Lookup {
    const found = this.#locate(path);
    if (found.rest.length === 0) {
      const node = found.resolved;
      return {
        exists: true,
        value: node ? node.toJSON() : null,
        kind: nodeKind(node),
        location: this.#at(((found.pair?.key as YamlNode | null)?.range ?? found.node?.range ?? [0])[0]),
      };
    }
    if (found.rest.length === 1 && found.inherited !== undefined) {
      return {
        exists: true,
        value: found.inherited ? found.inherited.toJSON() : null,
        kind: nodeKind(found.inherited),
        viaMerge: true,
        location: this.#at(found.inherited?.range?.[0] ?? 0),
      };
    }
    return { exists: false, blocked: found.blockingScalar !== undefined && (found.blockingScalar.node?.toJSON() ?? null) !== null };
  }

  /** Sets `path` to `value` (a plain JS value), `raw` being how the user typed it. */
  set(path: ValuePath, value: unknown, options: EditOptions & { raw?: string } = {}): void {
    const found = this.#locate(path);
    const where = formatValuePath(path);
    if (found.blockingScalar) {
      const { node, pair, depth } = found.blockingScalar;
      const held = node ? node.toJSON() : null;
      if (held !== null && !options.force) {
        throw new EditRefusedError(
          `${formatValuePath(path.slice(0, depth))} holds a scalar (${JSON.stringify(held)}); setting ${where} would turn it into a ${typeof path[depth] === 'number' ? 'list' : 'map'} (pass --force to replace it)`,
          { location: this.#at(((pair?.key as YamlNode | null)?.range ?? node?.range ?? [0])[0]) },
        );
      }
      this.#checkToken(held, undefined, path.slice(0, depth), pair, node, options);
      this.#replace(node, pair, nest(path.slice(depth), value), undefined);
      this.#record(path, held, value, 'set');
      return;
    }
    if (found.rest.length > 0) {
      if (found.rest.length === 1 && found.inherited !== undefined)
        this.#checkKind(path, found.inherited ? found.inherited.toJSON() : null, value, found.inherited, undefined, options);
      this.#insert(found.parent, found.rest, value, path);
      this.#record(path, found.inherited?.toJSON(), value, 'added');
      return;
    }
    const node = found.node;
    const before = found.resolved ? found.resolved.toJSON() : null;
    // A quoted string stays a string: `tag: "2025.1"` set to 2025.2 is the text, not a number.
    if (
      isScalar(node) &&
      (node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE') &&
      options.raw !== undefined &&
      (typeof value === 'number' || typeof value === 'boolean')
    ) {
      value = options.raw.trim();
    }
    this.#checkKind(path, before, value, node, found.pair, options);
    this.#checkToken(before, value, path, found.pair, node, options);
    this.#replace(node, found.pair, value, options.raw);
    this.#record(path, before, value, 'set');
  }

  /** Removes the key or list item at `path`; a map left empty goes too (an empty key would read as null and delete the chart's default). */
  unset(path: ValuePath, options: EditOptions = {}): void {
    const found = this.#locate(path);
    if (found.rest.length > 0) {
      if (found.rest.length === 1 && found.inherited !== undefined) {
        throw new EditRefusedError(
          `${formatValuePath(path)} is not written here: it is inherited through a merge key (<<); remove it at the anchor (line ${this.#lineOf(found.inherited)})`,
          {
            location: this.#at(found.parent?.range?.[0] ?? 0),
          },
        );
      }
      throw new EditRefusedError(`${formatValuePath(path)} is not set in this file`, {
        location: this.#at(found.parent?.range?.[0] ?? found.blockingScalar?.node?.range?.[0] ?? 0),
      });
    }
    const before = found.resolved ? found.resolved.toJSON() : null;
    this.#checkToken(before, undefined, path, found.pair, found.node, options);
    this.#refuseIfAliased(found.node, path, 'removing it');
    const line = this.#lineOf(found.node, found.pair);
    let target = path;
    // Climb while the collection holding the target has nothing else.
    while (target.length > 1) {
      const parent = this.#locate(target.slice(0, -1)).node;
      if ((isMap(parent) || isSeq(parent)) && parent.items.length === 1) target = target.slice(0, -1);
      else break;
    }
    this.#remove(target);
    this.records.push({ path, before, after: undefined, line, action: 'removed' });
  }

  #record(path: ValuePath, before: unknown, after: unknown, action: EditRecord['action']): void {
    const found = this.#locate(path);
    this.records.push({ path, before, after, action, line: this.#lineOf(found.node, found.pair) });
  }

  #checkKind(path: ValuePath, before: unknown, value: unknown, node: YamlNode | null | undefined, pair: Pair | undefined, options: EditOptions): void {
    if (before === null || options.force) return;
    const from = kindOf(before);
    const to = kindOf(value);
    if (from === to) return;
    throw new EditRefusedError(`${formatValuePath(path)} holds a ${from}; the new value is a ${to} (pass --force to change its kind)`, {
      location: this.#at(((pair?.key as YamlNode | null)?.range ?? node?.range ?? [0])[0]),
    });
  }

  #checkToken(before: unknown, value: unknown, path: ValuePath, pair: Pair | undefined, node: YamlNode | null | undefined, options: EditOptions): void {
    if (options.force || !holdsToken(before) || holdsToken(value)) return;
    const token = BUILD_TOKEN.exec(before as string)?.[0];
    throw new EditRefusedError(
      `${formatValuePath(path)} holds the build token ${token} (${JSON.stringify(before)}), filled in when the app is built; ` +
        `${value === undefined ? 'removing it' : 'the new value has no token and'} would lose it (keep a token in the value, or pass --force)`,
      { location: this.#at(((pair?.key as YamlNode | null)?.range ?? node?.range ?? [0])[0]) },
    );
  }

  /** Refuses to drop a node whose anchor aliases elsewhere still use. */
  #refuseIfAliased(node: YamlNode | null | undefined, path: ValuePath, doing: string): void {
    const anchor = node && !isAlias(node) ? node.anchor : undefined;
    if (!anchor) return;
    const lines: number[] = [];
    visit(this.#doc, {
      Alias: (_, alias) => {
        if (alias.source === anchor && alias.range) lines.push(this.#lines.linePos(alias.range[0]).line);
      },
    });
    if (lines.length === 0) return;
    throw new EditRefusedError(
      `${formatValuePath(path)} carries the anchor &${anchor}, used by *${anchor} at line ${lines.join(', ')}; ${doing} would break them (edit those first)`,
      {
        location: this.#at(node?.range?.[0] ?? 0),
      },
    );
  }

  #splice(start: number, end: number, replacement: string): void {
    // New lines take the file's line ending.
    const text = this.#crlf ? replacement.replace(/\r?\n/g, '\r\n') : replacement;
    this.#text = this.#text.slice(0, start) + text + this.#text.slice(end);
    this.#parse();
  }

  #column(offset: number): number {
    return this.#lines.linePos(offset).col - 1;
  }

  /** Spaces per nesting level, as the file writes them (2 when it shows none). */
  #indentStep(): number {
    let step = 0;
    const visit = (node: unknown, column: number): void => {
      if (step > 0 || !(isMap(node) || isSeq(node)) || node.flow) return;
      for (const item of node.items) {
        const child = isMap(node) ? ((item as Pair).value as YamlNode | null) : (item as YamlNode | null);
        if ((isMap(child) || isSeq(child)) && !child.flow && child.range) {
          const childColumn = this.#column(child.range[0]);
          if (childColumn > column) {
            step = childColumn - column;
            return;
          }
        }
        if (child && child.range) visit(child, child.range ? this.#column(child.range[0]) : column);
      }
    };
    const root = this.#doc.contents;
    if (root?.range) visit(root, this.#column(root.range[0]));
    return step || 2;
  }

  /** The offset just past the line on which `node`'s content ends. */
  #endOfLastLine(end: number): number {
    let last = end;
    while (last > 0 && /\s/.test(this.#text[last - 1] as string)) last--;
    const newline = this.#text.indexOf('\n', last);
    return newline < 0 ? this.#text.length : newline + 1;
  }

  #replace(node: YamlNode | null | undefined, pair: Pair | undefined, value: unknown, raw: string | undefined): void {
    const step = this.#indentStep();
    if (!node || !node.range) {
      // `key:` with nothing after the colon.
      const key = pair?.key as YamlNode | null | undefined;
      if (!key?.range) throw new EditRefusedError('cannot place a value here', { location: this.#at(0) });
      const colon = this.#text.indexOf(':', key.range[1]);
      this.#splice(colon + 1, colon + 1, this.#inline(value, this.#column(key.range[0]), step, raw, { inPlace: false }));
      return;
    }
    const [start, end] = node.range;
    const blockCollection = (isMap(node) || isSeq(node)) && !node.flow;
    if (start === end && pair) {
      // An empty value: place it after the colon.
      const key = pair.key as YamlNode;
      const colon = this.#text.indexOf(':', key.range?.[1] ?? start);
      this.#splice(colon + 1, end, this.#inline(value, this.#column(key.range?.[0] ?? start), step, raw, { inPlace: false }));
      return;
    }
    if (blockCollection) {
      const column = this.#column(start);
      const newCollection = kindOf(value) !== 'scalar';
      const isSeqItemStart = /-\s*$/.test(this.#text.slice(this.#text.lastIndexOf('\n', start - 1) + 1, start));
      if (newCollection) {
        // The new block at the old block's indentation; the first line sits where the old one started.
        const lines = stringify(value, { ...YAML_VERSION, indent: step, lineWidth: 0 })
          .replace(/\n$/, '')
          .split('\n');
        const text = lines.map((line, i) => (i === 0 || line === '' ? line : ' '.repeat(column) + line)).join('\n');
        this.#splice(start, this.#contentEnd(end), text);
        return;
      }
      // Block collection → scalar: the scalar goes right after `key:` (or `- `), after the node's anchor if it has one.
      const afterKey = pair && !isSeqItemStart;
      const from = afterKey ? this.#text.indexOf(':', (pair.key as YamlNode).range?.[1] ?? start) + 1 : start;
      const anchor = node.anchor ? ` &${node.anchor}` : '';
      const text = this.#inline(value, column, step, raw, { inPlace: false });
      this.#splice(from, this.#contentEnd(end), afterKey ? `${anchor}${text}` : text.trimStart());
      return;
    }
    const keyColumn = pair ? this.#column((pair.key as YamlNode).range?.[0] ?? start) : this.#column(start);
    const scalar = isScalar(node) ? node : undefined;
    let text = this.#inline(value, keyColumn, step, raw, { inPlace: true, type: scalar?.type }).trimStart();
    // A block scalar's range takes its last line break; an inline value must keep it.
    if (scalar && (scalar.type === 'BLOCK_LITERAL' || scalar.type === 'BLOCK_FOLDED') && this.#text[end - 1] === '\n' && !text.endsWith('\n')) text += '\n';
    this.#splice(start, end, text);
  }

  /** The end of a block collection's own content (trailing blank lines and comments belong to what follows). */
  #contentEnd(end: number): number {
    let last = end;
    while (last > 0 && /\s/.test(this.#text[last - 1] as string)) last--;
    return last;
  }

  /**
   * A value written after `key:` (with its leading space) or in place of a
   * scalar: a scalar keeps the old one's quoting when it can; a collection is
   * written as an indented block below the key.
   */
  #inline(value: unknown, keyColumn: number, step: number, raw: string | undefined, old: { inPlace: boolean; type?: string }): string {
    if (kindOf(value) !== 'scalar') {
      if (old.inPlace) return ` ${stringify(value, { ...YAML_VERSION, collectionStyle: 'flow', flowCollectionPadding: false, lineWidth: 0 }).trim()}`;
      const lines = stringify(value, { ...YAML_VERSION, indent: step, lineWidth: 0 })
        .replace(/\n$/, '')
        .split('\n');
      return `\n${lines.map((line) => (line === '' ? line : ' '.repeat(keyColumn + step) + line)).join('\n')}`;
    }
    return ` ${formatScalar(value, old.type, raw, keyColumn + step)}`;
  }

  /** Adds `rest` (one or more missing keys) under `parent` (the document itself when undefined). */
  #insert(parent: YAMLMap | YAMLSeq | undefined, rest: ValuePath, value: unknown, fullPath: ValuePath): void {
    const [first, ...below] = rest;
    const nested = nest(below, value);
    const step = this.#indentStep();
    if (parent && isSeq(parent)) {
      if (first !== parent.items.length) {
        throw new EditRefusedError(`${formatValuePath(fullPath)}: the list has ${parent.items.length} items; add one at [${parent.items.length}] at most`, {
          location: this.#at(parent.range?.[0] ?? 0),
        });
      }
      if (parent.flow)
        return this.#insertFlow(parent, stringify(nested, { ...YAML_VERSION, collectionStyle: 'flow', flowCollectionPadding: false, lineWidth: 0 }).trim());
      const last = parent.items[parent.items.length - 1] as YamlNode;
      const dash = this.#column(parent.range?.[0] ?? 0);
      const lines = stringify([nested], { ...YAML_VERSION, indent: step, lineWidth: 0 })
        .replace(/\n$/, '')
        .split('\n');
      return this.#insertLines(this.#endOfLastLine(last.range?.[1] ?? 0), lines, dash);
    }
    if (typeof first === 'number') {
      throw new EditRefusedError(`${formatValuePath(fullPath)}: there is no list to add item [${first}] to`, { location: this.#at(parent?.range?.[0] ?? 0) });
    }
    const entry = { [first as string]: nested };
    if (parent && parent.flow) {
      return this.#insertFlow(
        parent,
        stringify(entry, { ...YAML_VERSION, collectionStyle: 'flow', flowCollectionPadding: false, lineWidth: 0 })
          .trim()
          .slice(1, -1),
      );
    }
    const lines = stringify(entry, { ...YAML_VERSION, indent: step, lineWidth: 0 })
      .replace(/\n$/, '')
      .split('\n');
    if (!parent || parent.items.length === 0) return this.#insertIntoEmptyDocument(lines);
    const firstKey = (parent.items[0] as Pair).key as YamlNode;
    const lastPair = parent.items[parent.items.length - 1] as Pair;
    const lastValue = lastPair.value as YamlNode | null;
    const lastEnd = lastValue?.range?.[1] ?? (lastPair.key as YamlNode).range?.[1] ?? 0;
    // A block scalar's trailing blank lines can be part of its value (`|+`): insert after all of it.
    const keeps = isScalar(lastValue) && (lastValue.type === 'BLOCK_LITERAL' || lastValue.type === 'BLOCK_FOLDED') && this.#text[lastEnd - 1] === '\n';
    this.#insertLines(keeps ? lastEnd : this.#endOfLastLine(lastEnd), lines, this.#column(firstKey.range?.[0] ?? 0));
  }

  #insertLines(offset: number, lines: readonly string[], column: number): void {
    const atEnd = offset >= this.#text.length && this.#text.length > 0 && !this.#text.endsWith('\n');
    const text = lines.map((line) => (line === '' ? line : ' '.repeat(column) + line)).join('\n') + '\n';
    this.#splice(offset, offset, atEnd ? `\n${text}` : text);
  }

  #insertFlow(collection: YAMLMap | YAMLSeq, item: string): void {
    const close = (collection.range?.[1] ?? 1) - 1;
    let at = close;
    while (at > 0 && /\s/.test(this.#text[at - 1] as string)) at--;
    this.#splice(at, at, collection.items.length === 0 ? item : `, ${item}`);
  }

  /** A document with no content (empty, or only comments and markers): the entry goes before an end marker `...`, else at the end. */
  #insertIntoEmptyDocument(lines: readonly string[]): void {
    const docStart = this.#doc.range?.[0] ?? 0;
    const marker = /^\.\.\.[ \t]*(#.*)?$/m.exec(this.#text.slice(docStart));
    const offset = marker ? docStart + marker.index : this.#text.length;
    this.#insertLines(offset, lines, 0);
  }

  #remove(path: ValuePath): void {
    const found = this.#locate(path);
    const parent = this.#locate(path.slice(0, -1)).node;
    const node = found.node;
    if (path.length === 0 || !(isMap(parent) || isSeq(parent))) {
      // The whole document: keep comments and markers, drop the content.
      const range = (this.#doc.contents as YamlNode | null)?.range;
      if (range) this.#splice(range[0], this.#contentEnd(range[1]), '{}');
      return;
    }
    const start = (found.pair ? (found.pair.key as YamlNode).range?.[0] : node?.range?.[0]) ?? 0;
    const end = node?.range?.[1] ?? (found.pair?.key as YamlNode).range?.[1] ?? start;
    if (parent.flow) {
      let from = start;
      let to = end;
      const after = /^\s*,\s*/.exec(this.#text.slice(to));
      if (after) to += after[0].length;
      else {
        const before = /,\s*$/.exec(this.#text.slice(0, from));
        if (before) from -= before[0].length;
      }
      this.#splice(from, to, '');
      return;
    }
    const lineStart = this.#text.lastIndexOf('\n', start - 1) + 1;
    let from = lineStart;
    if (isSeq(parent)) {
      // The item's own `- ` line.
      from = this.#text.lastIndexOf('\n', this.#text.lastIndexOf('-', start - 1)) + 1;
    } else if (!/^\s*$/.test(this.#text.slice(lineStart, start))) {
      // First key of a list item (`- key: v`): the next key moves up onto the dash line.
      const index = parent.items.indexOf(found.pair as Pair);
      const next = parent.items[index + 1] as Pair | undefined;
      const nextStart = (next?.key as YamlNode | undefined)?.range?.[0];
      if (nextStart !== undefined) return this.#splice(start, nextStart, '');
    }
    this.#splice(from, this.#endOfLastLine(end), '');
  }
}

/** `value` under the keys/indexes of `path` (`[0]` makes a one-item list). */
function nest(path: ValuePath, value: unknown): unknown {
  let out = value;
  for (let i = path.length - 1; i >= 0; i--) {
    const segment = path[i] as PathSegment;
    if (typeof segment === 'number') {
      if (segment !== 0) throw new EditRefusedError(`a new list starts at [0], not [${segment}]`);
      out = [out];
    } else out = { [segment]: out };
  }
  return out;
}

/**
 * A scalar's text. Numbers, booleans and null are written as the user typed
 * them when that reads back the same; a string keeps the old scalar's quoting
 * when that can hold it, and is quoted only when plain text would read as
 * something else (YAML 1.1: `yes`, `1.0`, `2025.1` …).
 */
function formatScalar(value: unknown, oldType: string | undefined, raw: string | undefined, blockIndent: number): string {
  const readsBack = (text: string) => {
    try {
      const read = parseYamlValue(`v: ${text}`, 'VALUE') as { v?: unknown } | undefined;
      return JSON.stringify(read?.v) === JSON.stringify(value);
    } catch {
      return false;
    }
  };
  if (typeof value !== 'string') {
    const typed = raw?.trim();
    if (typed && !typed.includes('\n') && readsBack(typed)) return typed;
    return stringify(value, YAML_VERSION).trim();
  }
  const multiline = value.includes('\n');
  const block = oldType === 'BLOCK_LITERAL' || oldType === 'BLOCK_FOLDED';
  if (multiline && block && !/^[ \t]/.test(value)) {
    // Literal block: clip (one final line break), strip (-) or keep (+).
    const chomp = value.endsWith('\n\n') ? '+' : value.endsWith('\n') ? '' : '-';
    const lines = value.split('\n');
    if (chomp !== '-') lines.pop();
    return `|${chomp}\n${lines.map((line) => (line === '' ? '' : ' '.repeat(blockIndent) + line)).join('\n')}`;
  }
  const style = oldType === 'QUOTE_SINGLE' ? 'QUOTE_SINGLE' : oldType === 'QUOTE_DOUBLE' ? 'QUOTE_DOUBLE' : 'PLAIN';
  if (style === 'QUOTE_SINGLE' && !/[\n\t\\\x00-\x1f]/.test(value)) return `'${value.replace(/'/g, "''")}'`;
  if (style === 'QUOTE_DOUBLE' || multiline) return JSON.stringify(value);
  const plain = stringify(value, { ...YAML_VERSION, lineWidth: 0 }).trim();
  return readsBack(plain) && !plain.includes('\n') ? plain : JSON.stringify(value);
}
