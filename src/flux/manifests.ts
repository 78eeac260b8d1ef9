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
}

export interface HelmReleaseOptions {
  readonly chartVersion: string;
  readonly repository: string;
}

/** What the generator reads of a release (an `App` release from src/app fits). */
export interface FluxRelease {
  readonly name: string;
  readonly chart: string;
  readonly namespace: string;
  readonly releaseName: string;
  readonly group?: string;
  readonly dependsOn: readonly string[];
  readonly timeout: string;
  readonly interval: string;
  readonly install: ReleaseActionFlags;
  readonly upgrade: ReleaseActionFlags;
  readonly labels: Readonly<Record<string, string>>;
  /** HelmRelease spec fields flotilla does not model, passed through as written. */
  readonly helmReleaseSpec: Readonly<Record<string, unknown>>;
}

/** install / upgrade as a release sets them: the two flags always, other Flux fields passed through. */
export type ReleaseActionFlags = HelmReleaseAction & { readonly disableHooks: boolean; readonly disableWait: boolean };

function actionFlags(flags: ReleaseActionFlags): HelmReleaseAction {
  const { disableHooks, disableWait, remediation, ...others } = flags;
  return { disableHooks, disableWait, ...others, ...(remediation ? { remediation: { ...remediation } } : {}) };
}

export function helmReleaseManifest(release: FluxRelease, options: HelmReleaseOptions): HelmRelease {
  const spec: { -readonly [K in keyof HelmReleaseSpec]: HelmReleaseSpec[K] } = {
    releaseName: release.releaseName,
    chart: {
      spec: {
        chart: release.chart,
        version: options.chartVersion,
        sourceRef: { kind: 'HelmRepository', name: options.repository },
      },
    },
    interval: release.interval,
    timeout: release.timeout,
    test: { enable: false },
    ...release.helmReleaseSpec,
    install: actionFlags(release.install),
    upgrade: actionFlags(release.upgrade),
  };
  if (release.dependsOn.length > 0) spec.dependsOn = release.dependsOn.map((name) => ({ name, namespace: release.namespace }));
  // Flux merges valuesFrom in order, later wins: static first, then system.
  spec.valuesFrom = overridesValuesFrom(release.name);
  return {
    apiVersion: HELM_RELEASE_API,
    kind: 'HelmRelease',
    metadata: { name: release.name, labels: { ...(release.group ? { chart_group: release.group } : {}), ...release.labels } },
    spec,
  };
}

export function helmRepositoryManifest(repo: HelmRepositorySpec): Record<string, unknown> {
  return {
    apiVersion: SOURCE_API,
    kind: 'HelmRepository',
    metadata: { name: repo.name, namespace: repo.namespace },
    spec: { url: repo.url, interval: repo.interval },
  };
}

export const toYaml = dumpYaml;

export interface FluxTreeInput {
  /** Every release of the app, in apply order (disabled ones are removed at apply time by the kustomize operator). */
  readonly releases: readonly FluxRelease[];
  readonly chartVersions: ReadonlyMap<string, string>;
  readonly repository: HelmRepositorySpec;
  /** Static overrides file text per release name, as written by the author. */
  readonly staticOverrides: ReadonlyMap<string, string>;
  /** Namespace of the top kustomization. */
  readonly namespace: string;
  /** Writes a manifest as YAML; default {@link toYaml}. A build passes one that remembers earlier results (src/build/manifest-cache.ts). */
  readonly dump?: (value: unknown) => string;
}

/** The files of fluxcd-manifests/, paths relative to it, in a fixed order. */
export function fluxManifestTree(input: FluxTreeInput): Map<string, string> {
  const files = new Map<string, string>();
  const yaml = input.dump ?? toYaml;
  files.set(FLUX_TREE.kustomization, yaml({ apiVersion: KUSTOMIZE_API, kind: 'Kustomization', namespace: input.namespace, resources: [FLUX_TREE.base, ...input.releases.map((r) => r.name)] }));
  files.set(fluxTreePath(FLUX_TREE.base, FLUX_TREE.kustomization), yaml({ apiVersion: KUSTOMIZE_API, kind: 'Kustomization', resources: [FLUX_TREE.helmRepository] }));
  files.set(fluxTreePath(FLUX_TREE.base, FLUX_TREE.helmRepository), yaml(helmRepositoryManifest(input.repository)));
  for (const release of input.releases) {
    const version = input.chartVersions.get(release.chart);
    if (version === undefined) throw new Error(`no packaged version for chart ${release.chart}`);
    files.set(fluxTreePath(release.name, FLUX_TREE.helmRelease), yaml(helmReleaseManifest(release, { chartVersion: version, repository: input.repository.name })));
    files.set(
      fluxTreePath(release.name, FLUX_TREE.kustomization),
      yaml({
        apiVersion: KUSTOMIZE_API,
        kind: 'Kustomization',
        namespace: release.namespace,
        resources: [FLUX_TREE.helmRelease],
        secretGenerator: OVERRIDES_KINDS.map((kind) => ({ name: overridesSecretName(release.name, kind), files: [overridesValuesKey(release.name, kind)] })),
        generatorOptions: { disableNameSuffixHash: true },
      }),
    );
    files.set(fluxTreePath(release.name, overridesValuesKey(release.name, 'static')), input.staticOverrides.get(release.name) ?? '');
    files.set(fluxTreePath(release.name, overridesValuesKey(release.name, 'system')), '');
  }
  return files;
}
