/**
 * flotilla's own schema of the Flux objects it writes and reads: HelmRelease
 * `helm.toolkit.fluxcd.io/v2` and HelmRepository `source.toolkit.fluxcd.io/v1`,
 * written from Flux's API reference for a declared Flux version (FLUX_VERSIONS):
 * the one StarlingX installs, or the newest. Every object is closed
 * (`additionalProperties: false`) as the API server's structural schema is:
 * `kubectl apply` refuses an unknown field, so flotilla refuses it first, at
 * the line that holds it.
 *
 * Install and upgrade are different structs in v2: `createNamespace` and
 * `replace` exist only on install, `force`, `cleanupOnFail`,
 * `preserveValues` and `remediation.strategy` only on upgrade, and
 * `serverSideApply` is a boolean on install but enabled|disabled|auto on
 * upgrade and rollback. `maxHistory` lives on the spec only.
 *
 * One definition serves every version: a field a later controller release
 * added is declared once with the version that brought it (`since`), and a
 * target older than that refuses it with a message naming both versions.
 *
 * Pure data: the app model checks the release table with it (src/app), verify
 * checks every shipped object with it (src/verify).
 */
import { HELM_RELEASE_API } from './helmrelease.js';
import { SOURCE_API } from './manifests.js';
import { FLUX_DURATION_PATTERN } from '../names/index.js';

type Schema = Record<string, unknown>;

/** The Flux versions an app can declare (release table `fluxVersion`). */
export const FLUX_TARGETS = ['starlingx', 'latest'] as const;
export type FluxTarget = (typeof FLUX_TARGETS)[number];
/** What an app targets when it declares nothing: the Flux StarlingX installs. */
export const DEFAULT_FLUX_TARGET: FluxTarget = 'starlingx';

export interface FluxControllerVersions {
  readonly helmController: string;
  readonly sourceController: string;
}

/** The controller releases each target names: StarlingX's platform Flux, and the newest Flux release (v2.9.5). */
export const FLUX_VERSIONS: Readonly<Record<FluxTarget, FluxControllerVersions>> = {
  starlingx: { helmController: 'v1.5.3', sourceController: 'v1.8.1' },
  latest: { helmController: 'v1.6.4', sourceController: 'v1.9.5' },
};

export function isFluxTarget(value: unknown): value is FluxTarget {
  return typeof value === 'string' && (FLUX_TARGETS as readonly string[]).includes(value);
}

const versionParts = (version: string): number[] => version.replace(/^v/, '').split('.').map(Number);
function atLeast(version: string, minimum: string): boolean {
  const [a, b] = [versionParts(version), versionParts(minimum)];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
}

const duration: Schema = { type: 'string', pattern: FLUX_DURATION_PATTERN, expected: 'a Flux duration such as 30m, 1h or 90s' };
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
const kustomizeSelector = closed({
  group: string,
  version: string,
  kind: string,
  namespace: string,
  name: string,
  annotationSelector: string,
  labelSelector: string,
});
// v2 keeps only targeted patches and images (patchesStrategicMerge and patchesJson6902 ended with v2beta2).
const postRenderer = closed({
  kustomize: closed({
    patches: { type: 'array', items: closed({ patch: string, target: kustomizeSelector }, ['patch']) },
    images: { type: 'array', items: closed({ name: nonEmpty(), newName: string, newTag: string, digest: string }, ['name']) },
  }),
});

/** A field helm-controller added in `version`: its schema where the target has it, else a refusal naming both versions. */
const since =
  (target: FluxTarget) =>
  (version: string, field: string, schema: Schema): Schema => {
    const targeted = FLUX_VERSIONS[target].helmController;
    if (atLeast(targeted, version)) return schema;
    return {
      not: {},
      expected: `field ${field} exists from helm-controller ${version}; this app targets helm-controller ${targeted} (fluxVersion: ${target})`,
    };
  };

/** The HelmRelease schemas of one Flux target. */
export interface HelmReleaseSchemas {
  /** The HelmRelease v2 spec. */
  readonly spec: Schema;
  /** Shared definitions the spec refers to; a schema embedding it must carry these `$defs`. */
  readonly definitions: Record<string, Schema>;
  /** A whole HelmRelease object as shipped: interval required, exactly one of spec.chart and spec.chartRef. */
  readonly object: Schema;
}

function helmReleaseSchemasOf(target: FluxTarget): HelmReleaseSchemas {
  const added = since(target);
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
    chartNameChangeStrategy: added('v1.6.0', 'spec.upgrade.chartNameChangeStrategy', { enum: ['Reinstall', 'InPlaceUpdate'] }),
  });
  const spec = closed({
    chart: closed(
      {
        metadata: closed({ labels: stringMap, annotations: stringMap }),
        spec: closed(
          {
            chart: nonEmpty(2048),
            version: string,
            sourceRef: closed(
              { apiVersion: string, kind: { enum: ['HelmRepository', 'GitRepository', 'Bucket'] }, name: nonEmpty(253), namespace: nonEmpty(63) },
              ['kind', 'name'],
            ),
            interval: duration,
            reconcileStrategy: { enum: ['ChartVersion', 'Revision'] },
            valuesFiles: { type: 'array', items: string },
            ignoreMissingValuesFiles: boolean,
            verify: closed({ provider: { enum: ['cosign', 'notation'] }, secretRef: localReference }, ['provider']),
          },
          ['chart', 'sourceRef'],
        ),
      },
      ['spec'],
    ),
    chartRef: closed({ apiVersion: string, kind: { enum: ['OCIRepository', 'HelmChart', 'ExternalArtifact'] }, name: nonEmpty(253), namespace: nonEmpty(63) }, [
      'kind',
      'name',
    ]),
    interval: duration,
    kubeConfig: closed({ secretRef: closed({ name: nonEmpty(), key: string }, ['name']), configMapRef: localReference }),
    suspend: boolean,
    releaseName: { type: 'string', minLength: 1, maxLength: 53 },
    targetNamespace: nonEmpty(63),
    storageNamespace: nonEmpty(63),
    // readyExpr: a CEL expression replacing the built-in readiness check of the dependency.
    dependsOn: { type: 'array', items: closed({ name: nonEmpty(), namespace: string, readyExpr: string }, ['name']) },
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
      items: closed(
        {
          kind: { enum: ['Secret', 'ConfigMap'] },
          name: nonEmpty(253),
          valuesKey: { type: 'string', maxLength: 253 },
          targetPath: { type: 'string', maxLength: 250 },
          optional: boolean,
          literal: added('v1.6.0', 'spec.valuesFrom[].literal', boolean),
        },
        ['kind', 'name'],
      ),
    },
    values: { type: 'object' },
    postRenderers: { type: 'array', items: postRenderer },
    postRenderStrategy: added('v1.6.0', 'spec.postRenderStrategy', { enum: ['nohooks', 'combined', 'separate'] }),
    commonMetadata: closed({ labels: stringMap, annotations: stringMap }),
    healthCheckExprs: {
      type: 'array',
      items: closed({ apiVersion: nonEmpty(), kind: nonEmpty(), current: nonEmpty(), inProgress: string, failed: string }, ['apiVersion', 'kind', 'current']),
    },
    waitStrategy: closed({ name: { enum: ['poller', 'legacy'] } }, ['name']),
  });
  const definitions = { actionStrategy, install, upgrade };
  const object: Schema = {
    $id: target === DEFAULT_FLUX_TARGET ? 'flotilla:flux-helmrelease' : `flotilla:flux-helmrelease@${target}`,
    $defs: definitions,
    type: 'object',
    additionalProperties: false,
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    properties: {
      apiVersion: { const: HELM_RELEASE_API },
      kind: { const: 'HelmRelease' },
      metadata: objectMeta(true),
      spec: {
        allOf: [
          spec,
          { type: 'object', required: ['interval'] },
          {
            type: 'object',
            oneOf: [
              { type: 'object', required: ['chart'] },
              { type: 'object', required: ['chartRef'] },
            ],
            expected: 'exactly one of chart and chartRef',
          },
        ],
      },
    },
  };
  return { spec, definitions, object };
}

const objectMeta = (nameRequired: boolean): Schema => ({
  type: 'object',
  ...(nameRequired ? { required: ['name'] } : {}),
  properties: { name: nonEmpty(253), namespace: nonEmpty(63), labels: stringMap, annotations: stringMap },
});

const helmReleaseSchemasByTarget = new Map(FLUX_TARGETS.map((target) => [target, helmReleaseSchemasOf(target)]));

/** The HelmRelease schemas of a Flux target (built once: the checker caches validators per schema object). */
export function helmReleaseSchemas(target: FluxTarget): HelmReleaseSchemas {
  return helmReleaseSchemasByTarget.get(target)!;
}

/** The default target's HelmRelease schemas, for readers of objects that declare no target (import of a StarlingX app). */
export const helmReleaseSchema: Schema = helmReleaseSchemas(DEFAULT_FLUX_TARGET).object;

/** The HelmRepository v1 spec (source-controller v1.8.1; no HelmRepository change is known in v1.9). */
export const helmRepositorySpecSchema: Schema = closed(
  {
    url: { type: 'string', pattern: '^(http|https|oci)://.*$', expected: 'an http(s):// or oci:// URL' },
    secretRef: localReference,
    certSecretRef: localReference,
    passCredentials: boolean,
    insecure: boolean,
    interval: duration,
    // source-controller's timeout pattern has no hours (ms, s, m only).
    timeout: { type: 'string', pattern: '^([0-9]+(\\.[0-9]+)?(ms|s|m))+$', expected: 'a duration in ms, s or m such as 60s' },
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
  ...closed({ apiVersion: { const: SOURCE_API }, kind: { const: 'HelmRepository' }, metadata: objectMeta(true), spec: helmRepositorySpecSchema }, [
    'apiVersion',
    'kind',
    'metadata',
    'spec',
  ]),
};
