/**
 * YAML text → `ValueNode` trees, in two stages (docs/architecture.md,
 * "YAML"): the text is cut into a flat list of events that point into it
 * by offset — by scan.ts's line scanner when the text is plain block YAML,
 * else by js-yaml's event parser — and `TreeBuilder` turns the events into
 * trees. Plain scalars are resolved by the tags of the `yaml` package's
 * YAML 1.1 schema (parse.ts YAML11_SCHEMA): the same tests and the same
 * resolvers as the document (CST) reader, so both read `yes`, `0755` or
 * `1_000` alike. The event parser allocates a fraction of what a document
 * does: a cold build of 80 charts reads its ~330 files ~70 ms sooner.
 * What js-yaml refuses, parse.ts hands to the document reader.
 */
import { COLLECTION_STYLE, EVENT_ID, getScalarValue, parseEvents, SCALAR_STYLE, YAMLException, type AliasEvent, type Event, type ScalarEvent } from 'js-yaml';
import { isScalar as isYamlScalar, type Schema } from 'yaml';
import type { SourceLocation } from '../diagnostics/index.js';
import { mapNode, scalarNode, seqNode, type ListEdit, type ListOp, type Origin, type Scalar, type ValueNode } from './nodes.js';
import { scanBlockEvents } from './scan.js';

/** What reading a tree needs from parse.ts (which owns the limits, the schema and the error type). */
export interface TreeRules {
  readonly schema: Schema;
  readonly limits: { readonly maxDepth: number; readonly maxAliasExpansion: number; readonly maxAliasDepth: number };
  readonly listEditTags: Readonly<Record<string, ListOp>>;
  readonly fail: (reason: string, location: SourceLocation) => never;
}

export interface TreeOptions {
  readonly layer: string;
  readonly allowListEdits?: boolean;
}

const CORE_TAG_PREFIX = 'tag:yaml.org,2002:';
const MAP_TAG = `${CORE_TAG_PREFIX}map`;
const SEQ_TAG = `${CORE_TAG_PREFIX}seq`;
const STR_TAG = `${CORE_TAG_PREFIX}str`;

/** Offsets → 1-based line and column, as the document reader's LineCounter gives them. */
class Lines {
  private readonly starts: number[] = [0];

  constructor(text: string) {
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) this.starts.push(at + 1);
  }

  locate(file: string, offset: number): SourceLocation {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.starts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return { file, line: low + 1, column: offset - this.starts[low]! + 1 };
  }
}

/**
 * Thrown where the document reader (parse.ts) must decide instead: js-yaml
 * refused the text (it is stricter than Helm in places), or the text holds
 * what only that reader reads (the YAML 1.1 schema's set, omap and pairs,
 * tags under a %TAG directive, a tagged merge key). What both readers
 * refuse alike — aliases past the limits, nesting too deep, duplicate keys,
 * list edits where they are not allowed — is refused here, without
 * reading the text again: the document reader is far slower on what a
 * hostile file holds.
 */
export class HandOver extends Error {
  constructor(readonly why: string) {
    super(`left to the document reader: ${why}`);
  }
}

/** The nesting js-yaml's parser is given: deeper than our own limit (js-yaml counts otherwise), so that ours is the one met. */
export const eventDepthLimit = (limits: TreeRules['limits']): number => limits.maxDepth * 2;

/** The events of `text` (scan.ts's when it reads the text, else js-yaml's), or a hand-over when js-yaml refuses it. */
export function yamlEvents(text: string, limits: TreeRules['limits']): Event[] {
  const maxDepth = eventDepthLimit(limits);
  const scanned = scanBlockEvents(text, maxDepth);
  if (scanned) return scanned;
  try {
    return parseEvents(text, { maxDepth });
  } catch (error) {
    if (error instanceof YAMLException) throw new HandOver(error.reason);
    throw error;
  }
}

/**
 * Plain scalars resolved before, by schema, as values and as keys: files
 * repeat their words (keys above all), and running the schema's tests took
 * ~1.5 µs a scalar in a cold build. A resolution is a function of the text
 * alone; short texts only, and a bounded number.
 */
const resolvedPlain = new WeakMap<Schema, ResolvedPlain>();
type ResolvedPlain = readonly [values: Map<string, Scalar>, keys: Map<string, Scalar>];
const MEMO_LENGTH = 64;
const MEMO_ENTRIES = 20_000;

/** Where each anchor's node lies in the events, and whether it is complete (an alias may not refer into its own anchor). */
interface Anchor {
  readonly start: number;
  done: boolean;
}

/**
 * Builds the trees of one stream's events. Every node's origin is its own
 * place, except a map's values, which are placed at their key (what a
 * reader of the file looks for); an alias is expanded where it is written,
 * its value placed there and its inner nodes where they are defined.
 */
export class TreeBuilder {
  private at = 0;
  private readonly lines: Lines;
  private readonly resolved: ResolvedPlain;
  private anchors = new Map<string, Anchor>();
  /** Each alias's anchor, found when the alias is first read: the anchor of that name written last before it. */
  private readonly aliasTargets = new Map<number, Anchor>();
  private aliasValues = 0;
  private aliasAt: SourceLocation | undefined;
  /** Whether the document being read declares tag handles (%TAG): its tags are then the document reader's to resolve. */
  private tagDirectives = false;

  constructor(
    private readonly text: string,
    private readonly file: string,
    private readonly events: readonly Event[],
    private readonly options: TreeOptions,
    private readonly rules: TreeRules,
  ) {
    this.lines = new Lines(text);
    let resolved = resolvedPlain.get(rules.schema);
    if (!resolved) resolvedPlain.set(rules.schema, (resolved = [new Map(), new Map()]));
    this.resolved = resolved;
  }

  /** The next document's tree (undefined when it is empty or null), or `done` at the end of the stream. */
  nextDocument(): { readonly root: ValueNode | undefined } | 'done' {
    const event = this.events[this.at];
    if (event === undefined) return 'done';
    this.tagDirectives = event.type === EVENT_ID.DOCUMENT && event.directives.some((directive) => directive.kind === 'tag');
    this.at++; // DOCUMENT
    this.anchors = new Map();
    this.aliasValues = 0;
    const root = this.events[this.at]?.type === EVENT_ID.POP ? undefined : this.node(undefined, 0, 0, false);
    this.at++; // its POP
    return { root: root?.kind === 'scalar' && root.value === null ? undefined : root };
  }

  private origin(offset: number): Origin {
    return { layer: this.options.layer, location: this.lines.locate(this.file, offset) };
  }

  private fail(reason: string, location: SourceLocation): never {
    return this.rules.fail(reason, location);
  }

  /** The tag as written: `!!int` as its full name, `!name` as it is. */
  private tagOf(event: { tagStart: number; tagEnd: number }): string | undefined {
    if (event.tagStart < 0) return undefined;
    const tag = this.text.slice(event.tagStart, event.tagEnd);
    if (tag.startsWith('!!')) return CORE_TAG_PREFIX + tag.slice(2);
    if (tag.startsWith('!<') && tag.endsWith('>')) return tag.slice(2, -1);
    return tag;
  }

  /** Refuses a tag flotilla does not read, at the tag; one the document reader may read is left to it. */
  private unreadTag(tag: string, event: { tagStart: number }): never {
    if (this.tagDirectives || this.rules.schema.tags.some((known) => known.tag === tag)) throw new HandOver(`the tag ${tag}`);
    const location = this.lines.locate(this.file, event.tagStart);
    return this.fail(`Unresolved tag: ${tag}; the only tags flotilla reads are ${Object.keys(this.rules.listEditTags).join(', ')}`, location);
  }

  /**
   * The node starting at the current event. `keyOffset` places it (a map's
   * value); `depth` counts enclosing collections, `aliasDepth` the aliases
   * being followed.
   */
  private node(keyOffset: number | undefined, depth: number, aliasDepth: number, atKey: boolean): ValueNode {
    const event = this.events[this.at]!;
    if (event.type === EVENT_ID.ALIAS) return this.alias(event, keyOffset, depth, aliasDepth);
    if (aliasDepth > 0 && ++this.aliasValues > this.rules.limits.maxAliasExpansion) {
      this.fail(`aliases expand to more than ${this.rules.limits.maxAliasExpansion} values (an alias bomb?)`, this.aliasAt!);
    }
    const start = this.startOf(event);
    const origin = this.origin(keyOffset ?? (start >= 0 ? start : this.emptyOffset(atKey)));
    const anchor = 'anchorStart' in event && event.anchorStart >= 0 && aliasDepth === 0 ? this.text.slice(event.anchorStart, event.anchorEnd) : undefined;
    const record: Anchor | undefined = anchor === undefined ? undefined : { start: this.at, done: false };
    if (anchor !== undefined) this.anchors.set(anchor, record!);
    let node: ValueNode;
    if (event.type === EVENT_ID.SCALAR) {
      this.at++;
      node = this.scalar(event, origin, atKey);
    } else if (event.type === EVENT_ID.SEQUENCE || event.type === EVENT_ID.MAPPING) {
      if (depth >= this.rules.limits.maxDepth) this.fail(`values nest more than ${this.rules.limits.maxDepth} levels deep`, origin.location);
      node = this.collection(event.type === EVENT_ID.MAPPING, event, origin, depth + 1, aliasDepth);
    } else {
      throw new HandOver('an unexpected event');
    }
    if (record) record.done = true;
    return node;
  }

  /** Where a node starts, -1 for an empty scalar; a block map whose first key has an anchor or tag starts at the key itself. */
  private startOf(event: Event): number {
    if (event.type === EVENT_ID.SCALAR) return this.scalarStart(event);
    if (event.type === EVENT_ID.MAPPING) {
      const first = this.events[this.at + 1];
      const keyProps = first?.type === EVENT_ID.SCALAR && first.valueStart >= 0 && (first.anchorStart >= 0 || first.tagStart >= 0);
      return event.style === COLLECTION_STYLE.BLOCK && keyProps ? this.scalarStart(first) : event.start;
    }
    return event.type === EVENT_ID.SEQUENCE ? event.start : -1;
  }

  /** Where a scalar starts: its first character, a quote, or a block scalar's `|` or `>`. */
  private scalarStart(event: ScalarEvent): number {
    if (event.valueStart < 0) return -1;
    if (event.style === SCALAR_STYLE.SINGLE_QUOTED || event.style === SCALAR_STYLE.DOUBLE_QUOTED) return event.valueStart - 1;
    if (event.style === SCALAR_STYLE.LITERAL_BLOCK || event.style === SCALAR_STYLE.FOLDED_BLOCK) {
      // The indicator ends the line before the text (after it: indentation or chomping indicators, a comment).
      const header = this.text.lastIndexOf('\n', event.valueStart - 1);
      const lineStart = this.text.lastIndexOf('\n', header - 1) + 1;
      const line = this.text.slice(lineStart, header);
      const indicator = Math.max(line.search(/[|>][-+0-9]*\s*(#.*)?$/), 0);
      return lineStart + indicator;
    }
    return event.valueStart;
  }

  /**
   * Where an empty scalar is, which has no text of its own: right after the
   * indicator before it (`-`, `?`, `:`, `,`, `[`, `{`) and the blanks after
   * that, or, for an empty key, at the `:` that follows it (the places the
   * document reader gives them).
   */
  private emptyOffset(atKey: boolean): number {
    const own = this.events[this.at];
    // After its anchor or tag and the blanks after them, when it has one.
    if (own?.type === EVENT_ID.SCALAR && (own.anchorStart >= 0 || own.tagStart >= 0)) return this.pastBlanks(Math.max(own.anchorEnd, own.tagEnd));
    let from = 0;
    for (let i = this.at - 1; i >= 0; i--) {
      const event = this.events[i]!;
      if (event.type === EVENT_ID.SCALAR && event.valueStart >= 0) {
        from = event.valueEnd + (event.style === SCALAR_STYLE.SINGLE_QUOTED || event.style === SCALAR_STYLE.DOUBLE_QUOTED ? 1 : 0);
        break;
      }
      if ((event.type === EVENT_ID.SEQUENCE || event.type === EVENT_ID.MAPPING) && event.start >= 0) {
        from = event.start;
        break;
      }
      if (event.type === EVENT_ID.ALIAS) {
        from = event.anchorEnd;
        break;
      }
    }
    const indicator = /[-?:,[{]/g;
    indicator.lastIndex = from;
    const found = indicator.exec(this.text);
    if (!found) return this.text.length;
    return atKey && found[0] === ':' ? found.index : this.pastBlanks(found.index + 1);
  }

  private pastBlanks(offset: number): number {
    let at = offset;
    while (this.text[at] === ' ' || this.text[at] === '\t') at++;
    return at;
  }

  private alias(event: AliasEvent, keyOffset: number | undefined, depth: number, aliasDepth: number): ValueNode {
    const name = this.text.slice(event.anchorStart, event.anchorEnd);
    // The `*` sits just before the name.
    const origin = this.origin(keyOffset ?? Math.max(0, event.anchorStart - 1));
    if (!this.aliasTargets.has(this.at)) {
      const target = this.anchors.get(name);
      if (target) this.aliasTargets.set(this.at, target);
    }
    const anchor = this.aliasTargets.get(this.at);
    this.at++;
    if (!anchor) throw new HandOver(`the alias *${name}`);
    if (!anchor.done) this.fail(`alias *${name} refers to a value that contains it`, origin.location);
    if (aliasDepth + 1 > this.rules.limits.maxAliasDepth) this.fail(`aliases nest more than ${this.rules.limits.maxAliasDepth} deep`, origin.location);
    if (aliasDepth === 0) this.aliasAt = origin.location;
    // Read the anchored node again where the alias is, then come back.
    const resume = this.at;
    this.at = anchor.start;
    const node = this.node(undefined, depth, aliasDepth + 1, false);
    this.at = resume;
    // The alias's own place for its value (and its list edit); inner nodes keep theirs.
    if (node.kind === 'edits') return { kind: 'edits', edits: node.edits.map((edit) => ({ ...edit, origin })), origin };
    return { ...node, origin };
  }

  private scalar(event: ScalarEvent, origin: Origin, atKey: boolean): ValueNode {
    const tag = this.tagOf(event);
    if (tag !== undefined && tag in this.rules.listEditTags) {
      // On a key the tag edits nothing: the key is its text, as the document reader reads it.
      if (atKey) return scalarNode(this.scalarValue(event, '!', atKey), origin);
      if (!this.options.allowListEdits) this.fail(`${tag} is only allowed in values layers above the static overrides`, origin.location);
      this.fail(`${tag} takes a list, e.g. ${tag} [item]`, origin.location);
    }
    return scalarNode(this.scalarValue(event, tag, atKey), origin);
  }

  /** A scalar's value: text unless plain, resolved by the schema's tests when plain and untagged, else by its tag. */
  private scalarValue(event: ScalarEvent, tag: string | undefined, atKey: boolean): Scalar {
    const source = event.valueStart < 0 ? '' : event.fast ? this.text.slice(event.valueStart, event.valueEnd) : getScalarValue(this.text, event);
    if (tag === '!' || tag === STR_TAG) return source;
    const tags = this.rules.schema.tags;
    if (tag === undefined) return event.style === SCALAR_STYLE.PLAIN ? this.plainValue(source, atKey) : source;
    const named = tags.filter((t) => !t.collection && t.tag === tag);
    const found = named.find((t) => !(t.default && t.test)) ?? named.find((t) => t.test?.test(source));
    if (!found) return this.unreadTag(tag, event);
    return this.resolve(found, source);
  }

  /** An untagged plain scalar, resolved by the first of the schema's tags whose test it passes (its text when none does). */
  private plainValue(source: string, atKey: boolean): Scalar {
    // Apart by place: `<<` is a string as a value and a merge key as a key (the merge tag is the one that applies to keys alone).
    const known = this.resolved[atKey ? 1 : 0];
    const value = known.get(source);
    if (value !== undefined) return value;
    const found = this.rules.schema.tags.find((t) => !t.collection && (t.default === true || (atKey && t.default === 'key')) && t.test?.test(source));
    const resolved = found ? this.resolve(found, source) : source;
    if (source.length <= MEMO_LENGTH && known.size < MEMO_ENTRIES) known.set(source, resolved);
    return resolved;
  }

  private resolve(tag: Schema['tags'][number], source: string): Scalar {
    if (!('resolve' in tag) || typeof tag.resolve !== 'function') return source;
    let problem: string | undefined;
    const resolved: unknown = (tag.resolve as (value: string, onError: (message: string) => void, options: object) => unknown)(
      source,
      (message) => (problem ??= message),
      {},
    );
    if (problem !== undefined) throw new HandOver(problem);
    const value = isYamlScalar(resolved) ? resolved.value : resolved;
    if (typeof value === 'symbol') throw new HandOver('a tagged merge key');
    return toScalar(value);
  }

  private collection(isMap: boolean, event: { tagStart: number; tagEnd: number }, origin: Origin, depth: number, aliasDepth: number): ValueNode {
    const tag = this.tagOf(event);
    this.at++; // SEQUENCE or MAPPING
    const listOp = tag === undefined ? undefined : this.rules.listEditTags[tag];
    if (listOp !== undefined) {
      if (!this.options.allowListEdits) this.fail(`${tag} is only allowed in values layers above the static overrides`, origin.location);
      if (isMap) this.fail(`${tag} takes a list, e.g. ${tag} [item]`, origin.location);
      const edit: ListEdit = { op: listOp, origin, items: this.items(depth, aliasDepth) };
      return { kind: 'edits', edits: [edit], origin };
    }
    if (tag !== undefined && tag !== '!' && tag !== (isMap ? MAP_TAG : SEQ_TAG)) this.unreadTag(tag, event);
    return isMap ? this.map(origin, depth, aliasDepth) : seqNode(this.items(depth, aliasDepth), origin);
  }

  private items(depth: number, aliasDepth: number): ValueNode[] {
    const items: ValueNode[] = [];
    while (this.events[this.at]!.type !== EVENT_ID.POP) items.push(this.node(undefined, depth, aliasDepth, false));
    this.at++;
    return items;
  }

  private map(origin: Origin, depth: number, aliasDepth: number): ValueNode {
    const entries = new Map<string, ValueNode>();
    const seen = new KeysSeen();
    const inherited: ValueNode[] = [];
    while (this.events[this.at]!.type !== EVENT_ID.POP) {
      const keyEvent = this.events[this.at]!;
      if (keyEvent.type !== EVENT_ID.SCALAR) {
        const at = this.origin(keyEvent.type === EVENT_ID.ALIAS ? Math.max(0, keyEvent.anchorStart - 1) : 'start' in keyEvent ? keyEvent.start : 0);
        // Helm turns values into JSON, whose keys are strings: a map or list as a key has no meaning there.
        this.fail('a map key must be a plain value, not a map or a list', at.location);
      }
      const keyStart = this.scalarStart(keyEvent);
      const keyAt = keyStart >= 0 ? keyStart : this.emptyOffset(true);
      if (
        keyEvent.style === SCALAR_STYLE.PLAIN &&
        keyEvent.tagStart < 0 &&
        keyEvent.anchorStart < 0 &&
        this.text.slice(keyEvent.valueStart, keyEvent.valueEnd) === '<<'
      ) {
        // A YAML merge key (`<<: *defaults`): its maps fill in keys not written here.
        this.at++;
        const source = this.node(undefined, depth, aliasDepth, false);
        inherited.push(...(source.kind === 'seq' ? source.items : [source]));
        continue;
      }
      const keyNode = this.node(undefined, depth, aliasDepth, true);
      const keyValue = keyNode.kind === 'scalar' ? keyNode.value : null;
      const refusal = seen.refusal(keyValue);
      if (refusal !== undefined) this.fail(refusal, this.origin(keyAt).location);
      const key = String(keyValue);
      entries.set(key, this.node(keyAt, depth, aliasDepth, false));
    }
    this.at++;
    fillFromMergeKeys(entries, inherited, this.rules.fail);
    return mapNode(entries, origin);
  }
}

/** What both readers say of a key written twice in one map. */
const DUPLICATE_KEY = 'invalid YAML: Map keys must be unique';

/** What both readers say of a `__proto__` key: kept, it would become the prototype of the object it is read into. */
const PROTOTYPE_KEY = 'invalid YAML: the key "__proto__" is refused (read into an object, it would replace the object\'s prototype)';

/**
 * The keys of one map, to refuse one written twice as the tree holds them:
 * by the string its resolved value becomes (`1` and `"1"` are one key, as
 * js-yaml compares them, where the yaml library keeps both and the tree
 * silently one), and `__proto__`. In a set, not against every key before.
 */
export class KeysSeen {
  private readonly seen = new Set<string>();

  /** Why the map cannot hold this key beside the ones before it, or undefined when it can. */
  refusal(value: unknown): string | undefined {
    const key = String(toScalar(value));
    if (key === '__proto__') return PROTOTYPE_KEY;
    if (this.seen.has(key)) return DUPLICATE_KEY;
    this.seen.add(key);
    return undefined;
  }
}

/** The maps a map's merge keys (`<<`) name fill in the keys it does not write itself, the first named first (both readers). */
export function fillFromMergeKeys(entries: Map<string, ValueNode>, inherited: readonly ValueNode[], fail: TreeRules['fail']): void {
  for (const source of inherited) {
    if (source.kind !== 'map') fail('a merge key (<<) takes a map or a list of maps', source.origin.location);
    else for (const [k, v] of source.entries) if (!entries.has(k)) entries.set(k, v);
  }
}

/** A resolved scalar as a tree holds it (both readers). */
export function toScalar(value: unknown): Scalar {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  return String(value);
}
