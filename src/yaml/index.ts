/**
 * YAML documents as trees that remember where every value came from.
 *
 * Stage one of the values pipeline: `parseYaml` turns text into a `ValueNode`
 * tree whose nodes carry an `Origin` (layer label + file:line:column). The
 * merge engine (src/values) combines such trees; because every node keeps its
 * origin, any leaf of a merged result can say which layer and line set it.
 */
export * from './nodes.js';
export * from './parse.js';
export { ParseMemo, type YamlParser } from './memo.js';
export { dumpYaml } from './dump.js';
export { JsonSyntaxError, parseJson } from './json.js';
