/**
 * TEST FIXTURE (dev cluster): label and field selectors with the grammar of
 * the real API server (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`,
 * `a`, `!a`; fields `metadata.name`, `metadata.namespace` and those a kind
 * registers, such as an Event's `involvedObject.*`).
 */
import { isObject, type JsonObject } from './patch.js';
import { badRequest } from './status.js';

type Requirement =
  { op: 'eq' | 'neq'; key: string; value: string } | { op: 'in' | 'notin'; key: string; values: string[] } | { op: 'exists' | 'absent'; key: string };

export type Selector = (labels: Record<string, string>) => boolean;

/** Splits on commas that are not inside parentheses. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else current += ch;
  }
  terms.push(current);
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;
const VALUE = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?)?$/;

function checkKey(key: string, text: string): string {
  if (!KEY.test(key)) throw badRequest(`unable to parse requirement: invalid label key "${key}" in selector "${text}"`);
  return key;
}

function checkValue(value: string, text: string): string {
  if (!VALUE.test(value) || value.length > 63) throw badRequest(`unable to parse requirement: invalid label value: "${value}" in selector "${text}"`);
  return value;
}

function parseRequirement(term: string, text: string): Requirement {
  let m = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
  if (m) {
    const values = m[3]!.split(',').map((v) => checkValue(v.trim(), text));
    return { op: m[2] as 'in' | 'notin', key: checkKey(m[1]!, text), values };
  }
  m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (m) return { op: m[2] === '!=' ? 'neq' : 'eq', key: checkKey(m[1]!, text), value: checkValue(m[3]!, text) };
  m = /^!\s*(\S+)$/.exec(term);
  if (m) return { op: 'absent', key: checkKey(m[1]!, text) };
  if (/^\S+$/.test(term)) return { op: 'exists', key: checkKey(term, text) };
  throw badRequest(`unable to parse requirement: found '${term}', expected: '=', '!=', '==', 'in', notin' in selector "${text}"`);
}

function matches(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  switch (r.op) {
    case 'eq':
      return has && value === r.value;
    case 'neq':
      return !has || value !== r.value;
    case 'in':
      return has && r.values.includes(value!);
    case 'notin':
      return !has || !r.values.includes(value!);
    case 'exists':
      return has;
    case 'absent':
      return !has;
  }
}

export function parseLabelSelector(text: string | null | undefined): Selector {
  if (!text) return () => true;
  const requirements = splitTerms(text).map((t) => parseRequirement(t, text));
  return (labels) => requirements.every((r) => matches(r, labels));
}

export type FieldSelector = (object: JsonObject) => boolean;

/** The fields each kind can be selected by, besides metadata.name and metadata.namespace (as the real server registers them). */
const SELECTABLE: Record<string, readonly string[]> = {
  Event: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  Secret: ['type'],
  Pod: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.phase', 'status.podIP'],
};

function fieldValue(object: JsonObject, path: string): string {
  if (path === 'source') path = 'source.component';
  let node: unknown = object;
  for (const key of path.split('.')) node = isObject(node) ? node[key] : undefined;
  return node === undefined || node === null ? '' : String(node);
}

/** Field selectors with `=`, `==`, `!=` on the fields the kind supports; others are refused as the real server refuses them. */
export function parseFieldSelector(text: string | null | undefined, kind: string): FieldSelector {
  if (!text) return () => true;
  const allowed = ['metadata.name', 'metadata.namespace', ...(SELECTABLE[kind] ?? [])];
  const tests = splitTerms(text).map((term) => {
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
    const [, field, op, value] = m as unknown as [string, string, string, string];
    if (!allowed.includes(field)) throw badRequest(`field label not supported: ${field}`);
    return (object: JsonObject) => (fieldValue(object, field) === value) === (op !== '!=');
  });
  return (object) => tests.every((t) => t(object));
}
