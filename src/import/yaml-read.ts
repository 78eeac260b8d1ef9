/** Reading the source's YAML files with positions, and small helpers over the node trees. */
import type { SourceLocation } from '../diagnostics/index.js';
import { parseYaml, toPlain, yamlDocumentOffsets, type MapNode, type ValueNode } from '../yaml/index.js';
import type { Problems } from './errors.js';
import type { FileSource } from '../files/index.js';
import type { SourceYaml } from './types.js';

function lineOf(text: string, offset: number): SourceLocation['line'] {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Parses YAML text the way flotilla reads every file (YAML 1.1, as Helm and
 * Kubernetes do). A second document is refused: kustomize would read it as
 * another resource, which the layout cannot carry. Problems are recorded,
 * and undefined is returned.
 */
export function parseSourceYaml(text: string, file: string, problems: Problems, layer = 'import'): SourceYaml | undefined {
  const starts = yamlDocumentOffsets(text);
  if (starts.length > 1) {
    problems.error(`holds ${starts.length} YAML documents; only one is allowed here`, { file, line: lineOf(text, starts[1]!), column: 1 });
    return undefined;
  }
  try {
    // A lone leading `---` is fine: one document.
    return { text, ...parseYaml(text, file, { layer }) };
  } catch (error) {
    problems.fromError(error);
    return undefined;
  }
}

export function readSourceYaml(source: FileSource, rel: string, problems: Problems, required = true): SourceYaml | undefined {
  const data = source.read(rel);
  if (data === undefined) {
    if (required) problems.error(`${rel} is missing`, { file: rel, line: 0, column: 0 });
    return undefined;
  }
  return parseSourceYaml(data.toString('utf8'), rel, problems);
}

export const locationOf = (node: ValueNode): SourceLocation => node.origin.location;

export function asMap(node: ValueNode | undefined): MapNode | undefined {
  return node?.kind === 'map' ? node : undefined;
}

export function asString(node: ValueNode | undefined): string | undefined {
  return node?.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined;
}

/** Short text of a value for messages. */
export function shown(node: ValueNode | undefined): string {
  if (node === undefined) return 'nothing';
  const text = JSON.stringify(toPlain(node));
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** A single path segment that names a folder (kustomize `resources` entry), normalised; undefined when it is not one. */
export function folderName(entry: string): string | undefined {
  const trimmed = entry.replace(/^\.\//, '').replace(/\/+$/, '');
  if (trimmed === '' || trimmed === '.' || trimmed === '..' || /[\\/]/.test(trimmed)) return undefined;
  return trimmed;
}
