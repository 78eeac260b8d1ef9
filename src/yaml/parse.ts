/**
 * Reading YAML, the one way for each purpose (docs/architecture.md, "YAML"):
 * every reader reads YAML as Helm and Kubernetes do (1.1: yes/no are
 * booleans, 0755 is octal; timestamps stay strings), with the scalar rules
 * of the `yaml` package's YAML 1.1 schema, so a file means the same to
 * every command.
 *
 * - `parseYaml`: values with positions — a `ValueNode` tree whose every
 *   node says which layer and file:line set it (values layers, the app's
 *   own files), built from events (tree.ts: scan.ts's line scanner for plain
 *   block YAML, js-yaml's parser for the rest); `parseYamlValue` /
 *   `parseYamlStream` give plain data.
 * - `parseYamlDocument`: the document itself (`yaml`'s CST), for code that
 *   edits a file keeping its comments or needs the position of every
 *   character.
 */
import { createHash } from 'node:crypto';
import {
  LineCounter,
  Schema,
  isAlias,
  type Alias,
  isMap,
  isScalar,
  isSeq,
  parseAllDocuments,
  parseDocument,
  visit,
  type Document,
  type DocumentOptions,
  type Node as YamlNode,
  type ParseOptions as YamlParseOptions,
  type SchemaOptions,
  type Tags,
} from 'yaml';
import { FlotillaError, type SourceLocation } from '../diagnostics/index.js';
import { mapNode, scalarNode, seqNode, toPlain, type ListEdit, type ListOp, type Origin, type PlainValue, type ValueNode } from './nodes.js';
import { fillFromMergeKeys, HandOver, KeysSeen, toScalar, TreeBuilder, yamlEvents, type TreeRules } from './tree.js';
import { scannerSource } from './scan.js';

/** The YAML tags that edit the list below instead of replacing it. */
export const LIST_EDIT_TAGS: Readonly<Record<string, ListOp>> = { '!append': 'append', '!prepend': 'prepend', '!remove': 'remove' };

export class YamlSyntaxError extends FlotillaError {
  /** The message without the file:line:column in front, for callers that raise their own error type. */
  readonly reason: string;
  constructor(reason: string, options: { location: SourceLocation }) {
    super(reason, options);
    this.reason = reason;
  }
}

/** A parsed file: its tree (undefined when the file is empty) and how to map offsets to lines. */
export interface ParsedYaml {
  readonly file: string;
  readonly root: ValueNode | undefined;
}

/** A file's text as it was parsed (build-time tokens filled, say) and its tree: what a later reader of the same file starts from. */
export interface ParsedText {
  readonly text: string;
  readonly parsed: ParsedYaml;
}

export interface ParseOptions {
  /** Label stored in every node's origin. */
  readonly layer: string;
  /** Accept `!append` / `!prepend` / `!remove` (values layers); refused elsewhere. */
  readonly allowListEdits?: boolean;
}

// Helm reads values with a YAML 1.1 parser (yes/no are booleans, 0755 is octal),
// so we do too; timestamps stay strings, as they reach Helm's templates.
const yaml11Tags = (tags: Tags): Tags => tags.filter((t) => (typeof t === 'string' ? t !== 'timestamp' : t.tag !== 'tag:yaml.org,2002:timestamp'));

/**
 * The schema those options make, made once: the yaml package would otherwise
 * build one (every tag) for each document, a fifth of the time an app's
 * small files take to parse. Parsing and writing only read it.
 */
const YAML11_SCHEMA = new Schema({ schema: 'yaml-1.1', resolveKnownTags: false, customTags: yaml11Tags, merge: true });

const YAML_OPTIONS: YamlParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.1',
  schema: YAML11_SCHEMA,
  merge: true,
  // Keys written twice are refused by refuseRepeatedKeys: the library's own check compares each key
  // with every key before it (a map of 40,000 keys took ~25 s).
  uniqueKeys: false,
  prettyErrors: false,
};

/**
 * What any YAML read is held to, so that a hostile file ends fast with an
 * error at its file and line instead of exhausting time or memory
 * (docs/security.md): the document's size, how deep values nest, and how
 * far aliases expand (a "billion laughs" file is a few hundred bytes that
 * alias their way to billions of values).
 */
export const YAML_LIMITS = {
  /** Largest document read, in bytes. */
  maxBytes: 16 * 1024 * 1024,
  /** Deepest nesting of maps and lists (after aliases are expanded). */
  maxDepth: 256,
  /** Most values produced by following aliases, per document. */
  maxAliasExpansion: 100_000,
  /** Most aliases followed inside one another. */
  maxAliasDepth: 16,
} as const;

const MIB = 1024 * 1024;

/** Refuses a document too large before any parser sees it. */
function checkSize(text: string, file: string): void {
  const bytes = Buffer.byteLength(text);
  if (bytes > YAML_LIMITS.maxBytes) {
    throw new YamlSyntaxError(`the document is ${(bytes / MIB).toFixed(1)} MiB; YAML files are read up to ${YAML_LIMITS.maxBytes / MIB} MiB`, {
      location: { file, line: 1, column: 1 },
    });
  }
}

/** Characters YAML does not allow in a stream (js-yaml's pattern; the yaml library reads them): a NUL, other controls, a lone surrogate. */
const NON_PRINTABLE = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * {@link checkSize}; refuses a character YAML does not allow, as js-yaml
 * (and Helm's reader) do, naming where it is but not echoing the text (a
 * binary or `/proc` file read by mistake); and refuses nesting flow
 * collections (`[[[[…`) too deep before the document reader sees it: its
 * time grows with the square of such nesting. (js-yaml's event parser,
 * linear, stops at its own depth.)
 */
function checkBounds(text: string, file: string): void {
  checkSize(text, file);
  const bad = NON_PRINTABLE.exec(text);
  if (bad) {
    const before = text.slice(0, bad.index);
    const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    throw new YamlSyntaxError(`invalid YAML: the non-printable character U+${code} (YAML allows no control characters but tab and line breaks)`, {
      location: { file, line: before.split('\n').length, column: bad.index - before.lastIndexOf('\n') },
    });
  }
  let depth = 0;
  let quote = '';
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') {
      line++;
      lineStart = i + 1;
      if (quote === "'" || quote === '"') continue;
      quote = '';
    } else if (quote === '#') continue;
    else if (quote) {
      if (c === quote && (quote === "'" || text[i - 1] !== '\\')) quote = '';
    } else if (c === '"' || c === "'" || (c === '#' && (i === lineStart || /\s/.test(text[i - 1] ?? ' ')))) quote = c;
    else if (c === '[' || c === '{') {
      if (++depth > YAML_LIMITS.maxDepth)
        throw new YamlSyntaxError(`values nest more than ${YAML_LIMITS.maxDepth} levels deep`, { location: { file, line, column: i - lineStart + 1 } });
    } else if ((c === ']' || c === '}') && depth > 0) depth--;
  }
}

/** A YAML file as a document (CST): what code that edits files or needs exact positions reads. */
export interface YamlDocument {
  readonly file: string;
  readonly text: string;
  readonly doc: Document;
  readonly lineCounter: LineCounter;
  /** file:line:column of an offset into `text`. */
  locate(offset: number): SourceLocation;
}

function locator(file: string, lineCounter: LineCounter): (offset: number) => SourceLocation {
  return (offset) => {
    const pos = lineCounter.linePos(offset);
    return { file, line: pos.line, column: pos.col };
  };
}

/** Throws YamlSyntaxError at a document's first error, or at a tag flotilla does not read. */
function refuseProblems(doc: Document, locate: (offset: number) => SourceLocation): void {
  const first = doc.errors[0];
  if (first) {
    throw new YamlSyntaxError(`invalid YAML: ${first.message.split('\n')[0]}`, { location: locate(first.pos[0]) });
  }
  for (const warning of doc.warnings) {
    const tag = /Unresolved tag: (\S+)/.exec(warning.message)?.[1];
    if (tag && tag in LIST_EDIT_TAGS) continue;
    throw new YamlSyntaxError(`${warning.message.split('\n')[0]}; the only tags flotilla reads are ${Object.keys(LIST_EDIT_TAGS).join(', ')}`, {
      location: locate(warning.pos[0]),
    });
  }
}

/** Throws at a document's first problem: the parser's errors and unread tags, then a key written twice. */
function refuseFaults(doc: Document, locate: (offset: number) => SourceLocation): void {
  refuseProblems(doc, locate);
  refuseRepeatedKeys(doc, locate);
}

/** Refuses a key written twice in one map (by KeysSeen's rule: as the tree keys it), at the second one, and `__proto__`; merge keys may repeat. */
function refuseRepeatedKeys(doc: Document, locate: (offset: number) => SourceLocation): void {
  visit(doc, {
    Map: (_key, map) => {
      const seen = new KeysSeen();
      for (const { key } of map.items) {
        if (!isScalar(key) || typeof key.value === 'symbol') continue;
        const refusal = seen.refusal(key.value);
        if (refusal !== undefined) throw new YamlSyntaxError(refusal, { location: locate(key.range?.[0] ?? 0) });
      }
    },
  });
}

/** Parses one YAML document (a second one is an error). */
export function parseYamlDocument(text: string, file: string): YamlDocument {
  checkBounds(text, file);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { ...YAML_OPTIONS, lineCounter });
  const locate = locator(file, lineCounter);
  refuseFaults(doc, locate);
  return { file, text, doc, lineCounter, locate };
}

/** The tree of a document the document reader parsed (the reader of what the fast reader refuses). */
function treeOf(doc: Document, locate: (offset: number) => SourceLocation, options: ParseOptions): ValueNode | undefined {
  const ctx: ConvertContext = { ...options, locate, ancestors: new Set(), aliasValues: 0 };
  const root = doc.contents === null ? undefined : convert(doc, doc.contents, undefined, ctx, 0, 0);
  return root?.kind === 'scalar' && root.value === null ? undefined : root;
}

/** What the tree builder is held to: the schema's scalar rules, the limits, the tags flotilla reads. */
const TREE_RULES: TreeRules = {
  schema: YAML11_SCHEMA,
  limits: YAML_LIMITS,
  listEditTags: LIST_EDIT_TAGS,
  fail: (reason, location) => {
    throw new YamlSyntaxError(reason, { location });
  },
};

/**
 * The trees of a text's documents, or undefined when the fast reader
 * (tree.ts) hands the text over: then the document reader says what is
 * wrong, or reads what js-yaml is stricter about than Helm (a tab before
 * `[`, a flow collection's `}` at the start of a line), as it always has.
 * What both would refuse, the fast reader refuses itself.
 */
export function fastTrees(text: string, file: string, options: ParseOptions): (ValueNode | undefined)[] | undefined {
  checkSize(text, file);
  try {
    const builder = new TreeBuilder(text, file, yamlEvents(text, TREE_RULES.limits), options, TREE_RULES);
    const roots: (ValueNode | undefined)[] = [];
    for (let next = builder.nextDocument(); next !== 'done'; next = builder.nextDocument()) roots.push(next.root);
    return roots;
  } catch (error) {
    if (error instanceof HandOver) return undefined;
    throw error;
  }
}

export function parseYaml(text: string, file: string, options: ParseOptions): ParsedYaml {
  const roots = fastTrees(text, file, options);
  return roots && roots.length <= 1 ? { file, root: roots[0] } : documentTree(text, file, options);
}

/** The tree as the document reader makes it: what parseYaml falls back to, and what the fast reader is held to (test/yaml/tree.test.ts). */
export function documentTree(text: string, file: string, options: ParseOptions): ParsedYaml {
  const yaml = parseYamlDocument(text, file);
  return { file, root: treeOf(yaml.doc, yaml.locate, options) };
}

let identity: string | undefined;

/**
 * What a tree depends on besides its input: the limits, and the code that
 * reads YAML into trees. A kept tree (memo.ts) serves only a parser with
 * the same identity, so a flotilla that reads YAML otherwise never uses
 * trees an older one made.
 */
export function parserIdentity(): string {
  identity ??= createHash('sha256')
    .update(JSON.stringify(YAML_LIMITS))
    .update(JSON.stringify(YAML_OPTIONS, (key, value: unknown) => (key === 'schema' ? undefined : value)))
    // The tree builders make every node, its origin's line and column, and its scalar's value (by the schema's tags);
    // the line scanner gives most texts' events (a fix of it must not leave trees made from its old events in use).
    .update(
      [
        yaml11Tags,
        checkSize,
        checkBounds,
        yamlEvents,
        scannerSource(),
        TreeBuilder,
        locator,
        refuseProblems,
        refuseRepeatedKeys,
        treeOf,
        aliasTargets,
        convert,
        convertCollection,
        KeysSeen,
        fillFromMergeKeys,
        toScalar,
        mapNode,
        seqNode,
        scalarNode,
      ].join('\n'),
    )
    .digest('hex');
  return identity;
}

/** Plain data of one YAML document (undefined when empty): metadata, manifests, indexes. */
export function parseYamlValue(text: string, file: string): PlainValue | undefined {
  const { root } = parseYaml(text, file, { layer: file });
  return root === undefined ? undefined : toPlain(root);
}

/** Offsets where each document of a YAML stream starts. */
export function yamlDocumentOffsets(text: string): number[] {
  checkBounds(text, 'document');
  return parseAllDocuments(text, YAML_OPTIONS).map((doc) => doc.range[0]);
}

/** Plain data of every document of a YAML stream (`---`-separated, as kubectl and helm print), empty ones as null. */
export function parseYamlStream(text: string, file: string): (PlainValue | null)[] {
  const options = { layer: file };
  const roots =
    fastTrees(text, file, options) ??
    (() => {
      const lineCounter = new LineCounter();
      const locate = locator(file, lineCounter);
      return parseAllDocuments(text, { ...YAML_OPTIONS, lineCounter }).map((doc) => {
        refuseFaults(doc, locate);
        return treeOf(doc, locate, options);
      });
    })();
  return roots.map((root) => (root === undefined ? null : toPlain(root)));
}

interface ConvertContext extends ParseOptions {
  locate(offset: number): SourceLocation;
  /** The collections being converted, outermost first: an alias to one of them is a cycle. */
  readonly ancestors: Set<YamlNode>;
  /** Values produced so far by following aliases. */
  aliasValues: number;
  /** What each alias points at, found at the first alias (see aliasTargets). */
  targets?: Map<YamlNode, YamlNode | undefined>;
  /** Where the outermost alias being followed is written: what an expansion error points at. */
  aliasAt?: SourceLocation;
}

/**
 * Every alias's node: the last one anchored with its name before it, in
 * document order, as the yaml library's own `resolve` finds it — in one walk
 * of the document, where `resolve` walks it again for each alias (a file of
 * many aliases would take time in the square of its size).
 */
function aliasTargets(doc: Document): Map<YamlNode, YamlNode | undefined> {
  const anchored = new Map<string, YamlNode>();
  const targets = new Map<YamlNode, YamlNode | undefined>();
  visit(doc, {
    Node: (_key, node) => {
      if (isAlias(node)) targets.set(node, anchored.get(node.source));
      else if (node.anchor) anchored.set(node.anchor, node);
    },
  });
  return targets;
}

const documentTargets = new WeakMap<Document, Map<YamlNode, YamlNode | undefined>>();

/**
 * The node an alias of `doc` refers to (undefined for an unknown anchor),
 * for code that walks the document itself (policy files): every alias of a
 * document resolved from one walk of it, kept while the document lives.
 */
export function resolveAlias(doc: Document, alias: Alias): YamlNode | undefined {
  let targets = documentTargets.get(doc);
  if (!targets) documentTargets.set(doc, (targets = aliasTargets(doc)));
  return targets.get(alias);
}

/**
 * The tree of `node`; `depth` counts enclosing collections, `aliasDepth`
 * the aliases being followed (both bounded by {@link YAML_LIMITS}).
 */
function convert(doc: Document, node: YamlNode, keyOffset: number | undefined, ctx: ConvertContext, depth: number, aliasDepth: number): ValueNode {
  const offset = keyOffset ?? node.range?.[0] ?? 0;
  const origin: Origin = { layer: ctx.layer, location: ctx.locate(offset) };
  let resolved: YamlNode | undefined = node;
  if (isAlias(node)) {
    ctx.targets ??= aliasTargets(doc);
    resolved = ctx.targets.get(node);
    if (resolved && ctx.ancestors.has(resolved))
      throw new YamlSyntaxError(`alias *${node.source} refers to a value that contains it`, { location: origin.location });
    if (++aliasDepth > YAML_LIMITS.maxAliasDepth)
      throw new YamlSyntaxError(`aliases nest more than ${YAML_LIMITS.maxAliasDepth} deep`, { location: origin.location });
    if (aliasDepth === 1) ctx.aliasAt = origin.location;
  }
  if (aliasDepth > 0 && ++ctx.aliasValues > YAML_LIMITS.maxAliasExpansion) {
    throw new YamlSyntaxError(`aliases expand to more than ${YAML_LIMITS.maxAliasExpansion} values (an alias bomb?)`, {
      location: ctx.aliasAt ?? origin.location,
    });
  }
  if (!resolved) return scalarNode(null, origin);
  if (isScalar(resolved) && !(resolved.tag && resolved.tag in LIST_EDIT_TAGS)) return scalarNode(toScalar(resolved.value), origin);
  if (depth >= YAML_LIMITS.maxDepth) throw new YamlSyntaxError(`values nest more than ${YAML_LIMITS.maxDepth} levels deep`, { location: origin.location });
  ctx.ancestors.add(resolved);
  try {
    return convertCollection(doc, resolved, offset, origin, ctx, depth + 1, aliasDepth);
  } finally {
    ctx.ancestors.delete(resolved);
  }
}

function convertCollection(
  doc: Document,
  resolved: YamlNode,
  offset: number,
  origin: Origin,
  ctx: ConvertContext,
  depth: number,
  aliasDepth: number,
): ValueNode {
  const child = (item: YamlNode, keyOffset?: number): ValueNode => convert(doc, item, keyOffset, ctx, depth, aliasDepth);
  const tag = resolved.tag;
  if (tag && tag in LIST_EDIT_TAGS) {
    if (!ctx.allowListEdits) throw new YamlSyntaxError(`${tag} is only allowed in values layers above the static overrides`, { location: origin.location });
    if (!isSeq(resolved)) throw new YamlSyntaxError(`${tag} takes a list, e.g. ${tag} [item]`, { location: origin.location });
    const edit: ListEdit = {
      op: LIST_EDIT_TAGS[tag] as ListOp,
      origin,
      items: resolved.items.map((item) => child(item as YamlNode)),
    };
    return { kind: 'edits', edits: [edit], origin };
  }
  if (isMap(resolved)) {
    const entries = new Map<string, ValueNode>();
    const inherited: ValueNode[] = [];
    for (const pair of resolved.items) {
      const keyNode = pair.key as YamlNode | null;
      if (isScalar(keyNode) && typeof keyNode.value === 'symbol') {
        // A YAML merge key (`<<: *defaults`): its maps fill in keys not written here.
        const source = child(pair.value as YamlNode);
        inherited.push(...(source.kind === 'seq' ? source.items : [source]));
        continue;
      }
      const at = keyNode?.range?.[0] ?? offset;
      // Helm turns values into JSON, whose keys are strings: a map or list as a key has no meaning there.
      if (keyNode !== null && !isScalar(keyNode))
        throw new YamlSyntaxError('a map key must be a plain value, not a map or a list', { location: ctx.locate(at) });
      const key = keyNode === null ? '' : String(keyNode.value);
      const value = pair.value as YamlNode | null;
      entries.set(key, value === null ? scalarNode(null, { layer: ctx.layer, location: ctx.locate(at) }) : child(value, at));
    }
    fillFromMergeKeys(entries, inherited, TREE_RULES.fail);
    return mapNode(entries, origin);
  }
  if (isSeq(resolved))
    return seqNode(
      resolved.items.map((item) => child(item as YamlNode)),
      origin,
    );
  return scalarNode(null, origin);
}
