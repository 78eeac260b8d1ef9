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
import { dumpYaml } from '../yaml/index.js';
import { HELM_RELEASE_API, type HelmRelease, type HelmReleaseAction, type HelmReleaseSpec } from './helmrelease.js';
import { overridesSecretName, overridesValuesFrom, overridesValuesKey, OVERRIDES_KINDS } from './overrides.js';

/** File names inside fluxcd-manifests/ (the tree's layout above). */
export const FLUX_TREE = {
  kustomization: 'kustomization.yaml',
  base: 'base',
  helmRepository: 'helmrepository.yaml',
  helmRelease: 'helmrelease.yaml',
} as const;

/** A file of one folder of the tree (`base`, or a release's folder). */
export function fluxTreePath(folder: string, file: string): string {
  return `${folder}/${file}`;
}

export const SOURCE_API = 'source.toolkit.fluxcd.io/v1';
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

/** One `dependsOn` entry of a release, with the dependency's own namespace. */
export interface FluxDependency {
  readonly name: string;
  readonly namespace: string;
  /** A HelmRelease the app does not deploy (another app's): Flux waits for it, flotilla does not. */
  readonly external: boolean;
}

/** What the generator reads of a release (an `App` release from src/app fits). */
export interface FluxRelease {
  readonly name: string;
  readonly chart: string;
  readonly namespace: string;
  readonly releaseName: string;
  readonly group?: string;
  /** Every `dependsOn` entry as the HelmRelease carries it, external ones included, in order. */
  readonly dependencies: readonly FluxDependency[];
  readonly timeout: string;
  readonly interval: string;
  readonly install: ReleaseActionFlags;
  readonly upgrade: ReleaseActionFlags;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** HelmRelease spec fields flotilla does not model, passed through as written (chart.metadata and chart.spec fields too). */
  readonly helmReleaseSpec: Readonly<Record<string, unknown>>;
  /** Fields of the release folder's kustomization beyond the generated ones, passed through. */
  readonly kustomization: Readonly<Record<string, unknown>>;
}

/** install / upgrade as a release sets them: the two flags always, other Flux fields passed through. */
export type ReleaseActionFlags = HelmReleaseAction & { readonly disableHooks: boolean; readonly disableWait: boolean };

function actionFlags(flags: ReleaseActionFlags): HelmReleaseAction {
  const { disableHooks, disableWait, remediation, ...others } = flags;
  return { disableHooks, disableWait, ...others, ...(remediation ? { remediation: { ...remediation } } : {}) };
}

const isMap = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

export function helmReleaseManifest(release: FluxRelease, options: HelmReleaseOptions): HelmRelease {
  // helmReleaseSpec may add chart.metadata and chart.spec fields (valuesFiles …) next to the generated ones.
  const { chart: chartExtras, ...passThrough } = release.helmReleaseSpec;
  const extras = isMap(chartExtras) ? chartExtras : {};
  const sourceRef = {
    kind: 'HelmRepository',
    name: options.repository,
    ...(options.repositoryNamespace !== undefined && options.repositoryNamespace !== release.namespace ? { namespace: options.repositoryNamespace } : {}),
  };
  const spec: { -readonly [K in keyof HelmReleaseSpec]: HelmReleaseSpec[K] } = {
    releaseName: release.releaseName,
    chart: {
      ...(isMap(extras.metadata) ? { metadata: extras.metadata } : {}),
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
  spec.valuesFrom = overridesValuesFrom(release.name);
  const annotations = Object.keys(release.annotations).length > 0 ? { annotations: { ...release.annotations } } : {};
  return {
    apiVersion: HELM_RELEASE_API,
    kind: 'HelmRelease',
    metadata: { name: release.name, labels: { ...(release.group ? { chart_group: release.group } : {}), ...release.labels }, ...annotations },
    spec,
  };
}

function helmRepositoryManifest(repo: HelmRepositorySpec): Record<string, unknown> {
  const labels = repo.labels && Object.keys(repo.labels).length > 0 ? { labels: { ...repo.labels } } : {};
  const annotations = repo.annotations && Object.keys(repo.annotations).length > 0 ? { annotations: { ...repo.annotations } } : {};
  return {
    apiVersion: SOURCE_API,
    kind: 'HelmRepository',
    metadata: { name: repo.name, namespace: repo.namespace, ...labels, ...annotations },
    spec: { url: repo.url, interval: repo.interval, ...repo.spec },
  };
}

/** Where the charts were delivered, as a HelmRepository names it. */
export interface ChartDelivery {
  readonly url: string;
  readonly type: 'oci' | 'default';
  /** Served over plain HTTP (Flux's `insecure`). */
  readonly plainHttp?: boolean;
}

/**
 * A HelmRepository's spec pointed at `source`: its url, `type: oci` for an
 * OCI registry and `insecure` for plain HTTP, as Flux reads them; the other
 * fields (interval, secretRef, timeout …) kept.
 */
export function helmRepositorySpecFor(spec: Readonly<Record<string, unknown>> | undefined, source: ChartDelivery): Record<string, unknown> {
  const { type: _type, insecure: _insecure, ...rest } = spec ?? {};
  return { ...rest, url: source.url, ...(source.type === 'oci' ? { type: 'oci' } : {}), ...(source.plainHttp ? { insecure: true } : {}) };
}

const toYaml = dumpYaml;

export interface FluxTreeInput {
  /** Every release of the app, in apply order (disabled ones are removed at apply time by the kustomize operator). */
  readonly releases: readonly FluxRelease[];
  readonly chartVersions: ReadonlyMap<string, string>;
  readonly repository: HelmRepositorySpec;
  /** Static overrides file text per release name, as written by the author. */
  readonly staticOverrides: ReadonlyMap<string, string>;
  /** Namespace of the top kustomization: the app's, where the HelmRepository lives. */
  readonly namespace: string;
  /** Writes a manifest as YAML; default {@link toYaml}. A build passes one that remembers earlier results (src/build/manifest-cache.ts). */
  readonly dump?: (value: unknown) => string;
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
  const yaml = input.dump ?? toYaml;
  const oneNamespace = input.releases.every((r) => r.namespace === input.namespace);
  const kustomization = (fields: Record<string, unknown>, extras: Readonly<Record<string, unknown>> | undefined) =>
    yaml({ apiVersion: KUSTOMIZE_API, kind: 'Kustomization', ...fields, ...extras });
  files.set(
    FLUX_TREE.kustomization,
    kustomization(
      { ...(oneNamespace ? { namespace: input.namespace } : {}), resources: [FLUX_TREE.base, ...input.releases.map((r) => r.name)] },
      input.kustomization,
    ),
  );
  files.set(
    fluxTreePath(FLUX_TREE.base, FLUX_TREE.kustomization),
    kustomization({ ...(oneNamespace ? {} : { namespace: input.namespace }), resources: [FLUX_TREE.helmRepository] }, input.baseKustomization),
  );
  files.set(fluxTreePath(FLUX_TREE.base, FLUX_TREE.helmRepository), yaml(helmRepositoryManifest(input.repository)));
  for (const release of input.releases) {
    const version = input.chartVersions.get(release.chart);
    if (version === undefined) throw new Error(`no packaged version for chart ${release.chart}`);
    files.set(
      fluxTreePath(release.name, FLUX_TREE.helmRelease),
      yaml(helmReleaseManifest(release, { chartVersion: version, repository: input.repository.name, repositoryNamespace: input.namespace })),
    );
    // Extra resources (files the app ships in fluxcd/manifests/<release>/) follow the HelmRelease.
    const { resources: extraResources, ...extras } = release.kustomization;
    files.set(
      fluxTreePath(release.name, FLUX_TREE.kustomization),
      kustomization(
        {
          namespace: release.namespace,
          resources: [FLUX_TREE.helmRelease, ...(Array.isArray(extraResources) ? (extraResources as string[]) : [])],
          secretGenerator: OVERRIDES_KINDS.map((kind) => ({ name: overridesSecretName(release.name, kind), files: [overridesValuesKey(release.name, kind)] })),
          generatorOptions: { disableNameSuffixHash: true },
        },
        extras,
      ),
    );
    files.set(fluxTreePath(release.name, overridesValuesKey(release.name, 'static')), input.staticOverrides.get(release.name) ?? '');
    files.set(fluxTreePath(release.name, overridesValuesKey(release.name, 'system')), '');
  }
  return files;
}
