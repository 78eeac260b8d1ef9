/**
 * Values templates: overrides/templates/<chart>.yaml.hbs rendered with
 * Handlebars in strict mode, then read as a values layer.
 *
 * So that `--explain` can point at the template line that produced a value,
 * every literal newline of the template is tagged (in the parsed Handlebars
 * AST) with its source line before compiling; after rendering, the tags say
 * which template line each output line came from, and are stripped.
 */
import type Handlebars from 'handlebars';
import { createRequire } from 'node:module';
import { FlotillaError, type SourceLocation } from '../diagnostics/index.js';
import { parseYaml, YamlSyntaxError, type ValueNode } from '../yaml/index.js';
import { nearest } from '../names/index.js';

export class TemplateError extends FlotillaError {}

const TAG_OPEN = '\uE000';
const TAG_CLOSE = '\uE001';
const TAG = new RegExp(`${TAG_OPEN}(\\d+)${TAG_CLOSE}`, 'g');

// Loaded on first use: a build reads templates' paths but never renders them,
// and Handlebars (its compiler, with source-map) is costly to load.
const load = createRequire(import.meta.url);
let loaded: typeof Handlebars | undefined;

function handlebars(): typeof Handlebars {
  if (loaded) return loaded;
  const engine = (load('handlebars') as typeof Handlebars).create();
  engine.registerHelper(HELPERS);
  return (loaded = engine);
}

const HELPERS: Handlebars.HelperDeclareSpec = {
  eq: (a: unknown, b: unknown) => a === b,
  ne: (a: unknown, b: unknown) => a !== b,
  and: (...args: unknown[]) => args.slice(0, -1).every(Boolean),
  or: (...args: unknown[]) => args.slice(0, -1).some(Boolean),
  not: (a: unknown) => !a,
  includes: (list: unknown, item: unknown) => Array.isArray(list) && list.includes(item),
  // JSON is valid YAML flow syntax: the safe way to put any value into a template.
  json: (value: unknown) => JSON.stringify(value ?? null),
  default: (value: unknown, fallback: unknown) => (value === undefined || value === null || value === '' ? fallback : value),
  // The optional read: an absent key gives undefined instead of an error.
  lookup: (object: unknown, field: unknown) => {
    const raw = rawOf(object);
    if (raw === null || typeof raw !== 'object' || (typeof field !== 'string' && typeof field !== 'number')) return undefined;
    return Object.prototype.hasOwnProperty.call(raw, field) ? strictView((raw as Record<string | number, unknown>)[field], []) : undefined;
  },
};

type AstNode = hbs.AST.Node & {
  body?: AstNode[];
  program?: AstNode;
  inverse?: AstNode;
  path?: AstNode & { original?: unknown; parts?: string[] };
  params?: AstNode[];
  hash?: { pairs: { value: AstNode }[] };
  parts?: string[];
  original?: unknown;
};

/** Handlebars' own helpers, besides those registered above. */
const BUILT_IN_HELPERS = ['if', 'unless', 'each', 'with', 'lookup', 'log'];

function helperNames(): string[] {
  return [...new Set([...BUILT_IN_HELPERS, ...Object.keys(handlebars().helpers).filter((h) => !['helperMissing', 'blockHelperMissing'].includes(h))])].sort();
}

/** Every node below `node`, in source order. */
function* walk(node: AstNode | undefined): Generator<AstNode> {
  if (!node) return;
  yield node;
  for (const child of [node.path, ...(node.params ?? []), ...(node.hash?.pairs.map((p) => p.value) ?? []), ...(node.body ?? []), node.program, node.inverse])
    yield* walk(child);
}

/** A call of a helper that does not exist is named with the helpers that do, before anything renders. */
function checkHelpers(ast: AstNode, file: string): void {
  const known = helperNames();
  for (const node of walk(ast)) {
    const isCall =
      node.type === 'BlockStatement' ||
      node.type === 'SubExpression' ||
      (node.type === 'MustacheStatement' && ((node.params?.length ?? 0) > 0 || node.hash !== undefined));
    const name = node.path?.type === 'PathExpression' && node.path.parts?.length === 1 ? node.path.parts[0] : undefined;
    if (!isCall || name === undefined || known.includes(name)) continue;
    // A block over a context value ({{#features.list}}) is Handlebars' section form, not a helper call.
    if (node.type === 'BlockStatement' && (node.params?.length ?? 0) === 0) continue;
    const guess = nearest(name, known);
    throw new TemplateError(`unknown helper "${name}"${guess ? `; did you mean "${guess}"?` : ''} (helpers: ${known.join(', ')})`, {
      location: { file, line: node.loc.start.line, column: node.loc.start.column + 1 },
    });
  }
}

/** A Handlebars parser message, translated: where, and what is wrong in words. */
function syntaxError(error: Error & { lineNumber?: number; column?: number }, source: string, file: string): TemplateError {
  const message = error.message;
  const mismatch = /^(\S+) doesn't match (\S+)/.exec(message);
  if (mismatch) {
    return new TemplateError(`{{/${mismatch[2]}}} closes {{#${mismatch[1]}}}: blocks close in the reverse order they open`, {
      location: { file, line: error.lineNumber ?? 1, column: (error.column ?? 0) + 1 },
    });
  }
  const [, lineText, snippet, caret, expecting, got] = /on line (\d+):\n(.*)\n(-*)\^\nExpecting (.*), got '(\w+)'/.exec(message) ?? [];
  const line = Number(lineText ?? 1);
  // The parser shows the last 20 characters read (newlines dropped) and a caret after them; they end the line read so far.
  const past = (snippet ?? '').slice(0, caret?.length ?? 0).replace(/^\.\.\./, '');
  const lineSource = source.split('\n')[line - 1] ?? '';
  let column = 1;
  for (let k = Math.min(past.length, lineSource.length); k > 0; k--) {
    if (lineSource.startsWith(past.slice(past.length - k))) {
      column = k + 1;
      break;
    }
  }
  let what: string;
  if (got === 'EOF' && expecting?.includes('OPEN_ENDBLOCK')) what = 'the template ends inside a block: a {{#…}} has no {{/…}}';
  else if (got === 'EOF') what = 'the template ends inside an expression: a {{ has no }}';
  else if (got === 'INVALID') what = 'unexpected character: an expression is not closed with }} (or a stray { or })';
  else if (got === 'CLOSE' || got === 'CLOSE_SEXPR') what = 'the expression ends too early: a value is missing before the closing }} or )';
  else what = `unexpected ${got === undefined ? 'text' : got.toLowerCase().replace(/_/g, ' ')}`;
  return new TemplateError(`template syntax error: ${what}`, { location: { file, line, column } });
}

/** A path the template read that the context does not have. */
class AbsentPathError extends Error {
  constructor(readonly path: readonly string[]) {
    super(`"${path.join('.')}" is not set`);
  }
}

const RAW = Symbol('raw value');
const views = new WeakMap<object, Map<string, object>>();

/**
 * The context as the template sees it: reading an absent key is an error in
 * every position (a helper argument, {{#if}}), not only where Handlebars'
 * strict mode checks (a plain {{a.b}}). `lookup` reads the raw value: the
 * documented way to read an optional field.
 */
function strictView<T>(value: T, path: readonly string[]): T {
  if (value === null || typeof value !== 'object') return value;
  const byPath = views.get(value) ?? new Map<string, object>();
  views.set(value, byPath);
  const known = byPath.get(path.join('.'));
  if (known) return known as T;
  const view = new Proxy(value as object, {
    get(target, key, receiver) {
      if (key === RAW) return target;
      if (typeof key !== 'string' || key in target || key === 'toJSON' || key === 'then') {
        const child: unknown = Reflect.get(target, key, receiver);
        return typeof key === 'string' && Object.prototype.hasOwnProperty.call(target, key) ? strictView(child, [...path, key]) : child;
      }
      throw new AbsentPathError([...path, key]);
    },
  });
  byPath.set(path.join('.'), view);
  return view as T;
}

function rawOf(value: unknown): unknown {
  return value !== null && typeof value === 'object' ? ((value as { [RAW]?: unknown })[RAW] ?? value) : value;
}

/** Where the template reads an absent path: the first expression whose parts end the path. */
function absentPathError(error: AbsentPathError, ast: AstNode, file: string, context: object): TemplateError {
  let at: AstNode | undefined;
  for (const node of walk(ast)) {
    if (node.type !== 'PathExpression' || !node.parts || node.parts.length === 0) continue;
    // {{features.web.port}} with no features.web: the expression reads past the absent key.
    const parts = node.parts;
    if (parts.some((_, k) => parts.slice(0, k + 1).join('.') === error.path.slice(-(k + 1)).join('.') && parts[k] === error.path[error.path.length - 1])) {
      at = node;
      break;
    }
  }
  return new TemplateError(notSetMessage(error.path.map(String), context), {
    location: { file, line: at?.loc.start.line ?? 1, column: (at?.loc.start.column ?? 0) + 1 },
  });
}

/**
 * What a strict template says of a path no value is at: the key it most
 * likely meant when its parent has one near it (a typo, which a `lookup`
 * would only hide), else how to read an optional value with `lookup`.
 */
function notSetMessage(path: readonly string[], context: object): string {
  const parents = path.slice(0, -1);
  const key = path[path.length - 1] ?? '';
  let parent: unknown = context;
  for (const part of parents) parent = parent !== null && typeof parent === 'object' ? (parent as Record<string, unknown>)[part] : undefined;
  const guess = parent !== null && typeof parent === 'object' && !Array.isArray(parent) ? nearest(key, Object.keys(parent)) : undefined;
  const said = `"${path.join('.')}" is not set (templates are strict)`;
  if (guess !== undefined) return `${said}; did you mean "${[...parents, guess].join('.')}"?`;
  return `${said}; read an optional value with (lookup ${parents.join('.') || 'this'} "${key}")`;
}

/** Puts a line tag before every newline of the template's literal text. */
function tagNewlines(node: AstNode | undefined): void {
  if (!node) return;
  if (node.type === 'ContentStatement') {
    const content = node as hbs.AST.ContentStatement;
    // (@types/handlebars mistypes `original`; at run time it is the text before whitespace control.)
    const original = String((content as unknown as { original: string }).original);
    const newlinesInOriginal = (original.match(/\n/g) ?? []).length;
    const newlinesInValue = (content.value.match(/\n/g) ?? []).length;
    // Whitespace control may strip leading newlines from `value`; count from the end.
    let index = newlinesInOriginal - newlinesInValue;
    content.value = content.value.replace(/\n/g, () => `${TAG_OPEN}${content.loc.start.line + index++}${TAG_CLOSE}\n`);
    return;
  }
  node.body?.forEach(tagNewlines);
  tagNewlines(node.program);
  tagNewlines(node.inverse);
}

export interface RenderedTemplate {
  /** The rendered YAML, tags removed. */
  readonly text: string;
  /** Template line of each output line (index 0 = output line 1). */
  readonly lineOf: readonly number[];
}

export function renderTemplate(source: string, file: string, context: object): RenderedTemplate {
  let ast: hbs.AST.Program;
  try {
    ast = handlebars().parse(source);
  } catch (error) {
    throw syntaxError(error as Error & { lineNumber?: number; column?: number }, source, file);
  }
  checkHelpers(ast as AstNode, file);
  tagNewlines(ast as AstNode);
  let output: string;
  try {
    output = handlebars().compile(ast, { strict: true, noEscape: true })(strictView(context, []));
  } catch (error) {
    if (error instanceof AbsentPathError) throw absentPathError(error, ast as AstNode, file, context);
    const e = error as Error & { lineNumber?: number; column?: number };
    // Handlebars names only the last segment; the whole expression starts at the reported column.
    const expression = /^[^\s}()]+/.exec(source.split('\n')[(e.lineNumber ?? 1) - 1]?.slice(e.column ?? 0) ?? '')?.[0];
    const missing = /^"([^"]+)" not defined/.test(e.message) ? (expression ?? /^"([^"]+)"/.exec(e.message)?.[1]) : undefined;
    const message = missing ? notSetMessage(missing.split('.'), context) : e.message.replace(/ - \d+:\d+$/, '');
    throw new TemplateError(message, { location: { file, line: e.lineNumber ?? 0, column: (e.column ?? 0) + 1 } });
  }
  const rawLines = output.split('\n');
  const tagged = rawLines.map((l) => {
    const matches = [...l.matchAll(TAG)];
    return matches.length > 0 ? Number(matches[matches.length - 1]?.[1]) : undefined;
  });
  // A line with no tag came from a value containing newlines: it belongs to the
  // next tagged line. Trailing untagged text (no newline after it) belongs to the last one.
  const lineOf: (number | undefined)[] = [...tagged];
  for (let i = lineOf.length - 2; i >= 0; i--) lineOf[i] ??= lineOf[i + 1];
  for (let i = 1; i < lineOf.length; i++) lineOf[i] ??= lineOf[i - 1];
  return { text: rawLines.map((l) => l.replace(TAG, '')).join('\n'), lineOf: lineOf.map((l) => l ?? 1) };
}

/** Renders a values template and reads the result as a values tree located in the template. */
export function renderValuesTemplate(source: string, file: string, context: object, layer: string): ValueNode | undefined {
  const rendered = renderTemplate(source, file, context);
  const toTemplate = (loc: SourceLocation): SourceLocation => ({ file, line: rendered.lineOf[loc.line - 1] ?? loc.line, column: loc.column });
  let root: ValueNode | undefined;
  try {
    root = parseYaml(rendered.text, file, { layer, allowListEdits: true }).root;
  } catch (error) {
    if (!(error instanceof YamlSyntaxError) || !error.location) throw error;
    const outputLine = rendered.text.split('\n')[error.location.line - 1] ?? '';
    const documents = rendered.text.split('\n').filter((l) => /^---(\s|$)/.test(l)).length;
    if (/multiple documents/.test(error.reason)) {
      throw new TemplateError(
        `the template renders ${documents + (rendered.text.trimStart().startsWith('---') ? 0 : 1)} YAML documents (separated by ---); a values template must render one map`,
        {
          location: toTemplate(error.location),
        },
      );
    }
    throw new TemplateError(`${error.reason} in the rendered output (line "${outputLine.trim()}")`, {
      location: toTemplate(error.location),
    });
  }
  if (root && root.kind !== 'map') throw new TemplateError('a values template must render a YAML map', { location: toTemplate(root.origin.location) });
  return root && relocate(root, toTemplate);
}

function relocate(node: ValueNode, map: (loc: SourceLocation) => SourceLocation): ValueNode {
  const origin = { layer: node.origin.layer, location: map(node.origin.location) };
  switch (node.kind) {
    case 'scalar':
      return { ...node, origin };
    case 'seq':
      return { ...node, origin, items: node.items.map((i) => relocate(i, map)) };
    case 'edits':
      return {
        ...node,
        origin,
        edits: node.edits.map((e) => ({
          ...e,
          origin: { layer: e.origin.layer, location: map(e.origin.location) },
          items: e.items.map((i) => relocate(i, map)),
        })),
      };
    case 'map':
      return { ...node, origin, entries: new Map([...node.entries].map(([k, v]) => [k, relocate(v, map)])) };
  }
}
