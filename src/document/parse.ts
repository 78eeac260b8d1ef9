/**
 * Reading YAML, the one way for each purpose (docs/architecture.md, "YAML"):
 * every reader parses with `yaml` as Helm and Kubernetes read YAML (1.1:
 * yes/no are booleans, 0755 is octal; timestamps stay strings), so a file
 * means the same to every command.
 *
 * - `parseYaml`: values with positions — a `ValueNode` tree whose every
 *   node says which layer and file:line set it (values layers, the app's
 *   own files); `parseYamlValue` / `parseYamlStream` give plain data.
 * - `parseYamlDocument`: the document itself (CST), for code that edits a
 *   file keeping its comments or needs the position of every character.
 */
import { LineCounter, Schema, isAlias, isMap, isScalar, isSeq, parseAllDocuments, parseDocument, type Document, type DocumentOptions, type Node as YamlNode, type ParseOptions as YamlParseOptions, type SchemaOptions, type Tags } from 'yaml';
import { FlotillaError, type SourceLocation } from '../diagnostics/index.js';
import { mapNode, scalarNode, seqNode, toPlain, type ListEdit, type ListOp, type Origin, type PlainValue, type Scalar, type ValueNode } from './nodes.js';

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

export interface ParseOptions {
  /** Label stored in every node's origin. */
  readonly layer: string;
  /** Accept `!append` / `!prepend` / `!remove` (values layers); refused elsewhere. */
  readonly allowListEdits?: boolean;
}

// Helm reads values with a YAML 1.1 parser (yes/no are booleans, 0755 is octal),
// so we do too; timestamps stay strings, as they reach Helm's templates.
const yaml11Tags = (tags: Tags): Tags =>
  tags.filter((t) => (typeof t === 'string' ? t !== 'timestamp' : t.tag !== 'tag:yaml.org,2002:timestamp'));

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
  uniqueKeys: true,
  prettyErrors: false,
};

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

/** Parses one YAML document (a second one is an error). */
export function parseYamlDocument(text: string, file: string): YamlDocument {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { ...YAML_OPTIONS, lineCounter });
  const locate = locator(file, lineCounter);
  refuseProblems(doc, locate);
  return { file, text, doc, lineCounter, locate };
}

function treeOf(doc: Document, locate: (offset: number) => SourceLocation, options: ParseOptions): ValueNode | undefined {
  const root = doc.contents === null ? undefined : convert(doc, doc.contents, undefined, { ...options, locate });
  return root?.kind === 'scalar' && root.value === null ? undefined : root;
}

export function parseYaml(text: string, file: string, options: ParseOptions): ParsedYaml {
  const yaml = parseYamlDocument(text, file);
  return { file, root: treeOf(yaml.doc, yaml.locate, options) };
}

/** Plain data of one YAML document (undefined when empty): metadata, manifests, indexes. */
export function parseYamlValue(text: string, file: string): PlainValue | undefined {
  const { root } = parseYaml(text, file, { layer: file });
  return root === undefined ? undefined : toPlain(root);
}

/** Offsets where each document of a YAML stream starts. */
export function yamlDocumentOffsets(text: string): number[] {
  return parseAllDocuments(text, YAML_OPTIONS).map((doc) => doc.range[0]);
}

/** Plain data of every document of a YAML stream (`---`-separated, as kubectl and helm print), empty ones as null. */
export function parseYamlStream(text: string, file: string): (PlainValue | null)[] {
  const lineCounter = new LineCounter();
  const locate = locator(file, lineCounter);
  return parseAllDocuments(text, { ...YAML_OPTIONS, lineCounter }).map((doc) => {
    refuseProblems(doc, locate);
    const root = treeOf(doc, locate, { layer: file });
    return root === undefined ? null : toPlain(root);
  });
}

interface ConvertContext extends ParseOptions {
  locate(offset: number): SourceLocation;
}

function convert(doc: Document, node: YamlNode, keyOffset: number | undefined, ctx: ConvertContext): ValueNode {
  const resolved = isAlias(node) ? (node.resolve(doc) as YamlNode | undefined) : node;
  const offset = keyOffset ?? node.range?.[0] ?? 0;
  const origin: Origin = { layer: ctx.layer, location: ctx.locate(offset) };
  if (!resolved) return scalarNode(null, origin);
  const tag = resolved.tag;
  if (tag && tag in LIST_EDIT_TAGS) {
    if (!ctx.allowListEdits) throw new YamlSyntaxError(`${tag} is only allowed in values layers above the static overrides`, { location: origin.location });
    if (!isSeq(resolved)) throw new YamlSyntaxError(`${tag} takes a list, e.g. ${tag} [item]`, { location: origin.location });
    const edit: ListEdit = {
      op: LIST_EDIT_TAGS[tag] as ListOp,
      origin,
      items: resolved.items.map((item) => convert(doc, item as YamlNode, undefined, ctx)),
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
        const source = convert(doc, pair.value as YamlNode, undefined, ctx);
        inherited.push(...(source.kind === 'seq' ? source.items : [source]));
        continue;
      }
      const key = keyNode === null ? '' : String(isScalar(keyNode) ? keyNode.value : keyNode.toJSON());
      const at = keyNode?.range?.[0] ?? offset;
      const value = pair.value as YamlNode | null;
      entries.set(key, value === null ? scalarNode(null, { layer: ctx.layer, location: ctx.locate(at) }) : convert(doc, value, at, ctx));
    }
    for (const source of inherited) {
      if (source.kind !== 'map') throw new YamlSyntaxError('a merge key (<<) takes a map or a list of maps', { location: source.origin.location });
      for (const [k, v] of source.entries) if (!entries.has(k)) entries.set(k, v);
    }
    return mapNode(entries, origin);
  }
  if (isSeq(resolved)) return seqNode(resolved.items.map((item) => convert(doc, item as YamlNode, undefined, ctx)), origin);
  if (isScalar(resolved)) return scalarNode(toScalar(resolved.value), origin);
  return scalarNode(null, origin);
}

function toScalar(value: unknown): Scalar {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  return String(value);
}
