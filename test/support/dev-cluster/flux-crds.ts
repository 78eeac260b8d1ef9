/**
 * TEST FIXTURE (dev cluster): the Flux CustomResourceDefinitions the fixture
 * stores at start — helm.toolkit.fluxcd.io HelmRelease v2 (helm-controller
 * v1.5/v1.6) and source.toolkit.fluxcd.io HelmRepository, HelmChart,
 * OCIRepository v1 — with Flux's names, short names, scopes, status
 * subresources, printer columns and structural `openAPIV3Schema`s: every
 * field of each spec with its type, enums, lengths, duration patterns,
 * defaults and required fields, and the rule that a HelmRelease has exactly
 * one of chart and chartRef. The fixture's API server prunes, defaults and
 * validates custom resources against these schemas (./openapi-schema.ts) as
 * the real API server does, so what Flux's CRDs refuse is refused here.
 *
 * Written from Flux's API documentation, not copied from Flux's files, and
 * independent of flotilla's own src/flux (the fixture is what that code is
 * tested against). Statuses are left open (`x-kubernetes-preserve-unknown-fields`):
 * only the simulation writes them.
 */
import type { JsonObject } from './patch.js';

const READY = { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' };
const STATUS = { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' };
const AGE = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

// ---- schema builders ----------------------------------------------------------

type Extra = JsonObject & { description?: string };

const string = (extra: Extra = {}): JsonObject => ({ type: 'string', ...extra });
const boolean = (description?: string): JsonObject => ({ type: 'boolean', ...(description ? { description } : {}) });
const integer = (extra: Extra = {}): JsonObject => ({ type: 'integer', ...extra });
const enumOf = (values: string[], extra: Extra = {}): JsonObject => string({ enum: values, ...extra });
const list = (items: JsonObject, extra: Extra = {}): JsonObject => ({ type: 'array', items, ...extra });
const stringMap = (description?: string): JsonObject => ({ type: 'object', additionalProperties: { type: 'string' }, ...(description ? { description } : {}) });
const object = (properties: Record<string, JsonObject>, required: string[] = [], extra: Extra = {}): JsonObject => ({
  type: 'object',
  properties,
  ...(required.length > 0 ? { required } : {}),
  ...extra,
});
/** A Go metav1.Duration as Flux declares it. */
const duration = (description?: string, units = 'ms|s|m|h'): JsonObject =>
  string({ pattern: `^([0-9]+(\\.[0-9]+)?(${units}))+$`, ...(description ? { description } : {}) });
const name = (max = 253): JsonObject => string({ minLength: 1, maxLength: max });
const localReference = (): JsonObject => object({ name: string({ description: 'Name of the referent.' }) }, ['name']);
const secretKeyReference = (): JsonObject => object({ name: string(), key: string() }, ['name']);

// ---- helm.toolkit.fluxcd.io/v2 HelmRelease ------------------------------------------

const CROSS_NAMESPACE_OBJECT_REFERENCE = object(
  {
    apiVersion: string({ description: 'API version of the referent.' }),
    kind: enumOf(['HelmRepository', 'GitRepository', 'Bucket'], { description: 'Kind of the referent.' }),
    name: name(),
    namespace: name(63),
  },
  ['kind', 'name'],
);

const CHART_TEMPLATE = object(
  {
    metadata: object({ labels: stringMap(), annotations: stringMap() }, [], { description: 'Labels and annotations of the HelmChart made for this release.' }),
    spec: object(
      {
        chart: string({ minLength: 1, maxLength: 2048, description: 'Name or path of the Helm chart in the source.' }),
        version: string({ default: '*', description: 'Version semver expression; ignored for charts from GitRepository and Bucket sources.' }),
        sourceRef: CROSS_NAMESPACE_OBJECT_REFERENCE,
        interval: duration('Interval at which to check the source for updates (defaults to the HelmRelease interval).'),
        reconcileStrategy: enumOf(['ChartVersion', 'Revision'], { default: 'ChartVersion' }),
        valuesFiles: list(string()),
        ignoreMissingValuesFiles: boolean(),
        valuesFile: string({ description: 'Deprecated: use valuesFiles.' }),
        verify: object({ provider: enumOf(['cosign', 'notation'], { default: 'cosign' }), secretRef: localReference() }, ['provider']),
      },
      ['chart', 'sourceRef'],
    ),
  },
  ['spec'],
  { description: 'The template of the HelmChart source-controller builds for this release.' },
);

const CHART_REF = object({ apiVersion: string(), kind: enumOf(['OCIRepository', 'HelmChart']), name: name(), namespace: name(63) }, ['kind', 'name'], {
  description: 'A source-controller object holding the chart artifact (instead of chart).',
});

const REMEDIATION_COMMON = {
  retries: integer({ description: 'Attempts after the first failure; negative means unlimited.' }),
  ignoreTestFailures: boolean(),
  remediateLastFailure: boolean(),
};

const ACTION_STRATEGY = object({ name: enumOf(['RemediateOnFailure', 'RetryOnFailure']), retryInterval: duration() }, ['name']);

const CRDS_POLICY = enumOf(['Skip', 'Create', 'CreateReplace']);

/** Fields install and upgrade share (they are still different structs in v2). */
const ACTION_COMMON = {
  timeout: duration(),
  strategy: ACTION_STRATEGY,
  disableWait: boolean(),
  disableWaitForJobs: boolean(),
  disableHooks: boolean(),
  disableOpenAPIValidation: boolean(),
  disableSchemaValidation: boolean(),
  disableTakeOwnership: boolean(),
  serverSideApply: boolean(),
  crds: CRDS_POLICY,
};

const INSTALL = object({
  ...ACTION_COMMON,
  remediation: object(REMEDIATION_COMMON),
  replace: boolean(),
  skipCRDs: boolean('Deprecated: use crds.'),
  createNamespace: boolean(),
});

const UPGRADE = object({
  ...ACTION_COMMON,
  remediation: object({ ...REMEDIATION_COMMON, strategy: enumOf(['rollback', 'uninstall']) }),
  force: boolean(),
  preserveValues: boolean(),
  cleanupOnFail: boolean(),
});

const SELECTOR = object({
  group: string(),
  version: string(),
  kind: string(),
  namespace: string(),
  name: string(),
  annotationSelector: string(),
  labelSelector: string(),
});

const HELM_RELEASE_SPEC = object(
  {
    chart: CHART_TEMPLATE,
    chartRef: CHART_REF,
    interval: duration('Interval at which to reconcile the Helm release.'),
    kubeConfig: object({ secretRef: secretKeyReference(), configMapRef: localReference() }),
    suspend: boolean('Suspend reconciliation (not of one already started).'),
    releaseName: string({ minLength: 1, maxLength: 53, description: 'Helm release name; defaults to [targetNamespace-]name.' }),
    targetNamespace: name(63),
    storageNamespace: name(63),
    dependsOn: list(object({ name: string(), namespace: string(), readyExpr: string() }, ['name']), {
      description: 'HelmReleases that must be Ready (for their current generation) before this one is reconciled.',
    }),
    timeout: duration('Time to wait for any individual Kubernetes operation; defaults to 5m0s.'),
    maxHistory: integer({ description: 'Number of Helm release revisions kept; 0 for no limit; defaults to 5.' }),
    serviceAccountName: name(),
    persistentClient: boolean(),
    driftDetection: object({
      mode: enumOf(['enabled', 'warn', 'disabled']),
      ignore: list(object({ paths: list(string()), target: SELECTOR }, ['paths'])),
    }),
    install: INSTALL,
    upgrade: UPGRADE,
    test: object({
      enable: boolean(),
      timeout: duration(),
      ignoreFailures: boolean(),
      filters: list(object({ name: name(), exclude: boolean() }, ['name'])),
    }),
    rollback: object({
      timeout: duration(),
      disableWait: boolean(),
      disableWaitForJobs: boolean(),
      disableHooks: boolean(),
      recreate: boolean(),
      force: boolean(),
      cleanupOnFail: boolean(),
      serverSideApply: boolean(),
    }),
    uninstall: object({
      timeout: duration(),
      disableHooks: boolean(),
      keepHistory: boolean(),
      disableWait: boolean(),
      deletionPropagation: enumOf(['background', 'foreground', 'orphan'], { default: 'background' }),
    }),
    valuesFrom: list(
      object(
        {
          kind: enumOf(['Secret', 'ConfigMap']),
          name: name(),
          valuesKey: string({ maxLength: 253, pattern: '^[\\-._a-zA-Z0-9]+$', description: 'Data key of the values; defaults to values.yaml.' }),
          targetPath: string({ maxLength: 250, pattern: '^([a-zA-Z0-9_\\-.\\\\\\/]|\\[[0-9]{1,5}\\])+$' }),
          optional: boolean(),
        },
        ['kind', 'name'],
      ),
      { description: 'ConfigMaps and Secrets whose values are merged in order, before spec.values.' },
    ),
    values: { 'x-kubernetes-preserve-unknown-fields': true, description: 'Helm values, merged last.' },
    postRenderers: list(
      object({
        kustomize: object({
          patches: list(object({ patch: string(), target: SELECTOR }, ['patch'])),
          images: list(object({ name: string(), newName: string(), newTag: string(), digest: string() }, ['name'])),
        }),
      }),
    ),
    commonMetadata: object({ labels: stringMap(), annotations: stringMap() }),
    healthCheckExprs: list(
      object({ apiVersion: string(), kind: string(), current: string(), inProgress: string(), failed: string() }, ['apiVersion', 'current', 'kind']),
    ),
    waitStrategy: object({ name: string() }, ['name']),
  },
  ['interval'],
  {
    description: 'The desired state of a Helm release.',
    'x-kubernetes-validations': [
      { rule: '(has(self.chart) && !has(self.chartRef)) || (!has(self.chart) && has(self.chartRef))', message: 'either chart or chartRef must be set' },
    ],
  },
);

// ---- source.toolkit.fluxcd.io/v1 -------------------------------------------------------

const SOURCE_PROVIDER = enumOf(['generic', 'aws', 'azure', 'gcp'], { default: 'generic' });
const ACCESS_FROM = object({ namespaceSelectors: list(object({ matchLabels: stringMap() })) }, ['namespaceSelectors']);

const HELM_REPOSITORY_SPEC = object(
  {
    url: string({ pattern: '^(http|https|oci)://.*$', description: 'URL of the Helm repository.' }),
    secretRef: localReference(),
    certSecretRef: localReference(),
    passCredentials: boolean(),
    interval: duration(),
    insecure: boolean(),
    timeout: duration(undefined, 'ms|s|m'),
    suspend: boolean(),
    accessFrom: ACCESS_FROM,
    type: enumOf(['default', 'oci']),
    provider: SOURCE_PROVIDER,
  },
  ['url'],
);

const HELM_CHART_SPEC = object(
  {
    chart: string({ description: 'Name or path of the chart in the source.' }),
    version: string({ default: '*' }),
    sourceRef: object({ apiVersion: string(), kind: enumOf(['HelmRepository', 'GitRepository', 'Bucket']), name: string() }, ['kind', 'name']),
    interval: duration(),
    reconcileStrategy: enumOf(['ChartVersion', 'Revision'], { default: 'ChartVersion' }),
    valuesFiles: list(string()),
    ignoreMissingValuesFiles: boolean(),
    suspend: boolean(),
    verify: object(
      {
        provider: enumOf(['cosign', 'notation'], { default: 'cosign' }),
        secretRef: localReference(),
        matchOIDCIdentity: list(object({ issuer: string(), subject: string() }, ['issuer', 'subject'])),
      },
      ['provider'],
    ),
    accessFrom: ACCESS_FROM,
  },
  ['chart', 'interval', 'sourceRef'],
);

const OCI_REPOSITORY_SPEC = object(
  {
    url: string({ pattern: '^oci://.*$' }),
    ref: object({ digest: string(), semver: string(), semverFilter: string(), tag: string() }),
    layerSelector: object({ mediaType: string(), operation: enumOf(['extract', 'copy']) }),
    provider: SOURCE_PROVIDER,
    secretRef: localReference(),
    verify: object({ provider: enumOf(['cosign', 'notation'], { default: 'cosign' }), secretRef: localReference() }, ['provider']),
    serviceAccountName: string(),
    certSecretRef: localReference(),
    proxySecretRef: localReference(),
    interval: duration(),
    timeout: duration(undefined, 'ms|s|m'),
    ignore: string(),
    insecure: boolean(),
    suspend: boolean(),
  },
  ['interval', 'url'],
);

const schemaWith = (spec: JsonObject): JsonObject => ({
  openAPIV3Schema: {
    type: 'object',
    properties: {
      apiVersion: string({ description: 'The versioned schema of this representation of an object.' }),
      kind: string({ description: 'The REST resource this object represents.' }),
      metadata: { type: 'object' },
      spec,
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  },
});

/** Older served versions: open (the fixture does not check them). */
const OPEN = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };

function crd(group: string, kind: string, plural: string, shortNames: string[], versions: Array<[string, JsonObject]>, columns: JsonObject[]): JsonObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plural}.${group}`,
      labels: { 'app.kubernetes.io/part-of': 'flux', 'app.kubernetes.io/component': group.split('.')[0]! + '-controller' },
    },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), shortNames },
      versions: versions.map(([versionName, schema], index) => ({
        name: versionName,
        served: true,
        storage: index === 0,
        subresources: { status: {} },
        additionalPrinterColumns: columns,
        schema,
      })),
    },
  };
}

export const FLUX_CRDS: JsonObject[] = [
  crd(
    'helm.toolkit.fluxcd.io',
    'HelmRelease',
    'helmreleases',
    ['hr'],
    [
      ['v2', schemaWith(HELM_RELEASE_SPEC)],
      ['v2beta2', OPEN],
    ],
    [AGE, READY, STATUS],
  ),
  crd(
    'source.toolkit.fluxcd.io',
    'HelmRepository',
    'helmrepositories',
    ['helmrepo'],
    [
      ['v1', schemaWith(HELM_REPOSITORY_SPEC)],
      ['v1beta2', OPEN],
    ],
    [{ name: 'URL', type: 'string', jsonPath: '.spec.url' }, AGE, READY, STATUS],
  ),
  crd(
    'source.toolkit.fluxcd.io',
    'HelmChart',
    'helmcharts',
    ['hc'],
    [
      ['v1', schemaWith(HELM_CHART_SPEC)],
      ['v1beta2', OPEN],
    ],
    [
      { name: 'Chart', type: 'string', jsonPath: '.spec.chart' },
      { name: 'Version', type: 'string', jsonPath: '.spec.version' },
      { name: 'Source Kind', type: 'string', jsonPath: '.spec.sourceRef.kind' },
      { name: 'Source Name', type: 'string', jsonPath: '.spec.sourceRef.name' },
      AGE,
      READY,
      STATUS,
    ],
  ),
  crd(
    'source.toolkit.fluxcd.io',
    'OCIRepository',
    'ocirepositories',
    ['ocirepo'],
    [
      ['v1', schemaWith(OCI_REPOSITORY_SPEC)],
      ['v1beta2', OPEN],
    ],
    [{ name: 'URL', type: 'string', jsonPath: '.spec.url' }, READY, STATUS, AGE],
  ),
];
