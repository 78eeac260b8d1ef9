/**
 * flotilla's own schema of the Flux objects it writes and reads: HelmRelease
 * `helm.toolkit.fluxcd.io/v2` and HelmRepository `source.toolkit.fluxcd.io/v1`,
 * written from Flux's API reference for the version StarlingX installs
 * (FLUX_API_VERSIONS). Every object is closed (`additionalProperties: false`)
 * as the API server's structural schema is: `kubectl apply` refuses an
 * unknown field, so flotilla refuses it first, at the line that holds it.
 *
 * Install and upgrade are different structs in v2: `createNamespace` and
 * `replace` exist only on install, `force`, `cleanupOnFail`,
 * `preserveValues` and `remediation.strategy` only on upgrade, and
 * `serverSideApply` is a boolean on install but enabled|disabled|auto on
 * upgrade and rollback. `maxHistory` lives on the spec only.
 *
 * Pure data: the app model checks the release table with it (src/app), verify
 * checks every shipped object with it (src/verify).
 */
import { HELM_RELEASE_API } from './helmrelease.js';
import { SOURCE_API } from './manifests.js';

type Schema = Record<string, unknown>;

/** The Flux controllers this schema is written for (StarlingX's platform Flux). */
export const FLUX_API_VERSIONS = { helmController: 'v1.5.3', sourceController: 'v1.8.1' } as const;


const durationPattern = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';
const duration: Schema = { type: 'string', pattern: durationPattern, expected: 'a Flux duration such as 30m, 1h or 90s' };
const boolean: Schema = { type: 'boolean' };
const string: Schema = { type: 'string' };
const nonEmpty = (maxLength?: number): Schema => ({ type: 'string', minLength: 1, ...(maxLength ? { maxLength } : {}) });
const stringMap: Schema = { type: 'object', additionalProperties: { type: 'string' } };
const closed = (properties: Record<string, Schema>, required: readonly string[] = []): Schema => ({
  type: 'object',
  additionalProperties: false,
  properties,
  ...(required.length > 0 ? { required: [...required] } : {}),
});
const localReference = closed({ name: nonEmpty(253) }, ['name']);
const crdsPolicy: Schema = { enum: ['Skip', 'Create', 'CreateReplace'] };
/** Upgrade and rollback may also reuse the apply method the release was last made with. */
const serverSideApplyMode: Schema = { enum: ['enabled', 'disabled', 'auto'] };
const actionStrategy = closed({ name: { enum: ['RemediateOnFailure', 'RetryOnFailure'] }, retryInterval: duration }, ['name']);
const remediationCommon: Record<string, Schema> = {
  retries: { type: 'integer' },
  ignoreTestFailures: boolean,
  remediateLastFailure: boolean,
};
/** Fields install and upgrade share. */
const actionCommon: Record<string, Schema> = {
  timeout: duration,
  disableWait: boolean,
  disableWaitForJobs: boolean,
  disableHooks: boolean,
  disableOpenAPIValidation: boolean,
  disableSchemaValidation: boolean,
  disableTakeOwnership: boolean,
  crds: crdsPolicy,
  strategy: { $ref: '#/$defs/actionStrategy' },
};
const install = closed({
  ...actionCommon,
  remediation: closed(remediationCommon),
  replace: boolean,
  skipCRDs: boolean,
  createNamespace: boolean,
  serverSideApply: boolean,
});
const upgrade = closed({
  ...actionCommon,
  remediation: closed({ ...remediationCommon, strategy: { enum: ['rollback', 'uninstall'] } }),
  force: boolean,
  preserveValues: boolean,
  cleanupOnFail: boolean,
  serverSideApply: serverSideApplyMode,
});
const kustomizeSelector = closed({
  group: string,
  version: string,
  kind: string,
  namespace: string,
  name: string,
  annotationSelector: string,
  labelSelector: string,
});
const postRenderer = closed({
  kustomize: closed({
    patches: { type: 'array', items: closed({ patch: string, target: kustomizeSelector }, ['patch']) },
    patchesStrategicMerge: { type: 'array', items: { type: 'object' } },
    patchesJson6902: { type: 'array', items: closed({ patch: { type: 'array', items: { type: 'object' } }, target: kustomizeSelector }, ['patch', 'target']) },
    images: { type: 'array', items: closed({ name: nonEmpty(), newName: string, newTag: string, digest: string }, ['name']) },
  }),
});

/** The HelmRelease v2 spec. */
export const helmReleaseSpecSchema: Schema = closed({
  chart: closed(
    {
      metadata: closed({ labels: stringMap, annotations: stringMap }),
      spec: closed(
        {
          chart: nonEmpty(2048),
          version: string,
          sourceRef: closed({ apiVersion: string, kind: { enum: ['HelmRepository', 'GitRepository', 'Bucket'] }, name: nonEmpty(253), namespace: nonEmpty(63) }, ['kind', 'name']),
          interval: duration,
          reconcileStrategy: { enum: ['ChartVersion', 'Revision'] },
          valuesFiles: { type: 'array', items: string },
          valuesFile: string,
          ignoreMissingValuesFiles: boolean,
          verify: closed({ provider: { enum: ['cosign', 'notation'] }, secretRef: localReference, matchOIDCIdentity: { type: 'array', items: closed({ issuer: string, subject: string }, ['issuer', 'subject']) } }, ['provider']),
        },
        ['chart', 'sourceRef'],
      ),
    },
    ['spec'],
  ),
  chartRef: closed({ apiVersion: string, kind: { enum: ['OCIRepository', 'HelmChart', 'ExternalArtifact'] }, name: nonEmpty(253), namespace: nonEmpty(63) }, ['kind', 'name']),
  interval: duration,
  kubeConfig: closed({ secretRef: closed({ name: nonEmpty(), key: string }, ['name']), configMapRef: localReference }),
  suspend: boolean,
  releaseName: { type: 'string', minLength: 1, maxLength: 53 },
  targetNamespace: nonEmpty(63),
  storageNamespace: nonEmpty(63),
  dependsOn: { type: 'array', items: closed({ name: nonEmpty(), namespace: string }, ['name']) },
  timeout: duration,
  maxHistory: { type: 'integer', minimum: 0 },
  serviceAccountName: nonEmpty(253),
  persistentClient: boolean,
  driftDetection: closed({
    mode: { enum: ['enabled', 'warn', 'disabled'] },
    ignore: { type: 'array', items: closed({ paths: { type: 'array', items: string }, target: kustomizeSelector }, ['paths']) },
  }),
  install: { $ref: '#/$defs/install' },
  upgrade: { $ref: '#/$defs/upgrade' },
  test: closed({
    enable: boolean,
    timeout: duration,
    ignoreFailures: boolean,
    filters: { type: 'array', items: closed({ name: nonEmpty(253), exclude: boolean }, ['name']) },
  }),
  rollback: closed({
    timeout: duration,
    disableWait: boolean,
    disableWaitForJobs: boolean,
    disableHooks: boolean,
    recreate: boolean,
    force: boolean,
    cleanupOnFail: boolean,
    serverSideApply: serverSideApplyMode,
  }),
  uninstall: closed({
    timeout: duration,
    disableHooks: boolean,
    keepHistory: boolean,
    disableWait: boolean,
    deletionPropagation: { enum: ['background', 'foreground', 'orphan'] },
  }),
  valuesFrom: {
    type: 'array',
    items: closed({ kind: { enum: ['Secret', 'ConfigMap'] }, name: nonEmpty(253), valuesKey: { type: 'string', maxLength: 253 }, targetPath: { type: 'string', maxLength: 250 }, optional: boolean }, ['kind', 'name']),
  },
  values: { type: 'object' },
  postRenderers: { type: 'array', items: postRenderer },
  commonMetadata: closed({ labels: stringMap, annotations: stringMap }),
  healthCheckExprs: {
    type: 'array',
    items: closed({ apiVersion: nonEmpty(), kind: nonEmpty(), current: nonEmpty(), inProgress: string, failed: string }, ['apiVersion', 'kind', 'current']),
  },
  waitStrategy: closed({ name: { enum: ['poller', 'legacy'] } }, ['name']),
});

/** Shared definitions the schemas above refer to; a schema embedding them must carry these `$defs`. */
export const fluxDefinitions: Record<string, Schema> = { actionStrategy, install, upgrade };

const objectMeta = (nameRequired: boolean): Schema => ({
  type: 'object',
  ...(nameRequired ? { required: ['name'] } : {}),
  properties: { name: nonEmpty(253), namespace: nonEmpty(63), labels: stringMap, annotations: stringMap },
});

/** A whole HelmRelease object as shipped: interval required, exactly one of spec.chart and spec.chartRef. */
export const helmReleaseSchema: Schema = {
  $id: 'flotilla:flux-helmrelease',
  $defs: fluxDefinitions,
  type: 'object',
  additionalProperties: false,
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { const: HELM_RELEASE_API },
    kind: { const: 'HelmRelease' },
    metadata: objectMeta(true),
    spec: {
      allOf: [
        helmReleaseSpecSchema,
        { type: 'object', required: ['interval'] },
        { type: 'object', oneOf: [{ type: 'object', required: ['chart'] }, { type: 'object', required: ['chartRef'] }], expected: 'exactly one of chart and chartRef' },
      ],
    },
  },
};

/** The HelmRepository v1 spec. */
export const helmRepositorySpecSchema: Schema = closed(
  {
    url: { type: 'string', pattern: '^(http|https|oci)://.*$', expected: 'an http(s):// or oci:// URL' },
    secretRef: localReference,
    certSecretRef: localReference,
    passCredentials: boolean,
    insecure: boolean,
    interval: duration,
    timeout: duration,
    suspend: boolean,
    accessFrom: closed({ namespaceSelectors: { type: 'array', items: closed({ matchLabels: stringMap }) } }, ['namespaceSelectors']),
    type: { enum: ['default', 'oci'] },
    provider: { enum: ['generic', 'aws', 'azure', 'gcp'] },
  },
  ['url'],
);

/** A whole HelmRepository object as shipped. */
export const helmRepositorySchema: Schema = {
  $id: 'flotilla:flux-helmrepository',
  ...closed({ apiVersion: { const: SOURCE_API }, kind: { const: 'HelmRepository' }, metadata: objectMeta(true), spec: helmRepositorySpecSchema }, ['apiVersion', 'kind', 'metadata', 'spec']),
};
