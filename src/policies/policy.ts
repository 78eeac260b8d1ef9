/**
 * Stacks layers of rules into the policy a service would load: a later
 * layer's rule replaces an earlier one of the same name (Helm's rule for
 * scalars), `null` deletes it. Every rule keeps the layer and file position
 * that set it, and the definitions it replaced.
 */
import type { SourceLocation } from '../diagnostics/index.js';
import type { PolicyExpr } from './ast.js';
import { PolicyError, PolicySyntaxError } from './errors.js';
import { parseRule } from './parser.js';
import type { PolicyLayer, RuleSource } from './types.js';

/** One definition of a rule by one layer, parsed. */
export interface RuleDefinition {
  readonly name: string;
  readonly source: RuleSource;
  readonly layer: PolicyLayer;
  /** The parsed rule; absent when it does not parse (see `error`). */
  readonly expr?: PolicyExpr;
  readonly error?: PolicySyntaxError;
}

/** What one layer did to one rule name. */
export type RuleHistoryEntry =
  | { readonly kind: 'set'; readonly definition: RuleDefinition }
  | { readonly kind: 'removed'; readonly layer: PolicyLayer; readonly location: SourceLocation };

/** The policy of one chart (one section of it), after layering. */
export interface EffectivePolicy {
  readonly section: string;
  readonly layers: readonly PolicyLayer[];
  /** The winning definition of every rule still defined. */
  readonly rules: ReadonlyMap<string, RuleDefinition>;
  /** Every layer's doing per rule name, lowest layer first. */
  readonly history: ReadonlyMap<string, readonly RuleHistoryEntry[]>;
}

function defineRule(source: RuleSource, layer: PolicyLayer): RuleDefinition {
  try {
    return { name: source.name, source, layer, expr: parseRule(source) };
  } catch (error) {
    if (error instanceof PolicySyntaxError) return { name: source.name, source, layer, error };
    throw error;
  }
}

/** Stacks the layers of one section, lowest first. */
export function resolvePolicy(layers: readonly PolicyLayer[]): EffectivePolicy {
  const sections = new Set(layers.map((l) => l.section));
  if (sections.size > 1) {
    throw new PolicyError(`cannot stack layers of different sections (${[...sections].join(', ')}); group them first`);
  }
  const rules = new Map<string, RuleDefinition>();
  const history = new Map<string, RuleHistoryEntry[]>();
  const record = (name: string, entry: RuleHistoryEntry): void => {
    const list = history.get(name);
    if (list) list.push(entry);
    else history.set(name, [entry]);
  };
  for (const layer of layers) {
    for (const [name, location] of layer.removed ?? []) {
      rules.delete(name);
      record(name, { kind: 'removed', layer, location });
    }
    for (const [name, source] of layer.rules) {
      const definition = defineRule(source, layer);
      rules.set(name, definition);
      record(name, { kind: 'set', definition });
    }
  }
  return { section: [...sections][0] ?? '', layers, rules, history };
}

/** Groups layers by section, keeping their order, and stacks each group. */
export function resolveSections(layers: readonly PolicyLayer[]): Map<string, EffectivePolicy> {
  const groups = new Map<string, PolicyLayer[]>();
  for (const layer of layers) {
    const group = groups.get(layer.section);
    if (group) group.push(layer);
    else groups.set(layer.section, [layer]);
  }
  return new Map([...groups].map(([section, group]) => [section, resolvePolicy(group)]));
}
