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

export const HELM_RELEASE_API = 'helm.toolkit.fluxcd.io/v2';
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

export const staticOverridesName = (release: Release): string => `${release.name}-static-overrides`;
export const systemOverridesName = (release: Release): string => `${release.name}-system-overrides`;

export interface HelmReleaseManifest {
  apiVersion: string;
  kind: 'HelmRelease';
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  spec: Record<string, unknown>;
}

function actionFlags(flags: Release['install']): Record<string, unknown> {
  const { disableHooks, disableWait, remediation, ...others } = flags;
  return { disableHooks, disableWait, ...others, ...(remediation ? { remediation: { ...remediation } } : {}) };
}

export function helmReleaseManifest(release: Release, options: HelmReleaseOptions): HelmReleaseManifest {
  const spec: Record<string, unknown> = {
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
  spec.valuesFrom = [staticOverridesName(release), systemOverridesName(release)].map((name) => ({ kind: 'Secret', name, valuesKey: `${name}.yaml` }));
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
  readonly releases: readonly Release[];
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
  files.set('kustomization.yaml', yaml({ apiVersion: KUSTOMIZE_API, kind: 'Kustomization', namespace: input.namespace, resources: ['base', ...input.releases.map((r) => r.name)] }));
  files.set('base/kustomization.yaml', yaml({ apiVersion: KUSTOMIZE_API, kind: 'Kustomization', resources: ['helmrepository.yaml'] }));
  files.set('base/helmrepository.yaml', yaml(helmRepositoryManifest(input.repository)));
  for (const release of input.releases) {
    const version = input.chartVersions.get(release.chart);
    if (version === undefined) throw new Error(`no packaged version for chart ${release.chart}`);
    files.set(`${release.name}/helmrelease.yaml`, yaml(helmReleaseManifest(release, { chartVersion: version, repository: input.repository.name })));
    files.set(
      `${release.name}/kustomization.yaml`,
      yaml({
        apiVersion: KUSTOMIZE_API,
        kind: 'Kustomization',
        namespace: release.namespace,
        resources: ['helmrelease.yaml'],
        secretGenerator: [staticOverridesName(release), systemOverridesName(release)].map((name) => ({ name, files: [`${name}.yaml`] })),
        generatorOptions: { disableNameSuffixHash: true },
      }),
    );
    files.set(`${release.name}/${staticOverridesName(release)}.yaml`, input.staticOverrides.get(release.name) ?? '');
    files.set(`${release.name}/${systemOverridesName(release)}.yaml`, '');
  }
  return files;
}
