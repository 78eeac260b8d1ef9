/**
 * The objects one apply writes, made the way StarlingX makes them: the
 * tarball's fluxcd-manifests/ with the top kustomization's resources cut
 * down to the plan, built by the real `kubectl kustomize` (or kept from
 * its last build of the same files, kustomize.ts); then the computed
 * system overrides put into the Secrets it generated (in memory: they hold
 * passwords, and the folder kustomize reads is on disk), the
 * HelmRepository pointed at the repository the charts were delivered to,
 * every object labelled as flotilla's, and every HelmRelease stamped with
 * this apply's reconcile request.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Release } from '../app/index.js';
import { dumpYaml, parseYamlStream, parseYamlValue } from '../yaml/index.js';
import { bundlePath, MANIFESTS_DIR } from '../tarball/index.js';
import { FLUX_TREE, HELM_RELEASE_API, helmRepositorySpecFor, OVERRIDES_KINDS, overridesSecretName, overridesValuesKey } from '../flux/index.js';
import { APP_LABEL, MANAGED_BY, type KubeObject } from '../kube/index.js';
import type { ReleaseValues } from '../values/index.js';
import { formatBytes } from '../diagnostics/index.js';
import { KUBE_DATA_MAX_BYTES } from '../names/index.js';
import { LifecycleError, ObjectTooLargeError } from './errors.js';
import { kustomizeBuild } from './kustomize.js';
import { kustomizationResources, type ApplyPlan } from './plan.js';
import { REQUESTED_AT, RESET_AT } from './readiness.js';
import type { ChartRepository } from './record.js';

export interface ApplySet {
  /** Namespaces the objects live in: applied first. */
  readonly namespaces: readonly KubeObject[];
  /** Sources, overrides Secrets and HelmReleases, in kustomize's order. */
  readonly objects: readonly KubeObject[];
}

export interface RenderInput {
  readonly appName: string;
  /** The tarball's fluxcd-manifests/, written out (changed in place: it is a private copy). */
  readonly manifests: string;
  readonly releases: readonly Release[];
  readonly plan: ApplyPlan;
  readonly values: ReadonlyMap<string, ReleaseValues>;
  readonly repository: ChartRepository;
  /** The reconcile request every HelmRelease is stamped with. */
  readonly token: string;
  /** sha256 of the stored payload the manifests were written from, as its read was checked (the kept kustomize build's key). */
  readonly payloadDigest: string | undefined;
  /** Where notes on a kept kustomize build not used go (--debug). */
  readonly notes?: (message: string) => void;
  /** HelmRelease name → the annotations of the target's service defaults (the cluster's target may differ from the one the tarball was built for). */
  readonly annotations: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

export const isHelmRelease = (o: Pick<KubeObject, 'apiVersion' | 'kind'>): boolean => o.kind === 'HelmRelease' && o.apiVersion === HELM_RELEASE_API;

export async function renderApplySet(input: RenderInput): Promise<ApplySet> {
  // The system overrides hold generated and user-set passwords: they never go
  // through the disk. kustomize builds the app's own (secret-free) tree, where
  // each release's system overrides file is the empty one the tarball ships,
  // and the values are put into the Secret it generated, here in memory.
  const systemOverrides = new Map(
    input.plan.releases.map((release) => {
      const values = input.values.get(release.name);
      if (!values) throw new LifecycleError(`no values computed for release ${release.name}`);
      return [overridesValuesKey(release.name, 'system'), Buffer.from(dumpYaml(values.systemOverrides)).toString('base64')] as const;
    }),
  );
  const topFile = join(input.manifests, FLUX_TREE.kustomization);
  const topLabel = bundlePath(MANIFESTS_DIR, FLUX_TREE.kustomization);
  const top = parseYamlValue(await readFile(topFile, 'utf8'), topLabel) as { resources?: unknown[] } | undefined;
  if (!top || !Array.isArray(top.resources)) throw new LifecycleError(`the stored ${topLabel} has no resources list`);
  const resources = kustomizationResources(
    top.resources.map(String),
    input.releases.map((r) => r.name),
    input.plan,
  );
  const cutTop = dumpYaml({ ...top, resources });
  await writeFile(topFile, cutTop);

  const stdout = await kustomizeBuild(input.manifests, {
    appName: input.appName,
    madeFrom: input.payloadDigest && JSON.stringify({ payload: input.payloadDigest, [FLUX_TREE.kustomization]: cutTop }),
    ...(input.notes ? { notes: input.notes } : {}),
  });
  const labels = { ...MANAGED_BY, [APP_LABEL]: input.appName };
  const objects: KubeObject[] = [];
  const namespaces = new Set<string>();
  const filled = new Set<string>();
  const withSystemOverrides = (data: Record<string, string> | undefined, values: ReadonlyMap<string, string>) => {
    if (!data) return undefined;
    return Object.fromEntries(
      Object.entries(data).map(([key, value]) => {
        const own = values.get(key);
        if (own === undefined) return [key, value];
        filled.add(key);
        return [key, own];
      }),
    );
  };
  for (const doc of parseYamlStream(stdout, 'kubectl kustomize output')) {
    if (doc === null || typeof doc !== 'object') continue;
    const object = doc as KubeObject & { spec?: Record<string, unknown> };
    const metadata = {
      ...object.metadata,
      labels: { ...object.metadata.labels, ...labels },
      ...(isHelmRelease(object)
        ? {
            annotations: {
              ...object.metadata.annotations,
              ...input.annotations.get(object.metadata.name),
              [REQUESTED_AT]: input.token,
              [RESET_AT]: input.token,
            },
          }
        : {}),
    };
    let spec = object.spec;
    if (object.kind === 'HelmRepository') spec = helmRepositorySpecFor(spec, input.repository);
    if (object.kind === 'Namespace') {
      namespaces.add(object.metadata.name);
      continue;
    }
    if (object.metadata.namespace) namespaces.add(object.metadata.namespace);
    const data = object.kind === 'Secret' ? valuesData(withSystemOverrides(unwrapBase64(object.data), systemOverrides)) : undefined;
    objects.push({ ...object, metadata, ...(spec ? { spec } : {}), ...(data ? { data } : {}) });
  }
  const missing = [...systemOverrides.keys()].filter((key) => !filled.has(key));
  if (missing.length > 0)
    throw new LifecycleError(`the stored ${MANIFESTS_DIR}/ generates no Secret holding ${missing.join(', ')}: its release kustomizations were changed`);
  refuseOversized(objects, input.releases);
  return {
    namespaces: [...namespaces].sort().map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { ...MANAGED_BY } } })),
    objects,
  };
}

/**
 * The bytes of a Secret's or a ConfigMap's data as the API server counts
 * them: base64 values decoded (a Secret's data, a ConfigMap's binaryData),
 * text values as UTF-8 (stringData, a ConfigMap's data). Exported for its test.
 */
export function dataBytes(object: KubeObject & { data?: unknown; stringData?: unknown; binaryData?: unknown }): number {
  const values = (field: unknown): string[] => (field !== null && typeof field === 'object' ? Object.values(field).map(String) : []);
  const decoded = (field: unknown) => values(field).reduce((sum, value) => sum + Buffer.from(value, 'base64').length, 0);
  const text = (field: unknown) => values(field).reduce((sum, value) => sum + Buffer.byteLength(value), 0);
  if (object.kind === 'Secret') return decoded(object.data) + text(object.stringData);
  if (object.kind === 'ConfigMap') return text(object.data) + decoded(object.binaryData);
  return 0;
}

/**
 * Refuses, before anything is written, a Secret or ConfigMap the API server
 * would refuse as too large (a release's system overrides grown past 1 MiB):
 * written halfway through the apply, it would fail with the objects before
 * it already changed.
 */
function refuseOversized(objects: readonly KubeObject[], releases: readonly Release[]): void {
  const overrides = new Map(
    releases.flatMap((release) =>
      OVERRIDES_KINDS.map((kind) => [overridesSecretName(release.name, kind), `release ${release.name}'s ${kind} overrides`] as const),
    ),
  );
  const problems = objects.flatMap((object) => {
    const bytes = dataBytes(object);
    if (bytes <= KUBE_DATA_MAX_BYTES) return [];
    const what = object.kind === 'Secret' ? overrides.get(object.metadata.name) : undefined;
    return [`${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name}${what ? ` (${what})` : ''}: ${formatBytes(bytes)}`];
  });
  if (problems.length > 0) {
    throw new ObjectTooLargeError(
      `the API server stores no more than ${formatBytes(KUBE_DATA_MAX_BYTES)} in a Secret or ConfigMap; nothing was applied: ${problems.join('; ')}`,
    );
  }
}

const EMPTY_VALUES = Buffer.from('{}\n').toString('base64');

/**
 * A values file with no YAML document in it (an empty static overrides
 * file, or one of comments only) as `{}`: Flux refuses a valuesFrom key that
 * holds no document.
 */
function valuesData(data: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!data) return undefined;
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => {
      if (!key.endsWith('.yaml')) return [key, value];
      const docs = parseYamlStream(Buffer.from(value, 'base64').toString('utf8'), key);
      return [key, docs.every((d) => d === null || d === undefined) ? EMPTY_VALUES : value];
    }),
  );
}

/** kustomize folds long base64 Secret data over lines; the API takes it on one. */
function unwrapBase64(data: unknown): Record<string, string> | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  return Object.fromEntries(Object.entries(data as Record<string, unknown>).map(([key, value]) => [key, String(value).replace(/\s+/g, '')]));
}
