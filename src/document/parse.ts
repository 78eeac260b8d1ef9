import { readFile } from 'node:fs/promises';
import { LineCounter, Schema, isAlias, isMap, isScalar, isSeq, parseDocument, type Document, type Node as YamlNode, type Tags } from 'yaml';
import { FlotillaError, type SourceLocation } from '../diagnostics/index.js';
import { mapNode, scalarNode, seqNode, type ListEdit, type ListOp, type Origin, type Scalar, type ValueNode } from './nodes.js';

/** The YAML tags that edit the list below instead of replacing it. */
export const LIST_EDIT_TAGS: Readonly<Record<string, ListOp>> = { '!append': 'append', '!prepend': 'prepend', '!remove': 'remove' };

export class YamlSyntaxError extends FlotillaError {}

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
 * The YAML 1.1 schema above, made once: the yaml package would otherwise
 * build a schema (every tag) for each document, a fifth of the time an app's
 * small files take to parse. Parsing only reads it.
 */
const YAML11_SCHEMA = new Schema({ schema: 'yaml-1.1', resolveKnownTags: false, customTags: yaml11Tags, merge: true });

export function parseYaml(text: string, file: string, options: ParseOptions): ParsedYaml {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    version: '1.1',
    schema: YAML11_SCHEMA,
    merge: true,
    uniqueKeys: true,
    lineCounter,
    prettyErrors: false,
  });
  const locate = (offset: number): SourceLocation => {
    const pos = lineCounter.linePos(offset);
    return { file, line: pos.line, column: pos.col };
  };
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
  const root = doc.contents === null ? undefined : convert(doc, doc.contents, undefined, { ...options, locate });
  return { file, root: root?.kind === 'scalar' && root.value === null ? undefined : root };
}

export async function readYamlFile(path: string, displayFile: string, options: ParseOptions): Promise<ParsedYaml> {
  return parseYaml(await readFile(path, 'utf8'), displayFile, options);
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
