/**
 * TEST FIXTURE (dev cluster): the Flux CustomResourceDefinitions the fixture
 * stores at start — helm.toolkit.fluxcd.io HelmRelease and
 * source.toolkit.fluxcd.io HelmRepository, HelmChart, OCIRepository — with
 * Flux's names, short names, scopes, status subresources and printer
 * columns. Their schemas declare the fields of the top levels of each spec
 * (HelmRelease: spec, chart.spec, install, upgrade), so an unknown field is
 * refused under fieldValidation=Strict (kubectl's default) and dropped
 * otherwise, as on a cluster running Flux; deeper levels are left open. They
 * also carry Flux's required fields, duration and URL patterns, and the rule
 * that a HelmRelease has exactly one of chart and chartRef.
 */
import type { JsonObject } from './patch.js';

const READY = { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' };
const STATUS = { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' };
const AGE = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

const open = { 'x-kubernetes-preserve-unknown-fields': true };
const openObject = { type: 'object', ...open };

/** An object declaring its fields; each is left open below unless `nested` details it. */
const declared = (fields: string[], nested: Record<string, JsonObject> = {}, checks: JsonObject = {}): JsonObject => ({
  type: 'object',
  properties: Object.fromEntries(fields.map((f) => [f, nested[f] ?? openObject])),
  ...checks,
});

/** Flux's duration pattern (interval, timeout). */
const DURATION = { type: 'string', pattern: '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$' };
const oneOf = (a: string, b: string) => ({
  'x-kubernetes-validations': [{ rule: `(has(self.${a}) && !has(self.${b})) || (!has(self.${a}) && has(self.${b}))`, message: `either ${a} or ${b} must be set` }],
});

const schemaWith = (spec: JsonObject) => ({
  openAPIV3Schema: {
    type: 'object',
    properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec, status: openObject },
  },
});

const INSTALL_AND_UPGRADE = ['crds', 'disableHooks', 'disableOpenAPIValidation', 'disableSchemaValidation', 'disableTakeOwnership', 'disableWait', 'disableWaitForJobs', 'remediation', 'serverSideApply', 'strategy', 'timeout'];

/** helm-controller v1.5's HelmRelease v2 spec, with install and upgrade, which are different structs. */
const HELM_RELEASE_V2 = schemaWith(
  declared(
    ['chart', 'chartRef', 'interval', 'kubeConfig', 'suspend', 'releaseName', 'targetNamespace', 'storageNamespace', 'dependsOn', 'timeout', 'maxHistory', 'serviceAccountName', 'persistentClient', 'driftDetection', 'install', 'upgrade', 'test', 'rollback', 'uninstall', 'valuesFrom', 'values', 'postRenderers', 'commonMetadata', 'healthCheckExprs', 'waitStrategy'],
    {
      chart: declared(['metadata', 'spec'], { spec: declared(['chart', 'version', 'sourceRef', 'interval', 'reconcileStrategy', 'valuesFiles', 'valuesFile', 'ignoreMissingValuesFiles', 'verify'], { interval: DURATION }, { required: ['chart', 'sourceRef'] }) }, { required: ['spec'] }),
      interval: DURATION,
      timeout: DURATION,
      install: declared([...INSTALL_AND_UPGRADE, 'createNamespace', 'replace', 'skipCRDs'], { timeout: DURATION }),
      upgrade: declared([...INSTALL_AND_UPGRADE, 'cleanupOnFail', 'force', 'preserveValues'], { timeout: DURATION }),
    },
    { required: ['interval'], ...oneOf('chart', 'chartRef') },
  ),
);

const HELM_REPOSITORY_V1 = schemaWith(
  declared(['url', 'secretRef', 'certSecretRef', 'passCredentials', 'interval', 'insecure', 'timeout', 'suspend', 'accessFrom', 'type', 'provider'], { url: { type: 'string', pattern: '^(http|https|oci)://.*$' }, interval: DURATION, timeout: DURATION }, { required: ['url'] }),
);
const HELM_CHART_V1 = schemaWith(declared(['chart', 'version', 'sourceRef', 'interval', 'reconcileStrategy', 'valuesFiles', 'ignoreMissingValuesFiles', 'suspend', 'verify', 'accessFrom']));
const OCI_REPOSITORY_V1 = schemaWith(
  declared(['url', 'ref', 'layerSelector', 'provider', 'secretRef', 'verify', 'serviceAccountName', 'certSecretRef', 'proxySecretRef', 'interval', 'timeout', 'ignore', 'insecure', 'suspend'], { url: { type: 'string', pattern: '^oci://.*$' }, interval: DURATION, timeout: DURATION }, { required: ['url'] }),
);
/** Older served versions: open (the fixture does not check them). */
const OPEN = schemaWith(openObject);

function crd(group: string, kind: string, plural: string, shortNames: string[], versions: Array<[string, JsonObject]>, columns: JsonObject[]): JsonObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, labels: { 'app.kubernetes.io/part-of': 'flux', 'app.kubernetes.io/component': group.split('.')[0]! + '-controller' } },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), shortNames },
      versions: versions.map(([name, schema], index) => ({
        name,
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
  crd('helm.toolkit.fluxcd.io', 'HelmRelease', 'helmreleases', ['hr'], [['v2', HELM_RELEASE_V2], ['v2beta2', OPEN]], [AGE, READY, STATUS]),
  crd('source.toolkit.fluxcd.io', 'HelmRepository', 'helmrepositories', ['helmrepo'], [['v1', HELM_REPOSITORY_V1], ['v1beta2', OPEN]], [
    { name: 'URL', type: 'string', jsonPath: '.spec.url' },
    AGE,
    READY,
    STATUS,
  ]),
  crd('source.toolkit.fluxcd.io', 'HelmChart', 'helmcharts', ['hc'], [['v1', HELM_CHART_V1], ['v1beta2', OPEN]], [
    { name: 'Chart', type: 'string', jsonPath: '.spec.chart' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version' },
    { name: 'Source Kind', type: 'string', jsonPath: '.spec.sourceRef.kind' },
    { name: 'Source Name', type: 'string', jsonPath: '.spec.sourceRef.name' },
    AGE,
    READY,
    STATUS,
  ]),
  crd('source.toolkit.fluxcd.io', 'OCIRepository', 'ocirepositories', ['ocirepo'], [['v1', OCI_REPOSITORY_V1], ['v1beta2', OPEN]], [
    { name: 'URL', type: 'string', jsonPath: '.spec.url' },
    READY,
    STATUS,
    AGE,
  ]),
];
