/**
 * TEST FIXTURE (dev cluster): the Flux CustomResourceDefinitions the fixture
 * stores at start — helm.toolkit.fluxcd.io HelmRelease and
 * source.toolkit.fluxcd.io HelmRepository, HelmChart, OCIRepository — with
 * Flux's names, short names, scopes, status subresources and printer
 * columns. Their schemas keep unknown fields: the fixture checks the fields
 * its Flux simulation reads, where it reads them.
 */
import type { JsonObject } from './patch.js';

const READY = { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' };
const STATUS = { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' };
const AGE = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

const openSchema = {
  openAPIV3Schema: {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  },
};

function crd(group: string, kind: string, plural: string, shortNames: string[], versions: string[], columns: JsonObject[]): JsonObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, labels: { 'app.kubernetes.io/part-of': 'flux', 'app.kubernetes.io/component': group.split('.')[0]! + '-controller' } },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), shortNames },
      versions: versions.map((name, index) => ({
        name,
        served: true,
        storage: index === 0,
        subresources: { status: {} },
        additionalPrinterColumns: columns,
        schema: openSchema,
      })),
    },
  };
}

export const FLUX_CRDS: JsonObject[] = [
  crd('helm.toolkit.fluxcd.io', 'HelmRelease', 'helmreleases', ['hr'], ['v2', 'v2beta2'], [AGE, READY, STATUS]),
  crd('source.toolkit.fluxcd.io', 'HelmRepository', 'helmrepositories', ['helmrepo'], ['v1', 'v1beta2'], [
    { name: 'URL', type: 'string', jsonPath: '.spec.url' },
    AGE,
    READY,
    STATUS,
  ]),
  crd('source.toolkit.fluxcd.io', 'HelmChart', 'helmcharts', ['hc'], ['v1', 'v1beta2'], [
    { name: 'Chart', type: 'string', jsonPath: '.spec.chart' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version' },
    { name: 'Source Kind', type: 'string', jsonPath: '.spec.sourceRef.kind' },
    { name: 'Source Name', type: 'string', jsonPath: '.spec.sourceRef.name' },
    AGE,
    READY,
    STATUS,
  ]),
  crd('source.toolkit.fluxcd.io', 'OCIRepository', 'ocirepositories', ['ocirepo'], ['v1', 'v1beta2'], [
    { name: 'URL', type: 'string', jsonPath: '.spec.url' },
    READY,
    STATUS,
    AGE,
  ]),
];
