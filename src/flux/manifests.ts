/**
 * The fluxcd-manifests tree in StarlingX's layout:
 *   kustomization.yaml            namespace, resources: base, then one folder per release
 *   base/kustomization.yaml       resources: [helmrepository.yaml]
 *   base/helmrepository.yaml      source.toolkit.fluxcd.io/v1 HelmRepository
 *   <release>/helmrelease.yaml    helm.toolkit.fluxcd.io/v2 HelmRelease
 *   <release>/kustomization.yaml  secretGenerator for the two overrides Secrets, no name hash
 *   <release>/<release>-static-overrides.yaml   static overrides as written (comments kept)
 *   <release>/<release>-system-overrides.yaml   empty; flotilla fills it at apply time
 */
import { dumpYaml } from '../document/index.js';
import type { Release } from '../app/index.js';
import { HELM_RELEASE_API, SOURCE_API } from './schema.js';

export const KUSTOMIZE_API = 'kustomize.config.k8s.io/v1beta1';

export interface HelmRepositorySpec {
  readonly name: string;
  readonly url: string;
  readonly interval: string;
  readonly namespace: string;
  /** HelmRepository spec fields beyond url and interval (secretRef, timeout, type …), passed through. */
  readonly spec?: Readonly<Record<string, unknown>>;
  /** HelmRepository metadata labels and annotations. */
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface HelmReleaseOptions {
  readonly chartVersion: string;
  readonly repository: string;
  /** Namespace of the repository, named in sourceRef when the release lives in another one. */
  readonly repositoryNamespace?: string;
}

export const staticOverridesName = (release: Release): string => `${release.name}-static-overrides`;
export const systemOverridesName = (release: Release): string => `${release.name}-system-overrides`;

export interface HelmReleaseManifest {
  apiVersion: string;
  kind: 'HelmRelease';
  metadata: { name: string; namespace?: string; labels: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

function actionFlags(flags: Release['install']): Record<string, unknown> {
  const { disableHooks, disableWait, remediation, ...others } = flags;
  return { disableHooks, disableWait, ...others, ...(remediation ? { remediation: { ...(remediation as object) } } : {}) };
}

const isMap = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

export function helmReleaseManifest(release: Release, options: HelmReleaseOptions): HelmReleaseManifest {
  // helmReleaseSpec may add chart.metadata and chart.spec fields (valuesFiles …) next to the generated ones.
  const { chart: chartExtras, ...passThrough } = release.helmReleaseSpec;
  const extras = isMap(chartExtras) ? chartExtras : {};
  const sourceRef = {
    kind: 'HelmRepository',
    name: options.repository,
    ...(options.repositoryNamespace !== undefined && options.repositoryNamespace !== release.namespace ? { namespace: options.repositoryNamespace } : {}),
  };
  const spec: Record<string, unknown> = {
    releaseName: release.releaseName,
    chart: {
      ...(extras.metadata !== undefined ? { metadata: extras.metadata } : {}),
      spec: { chart: release.chart, version: options.chartVersion, sourceRef, ...(isMap(extras.spec) ? extras.spec : {}) },
    },
    interval: release.interval,
    timeout: release.timeout,
    test: { enable: false },
    ...passThrough,
    install: actionFlags(release.install),
    upgrade: actionFlags(release.upgrade),
  };
  // Each entry names its dependency's own namespace (Flux would assume the depending release's).
  if (release.dependencies.length > 0) spec.dependsOn = release.dependencies.map(({ name, namespace }) => ({ name, namespace }));
  // Flux merges valuesFrom in order, later wins: static first, then system.
  spec.valuesFrom = [staticOverridesName(release), systemOverridesName(release)].map((name) => ({ kind: 'Secret', name, valuesKey: `${name}.yaml` }));
  const annotations = Object.keys(release.annotations).length > 0 ? { annotations: { ...release.annotations } } : {};
  return {
    apiVersion: HELM_RELEASE_API,
    kind: 'HelmRelease',
    metadata: { name: release.name, labels: { ...(release.group ? { chart_group: release.group } : {}), ...release.labels }, ...annotations },
    spec,
  };
}

export function helmRepositoryManifest(repo: HelmRepositorySpec): Record<string, unknown> {
  const labels = repo.labels && Object.keys(repo.labels).length > 0 ? { labels: { ...repo.labels } } : {};
  const annotations = repo.annotations && Object.keys(repo.annotations).length > 0 ? { annotations: { ...repo.annotations } } : {};
  return {
    apiVersion: SOURCE_API,
    kind: 'HelmRepository',
    metadata: { name: repo.name, namespace: repo.namespace, ...labels, ...annotations },
    spec: { url: repo.url, interval: repo.interval, ...repo.spec },
  };
}

export const toYaml = dumpYaml;

export interface FluxTreeInput {
  /** Every release of the app, in apply order (disabled ones are removed at apply time by the kustomize operator). */
  readonly releases: readonly Release[];
  readonly chartVersions: ReadonlyMap<string, string>;
  readonly repository: HelmRepositorySpec;
  /** Static overrides file text per release name, as written by the author. */
  readonly staticOverrides: ReadonlyMap<string, string>;
  /** Namespace of the top kustomization: the app's, where the HelmRepository lives. */
  readonly namespace: string;
  /** Fields of the top and base kustomizations beyond the generated ones, passed through. */
  readonly kustomization?: Readonly<Record<string, unknown>>;
  readonly baseKustomization?: Readonly<Record<string, unknown>>;
}

/**
 * The files of fluxcd-manifests/, paths relative to it, in a fixed order.
 *
 * kustomize's `namespace` in the top kustomization moves every resource below
 * it into that namespace. When every release lives in the app's namespace the
 * top kustomization sets it (StarlingX's layout); when one does not, the top
 * sets none, and base/ and each release folder set their own, so a release
 * and its two Secrets land in the release's namespace.
 */
export function fluxManifestTree(input: FluxTreeInput): Map<string, string> {
  const files = new Map<string, string>();
  const oneNamespace = input.releases.every((r) => r.namespace === input.namespace);
  const kustomization = (fields: Record<string, unknown>, extras: Readonly<Record<string, unknown>> | undefined) =>
    toYaml({ apiVersion: KUSTOMIZE_API, kind: 'Kustomization', ...fields, ...extras });
  files.set(
    'kustomization.yaml',
    kustomization({ ...(oneNamespace ? { namespace: input.namespace } : {}), resources: ['base', ...input.releases.map((r) => r.name)] }, input.kustomization),
  );
  files.set('base/kustomization.yaml', kustomization({ ...(oneNamespace ? {} : { namespace: input.namespace }), resources: ['helmrepository.yaml'] }, input.baseKustomization));
  files.set('base/helmrepository.yaml', toYaml(helmRepositoryManifest(input.repository)));
  for (const release of input.releases) {
    const version = input.chartVersions.get(release.chart);
    if (version === undefined) throw new Error(`no packaged version for chart ${release.chart}`);
    files.set(
      `${release.name}/helmrelease.yaml`,
      toYaml(helmReleaseManifest(release, { chartVersion: version, repository: input.repository.name, repositoryNamespace: input.namespace })),
    );
    files.set(
      `${release.name}/kustomization.yaml`,
      kustomization(
        {
          namespace: release.namespace,
          resources: ['helmrelease.yaml'],
          secretGenerator: [staticOverridesName(release), systemOverridesName(release)].map((name) => ({ name, files: [`${name}.yaml`] })),
          generatorOptions: { disableNameSuffixHash: true },
        },
        release.kustomization,
      ),
    );
    files.set(`${release.name}/${staticOverridesName(release)}.yaml`, input.staticOverrides.get(release.name) ?? '');
    files.set(`${release.name}/${systemOverridesName(release)}.yaml`, '');
  }
  return files;
}
