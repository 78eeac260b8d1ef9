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
import { parseYaml, YamlSyntaxError, type ValueNode } from '../document/index.js';

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
};

type AstNode = hbs.AST.Node & { body?: AstNode[]; program?: AstNode; inverse?: AstNode };

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
    const line = Number(/on line (\d+)/.exec(String((error as Error).message))?.[1] ?? 0);
    throw new TemplateError(`template syntax error: ${(error as Error).message.split('\n').slice(-1)[0]}`, { location: { file, line, column: 1 } });
  }
  tagNewlines(ast as AstNode);
  let output: string;
  try {
    output = handlebars().compile(ast, { strict: true, noEscape: true })(context);
  } catch (error) {
    const e = error as Error & { lineNumber?: number; column?: number };
    // Handlebars names only the last segment; the whole expression starts at the reported column.
    const expression = /^[^\s}()]+/.exec(source.split('\n')[(e.lineNumber ?? 1) - 1]?.slice(e.column ?? 0) ?? '')?.[0];
    const missing = /^"([^"]+)" not defined/.test(e.message) ? (expression ?? /^"([^"]+)"/.exec(e.message)?.[1]) : undefined;
    const message = missing
      ? `"${missing}" is not defined in the template context (strict mode); read optional fields with lookup, e.g. (lookup parent "key")`
      : e.message.replace(/ - \d+:\d+$/, '');
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
      return { ...node, origin, edits: node.edits.map((e) => ({ ...e, origin: { layer: e.origin.layer, location: map(e.origin.location) }, items: e.items.map((i) => relocate(i, map)) })) };
    case 'map':
      return { ...node, origin, entries: new Map([...node.entries].map(([k, v]) => [k, relocate(v, map)])) };
  }
}
