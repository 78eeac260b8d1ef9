/**
 * TEST FIXTURE (dev cluster): what the API server does with a custom
 * resource and its CRD's structural `openAPIV3Schema`, in its order:
 * prune the fields the schema does not declare (unless
 * `x-kubernetes-preserve-unknown-fields`), drop nulls the schema does not
 * allow, apply `default`s, then validate — types (`x-kubernetes-int-or-string`
 * included), `enum`, `minLength`/`maxLength`, `pattern`, `minimum`/`maximum`,
 * `minItems`/`maxItems`, `required`, `additionalProperties`, and the
 * "exactly one of a and b" form of `x-kubernetes-validations` — with the
 * field paths and messages apiextensions-apiserver gives.
 */
import { clone, deepEqual, isObject, type Json, type JsonObject } from './patch.js';
import type { StatusCause } from './status.js';

const childPath = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** The root's apiVersion, kind and metadata are the API server's, not the schema's. */
const ROOT_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * Fields the schema does not declare, as paths (`spec.install.bogus`);
 * with `remove` they are deleted from `value` too.
 */
export function pruneUnknown(value: Json | undefined, schema: JsonObject, remove: boolean, path = ''): string[] {
  const unknown: string[] = [];
  if (Array.isArray(value)) {
    if (isObject(schema.items)) value.forEach((item, i) => unknown.push(...pruneUnknown(item, schema.items as JsonObject, remove, `${path}[${i}]`)));
    return unknown;
  }
  if (!isObject(value)) return unknown;
  const properties = isObject(schema.properties) ? schema.properties : undefined;
  const additional = isObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  for (const key of Object.keys(value)) {
    const child = properties?.[key];
    const at = childPath(path, key);
    // The root's metadata is ObjectMeta, the server's own: a CRD's schema neither prunes nor describes it.
    if (path === '' && key === 'metadata') continue;
    if (isObject(child)) unknown.push(...pruneUnknown(value[key], child, remove, at));
    else if (additional) unknown.push(...pruneUnknown(value[key], additional, remove, at));
    else if (!preserve && schema.additionalProperties !== true && !(path === '' && ROOT_FIELDS.has(key))) {
      unknown.push(at);
      if (remove) delete value[key];
    }
  }
  return unknown;
}

/** Nulls the schema does not allow are dropped, then absent fields with a `default` get it (the API server's defaulting). */
export function applyDefaults(value: Json | undefined, schema: JsonObject): void {
  if (Array.isArray(value)) {
    if (isObject(schema.items)) for (const item of value) applyDefaults(item, schema.items as JsonObject);
    return;
  }
  if (!isObject(value)) return;
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [key, child] of Object.entries(properties)) {
    if (!isObject(child)) continue;
    if (value[key] === null && child.nullable !== true) delete value[key];
    if (value[key] === undefined && child.default !== undefined) value[key] = clone(child.default);
    applyDefaults(value[key], child);
  }
  if (isObject(schema.additionalProperties)) {
    for (const key of Object.keys(value)) if (!(key in properties)) applyDefaults(value[key], schema.additionalProperties);
  }
}

/** Go's %v of a JSON value in an error: strings quoted, the rest as JSON. */
const shown = (value: Json): string => JSON.stringify(value);

/** The OpenAPI type name of a JSON value, as kube-openapi names it in errors. */
function typeName(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function hasType(value: Json, type: string): boolean {
  switch (type) {
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    default:
      return true;
  }
}

/** Causes for everything in `value` its schema refuses (empty when valid). */
export function validate(value: Json | undefined, schema: JsonObject, path = ''): StatusCause[] {
  if (value === undefined) return [];
  const causes: StatusCause[] = [];
  const field = path || '<root>';
  const invalid = (message: string, reason = 'FieldValueInvalid') => causes.push({ reason, message, field });
  if (value === null) {
    if (schema.nullable !== true && (schema.type !== undefined || schema['x-kubernetes-int-or-string'] === true)) {
      invalid(`Invalid value: "null": ${field} in body must be of type ${String(schema.type ?? 'integer,string')}: "null"`, 'FieldValueTypeInvalid');
    }
    return causes;
  }
  if (schema['x-kubernetes-int-or-string'] === true) {
    if (!hasType(value, 'integer') && typeof value !== 'string') {
      invalid(`Invalid value: "${typeName(value)}": ${field} in body must be of type integer,string: "${typeName(value)}"`, 'FieldValueTypeInvalid');
      return causes;
    }
  } else if (typeof schema.type === 'string' && !hasType(value, schema.type)) {
    invalid(`Invalid value: "${typeName(value)}": ${field} in body must be of type ${schema.type}: "${typeName(value)}"`, 'FieldValueTypeInvalid');
    return causes;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => deepEqual(allowed, value))) {
    invalid(`Unsupported value: ${shown(value)}: supported values: ${schema.enum.map(shown).join(', ')}`, 'FieldValueNotSupported');
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) invalid(`Too long: may not be longer than ${schema.maxLength}`, 'FieldValueTooLong');
    if (typeof schema.minLength === 'number' && length < schema.minLength)
      invalid(`Invalid value: ${shown(value)}: ${field} in body should be at least ${schema.minLength} chars long`);
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value))
      invalid(`Invalid value: ${shown(value)}: ${field} in body should match '${schema.pattern}'`);
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum)
      invalid(`Invalid value: ${value}: ${field} in body should be greater than or equal to ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum)
      invalid(`Invalid value: ${value}: ${field} in body should be less than or equal to ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems)
      invalid(`Too many: ${value.length}: must have at most ${schema.maxItems} items`, 'FieldValueTooMany');
    if (typeof schema.minItems === 'number' && value.length < schema.minItems)
      invalid(`Invalid value: ${value.length}: ${field} in body should have at least ${schema.minItems} items`);
    if (isObject(schema.items)) value.forEach((item, i) => causes.push(...validate(item, schema.items as JsonObject, `${path}[${i}]`)));
    return causes;
  }
  if (!isObject(value)) return causes;
  for (const key of Array.isArray(schema.required) ? schema.required : []) {
    if (value[String(key)] === undefined) causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: childPath(path, String(key)) });
  }
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [key, child] of Object.entries(value)) {
    const childSchema = properties[key];
    if (isObject(childSchema)) causes.push(...validate(child, childSchema, childPath(path, key)));
    else if (isObject(schema.additionalProperties)) causes.push(...validate(child, schema.additionalProperties, childPath(path, key)));
  }
  for (const rule of Array.isArray(schema['x-kubernetes-validations']) ? schema['x-kubernetes-validations'].filter(isObject) : []) {
    // The one rule form the fixture evaluates: "exactly one of a and b".
    const m = /^\(has\(self\.(\w+)\) && !has\(self\.(\w+)\)\) \|\| \(!has\(self\.\1\) && has\(self\.\2\)\)$/.exec(String(rule.rule));
    if (m && (value[m[1]!] !== undefined) === (value[m[2]!] !== undefined)) invalid(`Invalid value: "object": ${String(rule.message)}`);
  }
  return causes;
}
