/**
 * TEST FIXTURE (dev cluster): the semantics of the Kubernetes API over the
 * store — create/get/list/update/patch/delete/watch with resourceVersion,
 * generation, uid, finalizers and deletionTimestamp, status subresources,
 * managedFields and server-side apply, namespaces (a namespaced create needs
 * its namespace; deleting a namespace empties it first).
 *
 * The HTTP layer (./api-server.ts) and the Flux simulation (./flux.ts) both
 * go through this class, so every write obeys the same rules.
 */
import { randomUUID } from 'node:crypto';
import { load } from 'js-yaml';
import {
  applyMerge,
  changedPaths,
  describePath,
  fieldSetOf,
  fromFieldsV1,
  overlapping,
  pathKey,
  removeAt,
  toFieldsV1,
  valueAt,
  type FieldPart,
  type FieldPath,
  type ManagedFieldsEntry,
} from './fields.js';
import { clone, deepEqual, isObject, jsonPatch, mergePatch, strategicMergePatch, type Json, type JsonObject } from './patch.js';
import { applyDefaults, pruneUnknown, validate as validateSchema } from './openapi-schema.js';
import { apiVersionOf, ResourceTypes, type CrdObject, type ResourceType } from './resources.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import {
  alreadyExists,
  ApiError,
  applyConflict,
  badRequest,
  conflict,
  expired,
  forbiddenTerminating,
  invalid,
  noSuchResource,
  notFound,
  success,
  unsupportedMediaType,
  type KubeStatus,
  type StatusCause,
} from './status.js';
import { metaOf, now, Store, type ChangeType, type StoredChange } from './store.js';

export interface WriteOptions {
  /** The `fieldManager` query parameter, else a name derived from the User-Agent. */
  fieldManager?: string;
  userAgent?: string;
  dryRun?: boolean;
  /** Server-side apply: take fields other managers own. */
  force?: boolean;
  /** `Strict` refuses fields a CRD's schema does not declare; `Warn` (the default) and `Ignore` drop them. */
  fieldValidation?: string;
  /** Filled with the warnings of the write (sent as `Warning` headers). */
  warnings?: string[];
}

export interface ListQuery {
  labelSelector?: string | null;
  fieldSelector?: string | null;
  limit?: number;
  continue?: string | null;
}

export interface WatchQuery extends ListQuery {
  resourceVersion?: string | null;
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
}

export interface DeleteOptions {
  propagationPolicy?: string;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface WatchEvent {
  type: ChangeType | 'BOOKMARK' | 'ERROR';
  object: JsonObject;
}

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

// The fixture judges names itself rather than with src/names: it is the oracle the product's own checks are tested against.
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** What the real API server stores at most in a Secret's or ConfigMap's data (its MaxSecretSize): 1 MiB. */
const DATA_MAX_BYTES = 1024 * 1024;

const resourceKey = (type: ResourceType): string => `${type.group}/${type.plural}`;

/** The manager name the real server derives from a User-Agent (`kubectl/v1.35.2 (...)` → `kubectl`). */
const managerOf = (options: WriteOptions): string => options.fieldManager ?? (options.userAgent ? options.userAgent.split('/')[0]!.trim() : 'unknown');

export class Cluster {
  readonly types = new ResourceTypes();
  readonly store: Store;

  constructor(options: { historySize?: number } = {}) {
    this.store = new Store(options.historySize ?? 10_000);
    // CRDs register their kinds when stored, and namespaces finish terminating once empty.
    this.store.subscribe((change) => this.afterChange(change));
  }

  /** The type served at group/version/plural, or a 404. */
  type(group: string, version: string, plural: string): ResourceType {
    const type = this.types.get(group, version, plural);
    if (!type) throw noSuchResource();
    return type;
  }

  typeOf(apiVersion: string, kind: string): ResourceType {
    const type = this.types.byKind(apiVersion, kind);
    if (!type) throw badRequest(`no matches for kind "${kind}" in version "${apiVersion}"`);
    return type;
  }

  // ---- reads ---------------------------------------------------------------

  /** An object as served under `type`'s version (a copy). */
  private served(type: ResourceType, object: JsonObject): JsonObject {
    return { ...clone(object), apiVersion: apiVersionOf(type), kind: type.kind };
  }

  find(type: ResourceType, namespace: string, name: string): JsonObject | undefined {
    const stored = this.store.get(resourceKey(type), type.namespaced ? namespace : '', name);
    return stored ? this.served(type, stored) : undefined;
  }

  /**
   * The stored objects of a type (all namespaces), not copied: for code in
   * this process that only reads them (the Flux simulation routing its
   * events, which a copy of every release on every change would slow down).
   * Stored objects are never changed in place; a reader must not change them either.
   */
  peekAll(type: ResourceType): readonly JsonObject[] {
    return this.store.list(resourceKey(type));
  }

  /** One stored object, not copied (see peekAll). */
  peek(type: ResourceType, namespace: string, name: string): JsonObject | undefined {
    return this.store.get(resourceKey(type), type.namespaced ? namespace : '', name);
  }

  get(type: ResourceType, namespace: string, name: string): JsonObject {
    const object = this.find(type, namespace, name);
    if (!object) throw notFound(type, name);
    return object;
  }

  private matcher(type: ResourceType, query: ListQuery): (object: JsonObject) => boolean {
    const labels = parseLabelSelector(query.labelSelector);
    const fields = parseFieldSelector(query.fieldSelector, type.group === '' ? type.kind : '');
    return (object) => labels(metaOf(object).labels ?? {}) && fields(object);
  }

  list(type: ResourceType, namespace: string | undefined, query: ListQuery = {}): JsonObject {
    const matches = this.matcher(type, query);
    let items = this.store.list(resourceKey(type), type.namespaced ? namespace : undefined).filter(matches);
    const resourceVersion = String(this.store.resourceVersion);
    const metadata: JsonObject = { resourceVersion };
    if (query.continue) {
      let token: { rv: number; start: string };
      try {
        token = JSON.parse(Buffer.from(query.continue, 'base64').toString('utf8')) as { rv: number; start: string };
      } catch {
        throw badRequest('continue key is not valid: illegal base64 data');
      }
      if (token.rv < this.store.oldestResumable) {
        throw new ApiError({
          ...expired(token.rv, this.store.oldestResumable).status,
          message: 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
        });
      }
      items = items.filter((o) => `${metaOf(o).namespace ?? ''}/${metaOf(o).name}` > token.start);
    }
    if (query.limit && query.limit > 0 && items.length > query.limit) {
      const last = items[query.limit - 1]!;
      metadata.continue = Buffer.from(
        JSON.stringify({ rv: this.store.resourceVersion, start: `${metaOf(last).namespace ?? ''}/${metaOf(last).name}` }),
      ).toString('base64');
      metadata.remainingItemCount = items.length - query.limit;
      items = items.slice(0, query.limit);
    }
    return {
      apiVersion: apiVersionOf(type),
      kind: `${type.kind}List`,
      metadata,
      items: items.map((o) => this.served(type, o)),
    };
  }

  // ---- writes --------------------------------------------------------------

  private namespaceOf(type: ResourceType, urlNamespace: string, body: JsonObject): string {
    if (!type.namespaced) return '';
    const bodyNamespace = isObject(body.metadata) ? body.metadata.namespace : undefined;
    if (typeof bodyNamespace === 'string' && bodyNamespace !== '' && urlNamespace !== '' && bodyNamespace !== urlNamespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    return urlNamespace || (typeof bodyNamespace === 'string' ? bodyNamespace : '');
  }

  private checkNamespaceOpen(type: ResourceType, namespace: string, name: string): void {
    if (!type.namespaced) return;
    const ns = this.store.get('/namespaces', '', namespace);
    if (!ns) throw notFound(this.type('', 'v1', 'namespaces'), namespace);
    if (metaOf(ns).deletionTimestamp) throw forbiddenTerminating(type, name, namespace);
  }

  private validate(type: ResourceType, object: JsonObject, name: string): void {
    const causes: StatusCause[] = [];
    const pattern = type.kind === 'Namespace' ? DNS1123_LABEL : DNS1123_SUBDOMAIN;
    if (!name) causes.push({ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' });
    else if (!pattern.test(name) || name.length > (type.kind === 'Namespace' ? 63 : 253)) {
      const what = type.kind === 'Namespace' ? 'RFC 1123 label' : 'RFC 1123 subdomain';
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${name}": a lowercase ${what} must consist of lower case alphanumeric characters, '-'${type.kind === 'Namespace' ? '' : " or '.'"}, and must start and end with an alphanumeric character`,
        field: 'metadata.name',
      });
    }
    const meta = isObject(object.metadata) ? object.metadata : {};
    for (const field of ['labels', 'annotations'] as const) {
      const map = meta[field];
      if (map === undefined || map === null) continue;
      if (!isObject(map)) {
        causes.push({ reason: 'FieldValueTypeInvalid', message: 'Invalid value: must be a map of strings', field: `metadata.${field}` });
        continue;
      }
      for (const [key, value] of Object.entries(map)) {
        if (typeof value !== 'string')
          causes.push({
            reason: 'FieldValueTypeInvalid',
            message: `Invalid value: ${JSON.stringify(value)}: must be a string`,
            field: `metadata.${field}.${key}`,
          });
        // A label's value, as the real server's validation has it (annotations take any text).
        else if (field === 'labels' && value.length > 63)
          causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: "${value}": must be no more than 63 characters`, field: 'metadata.labels' });
        else if (field === 'labels' && !LABEL_VALUE.test(value)) {
          causes.push({
            reason: 'FieldValueInvalid',
            message: `Invalid value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
            field: 'metadata.labels',
          });
        }
      }
    }
    if (type.kind === 'Secret' && isObject(object.data)) {
      for (const [key, value] of Object.entries(object.data)) {
        if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) {
          causes.push({ reason: 'FieldValueInvalid', message: 'Invalid value: illegal base64 data', field: `data[${key}]` });
        }
      }
    }
    if (type.kind === 'ConfigMap' && isObject(object.data)) {
      for (const [key, value] of Object.entries(object.data)) {
        if (typeof value !== 'string')
          causes.push({ reason: 'FieldValueTypeInvalid', message: `Invalid value: ${JSON.stringify(value)}: must be a string`, field: `data.${key}` });
      }
    }
    // The real server's size rule (MaxSecretSize, for both kinds): every value of data (and binaryData), decoded, together.
    if ((type.kind === 'Secret' || type.kind === 'ConfigMap') && type.group === '') {
      const values = (field: Json | undefined) => (isObject(field) ? Object.values(field).filter((v): v is string => typeof v === 'string') : []);
      const decoded = (field: Json | undefined) => values(field).reduce((sum, v) => sum + Buffer.from(v, 'base64').length, 0);
      const bytes =
        type.kind === 'Secret' ? decoded(object.data) : values(object.data).reduce((sum, v) => sum + Buffer.byteLength(v), 0) + decoded(object.binaryData);
      if (bytes > DATA_MAX_BYTES)
        causes.push({
          reason: 'FieldValueTooLong',
          message: `Too long: may not be more than ${DATA_MAX_BYTES} bytes`,
          field: type.kind === 'Secret' ? 'data' : '[]',
        });
    }
    if (causes.length > 0) throw invalid(type, name, causes);
  }

  /** The structural schema of a custom resource's version, when its CRD declares one. */
  private schemaOf(type: ResourceType): JsonObject | undefined {
    if (!type.crd) return undefined;
    const crd = this.store.get('apiextensions.k8s.io/customresourcedefinitions', '', type.crd);
    const versions = crd && isObject(crd.spec) && Array.isArray(crd.spec.versions) ? crd.spec.versions : [];
    const version = versions.find((v) => isObject(v) && v.name === type.version);
    const schema = isObject(version) && isObject(version.schema) ? version.schema.openAPIV3Schema : undefined;
    return isObject(schema) ? schema : undefined;
  }

  /**
   * Fields a CRD's schema does not declare: refused with fieldValidation=Strict,
   * else dropped with a warning, as the real server prunes them.
   */
  private pruneUnknownFields(type: ResourceType, object: JsonObject, options: WriteOptions, applyRequest: boolean): void {
    const schema = this.schemaOf(type);
    if (!schema) return;
    const strict = options.fieldValidation === 'Strict';
    const unknown = pruneUnknown(object, schema, !strict);
    if (unknown.length === 0) return;
    if (strict) {
      throw badRequest(
        applyRequest
          ? `failed to create typed patch object (${String((object.metadata as JsonObject).namespace ?? '')}/${String((object.metadata as JsonObject).name)}; ${apiVersionOf(type)}, Kind=${type.kind}): ${unknown.map((f) => `.${f}: field not declared in schema`).join(', ')}`
          : `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`,
      );
    }
    if (options.fieldValidation !== 'Ignore') options.warnings?.push(...unknown.map((f) => `unknown field "${f}"`));
  }

  /** A custom resource defaulted and validated against its CRD's schema (./openapi-schema.ts), with the real server's 422. */
  private checkSchema(type: ResourceType, object: JsonObject, name: string): void {
    const schema = this.schemaOf(type);
    if (!schema) return;
    applyDefaults(object, schema);
    const causes = validateSchema(object, schema);
    if (causes.length > 0) throw invalid(type, name, causes);
  }

  private partOf(type: ResourceType, subresource: string | undefined): FieldPart {
    if (subresource === 'status') return 'status';
    return type.statusSubresource ? 'main' : 'all';
  }

  /** Ownership after a non-apply write: the writer takes the fields it changed. */
  private recordUpdate(type: ResourceType, before: JsonObject | undefined, after: JsonObject, manager: string, subresource: string | undefined): JsonObject[] {
    const part = this.partOf(type, subresource);
    const entries = entriesOf(before);
    const { set, removed } = changedPaths(before, after, part);
    if (set.length === 0 && removed.length === 0) return entries.map((e) => e as unknown as JsonObject);
    const taken = new Set([...set, ...removed].map(pathKey));
    const apiVersion = apiVersionOf(type);
    let own = entries.find((e) => e.manager === manager && e.operation === 'Update' && (e.subresource ?? '') === (subresource ?? ''));
    if (!own) {
      own = { manager, operation: 'Update', apiVersion, time: now(), fieldsType: 'FieldsV1', fieldsV1: {}, ...(subresource ? { subresource } : {}) };
      entries.push(own);
    }
    for (const entry of entries) {
      const paths = fromFieldsV1(entry.fieldsV1);
      for (const key of taken) paths.delete(key);
      if (entry === own) {
        for (const path of set) paths.set(pathKey(path), path);
        entry.time = now();
        entry.apiVersion = apiVersion;
      }
      entry.fieldsV1 = toFieldsV1(paths.values());
    }
    return entries.filter((e) => Object.keys(e.fieldsV1).length > 0).map((e) => e as unknown as JsonObject);
  }

  /**
   * The common end of every write: keeps system metadata, applies the status
   * subresource rule, bumps generation, finishes deletion when the last
   * finalizer goes, and stores (unless dry run).
   */
  private commitWrite(
    type: ResourceType,
    before: JsonObject | undefined,
    proposed: JsonObject,
    options: WriteOptions,
    subresource: string | undefined,
    managedFields?: JsonObject[],
  ): JsonObject {
    let next: JsonObject = clone(proposed);
    next.apiVersion = apiVersionOf(type);
    next.kind = type.kind;
    const meta: JsonObject = isObject(next.metadata) ? { ...next.metadata } : {};
    if (type.statusSubresource) {
      if (subresource === 'status') {
        // Only the status stanza changes through /status.
        next = { ...clone(before!), status: next.status ?? null };
        if (next.status === null) delete next.status;
        Object.assign(meta, clone(before!.metadata as JsonObject));
      } else if (before) {
        if (before.status !== undefined) next.status = clone(before.status);
        else delete next.status;
      } else if (type.kind !== 'Namespace') delete next.status; // a new Namespace gets its phase from the server
    }
    if (before) {
      const old = before.metadata as JsonObject;
      for (const key of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
        if (old[key] !== undefined) meta[key] = old[key]!;
        else delete meta[key];
      }
      meta.name = old.name!;
      if (old.namespace !== undefined) meta.namespace = old.namespace;
    } else {
      meta.uid = randomUUID();
      meta.creationTimestamp = now();
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
      delete meta.generation;
      if (type.generation) meta.generation = 1;
    }
    delete meta.resourceVersion;
    for (const key of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
      if (meta[key] === null) delete meta[key];
    }
    if (Array.isArray(meta.finalizers) && meta.finalizers.length === 0) delete meta.finalizers;
    next.metadata = meta;
    // A Secret's type defaults to Opaque, as the real server's defaulting does.
    if (type.kind === 'Secret' && type.group === '' && !next.type) next.type = 'Opaque';
    if (type.kind === 'Secret' && type.group === '' && isObject(next.stringData)) {
      // stringData is write-only: it lands in data, base64-encoded, as on a real server.
      const data: JsonObject = isObject(next.data) ? { ...next.data } : {};
      for (const [key, value] of Object.entries(next.stringData)) data[key] = Buffer.from(String(value), 'utf8').toString('base64');
      next.data = data;
      delete next.stringData;
    }
    this.pruneUnknownFields(type, next, options, managedFields !== undefined);
    if (subresource !== 'status') this.checkSchema(type, next, String(meta.name ?? ''));
    if (before && type.generation && subresource !== 'status') {
      const strip = (o: JsonObject) => {
        const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
        return rest;
      };
      if (!deepEqual(strip(before), strip(next))) meta.generation = Number(meta.generation ?? 0) + 1;
    }
    const manager = managerOf(options);
    meta.managedFields = (managedFields ?? this.recordUpdate(type, before, next, manager, subresource)) as Json;
    if (Array.isArray(meta.managedFields) && meta.managedFields.length === 0) delete meta.managedFields;
    this.validate(type, next, String(meta.name ?? ''));
    if (before && metaOf(before).deletionTimestamp && !metaOf(next).finalizers?.length) {
      // The last finalizer went: the object is deleted now.
      return options.dryRun ? next : this.served(type, this.store.commit(resourceKey(type), 'DELETED', next));
    }
    const timeless = (fields: Json | undefined) => (Array.isArray(fields) ? fields.map((e) => (isObject(e) ? { ...e, time: null } : e)) : null);
    const comparable = (o: JsonObject, m: JsonObject) => ({
      ...o,
      apiVersion: null,
      metadata: { ...m, resourceVersion: null, managedFields: timeless(m.managedFields) },
    });
    if (before && deepEqual(comparable(before, before.metadata as JsonObject), comparable(next, meta))) {
      // A no-op write keeps the resourceVersion and sends no event, as on a real server.
      return this.served(type, before);
    }
    if (options.dryRun) return { ...next, metadata: { ...meta, resourceVersion: before ? (before.metadata as JsonObject).resourceVersion! : '' } };
    return this.served(type, this.store.commit(resourceKey(type), before ? 'MODIFIED' : 'ADDED', next));
  }

  create(type: ResourceType, urlNamespace: string, body: unknown, options: WriteOptions = {}): JsonObject {
    if (!isObject(body)) throw badRequest('the body of the request must be an object');
    const object = clone(body);
    const meta: JsonObject = isObject(object.metadata) ? { ...object.metadata } : {};
    const namespace = this.namespaceOf(type, urlNamespace, object);
    if (!meta.name && typeof meta.generateName === 'string') meta.name = `${meta.generateName}${randomUUID().slice(0, 5)}`;
    const name = typeof meta.name === 'string' ? meta.name : '';
    if (type.namespaced) meta.namespace = namespace;
    else delete meta.namespace;
    object.metadata = meta;
    if (typeof object.kind === 'string' && object.kind !== type.kind)
      throw badRequest(`the kind of the provided object (${object.kind}) does not match the kind of the resource (${type.kind})`);
    this.validate(type, object, name);
    this.checkNamespaceOpen(type, namespace, name);
    if (this.store.get(resourceKey(type), namespace, name)) throw alreadyExists(type, name);
    if (type.kind === 'Namespace') {
      object.spec = { finalizers: ['kubernetes'] };
      object.status = { phase: 'Active' };
      meta.labels = { ...(isObject(meta.labels) ? meta.labels : {}), 'kubernetes.io/metadata.name': name };
    }
    return this.commitWrite(type, undefined, object, options, undefined);
  }

  private existing(type: ResourceType, namespace: string, name: string): JsonObject {
    const stored = this.store.get(resourceKey(type), type.namespaced ? namespace : '', name);
    if (!stored) throw notFound(type, name);
    return stored;
  }

  update(type: ResourceType, namespace: string, name: string, body: unknown, options: WriteOptions = {}, subresource?: string): JsonObject {
    if (!isObject(body)) throw badRequest('the body of the request must be an object');
    const before = this.existing(type, namespace, name);
    const meta = isObject(body.metadata) ? body.metadata : {};
    if (meta.name !== undefined && meta.name !== name)
      throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
    const rv = meta.resourceVersion;
    if (rv === undefined || rv === '' || rv === null) {
      if (!type.unconditionalUpdate) {
        throw invalid(type, name, [
          { reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' },
        ]);
      }
    } else if (rv !== metaOf(before).resourceVersion) throw conflict(type, name);
    return this.commitWrite(type, before, body, options, subresource);
  }

  patch(type: ResourceType, namespace: string, name: string, contentType: string, body: string, options: WriteOptions = {}, subresource?: string): JsonObject {
    const mediaType = contentType.split(';')[0]!.trim();
    if (mediaType === PATCH_TYPES.apply) return this.apply(type, namespace, name, body, options, subresource);
    const accepted = type.strategicMerge
      ? [PATCH_TYPES.json, PATCH_TYPES.merge, PATCH_TYPES.apply, PATCH_TYPES.strategic]
      : [PATCH_TYPES.json, PATCH_TYPES.merge, PATCH_TYPES.apply];
    if (!accepted.includes(mediaType as (typeof accepted)[number])) throw unsupportedMediaType(accepted);
    let patch: Json;
    try {
      patch = JSON.parse(body) as Json;
    } catch (error) {
      throw badRequest(`error decoding patch: ${(error as Error).message}`);
    }
    const before = this.existing(type, namespace, name);
    let next: Json;
    if (mediaType === PATCH_TYPES.json) next = jsonPatch(before, patch);
    else if (mediaType === PATCH_TYPES.merge) next = mergePatch(before, patch);
    else next = strategicMergePatch(before, patch);
    if (!isObject(next)) throw badRequest('the patch did not produce an object');
    const meta = isObject(next.metadata) ? next.metadata : {};
    // A resourceVersion in a patch is a precondition.
    if (
      isObject(patch) &&
      isObject(patch.metadata) &&
      typeof patch.metadata.resourceVersion === 'string' &&
      patch.metadata.resourceVersion !== metaOf(before).resourceVersion
    ) {
      throw conflict(type, name);
    }
    if (meta.name !== name) throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
    return this.commitWrite(type, before, next, options, subresource);
  }

  /** Server-side apply (PATCH with application/apply-patch+yaml). */
  apply(type: ResourceType, urlNamespace: string, name: string, body: string, options: WriteOptions, subresource?: string): JsonObject {
    if (!options.fieldManager)
      throw badRequest('PATCH is not supported for apply requests without a field manager: fieldManager is required for apply requests');
    let applied: unknown;
    try {
      applied = load(body);
    } catch (error) {
      throw badRequest(`error decoding YAML: ${(error as Error).message}`);
    }
    if (!isObject(applied)) throw badRequest('the body of an apply request must be an object');
    if (typeof applied.apiVersion !== 'string' || typeof applied.kind !== 'string') {
      throw badRequest(`invalid object type: ${String(applied.apiVersion ?? '')}, Kind=${String(applied.kind ?? '')}`);
    }
    if (applied.kind !== type.kind) throw badRequest(`the kind of the applied object (${applied.kind}) does not match the kind of the resource (${type.kind})`);
    const appliedMeta = isObject(applied.metadata) ? applied.metadata : {};
    if (appliedMeta.name !== undefined && appliedMeta.name !== name)
      throw badRequest(`the name of the object (${String(appliedMeta.name)}) does not match the name on the URL (${name})`);
    const namespace = this.namespaceOf(type, urlNamespace, applied);
    const manager = options.fieldManager;
    const part = this.partOf(type, subresource);
    // Fields the manager does not own in this part are not its to set.
    const config: JsonObject = clone(applied);
    delete config.apiVersion;
    delete config.kind;
    if (part === 'main') delete config.status;
    if (part === 'status') {
      for (const key of Object.keys(config)) if (key !== 'status' && key !== 'metadata') delete config[key];
    }
    const configMeta: JsonObject = { ...appliedMeta };
    delete configMeta.managedFields;
    const precondition = configMeta.resourceVersion;
    delete configMeta.resourceVersion;
    configMeta.name = name;
    if (type.namespaced) configMeta.namespace = namespace;
    else delete configMeta.namespace;
    config.metadata = configMeta;
    // Undeclared fields are refused (Strict) or dropped before anyone owns them.
    this.pruneUnknownFields(type, config, options, true);
    const stored = this.store.get(resourceKey(type), type.namespaced ? namespace : '', name);
    if (typeof precondition === 'string' && precondition !== '' && precondition !== (stored ? metaOf(stored).resourceVersion : undefined)) {
      throw conflict(type, name);
    }
    const desired = fieldSetOf(config, part);
    const apiVersion = String(applied.apiVersion);
    if (!stored) {
      if (subresource) throw notFound(type, name);
      this.checkNamespaceOpen(type, namespace, name);
      const entry: ManagedFieldsEntry = {
        manager,
        operation: 'Apply',
        apiVersion,
        time: now(),
        fieldsType: 'FieldsV1',
        fieldsV1: toFieldsV1(desired.values()),
      };
      const object: JsonObject = { apiVersion, kind: type.kind, ...config };
      this.validate(type, object, name);
      return this.commitWrite(type, undefined, object, options, undefined, [entry as unknown as JsonObject]);
    }
    const entries = entriesOf(stored);
    const isOwn = (e: ManagedFieldsEntry) => e.manager === manager && e.operation === 'Apply' && (e.subresource ?? '') === (subresource ?? '');
    const own = entries.find(isOwn);
    const live = stored;
    const conflicts: Array<{ entry: ManagedFieldsEntry; path: FieldPath }> = [];
    const ownership = new Map(entries.map((e) => [e, fromFieldsV1(e.fieldsV1)] as const));
    for (const [entry, paths] of ownership) {
      if (entry === own) continue;
      for (const path of desired.values()) {
        for (const theirs of overlapping(paths, path)) {
          const longer = theirs.length >= path.length ? theirs : path;
          if (!deepEqual(valueAt(live, longer), valueAt(config, longer))) conflicts.push({ entry, path: theirs });
        }
      }
    }
    if (conflicts.length > 0 && !options.force) {
      const seen = new Set<string>();
      throw applyConflict(
        conflicts
          .filter(({ entry, path }) => {
            const key = `${entry.manager}\u0000${pathKey(path)}`;
            if (seen.has(key)) return false;
            seen.add(key);
            return true;
          })
          .map(({ entry, path }) => ({
            reason: 'FieldManagerConflict',
            message: `conflict with "${entry.manager}"${entry.operation === 'Update' ? ` using ${entry.apiVersion}` : ''}`,
            field: describePath(path),
          })),
      );
    }
    for (const { entry, path } of conflicts) ownership.get(entry)!.delete(pathKey(path));
    // Fields this manager applied before and no longer applies go, unless someone else owns them.
    let merged: JsonObject = clone(live);
    if (own) {
      for (const [key, path] of ownership.get(own)!) {
        if (desired.has(key)) continue;
        const ownedElsewhere = [...ownership.entries()].some(([e, paths]) => e !== own && overlapping(paths, path).length > 0);
        if (!ownedElsewhere) removeAt(merged, path);
      }
    }
    merged = applyMerge(merged, config) as JsonObject;
    const ownEntry: ManagedFieldsEntry = own ?? {
      manager,
      operation: 'Apply',
      apiVersion,
      time: now(),
      fieldsType: 'FieldsV1',
      fieldsV1: {},
      ...(subresource ? { subresource } : {}),
    };
    ownEntry.fieldsV1 = toFieldsV1(desired.values());
    ownEntry.time = now();
    ownEntry.apiVersion = apiVersion;
    const updated = entries.map((e) => {
      if (e === own) return ownEntry;
      return { ...e, fieldsV1: toFieldsV1(ownership.get(e)!.values()) };
    });
    if (!own) updated.push(ownEntry);
    const managedFields = updated.filter((e) => Object.keys(e.fieldsV1).length > 0).map((e) => e as unknown as JsonObject);
    return this.commitWrite(type, live, merged, options, subresource, managedFields);
  }

  /**
   * The `/scale` subresource: reads spec.replicas as an autoscaling/v1 Scale,
   * or writes it from a Scale (PUT) or a patch of one.
   */
  scale(type: ResourceType, namespace: string, name: string, write?: { contentType: string; body: string }, options: WriteOptions = {}): JsonObject {
    const current = this.get(type, namespace, name);
    const view = (object: JsonObject): JsonObject => {
      const meta = object.metadata as JsonObject;
      const spec = isObject(object.spec) ? object.spec : {};
      const status = isObject(object.status) ? object.status : {};
      const selector =
        isObject(spec.selector) && isObject(spec.selector.matchLabels)
          ? Object.entries(spec.selector.matchLabels)
              .map(([k, v]) => `${k}=${String(v)}`)
              .join(',')
          : '';
      return {
        kind: 'Scale',
        apiVersion: 'autoscaling/v1',
        metadata: {
          name: meta.name!,
          namespace: meta.namespace!,
          uid: meta.uid!,
          resourceVersion: meta.resourceVersion!,
          creationTimestamp: meta.creationTimestamp!,
        },
        spec: { replicas: typeof spec.replicas === 'number' ? spec.replicas : 1 },
        status: { replicas: typeof status.replicas === 'number' ? status.replicas : 0, selector },
      };
    };
    if (!write) return view(current);
    const mediaType = write.contentType.split(';')[0]!.trim();
    let requested: Json;
    try {
      const parsed = JSON.parse(write.body) as Json;
      requested =
        mediaType === PATCH_TYPES.json ? jsonPatch(view(current), parsed) : mediaType === 'application/json' ? parsed : mergePatch(view(current), parsed);
    } catch (error) {
      if (error instanceof ApiError) throw error;
      throw badRequest(`error decoding scale: ${(error as Error).message}`);
    }
    const replicas = isObject(requested) && isObject(requested.spec) ? requested.spec.replicas : undefined;
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
      throw invalid(type, name, [
        {
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`,
          field: 'spec.replicas',
        },
      ]);
    }
    const rv = isObject(requested) && isObject(requested.metadata) ? requested.metadata.resourceVersion : undefined;
    if (mediaType === 'application/json' && typeof rv === 'string' && rv !== '' && rv !== metaOf(current).resourceVersion) throw conflict(type, name);
    const stored = this.existing(type, namespace, name);
    const updated = this.commitWrite(type, stored, { ...stored, spec: { ...(isObject(stored.spec) ? stored.spec : {}), replicas } }, options, undefined);
    return view(updated);
  }

  delete(type: ResourceType, namespace: string, name: string, options: DeleteOptions = {}): JsonObject | KubeStatus {
    const before = this.existing(type, namespace, name);
    const meta = metaOf(before);
    const pre = options.preconditions;
    if (pre?.uid && pre.uid !== meta.uid) throw conflict(type, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${meta.uid}`);
    if (pre?.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
      throw conflict(
        type,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion}`,
      );
    }
    const finalizers = [...(meta.finalizers ?? [])];
    if (type.kind === 'Namespace' || finalizers.length > 0) {
      if (meta.deletionTimestamp) return this.served(type, before);
      const next: JsonObject = clone(before);
      const nextMeta = next.metadata as JsonObject;
      nextMeta.deletionTimestamp = now();
      nextMeta.deletionGracePeriodSeconds = 0;
      if (type.generation) nextMeta.generation = Number(nextMeta.generation ?? 0) + 1;
      if (type.kind === 'Namespace') next.status = { phase: 'Terminating' };
      if (options.dryRun) return this.served(type, next);
      const stored = this.store.commit(resourceKey(type), 'MODIFIED', next);
      if (type.kind === 'Namespace') setImmediate(() => this.emptyNamespace(name));
      return this.served(type, stored);
    }
    if (!options.dryRun) this.store.commit(resourceKey(type), 'DELETED', before);
    return success(type, name, meta.uid ?? '');
  }

  deleteCollection(type: ResourceType, namespace: string | undefined, query: ListQuery, options: DeleteOptions = {}): JsonObject {
    const list = this.list(type, namespace, query);
    for (const item of list.items as JsonObject[]) {
      const meta = metaOf(item);
      try {
        this.delete(type, meta.namespace ?? '', meta.name, options);
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 404)) throw error;
      }
    }
    return list;
  }

  /** Deletes everything in a terminating namespace; the namespace goes once nothing is left. */
  private emptyNamespace(namespace: string): void {
    const nsType = this.type('', 'v1', 'namespaces');
    if (!this.store.get('/namespaces', '', namespace)) return;
    let remaining = 0;
    for (const type of this.types.all()) {
      if (!type.namespaced || apiVersionOf(type) !== this.preferredVersion(type)) continue;
      for (const object of this.store.list(resourceKey(type), namespace)) {
        remaining++;
        if (!metaOf(object).deletionTimestamp) this.delete(type, namespace, metaOf(object).name, { propagationPolicy: 'Background' });
      }
    }
    if (remaining === 0) {
      const ns = this.store.get('/namespaces', '', namespace)!;
      this.store.commit(resourceKey(nsType), 'DELETED', ns);
    }
  }

  private preferredVersion(type: ResourceType): string {
    const versions = this.types.groups().get(type.group) ?? [type.version];
    const served = versions.find((v) => this.types.get(type.group, v, type.plural));
    return apiVersionOf({ group: type.group, version: served ?? type.version });
  }

  private afterChange(change: StoredChange): void {
    if (change.resource === 'apiextensions.k8s.io/customresourcedefinitions') {
      if (change.type === 'DELETED') this.types.unregisterCrd(change.name);
      else this.types.registerCrd(change.object as unknown as CrdObject);
    }
    if (change.type === 'DELETED' && change.namespace) {
      const ns = this.store.get('/namespaces', '', change.namespace);
      if (ns && metaOf(ns).deletionTimestamp) setImmediate(() => this.emptyNamespace(change.namespace));
    }
    if (change.type === 'DELETED') this.collectDependents(change.object);
  }

  /** Background garbage collection: objects owned (ownerReferences) by a deleted object go too. */
  private collectDependents(owner: JsonObject): void {
    const uid = metaOf(owner).uid;
    if (!uid) return;
    setImmediate(() => {
      for (const type of this.types.all()) {
        if (apiVersionOf(type) !== this.preferredVersion(type)) continue;
        for (const object of this.store.list(resourceKey(type))) {
          const meta = metaOf(object);
          if (meta.ownerReferences?.some((ref) => ref.uid === uid) && !meta.deletionTimestamp) {
            try {
              this.delete(type, meta.namespace ?? '', meta.name, {});
            } catch {
              // already gone
            }
          }
        }
      }
    });
  }

  // ---- watch ---------------------------------------------------------------

  /**
   * Starts a watch: initial ADDED events (no resourceVersion, "0", or
   * sendInitialEvents), else the history after resourceVersion (ERROR 410
   * Expired when it is older than the history), then live changes. Returns
   * the function that stops it.
   */
  watch(type: ResourceType, namespace: string | undefined, query: WatchQuery, send: (event: WatchEvent) => void): () => void {
    const matches = this.matcher(type, query);
    const key = resourceKey(type);
    const inScope = (change: StoredChange) => change.resource === key && (!type.namespaced || namespace === undefined || change.namespace === namespace);
    const deliver = (change: StoredChange) => {
      if (!inScope(change)) return;
      const now = matches(change.object);
      const was = change.previous !== undefined && matches(change.previous);
      if (change.type === 'ADDED' && now) send({ type: 'ADDED', object: this.served(type, change.object) });
      else if (change.type === 'DELETED' && now) send({ type: 'DELETED', object: this.served(type, change.object) });
      else if (change.type === 'MODIFIED') {
        // Selector transitions look like additions and deletions to the watcher, as on a real server.
        if (now && was) send({ type: 'MODIFIED', object: this.served(type, change.object) });
        else if (now) send({ type: 'ADDED', object: this.served(type, change.object) });
        else if (was) send({ type: 'DELETED', object: this.served(type, change.object) });
      }
    };
    const rv = query.resourceVersion;
    if (query.sendInitialEvents || rv === undefined || rv === null || rv === '' || rv === '0') {
      for (const object of this.store.list(key, type.namespaced ? namespace : undefined)) {
        if (matches(object)) send({ type: 'ADDED', object: this.served(type, object) });
      }
      if (query.sendInitialEvents && query.allowWatchBookmarks) {
        send({
          type: 'BOOKMARK',
          object: {
            ...this.bookmark(type),
            metadata: { resourceVersion: String(this.store.resourceVersion), annotations: { 'k8s.io/initial-events-end': 'true' } },
          },
        });
      }
    } else {
      const from = Number(rv);
      if (!Number.isInteger(from) || from < 0) {
        send({ type: 'ERROR', object: badRequest(`invalid resource version: ${rv}`).status as unknown as JsonObject });
        return () => undefined;
      }
      const changes = this.store.changesSince(from);
      if (!changes) {
        send({ type: 'ERROR', object: expired(from, this.store.oldestResumable).status as unknown as JsonObject });
        return () => undefined;
      }
      for (const change of changes) deliver(change);
    }
    return this.store.subscribe(deliver);
  }

  /** A BOOKMARK's object: only kind, apiVersion and the current resourceVersion. */
  bookmark(type: ResourceType): JsonObject {
    return { kind: type.kind, apiVersion: apiVersionOf(type), metadata: { resourceVersion: String(this.store.resourceVersion) } };
  }
}

function entriesOf(object: JsonObject | undefined): ManagedFieldsEntry[] {
  const raw = object && isObject(object.metadata) ? object.metadata.managedFields : undefined;
  return Array.isArray(raw) ? raw.filter(isObject).map((e) => clone(e) as unknown as ManagedFieldsEntry) : [];
}
