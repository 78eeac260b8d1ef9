/**
 * TEST FIXTURE (dev cluster): the documents clients read to learn what the
 * server serves — /version, /api, /apis, APIResourceLists, OpenAPI v2 (JSON)
 * and v3 (root and per group/version). kubectl reads the v3 documents to see
 * that PATCH supports `fieldValidation`, so it validates on the server and
 * needs no schema of its own.
 */
import { createHash } from 'node:crypto';
import type { JsonObject } from './patch.js';
import { apiVersionOf, type ResourceType, type ResourceTypes } from './resources.js';

export const KUBE_VERSION = { major: '1', minor: '35', gitVersion: 'v1.35.0' } as const;

export function versionInfo(): JsonObject {
  return {
    ...KUBE_VERSION,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'flotilla dev cluster (a test fixture, not Kubernetes)',
    compiler: 'gc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function coreVersions(serverAddress: string): JsonObject {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function groupDocument(name: string, versions: string[]): JsonObject {
  const entries = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
  return { name, versions: entries, preferredVersion: entries[0]! };
}

export function groupList(types: ResourceTypes): JsonObject {
  const groups = [...types.groups().entries()].filter(([name]) => name !== '').sort(([a], [b]) => a.localeCompare(b));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(([name, versions]) => groupDocument(name, versions)) };
}

export function group(types: ResourceTypes, name: string): JsonObject | undefined {
  const versions = types.groups().get(name);
  return versions && name !== '' ? { kind: 'APIGroup', apiVersion: 'v1', ...groupDocument(name, versions) } : undefined;
}

export function resourceList(types: ResourceTypes, groupName: string, version: string): JsonObject | undefined {
  const served = types.all().filter((t) => t.group === groupName && t.version === version);
  if (served.length === 0) return undefined;
  const resources: JsonObject[] = [];
  for (const t of served.sort((a, b) => a.plural.localeCompare(b.plural))) {
    resources.push({
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: VERBS,
      ...(t.shortNames.length ? { shortNames: [...t.shortNames] } : {}),
      ...(t.categories.length ? { categories: [...t.categories] } : {}),
      storageVersionHash: createHash('sha256').update(`${t.group}/${t.version}/${t.kind}`).digest('base64').slice(0, 11),
    });
    if (t.statusSubresource) {
      resources.push({ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] });
    }
    if (t.scaleSubresource) {
      resources.push({
        name: `${t.plural}/scale`,
        singularName: '',
        namespaced: t.namespaced,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: ['get', 'patch', 'update'],
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf({ group: groupName, version }), resources };
}

const gvk = (t: ResourceType) => ({ group: t.group, version: t.version, kind: t.kind });

/** The schema name OpenAPI documents use for a type (`io.k8s.api.core.v1.ConfigMap`, reversed group for CRDs). */
function schemaName(t: ResourceType): string {
  const groupPart = t.group === '' ? 'io.k8s.api.core' : t.crd ? t.group.split('.').reverse().join('.') : `io.k8s.api.${t.group.split('.')[0]}`;
  return `${groupPart}.${t.version}.${t.kind}`;
}

/** The type's schema: the CRD's own openAPIV3Schema when it has one, else an open object. */
function schemaOf(t: ResourceType, crdSchema: JsonObject | undefined): JsonObject {
  const base: JsonObject = crdSchema
    ? { ...crdSchema }
    : {
        type: 'object',
        properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' } },
        'x-kubernetes-preserve-unknown-fields': true,
      };
  return { ...base, 'x-kubernetes-group-version-kind': [gvk(t)] };
}

/** Swagger 2.0, in JSON (the protobuf form is not served). */
export function openApiV2(types: ResourceTypes, crdSchemas: (t: ResourceType) => JsonObject | undefined): JsonObject {
  const definitions: JsonObject = {};
  for (const t of types.all()) definitions[schemaName(t)] = schemaOf(t, crdSchemas(t));
  return { swagger: '2.0', info: { title: 'Kubernetes', version: KUBE_VERSION.gitVersion }, paths: {}, definitions };
}

const gvPath = (groupName: string, version: string): string => (groupName === '' ? `api/${version}` : `apis/${groupName}/${version}`);

export function openApiV3Root(types: ResourceTypes, hash: string): JsonObject {
  const paths: JsonObject = {};
  for (const [groupName, versions] of types.groups()) {
    for (const version of versions) {
      const path = gvPath(groupName, version);
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
    }
  }
  return { paths };
}

const queryParam = (name: string, type: 'string' | 'boolean' = 'string'): JsonObject => ({ name, in: 'query', schema: { type, uniqueItems: true } });

export function openApiV3GroupVersion(
  types: ResourceTypes,
  groupName: string,
  version: string,
  crdSchemas: (t: ResourceType) => JsonObject | undefined,
): JsonObject | undefined {
  const served = types.all().filter((t) => t.group === groupName && t.version === version);
  if (served.length === 0) return undefined;
  const paths: JsonObject = {};
  const schemas: JsonObject = {};
  const base = `/${gvPath(groupName, version)}`;
  for (const t of served) {
    const name = schemaName(t);
    schemas[name] = schemaOf(t, crdSchemas(t));
    const ref = { $ref: `#/components/schemas/${name}` };
    const extension = { 'x-kubernetes-group-version-kind': gvk(t) };
    const body = { content: { 'application/json': { schema: ref } } };
    const ok = { '200': { description: 'OK', content: { 'application/json': { schema: ref } } } };
    const writeParams = [queryParam('dryRun'), queryParam('fieldManager'), queryParam('fieldValidation')];
    const item = t.namespaced ? `${base}/namespaces/{namespace}/${t.plural}/{name}` : `${base}/${t.plural}/{name}`;
    const collection = t.namespaced ? `${base}/namespaces/{namespace}/${t.plural}` : `${base}/${t.plural}`;
    paths[collection] = {
      get: { ...extension, 'x-kubernetes-action': 'list', responses: ok },
      post: { ...extension, 'x-kubernetes-action': 'post', parameters: writeParams, requestBody: body, responses: ok },
    };
    paths[item] = {
      get: { ...extension, 'x-kubernetes-action': 'get', responses: ok },
      put: { ...extension, 'x-kubernetes-action': 'put', parameters: writeParams, requestBody: body, responses: ok },
      patch: { ...extension, 'x-kubernetes-action': 'patch', parameters: [...writeParams, queryParam('force', 'boolean')], responses: ok },
      delete: { ...extension, 'x-kubernetes-action': 'delete', parameters: [queryParam('dryRun')], responses: ok },
    };
    if (t.statusSubresource) {
      paths[`${item}/status`] = {
        get: { ...extension, 'x-kubernetes-action': 'get', responses: ok },
        put: { ...extension, 'x-kubernetes-action': 'put', parameters: writeParams, requestBody: body, responses: ok },
        patch: { ...extension, 'x-kubernetes-action': 'patch', parameters: [...writeParams, queryParam('force', 'boolean')], responses: ok },
      };
    }
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: KUBE_VERSION.gitVersion }, paths, components: { schemas } };
}
