/**
 * Parsed files kept by what they were parsed from (docs/architecture.md,
 * "YAML"). `parseYaml` is a pure function of (text, file, layer,
 * allowListEdits), so a tree parsed once serves every later parse of the
 * same input: within one process (`build --watch` builds again and again),
 * and across processes when the memo is encoded into the build cache. Only
 * trees of text that parsed, within `YAML_LIMITS`, are ever kept; a text
 * that fails is parsed again and fails again, at its own file:line.
 *
 * The trees are shared, not copied: like every `ValueNode` tree they are
 * never mutated (src/values merges into new nodes).
 */
import { createHash } from 'node:crypto';
import { deserialize, serialize } from 'node:v8';
import type { Origin, ValueNode } from './nodes.js';
import { LIST_EDIT_TAGS, parseYaml, parserIdentity, YAML_LIMITS, type ParsedYaml, type ParseOptions } from './parse.js';

/** What parses a file into a tree: `parseYaml`, or a memo of it. */
export type YamlParser = (text: string, file: string, options: ParseOptions) => ParsedYaml;

/** Bumped when trees are kept otherwise, or when an upgrade of the `yaml` package reads some text differently. */
const FORMAT = 'flotilla-parse-memo/1';
const DIGEST_BYTES = 32;
/** An entry unused while the memo was rewritten this many times is dropped (a file deleted, or edited since). */
const MAX_IDLE = 100;

interface Entry {
  /** sha256 of the text the tree was parsed from. */
  readonly digest: string;
  /** The tree (null: an empty document), once parsed or decoded. */
  tree?: ValueNode | null;
  /** Its serialisation, as read from the cache or written to it. */
  bytes?: Uint8Array;
  /** Rewrites of the memo since the entry was last used. */
  idle: number;
  /** Checks the tree passed (see `checkOnce`). */
  passed: Set<string>;
}

/**
 * The encoded memo: a 4-byte length, this index as JSON, every entry's tree
 * (v8 serialisation) one after the other in index order, and the sha256 of
 * all before it. Trees are sliced out without copying and decoded when used.
 */
interface EncodedIndex {
  readonly format: string;
  readonly parser: string;
  readonly entries: readonly IndexedEntry[];
}

type IndexedEntry = [slot: string, digest: string, idle: number, passed: string[], byteLength: number];

export class ParseMemo {
  /** One entry per (file, layer, list edits allowed): the text last parsed there. */
  private readonly entries: Map<string, Entry>;
  private readonly used = new Set<string>();
  /** The entry of each root handed out: what `checkOnce` knows the tree by. */
  private readonly entryOf = new WeakMap<ValueNode, Entry>();
  private changed = false;
  private parsedAfresh: string[] = [];

  private constructor(entries: Map<string, Entry>) {
    this.entries = entries;
  }

  /** Files parsed afresh (not found in the memo) since the memo was decoded or last encoded. */
  get parsedFiles(): readonly string[] {
    return this.parsedAfresh;
  }

  static empty(): ParseMemo {
    return new ParseMemo(new Map());
  }

  /**
   * The memo encoded in `bytes`; an empty one when they are missing, torn,
   * foreign (another format or another parser) or altered: a memo is an
   * optimisation, never a reason to fail or to use a tree no parse made.
   */
  static decode(bytes: Uint8Array | undefined): ParseMemo {
    const entries = bytes ? decodeEntries(bytes) : undefined;
    return entries ? new ParseMemo(entries) : ParseMemo.empty();
  }

  /** `parseYaml`, answered from the memo when the same input was parsed before. */
  readonly parse: YamlParser = (text, file, options) => {
    const slot = `${options.allowListEdits ? 'edits' : 'plain'}\0${options.layer}\0${file}`;
    const digest = createHash('sha256').update(text).digest('base64');
    const entry = this.entries.get(slot);
    if (entry?.digest === digest) {
      const tree = this.treeOf(entry, file, options.layer, text.length);
      if (tree !== undefined) {
        this.used.add(slot);
        if (tree) this.entryOf.set(tree, entry);
        return { file, root: tree ?? undefined };
      }
    }
    this.parsedAfresh.push(file);
    const parsed = parseYaml(text, file, options);
    const fresh: Entry = { digest, tree: parsed.root ?? null, idle: 0, passed: new Set() };
    this.entries.set(slot, fresh);
    if (parsed.root) this.entryOf.set(parsed.root, fresh);
    this.used.add(slot);
    this.changed = true;
    return parsed;
  };

  /**
   * The problems `run` finds in `root`, a tree this memo handed out: none,
   * without running it, when the same check (`check` names it, and must
   * change whenever what it checks for does, e.g. a schema's digest) passed
   * on the same text before. Only passes are kept; a check of any other
   * tree just runs.
   */
  checkOnce<T>(root: ValueNode | undefined, check: string, run: () => T[]): T[] {
    const entry = root && this.entryOf.get(root);
    if (entry?.passed.has(check)) return [];
    const problems = run();
    if (entry && problems.length === 0) {
      entry.passed.add(check);
      this.changed = true;
    }
    return problems;
  }

  /** The entry's tree, decoded on first use; undefined when its bytes do not hold a tree of this file and layer. */
  private treeOf(entry: Entry, file: string, layer: string, textLength: number): ValueNode | null | undefined {
    if (entry.tree !== undefined) return entry.tree;
    let tree: unknown;
    try {
      tree = deserialize(entry.bytes as Uint8Array);
    } catch {
      return undefined;
    }
    // A parse makes at most a node per character, plus what aliases expand to (each alias twice: merge keys share what they inherit).
    const shape: TreeShape = { file, layer, nodesLeft: textLength + 2 * YAML_LIMITS.maxAliasExpansion };
    if (tree !== null && !isTree(tree, shape, 0)) return undefined;
    entry.tree = tree as ValueNode | null;
    return entry.tree;
  }

  /**
   * The memo's bytes when it changed since it was decoded or last encoded
   * (else undefined: nothing to write). Entries unused for a while are
   * dropped here, so the memo holds about the files the app has now.
   */
  encode(): Buffer | undefined {
    this.parsedAfresh = [];
    if (!this.changed) {
      this.used.clear();
      return undefined;
    }
    const indexed: IndexedEntry[] = [];
    const trees: Uint8Array[] = [];
    for (const [slot, entry] of this.entries) {
      entry.idle = this.used.has(slot) ? 0 : entry.idle + 1;
      if (entry.idle > MAX_IDLE) {
        this.entries.delete(slot);
        continue;
      }
      entry.bytes ??= serialize(entry.tree ?? null);
      indexed.push([slot, entry.digest, entry.idle, [...entry.passed], entry.bytes.length]);
      trees.push(entry.bytes);
    }
    this.used.clear();
    this.changed = false;
    const index: EncodedIndex = { format: FORMAT, parser: parserIdentity(), entries: indexed };
    const header = Buffer.from(JSON.stringify(index));
    const length = Buffer.alloc(4);
    length.writeUInt32BE(header.length);
    const body = Buffer.concat([length, header, ...trees]);
    return Buffer.concat([body, createHash('sha256').update(body).digest()]);
  }
}

function decodeEntries(bytes: Uint8Array): Map<string, Entry> | undefined {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (data.length < 4 + DIGEST_BYTES) return undefined;
  const body = data.subarray(0, data.length - DIGEST_BYTES);
  if (!createHash('sha256').update(body).digest().equals(data.subarray(body.length))) return undefined;
  const headerEnd = 4 + body.readUInt32BE(0);
  let index: Partial<EncodedIndex> | null;
  try {
    index = JSON.parse(body.toString('utf8', 4, headerEnd)) as Partial<EncodedIndex> | null;
  } catch {
    return undefined;
  }
  if (index?.format !== FORMAT || index.parser !== parserIdentity() || !Array.isArray(index.entries)) return undefined;
  const entries = new Map<string, Entry>();
  let offset = headerEnd;
  for (const item of index.entries as unknown[]) {
    if (!Array.isArray(item)) return undefined;
    const [slot, digest, idle, passed, byteLength] = item as unknown[];
    if (typeof slot !== 'string' || typeof digest !== 'string' || typeof idle !== 'number' || !Number.isInteger(byteLength)) return undefined;
    if (!Array.isArray(passed) || !passed.every((check) => typeof check === 'string')) return undefined;
    const end = offset + (byteLength as number);
    if (end > body.length || end < offset) return undefined;
    entries.set(slot, { digest, bytes: body.subarray(offset, end), idle, passed: new Set(passed as string[]) });
    offset = end;
  }
  return offset === body.length ? entries : undefined;
}

const LIST_OPS = new Set<string>(Object.values(LIST_EDIT_TAGS));

interface TreeShape {
  readonly file: string;
  readonly layer: string;
  /** Nodes a tree of that text could still have: shared subtrees count each time, so a tampered tree cannot blow up. */
  nodesLeft: number;
}

function isOrigin(value: unknown, shape: TreeShape): value is Origin {
  const origin = value as Partial<Origin> | null;
  const location = origin?.location;
  return (
    typeof origin === 'object' &&
    origin !== null &&
    origin.layer === shape.layer &&
    typeof location === 'object' &&
    location !== null &&
    location.file === shape.file &&
    Number.isInteger(location.line) &&
    Number.isInteger(location.column)
  );
}

/** Whether a decoded value is a tree parseYaml could have made of the shape's file in its layer. */
function isTree(value: unknown, shape: TreeShape, depth: number): value is ValueNode {
  const node = value as Partial<Record<string, unknown>> | null;
  if (--shape.nodesLeft < 0 || depth > YAML_LIMITS.maxDepth) return false;
  if (typeof node !== 'object' || node === null || !isOrigin(node.origin, shape)) return false;
  const child = (item: unknown) => isTree(item, shape, depth + 1);
  switch (node.kind) {
    case 'scalar':
      return node.value === null || ['string', 'number', 'boolean'].includes(typeof node.value);
    case 'seq':
      return Array.isArray(node.items) && node.items.every(child);
    case 'map':
      return node.entries instanceof Map && [...node.entries].every(([key, item]) => typeof key === 'string' && child(item));
    case 'edits':
      return (
        Array.isArray(node.edits) &&
        node.edits.every((edit: unknown) => {
          const e = edit as { op?: unknown; origin?: unknown; items?: unknown } | null;
          return (
            typeof e === 'object' && e !== null && LIST_OPS.has(e.op as string) && isOrigin(e.origin, shape) && Array.isArray(e.items) && e.items.every(child)
          );
        })
      );
    default:
      return false;
  }
}
