/**
 * TEST FIXTURE (dev cluster): the resource types the fixture's API server
 * serves. Storage is generic: any registered group/version/kind is stored,
 * listed, watched and patched the same way. Built-ins are registered here;
 * CustomResourceDefinitions stored in the cluster register their kinds too,
 * which is how the Flux kinds arrive (see ./flux-crds.ts).
 */

export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Plural, lower case: the URL segment (`configmaps`). */
  readonly plural: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** `spec`/`status` objects: `/status` subresource, generation bumps on spec change. */
  readonly statusSubresource: boolean;
  /** A `/scale` subresource (autoscaling/v1 Scale over spec.replicas). */
  readonly scaleSubresource: boolean;
  /** metadata.generation is maintained (CRDs and types with a spec). */
  readonly generation: boolean;
  /** PUT without metadata.resourceVersion is allowed (false for custom resources). */
  readonly unconditionalUpdate: boolean;
  /** Strategic merge patch is understood (built-ins only, as on a real server). */
  readonly strategicMerge: boolean;
  /** Extra columns of `kubectl get` (CRD additionalPrinterColumns). */
  readonly printerColumns: readonly PrinterColumn[];
  /** Set when the type comes from a stored CRD (its name). */
  readonly crd?: string;
}

export interface PrinterColumn {
  readonly name: string;
  readonly type: string;
  readonly jsonPath: string;
  readonly priority?: number;
  readonly description?: string;
}

/** `group/version` as apiVersion spells it (`v1` for the core group). */
export const apiVersionOf = (type: Pick<ResourceType, 'group' | 'version'>): string => (type.group ? `${type.group}/${type.version}` : type.version);

/** How Status messages name a resource: `configmaps`, `helmreleases.helm.toolkit.fluxcd.io`. */
export const qualifiedResource = (type: Pick<ResourceType, 'group' | 'plural'>): string => (type.group ? `${type.plural}.${type.group}` : type.plural);

interface BuiltIn {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  shortNames?: string[];
  status?: boolean;
  /** Keeps metadata.generation (the kinds with a spec a controller acts on). */
  generation?: boolean;
  scale?: boolean;
  categories?: string[];
}

const BUILT_INS: BuiltIn[] = [
  { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false, shortNames: ['ns'], status: true },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true, shortNames: ['cm'] },
  { group: '', version: 'v1', kind: 'Service', plural: 'services', namespaced: true, shortNames: ['svc'], status: true, categories: ['all'] },
  { group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true, shortNames: ['sa'] },
  { group: '', version: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims', namespaced: true, shortNames: ['pvc'], status: true },
  { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true, shortNames: ['po'], status: true, categories: ['all'] },
  { group: '', version: 'v1', kind: 'Event', plural: 'events', namespaced: true, shortNames: ['ev'] },
  {
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
    shortNames: ['deploy'],
    status: true,
    generation: true,
    scale: true,
    categories: ['all'],
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'StatefulSet',
    plural: 'statefulsets',
    namespaced: true,
    shortNames: ['sts'],
    status: true,
    generation: true,
    scale: true,
    categories: ['all'],
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    plural: 'daemonsets',
    namespaced: true,
    shortNames: ['ds'],
    status: true,
    generation: true,
    categories: ['all'],
  },
  { group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', namespaced: true, status: true, generation: true, categories: ['all'] },
  {
    group: 'batch',
    version: 'v1',
    kind: 'CronJob',
    plural: 'cronjobs',
    namespaced: true,
    shortNames: ['cj'],
    status: true,
    generation: true,
    categories: ['all'],
  },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', plural: 'roles', namespaced: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false },
  {
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    namespaced: true,
    shortNames: ['pdb'],
    status: true,
    generation: true,
  },
  { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', plural: 'ingresses', namespaced: true, shortNames: ['ing'], status: true, generation: true },
  { group: 'networking.k8s.io', version: 'v1', kind: 'NetworkPolicy', plural: 'networkpolicies', namespaced: true, shortNames: ['netpol'], generation: true },
  { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true },
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    status: true,
    generation: true,
  },
];

const builtIn = (b: BuiltIn): ResourceType => ({
  group: b.group,
  version: b.version,
  kind: b.kind,
  plural: b.plural,
  singular: b.kind.toLowerCase(),
  namespaced: b.namespaced,
  shortNames: b.shortNames ?? [],
  categories: b.categories ?? [],
  statusSubresource: b.status ?? false,
  scaleSubresource: b.scale ?? false,
  generation: b.generation ?? false,
  unconditionalUpdate: true,
  strategicMerge: true,
  printerColumns: [],
});

/** A CustomResourceDefinition object as stored (only the fields the fixture reads). */
export interface CrdObject {
  metadata: { name: string };
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { kind: string; plural: string; singular?: string; shortNames?: string[]; categories?: string[] };
    versions: Array<{
      name: string;
      served: boolean;
      storage?: boolean;
      subresources?: { status?: object };
      additionalPrinterColumns?: PrinterColumn[];
      schema?: { openAPIV3Schema?: object };
    }>;
  };
}

/** The resource types a CRD declares: one per served version. */
export function typesOfCrd(crd: CrdObject): ResourceType[] {
  const { group, names, scope } = crd.spec;
  return crd.spec.versions
    .filter((v) => v.served)
    .map((v) => ({
      group,
      version: v.name,
      kind: names.kind,
      plural: names.plural,
      singular: names.singular ?? names.kind.toLowerCase(),
      namespaced: scope === 'Namespaced',
      shortNames: names.shortNames ?? [],
      categories: names.categories ?? [],
      statusSubresource: v.subresources?.status !== undefined,
      scaleSubresource: false,
      generation: true,
      unconditionalUpdate: false,
      strategicMerge: false,
      printerColumns: v.additionalPrinterColumns ?? [],
      crd: crd.metadata.name,
    }));
}

/**
 * The registry of served types. Versions of one group/resource share storage
 * (the fixture stores one object per group/resource/namespace/name and
 * reports it under the version asked for, as a real server converts).
 */
export class ResourceTypes {
  private readonly types = new Map<string, ResourceType>();
  private readonly listeners = new Set<() => void>();

  constructor() {
    for (const b of BUILT_INS) this.add(builtIn(b));
  }

  private static key(group: string, version: string, plural: string): string {
    return `${group}/${version}/${plural}`;
  }

  private add(type: ResourceType): void {
    this.types.set(ResourceTypes.key(type.group, type.version, type.plural), type);
  }

  /** Registers (or re-registers) the types of a stored CRD. */
  registerCrd(crd: CrdObject): void {
    this.unregisterCrd(crd.metadata.name);
    for (const type of typesOfCrd(crd)) this.add(type);
    this.changed();
  }

  unregisterCrd(name: string): void {
    let removed = false;
    for (const [key, type] of this.types) {
      if (type.crd === name) {
        this.types.delete(key);
        removed = true;
      }
    }
    if (removed) this.changed();
  }

  /** Called whenever the set of types changes (discovery documents are rebuilt). */
  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  get(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.get(ResourceTypes.key(group, version, plural));
  }

  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
    for (const type of this.types.values()) {
      if (type.group === group && type.version === version && type.kind === kind) return type;
    }
    return undefined;
  }

  all(): ResourceType[] {
    return [...this.types.values()];
  }

  /** Group name → versions served, preferred (storage-like, newest stable) first. */
  groups(): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const type of this.types.values()) {
      const versions = groups.get(type.group) ?? [];
      if (!versions.includes(type.version)) versions.push(type.version);
      groups.set(type.group, versions);
    }
    for (const versions of groups.values()) versions.sort(compareKubeVersions);
    return groups;
  }
}

/** Kubernetes' version priority: GA > beta > alpha, then higher numbers first. */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0];
    const stage = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [stage, -Number(m[1]), -Number(m[3] ?? 0)];
  };
  const [ra, rb] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return ra[i]! - rb[i]!;
  return a.localeCompare(b);
}
