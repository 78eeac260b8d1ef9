/**
 * The events of plain block YAML, found line by line (docs/architecture.md,
 * "YAML"): block maps and lists, plain keys, one-line plain and quoted
 * scalars without escapes, literal and folded block scalars, flow
 * collections closed on their line, comments. That is nearly every file an
 * app holds (Chart.yaml, values, overrides), and js-yaml's general parser,
 * cold, takes ~80 µs for each even when it is ten lines long: a build reads
 * hundreds. For any other text (anchors, aliases, tags, escapes, plain
 * scalars over several lines, tabs, document markers, complex keys,
 * anything malformed) `scanBlockEvents` answers undefined and js-yaml reads
 * it, so whatever it accepts it must give exactly as js-yaml's
 * `parseEvents` does (test/yaml/scan.test.ts holds the two equal over
 * this repository's YAML and tens of thousands of generated and mangled
 * documents; test/fuzz a property).
 */
import { CHOMPING_MODE, COLLECTION_STYLE, EVENT_ID, SCALAR_STYLE, type Event, type ScalarEvent } from 'js-yaml';
import { MAX_SIMPLE_KEY } from './dump.js';

/** Text this scanner leaves to js-yaml as a whole: a tab, a carriage return or other line break than `\\n`, a byte-order mark, a control, a surrogate half. */
const NOT_SCANNED = /[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]/;

/** Thrown inside the scanner when the text leaves the subset it reads; caught in {@link scanBlockEvents}. */
const LEFT = Symbol('left to js-yaml');

const SPACE = 0x20;
const HASH = 0x23;
const COLON = 0x3a;
const COMMA = 0x2c;
const DASH = 0x2d;
const PLUS = 0x2b;
const QUESTION = 0x3f;
const SINGLE_QUOTE = 0x27;
const DOUBLE_QUOTE = 0x22;
const PIPE = 0x7c;
const GREATER = 0x3e;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const NEWLINE = 0x0a;

/** Characters that cannot begin a plain scalar (YAML's indicators), or begin what this scanner leaves to js-yaml. */
const NOT_PLAIN_START = new Set([...'[]{},#&*!|>\'"%@`'].map((c) => c.charCodeAt(0)));
/** Characters that end a plain scalar in a flow collection. */
const FLOW_STOP = new Set([...',[]{}'].map((c) => c.charCodeAt(0)));

/** One line with content: where its text starts (after the indentation) and ends (its newline or the end). */
interface Line {
  readonly start: number;
  readonly indent: number;
  readonly content: number;
  readonly end: number;
}

const scalarEvent = (valueStart: number, valueEnd: number, style: ScalarEvent['style'], fast: boolean): ScalarEvent => ({
  type: EVENT_ID.SCALAR,
  valueStart,
  valueEnd,
  anchorStart: -1,
  anchorEnd: -1,
  tagStart: -1,
  tagEnd: -1,
  style,
  chomping: CHOMPING_MODE.CLIP,
  indent: -1,
  fast,
});

const collectionEvent = (
  type: typeof EVENT_ID.SEQUENCE | typeof EVENT_ID.MAPPING,
  start: number,
  style: (typeof COLLECTION_STYLE)[keyof typeof COLLECTION_STYLE],
): Event => ({
  type,
  start,
  anchorStart: -1,
  anchorEnd: -1,
  tagStart: -1,
  tagEnd: -1,
  style,
});

const POP: Event = { type: EVENT_ID.POP };

/** What {@link BlockScanner.lookAhead} finds from a place. */
interface Ahead {
  readonly from: number;
  /** The next line that is neither blank nor only a comment. */
  readonly line: Line | undefined;
  /** The deepest indentation of a comment line passed over on the way (-1: none). */
  readonly commentIndent: number;
}

class BlockScanner {
  readonly events: Event[] = [];
  /** Where the next unread line starts. */
  private at = 0;
  /** What {@link lookAhead} found last, kept until the cursor moves. */
  private ahead: Ahead | undefined;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  scan(): Event[] {
    // A last line of spaces only, unended: js-yaml reads a plain scalar before it as one that may go on.
    const lastLine = this.text.lastIndexOf('\n') + 1;
    if (lastLine < this.text.length && this.pastSpaces(lastLine) === this.text.length) throw LEFT;
    const first = this.peek();
    if (!first) return this.events; // blank or comments only: js-yaml gives no document at all
    this.events.push({ type: EVENT_ID.DOCUMENT, explicitStart: false, explicitEnd: false, directives: [] });
    this.blockNode(first, 0);
    if (this.peek()) throw LEFT;
    this.events.push(POP);
    return this.events;
  }

  /** The next line that is neither blank nor only a comment, not consumed. */
  private peek(): Line | undefined {
    return this.lookAhead().line;
  }

  /** From the cursor: the next line with content, and the comment lines on the way. */
  private lookAhead(): Ahead {
    if (this.ahead?.from === this.at) return this.ahead;
    const text = this.text;
    let start = this.at;
    let line: Line | undefined;
    let commentIndent = -1;
    while (start < text.length) {
      const content = this.pastSpaces(start);
      const end = this.lineEnd(content);
      const c = text.charCodeAt(content);
      if (content < end && c !== HASH) {
        // js-yaml reads a marker even when indented (a key `--- a` is refused).
        if (this.isDocumentMarker(content)) throw LEFT;
        line = { start, indent: content - start, content, end };
        break;
      }
      if (c === HASH) commentIndent = Math.max(commentIndent, content - start);
      start = end + 1;
    }
    this.ahead = { from: this.at, line, commentIndent };
    return this.ahead;
  }

  /** Whether `---` or `...` followed by a blank or the line's end (a document's start or end) is at `at`. */
  private isDocumentMarker(at: number): boolean {
    const text = this.text;
    const marker = text.slice(at, at + 3);
    if (marker !== '---' && marker !== '...') return false;
    const after = text.charCodeAt(at + 3);
    return at + 3 >= text.length || after === SPACE || after === NEWLINE;
  }

  private consume(line: Line): void {
    this.at = line.end + 1;
  }

  /**
   * Whether a collection inside `depth` others may be too deep for js-yaml,
   * which counts a level for a collection and more for what it holds (a
   * list in a list needs 4): it is left to js-yaml, which then refuses or
   * reads it as it would.
   */
  private tooDeep(depth: number): boolean {
    return 2 * (depth + 1) + 2 > this.maxDepth;
  }

  /** Whether a list entry (`-` then a space or the line's end) starts at `at`. */
  private isEntry(at: number, end: number): boolean {
    return this.text.charCodeAt(at) === DASH && (at + 1 === end || this.text.charCodeAt(at + 1) === SPACE);
  }

  /** Whether a plain scalar may start at `at` (in a flow collection when `flow`, where `,[]{}` end it). */
  private plainStarts(at: number, end: number, flow: boolean): boolean {
    const text = this.text;
    const c = text.charCodeAt(at);
    if (at >= end || NOT_PLAIN_START.has(c)) return false;
    if (c !== DASH && c !== QUESTION && c !== COLON) return true;
    // `-`, `?` and `:` begin a plain scalar only before a character of it.
    const next = text.charCodeAt(at + 1);
    return at + 1 < end && next !== SPACE && !(flow && FLOW_STOP.has(next));
  }

  /**
   * Where the `:` after a plain key starting at `at` is (followed by a space
   * or the line's end), or -1 when the line does not start a map entry there.
   */
  private keyColon(at: number, end: number): number {
    const text = this.text;
    if (!this.plainStarts(at, end, false)) return -1;
    let colon = this.find(':', at + 1, end);
    while (colon !== -1 && colon + 1 < end && text.charCodeAt(colon + 1) !== SPACE) colon = this.find(':', colon + 1, end);
    if (colon === -1 || colon - at > MAX_SIMPLE_KEY) return -1;
    return this.find(' #', at, colon) === -1 ? colon : -1;
  }

  /** The map or list whose first line is `line`. */
  private blockNode(line: Line, depth: number): void {
    if (this.isEntry(line.content, line.end)) return this.list(line.indent, depth);
    const colon = this.keyColon(line.content, line.end);
    if (colon === -1) throw LEFT; // a scalar on a line of its own, or what this scanner does not read
    this.map(line.indent, line.content, colon, depth);
  }

  /** A block list whose entries' `-` are at `indent`. */
  private list(indent: number, depth: number): void {
    if (this.tooDeep(depth)) throw LEFT;
    const text = this.text;
    let line = this.peek()!;
    this.events.push(collectionEvent(EVENT_ID.SEQUENCE, line.content, COLLECTION_STYLE.BLOCK));
    for (;;) {
      const item = this.pastSpaces(line.content + 1);
      if (item === line.end || text.charCodeAt(item) === HASH) {
        this.consume(line);
        this.nested(indent, false, depth);
      } else if (this.isEntry(item, line.end)) {
        throw LEFT; // a list in a list on one line
      } else {
        const colon = this.keyColon(item, line.end);
        if (colon !== -1) this.map(item - line.start, item, colon, depth + 1);
        else this.inline(line, item, indent, depth);
      }
      const next = this.peek();
      if (!next || next.indent < indent) break;
      if (next.indent > indent) throw LEFT;
      if (!this.isEntry(next.content, next.end)) break; // the parent map's next key, or an error js-yaml names
      line = next;
    }
    this.events.push(POP);
  }

  /** A block map whose keys start at column `indent`, the first at `firstKey` on the current line, its `:` at `firstColon`. */
  private map(indent: number, firstKey: number, firstColon: number, depth: number): void {
    if (this.tooDeep(depth)) throw LEFT;
    const text = this.text;
    let line = this.peek()!;
    let key = firstKey;
    let colon = firstColon;
    this.events.push(collectionEvent(EVENT_ID.MAPPING, key, COLLECTION_STYLE.BLOCK));
    for (;;) {
      this.events.push(scalarEvent(key, this.beforeSpaces(colon), SCALAR_STYLE.PLAIN, true));
      const value = this.pastSpaces(colon + 1);
      if (value === line.end || text.charCodeAt(value) === HASH) {
        this.consume(line);
        this.nested(indent, true, depth);
      } else {
        this.inline(line, value, indent, depth);
      }
      const next = this.peek();
      if (!next || next.indent < indent) break;
      if (next.indent > indent) throw LEFT;
      if (this.isEntry(next.content, next.end)) break; // a list entry where a key belongs: the enclosing list's, or an error js-yaml names
      line = next;
      key = next.content;
      colon = this.keyColon(key, line.end);
      if (colon === -1) throw LEFT;
    }
    this.events.push(POP);
  }

  /**
   * The value of a key or list entry that ends its line: the map or list on
   * the lines below (more indented; a map's list may also sit at the map's
   * own indentation), or an empty scalar.
   */
  private nested(indent: number, inMap: boolean, depth: number): void {
    const next = this.peek();
    if (next && (next.indent > indent || (inMap && next.indent === indent && this.isEntry(next.content, next.end)))) {
      this.blockNode(next, depth + 1);
    } else {
      this.events.push(scalarEvent(-1, -1, SCALAR_STYLE.PLAIN, false));
    }
  }

  /**
   * A value that starts at `at` on `line`, of a key or entry at `indent`: a
   * block scalar (`|`, `>`), or a value that ends with the line (a plain or
   * quoted scalar, a flow collection). Nothing may follow it more indented
   * than `indent`.
   */
  private inline(line: Line, at: number, indent: number, depth: number): void {
    const text = this.text;
    const end = line.end;
    const c = text.charCodeAt(at);
    if (c === PIPE || c === GREATER) {
      this.blockScalar(line, at, indent);
    } else {
      let after: number;
      if (c === OPEN_BRACKET || c === OPEN_BRACE) after = this.flowCollection(at, end, depth + 1);
      else if (c === DOUBLE_QUOTE || c === SINGLE_QUOTE) after = this.quoted(at, end);
      else after = this.plain(at, end);
      // Only blanks and a comment may follow on the line.
      after = this.pastSpaces(after);
      if (after < end && (text.charCodeAt(after) !== HASH || text.charCodeAt(after - 1) !== SPACE)) throw LEFT;
      this.consume(line);
    }
    // A more indented line (a comment too: js-yaml reads the value otherwise) would continue the value.
    const { line: next, commentIndent } = this.lookAhead();
    if ((next && next.indent > indent) || commentIndent > indent) throw LEFT;
  }

  /** A one-line plain scalar of a block (ended by a comment or the line); where it ends. */
  private plain(at: number, end: number): number {
    const text = this.text;
    if (!this.plainStarts(at, end, false)) throw LEFT;
    const comment = this.find(' #', at, end);
    const valueEnd = this.beforeSpaces(comment === -1 ? end : comment);
    // `: ` inside, or a final `:`, would make the text a key.
    if (this.find(': ', at, valueEnd) !== -1 || text.charCodeAt(valueEnd - 1) === COLON) throw LEFT;
    this.events.push(scalarEvent(at, valueEnd, SCALAR_STYLE.PLAIN, true));
    return valueEnd;
  }

  /** A quoted scalar closed on its line, with no escape (`\`, `''`) in it; where it ends. */
  private quoted(at: number, end: number): number {
    const text = this.text;
    const double = text.charCodeAt(at) === DOUBLE_QUOTE;
    const close = this.find(double ? '"' : "'", at + 1, end);
    if (close === -1) throw LEFT; // over several lines
    if (double ? this.find('\\', at + 1, close) !== -1 : text.charCodeAt(close + 1) === SINGLE_QUOTE) throw LEFT;
    this.events.push(scalarEvent(at + 1, close, double ? SCALAR_STYLE.DOUBLE_QUOTED : SCALAR_STYLE.SINGLE_QUOTED, true));
    return close + 1;
  }

  /** A flow collection (`[a, b]`, `{k: v}`, nested) closed on its line; where it ends. */
  private flowCollection(at: number, end: number, depth: number): number {
    if (this.tooDeep(depth)) throw LEFT;
    const text = this.text;
    const isList = text.charCodeAt(at) === OPEN_BRACKET;
    const close = isList ? CLOSE_BRACKET : CLOSE_BRACE;
    this.events.push(collectionEvent(isList ? EVENT_ID.SEQUENCE : EVENT_ID.MAPPING, at, COLLECTION_STYLE.FLOW));
    let i = this.pastSpaces(at + 1);
    while (text.charCodeAt(i) !== close) {
      if (!isList) {
        // A key, then `: ` (a key alone, `k:v` or a key on its own are left to js-yaml).
        i = this.flowItem(i, end, depth, true);
        if (text.charCodeAt(i) !== COLON || text.charCodeAt(i + 1) !== SPACE) throw LEFT;
        i = this.pastSpaces(i + 1);
      }
      i = this.pastSpaces(this.flowItem(i, end, depth, false));
      const c = text.charCodeAt(i);
      if (c === COMMA) i = this.pastSpaces(i + 1);
      else if (c !== close) throw LEFT;
    }
    this.events.push(POP);
    return i + 1;
  }

  /** One scalar or collection in a flow collection; where it ends. */
  private flowItem(at: number, end: number, depth: number, key: boolean): number {
    const text = this.text;
    const c = text.charCodeAt(at);
    if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (key) throw LEFT;
      return this.flowCollection(at, end, depth + 1);
    }
    if (c === DOUBLE_QUOTE || c === SINGLE_QUOTE) return this.quoted(at, end);
    if (!this.plainStarts(at, end, true)) throw LEFT;
    let i = at;
    for (; i < end; i++) {
      const d = text.charCodeAt(i);
      if (FLOW_STOP.has(d)) break;
      if (d === COLON) {
        if (key && text.charCodeAt(i + 1) === SPACE) break;
        throw LEFT; // `a:b`, or a key where a value belongs
      }
      if (d === HASH && text.charCodeAt(i - 1) === SPACE) throw LEFT; // a comment inside the collection
    }
    if (i === end) throw LEFT; // over several lines
    this.events.push(scalarEvent(at, this.beforeSpaces(i), SCALAR_STYLE.PLAIN, true));
    return i;
  }

  /**
   * Where `needle` first is in [from, end), or -1. Searches stop at `end`
   * (the line's): a search of the whole text from every line would make a
   * long document cost the square of its length.
   */
  private find(needle: string, from: number, end: number): number {
    const found = this.text.slice(from, end).indexOf(needle);
    return found === -1 ? -1 : from + found;
  }

  /** The first place from `at` on that is not a space. */
  private pastSpaces(at: number): number {
    while (this.text.charCodeAt(at) === SPACE) at++;
    return at;
  }

  /** Where the spaces that end at `end` begin (`end` when there are none). */
  private beforeSpaces(end: number): number {
    while (this.text.charCodeAt(end - 1) === SPACE) end--;
    return end;
  }

  /** Where the line holding `at` ends: its newline, or the text's end. */
  private lineEnd(at: number): number {
    const end = this.text.indexOf('\n', at);
    return end === -1 ? this.text.length : end;
  }

  /**
   * A block scalar (`|` or `>`, perhaps with `-` or `+`) of a key or entry at
   * `indent`: its text is every line below more indented than its first,
   * blank lines among and after them included.
   */
  private blockScalar(line: Line, at: number, indent: number): void {
    const text = this.text;
    let i = at + 1;
    const chomp = text.charCodeAt(i);
    const chomping = chomp === DASH ? CHOMPING_MODE.STRIP : chomp === PLUS ? CHOMPING_MODE.KEEP : CHOMPING_MODE.CLIP;
    if (chomping !== CHOMPING_MODE.CLIP) i++;
    i = this.pastSpaces(i);
    // An indentation digit, or anything but a comment after the indicator, is left to js-yaml.
    if (i < line.end && (text.charCodeAt(i) !== HASH || text.charCodeAt(i - 1) !== SPACE)) throw LEFT;
    if (line.end >= text.length) throw LEFT;
    const valueStart = line.end + 1;
    let contentIndent = -1;
    let leadingBlank = 0;
    let pos = valueStart;
    while (pos < text.length) {
      const content = this.pastSpaces(pos);
      const lineEnd = this.lineEnd(content);
      const spaces = content - pos;
      if (content === lineEnd) {
        if (contentIndent === -1) leadingBlank = Math.max(leadingBlank, spaces);
      } else if (contentIndent === -1) {
        // Empty (the next line is not indented past the key), or a blank line before the text indented past it: js-yaml's.
        if (spaces <= indent || leadingBlank > spaces) throw LEFT;
        contentIndent = spaces;
      } else if (spaces < contentIndent) {
        break;
      }
      pos = lineEnd + 1;
    }
    if (contentIndent === -1) throw LEFT;
    const valueEnd = Math.min(pos, text.length);
    const style = text.charCodeAt(at) === PIPE ? SCALAR_STYLE.LITERAL_BLOCK : SCALAR_STYLE.FOLDED_BLOCK;
    this.events.push({ ...scalarEvent(valueStart, valueEnd, style, false), chomping, indent: contentIndent });
    this.at = valueEnd;
  }
}

/**
 * `text`'s events as js-yaml's `parseEvents` gives them, when the text is
 * the plain block YAML this scanner reads; undefined otherwise. `maxDepth`
 * is the nesting js-yaml is given: deeper text is left to it.
 */
export function scanBlockEvents(text: string, maxDepth: number): Event[] | undefined {
  if (NOT_SCANNED.test(text)) return undefined;
  try {
    return new BlockScanner(text, maxDepth).scan();
  } catch (error) {
    if (error === LEFT) return undefined;
    throw error;
  }
}

/** The scanner's code and tables as text: part of what a kept tree depends on (parse.ts's parserIdentity). */
export function scannerSource(): string {
  return [NOT_SCANNED, [...NOT_PLAIN_START], [...FLOW_STOP], MAX_SIMPLE_KEY, BlockScanner, scanBlockEvents].join('\n');
}
