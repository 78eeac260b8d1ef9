/**
 * The one HelmRelease type (helm.toolkit.fluxcd.io/v2): the fields flotilla
 * writes and reads, the status Flux reports, and a lenient reader for
 * HelmReleases found in tarballs or clusters (fields of the wrong type are
 * dropped, so callers report what is missing instead of crashing on it).
 */
import type { ValuesFromSecret } from './overrides.js';

export const HELM_RELEASE_API = 'helm.toolkit.fluxcd.io/v2';

/** Labels helm-controller's post-renderer puts on every object a HelmRelease installs: its name and namespace. */
export const FLUX_OWNER_NAME = 'helm.toolkit.fluxcd.io/name';
export const FLUX_OWNER_NAMESPACE = 'helm.toolkit.fluxcd.io/namespace';

/** install / upgrade: the flags flotilla models, and any other Flux field passed through. */
export interface HelmReleaseAction {
  readonly disableHooks?: boolean;
  readonly disableWait?: boolean;
  readonly remediation?: {
    readonly retries?: number;
    readonly strategy?: 'rollback' | 'uninstall';
    readonly ignoreTestFailures?: boolean;
    readonly remediateLastFailure?: boolean;
  };
  readonly [field: string]: unknown;
}

export interface ChartSourceRef {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface HelmReleaseChart {
  /** Labels and annotations of the HelmChart Flux makes from the template. */
  readonly metadata?: { readonly labels?: Readonly<Record<string, string>>; readonly annotations?: Readonly<Record<string, string>> };
  readonly spec: {
    readonly chart: string;
    readonly version?: string;
    readonly sourceRef: ChartSourceRef;
    readonly reconcileStrategy?: string;
    /** Other chart template fields (valuesFiles, interval, verify …), passed through. */
    readonly [field: string]: unknown;
  };
}

export interface HelmReleaseSpec {
  readonly releaseName?: string;
  readonly chart?: HelmReleaseChart;
  readonly interval?: string;
  readonly timeout?: string;
  readonly test?: { readonly enable?: boolean };
  readonly install?: HelmReleaseAction;
  readonly upgrade?: HelmReleaseAction;
  readonly dependsOn?: readonly { readonly name: string; readonly namespace?: string }[];
  /** helm-controller skips a suspended release: no install, upgrade or remediation until it is resumed. */
  readonly suspend?: boolean;
  readonly valuesFrom?: readonly (ValuesFromSecret | { readonly kind: string; readonly name: string; readonly valuesKey?: string })[];
  /** Fields flotilla does not model (driftDetection, maxHistory, postRenderers …), passed through as written. */
  readonly [field: string]: unknown;
}

/** A Kubernetes status condition (metav1.Condition). */
export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason?: string;
  readonly message?: string;
  readonly observedGeneration?: number;
  readonly lastTransitionTime?: string;
}

export interface HelmReleaseStatus {
  readonly observedGeneration?: number;
  /** The `reconcile.fluxcd.io/requestedAt` token helm-controller last acted on. */
  readonly lastHandledReconcileAt?: string;
  readonly conditions?: readonly Condition[];
  readonly lastAttemptedRevision?: string;
  readonly lastAttemptedValuesChecksum?: string;
  readonly [field: string]: unknown;
}

export interface HelmRelease {
  readonly apiVersion: string;
  readonly kind: 'HelmRelease';
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly generation?: number;
  };
  readonly spec: HelmReleaseSpec;
  readonly status?: HelmReleaseStatus;
}

type Plain = Record<string, unknown>;
const isMap = (v: unknown): v is Plain => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const named = (v: unknown): v is Plain & { name: string } => isMap(v) && typeof v.name === 'string';

/**
 * A document read from YAML as a HelmRelease: undefined unless it is a map
 * of kind HelmRelease; the fields flotilla reads are kept only when they have
 * their type (a chart version written as a number is read as its text).
 */
export function readHelmRelease(doc: unknown): HelmRelease | undefined {
  if (!isMap(doc) || doc.kind !== 'HelmRelease') return undefined;
  const metadata = isMap(doc.metadata) ? doc.metadata : {};
  const spec = isMap(doc.spec) ? doc.spec : {};
  const chartSpec = isMap(spec.chart) && isMap(spec.chart.spec) ? spec.chart.spec : undefined;
  const sourceRef = chartSpec && isMap(chartSpec.sourceRef) ? chartSpec.sourceRef : {};
  const version = chartSpec?.version;
  const labels = isMap(metadata.labels)
    ? Object.fromEntries(Object.entries(metadata.labels).filter((e): e is [string, string] => typeof e[1] === 'string'))
    : undefined;
  return {
    apiVersion: str(doc.apiVersion) ?? '',
    kind: 'HelmRelease',
    metadata: {
      name: str(metadata.name) ?? '',
      ...(str(metadata.namespace) !== undefined ? { namespace: str(metadata.namespace) } : {}),
      ...(labels ? { labels } : {}),
      ...(typeof metadata.generation === 'number' ? { generation: metadata.generation } : {}),
    },
    spec: {
      ...spec,
      releaseName: str(spec.releaseName),
      chart:
        chartSpec && typeof chartSpec.chart === 'string'
          ? {
              spec: {
                ...chartSpec,
                chart: chartSpec.chart,
                version: typeof version === 'string' || typeof version === 'number' ? String(version) : undefined,
                sourceRef: { ...sourceRef, kind: str(sourceRef.kind) ?? '', name: str(sourceRef.name) ?? '' },
              },
            }
          : undefined,
      dependsOn: Array.isArray(spec.dependsOn)
        ? spec.dependsOn.filter(named).map((d) => ({ name: d.name, ...(str(d.namespace) !== undefined ? { namespace: str(d.namespace) } : {}) }))
        : undefined,
      valuesFrom: Array.isArray(spec.valuesFrom)
        ? spec.valuesFrom.filter(isMap).map((v) => ({ ...v, kind: str(v.kind) ?? '', name: str(v.name) ?? '', valuesKey: str(v.valuesKey) }))
        : undefined,
    },
    ...(isMap(doc.status) ? { status: readStatus(doc.status) } : {}),
  };
}

function readStatus(status: Plain): HelmReleaseStatus {
  const conditions = Array.isArray(status.conditions)
    ? status.conditions.filter(
        (c): c is Plain & Condition => isMap(c) && typeof c.type === 'string' && (c.status === 'True' || c.status === 'False' || c.status === 'Unknown'),
      )
    : undefined;
  return { ...status, conditions, observedGeneration: typeof status.observedGeneration === 'number' ? status.observedGeneration : undefined };
}

/** The condition of `type` Flux set on a HelmRelease (Ready, Released, Remediated, Stalled, …), if any. What they mean for an operation is lifecycle/readiness.ts's to say. */
export function condition(release: Pick<HelmRelease, 'status'>, type: string): Condition | undefined {
  return release.status?.conditions?.find((c) => c.type === type);
}
