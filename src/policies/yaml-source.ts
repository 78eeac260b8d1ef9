/**
 * Reads `conf.policy` maps out of YAML files with the position of every rule
 * (and of every character of every rule, so a parse error names the column
 * inside the rule even in quoted or block scalars). Aliases are resolved
 * from one walk of the document (src/yaml's resolveAlias), not one per alias.
 */
import { readFile } from 'node:fs/promises';
import { isAlias, isMap, isScalar, isSeq, type LineCounter, type Document, type Node as YamlNode, type Scalar } from 'yaml';
import type { Diagnostic, SourceLocation } from '../diagnostics/index.js';
import { parseYamlDocument, resolveAlias, YamlSyntaxError } from '../yaml/index.js';
import { PolicyFileError } from './errors.js';
import { legacyLayout } from './parser.js';
import type { LayerKind, PolicyLayer, RuleSource } from './types.js';
import { fileErrorText } from '../files/index.js';

/** A parsed YAML file and what is needed to turn offsets into positions. */
export interface YamlFile {
  readonly file: string;
  readonly source: string;
  readonly doc: Document;
  readonly lines: LineCounter;
}

export async function readYamlFile(file: string): Promise<YamlFile> {
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (error) {
    throw new PolicyFileError(`cannot read ${file}: ${fileErrorText(error)}`, {
      cause: error,
    });
  }
  return parseYamlText(file, source);
}

export function parseYamlText(file: string, source: string): YamlFile {
  try {
    const yaml = parseYamlDocument(source, file);
    return { file, source, doc: yaml.doc, lines: yaml.lineCounter };
  } catch (error) {
    if (!(error instanceof YamlSyntaxError)) throw error;
    throw new PolicyFileError(error.reason, { location: error.location });
  }
}

export function positionOf(yaml: YamlFile, offset: number): SourceLocation {
  const pos = yaml.lines.linePos(offset);
  return { file: yaml.file, line: pos.line, column: pos.col };
}

/** The node at a path of map keys, or undefined when any step is missing. */
export function nodeAt(yaml: YamlFile, path: readonly string[]): YamlNode | undefined {
  let node: unknown = yaml.doc.contents;
  for (const key of path) {
    if (isAlias(node)) node = resolveAlias(yaml.doc, node);
    if (!isMap(node)) return undefined;
    node = node.get(key, true);
    if (node === undefined) return undefined;
  }
  if (isAlias(node)) node = resolveAlias(yaml.doc, node);
  return (node ?? undefined) as YamlNode | undefined;
}

export interface LayerMeta {
  readonly label: string;
  readonly kind: LayerKind;
}

/**
 * Turns the policy map at `path` into layers: one layer for a map of rules,
 * one per key for a map of rule maps (horizon keeps one per service).
 * Returns undefined when the path does not exist.
 */
export function policyLayersAt(yaml: YamlFile, path: readonly string[], meta: LayerMeta): PolicyLayer[] | undefined {
  const node = nodeAt(yaml, path);
  if (node === undefined) return undefined;
  const where = path.join('.') || 'the document';
  if (isScalar(node) && node.value === null) return [];
  if (!isMap(node)) {
    throw new PolicyFileError(`${where} must be a map of rules`, { location: positionOf(yaml, node.range?.[0] ?? 0) });
  }
  // An empty map sets no rule (and says nothing of the map's shape).
  if (node.items.length === 0) return [];
  const values = node.items.map((pair) => (isAlias(pair.value) ? resolveAlias(yaml.doc, pair.value) : pair.value));
  const sectioned = values.length > 0 && values.every((v) => isMap(v));
  if (!sectioned) return [rulesLayer(yaml, node.items, meta, '')];
  return node.items.map((pair, i) => {
    const section = String(isScalar(pair.key) ? pair.key.value : pair.key);
    const value = values[i];
    return rulesLayer(yaml, isMap(value) ? value.items : [], meta, section);
  });
}

type Pair = { key: unknown; value: unknown };

function rulesLayer(yaml: YamlFile, items: readonly Pair[], meta: LayerMeta, section: string): PolicyLayer {
  const rules = new Map<string, RuleSource>();
  const removed = new Map<string, SourceLocation>();
  const problems: Diagnostic[] = [];
  for (const pair of items) {
    const keyNode = pair.key;
    const name = String(isScalar(keyNode) ? keyNode.value : keyNode);
    const keyLocation = positionOf(yaml, (keyNode as YamlNode | null)?.range?.[0] ?? 0);
    const value = isAlias(pair.value) ? resolveAlias(yaml.doc, pair.value) : pair.value;
    const problem = (message: string, at: SourceLocation = keyLocation): void => {
      problems.push({ severity: 'error', message: `rule "${name}": ${message}`, location: at });
    };
    if (value === null || value === undefined || (isScalar(value) && value.value === null)) {
      removed.set(name, keyLocation);
      continue;
    }
    if (isScalar(value)) {
      const at = positionOf(yaml, value.range?.[0] ?? 0);
      if (typeof value.value !== 'string') {
        problem(`the rule must be a string, not ${typeof value.value} ${JSON.stringify(value.value)}; quote it`, at);
        continue;
      }
      if (value.tag === '!' && value.type === 'PLAIN') {
        problem(
          'an unquoted "!" is a YAML tag, so this rule is the empty string and allows everyone; write \'!\' to deny',
          at,
        );
      }
      rules.set(name, scalarRule(yaml, name, value as Scalar<string>, keyLocation));
      continue;
    }
    if (isSeq(value)) {
      const legacy = legacyRule(yaml, name, value.items, keyLocation, problem);
      if (legacy) rules.set(name, legacy);
      continue;
    }
    problem(
      section === ''
        ? 'the value is a map; a policy holds either rules, or one map of rules per service (as horizon does), not both'
        : 'the value must be a rule string',
      positionOf(yaml, (value as YamlNode).range?.[0] ?? 0),
    );
  }
  return {
    label: meta.label,
    file: yaml.file,
    kind: meta.kind,
    section,
    rules,
    ...(removed.size > 0 ? { removed } : {}),
    ...(problems.length > 0 ? { problems } : {}),
  };
}

function scalarRule(yaml: YamlFile, name: string, node: Scalar<string>, keyLocation: SourceLocation): RuleSource {
  const text = node.value;
  const locate = scalarLocator(yaml, node, text);
  return { name, text, location: locate(0), keyLocation, locate };
}

/**
 * Maps each character of a scalar's value back to the file, by walking the
 * value and the raw source side by side (quotes, escapes, folded line
 * breaks and block indentation are skipped in the source).
 */
function scalarLocator(yaml: YamlFile, node: Scalar, text: string): (index: number) => SourceLocation {
  const [rangeStart = 0, rangeEnd = rangeStart] = node.range ?? [];
  let start = rangeStart;
  let end = rangeEnd;
  if (node.type === 'QUOTE_SINGLE' || node.type === 'QUOTE_DOUBLE') {
    start += 1;
    end = Math.max(start, end - 1);
  } else if (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED') {
    const nl = yaml.source.indexOf('\n', start);
    start = nl < 0 ? end : nl + 1;
    while (start < end && (yaml.source[start] === ' ' || yaml.source[start] === '\n')) start += 1;
  }
  const src = yaml.source;
  const offsets: number[] = [];
  let j = start;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    while (j < end && src[j] !== ch && /[\s\\'"]/.test(src[j] ?? '')) j += 1;
    if (j < end && src[j] === ch) {
      offsets.push(j);
      j += 1;
    } else {
      offsets.push(Math.min(j, end));
      if (!/\s/.test(ch ?? '')) j += 1;
    }
  }
  return (index: number) => {
    const offset = offsets[index] ?? (index <= 0 ? start : (offsets[offsets.length - 1] ?? start) + 1);
    return positionOf(yaml, offset);
  };
}

/** The legacy list-of-lists form; bare strings in the outer list are one-check groups. */
function legacyRule(
  yaml: YamlFile,
  name: string,
  items: readonly unknown[],
  keyLocation: SourceLocation,
  problem: (message: string, at?: SourceLocation) => void,
): RuleSource | undefined {
  const groups: string[][] = [];
  const locators: ((index: number) => SourceLocation)[][] = [];
  for (const item of items) {
    const resolved = isAlias(item) ? resolveAlias(yaml.doc, item) : item;
    const entries = isSeq(resolved) ? resolved.items : [resolved];
    const group: string[] = [];
    const groupLocators: ((index: number) => SourceLocation)[] = [];
    for (const entry of entries) {
      const e = isAlias(entry) ? resolveAlias(yaml.doc, entry) : entry;
      if (!isScalar(e) || typeof e.value !== 'string') {
        problem(
          'a list rule holds lists of check strings ([["role:admin"], ["role:member", "project_id:%(project_id)s"]])',
          positionOf(yaml, (e as YamlNode | null)?.range?.[0] ?? 0),
        );
        return undefined;
      }
      group.push(e.value);
      groupLocators.push(scalarLocator(yaml, e, e.value));
    }
    groups.push(group);
    locators.push(groupLocators);
  }
  const { text, offsets } = legacyLayout(groups);
  const pieces: { at: number; length: number; locate: (index: number) => SourceLocation }[] = [];
  groups.forEach((group, g) =>
    group.forEach((item, i) => {
      const itemLocate = locators[g]?.[i];
      const at = offsets[g]?.[i];
      if (itemLocate !== undefined && at !== undefined) pieces.push({ at, length: item.length, locate: itemLocate });
    }),
  );
  const locate = (index: number): SourceLocation => {
    const piece =
      pieces.find((p) => index >= p.at && index < p.at + Math.max(1, p.length)) ??
      [...pieces].reverse().find((p) => p.at <= index) ??
      pieces[0];
    return piece ? piece.locate(Math.max(0, Math.min(index - piece.at, piece.length))) : keyLocation;
  };
  return { name, text, location: locate(0), keyLocation, legacy: groups, locate };
}
