/**
 * The domain of Helm chart sources: what a chart declares (Chart.yaml), the
 * files Helm would take from it, and the charts it depends on, resolved.
 */
import type { SourceLocation } from '../diagnostics/index.js';
import type { FolderFingerprint } from '../files/index.js';

export type ChartApiVersion = 'v1' | 'v2';
export type ChartType = 'application' | 'library';

export interface ChartMaintainer {
  readonly name?: string;
  readonly email?: string;
  readonly url?: string;
}

/** One entry of Chart.yaml `dependencies` (or a v1 chart's requirements.yaml). */
export interface ChartDependency {
  readonly name: string;
  /** Version or range as written; may be absent. */
  readonly version?: string;
  /** `file://…`, `https://…`, `oci://…`, `@repo`, or absent for vendored-only. */
  readonly repository?: string;
  readonly alias?: string;
  readonly condition?: string;
  readonly tags?: readonly string[];
  readonly importValues?: readonly unknown[];
  /** Where the entry is written. */
  readonly location: SourceLocation;
}

/** Chart.yaml, validated. */
export interface ChartMetadata {
  readonly apiVersion: ChartApiVersion;
  readonly name: string;
  readonly version: string;
  /** Defaults to `application`, as in Helm. */
  readonly type: ChartType;
  readonly appVersion?: string;
  readonly description?: string;
  readonly kubeVersion?: string;
  readonly home?: string;
  readonly icon?: string;
  readonly sources?: readonly string[];
  readonly keywords?: readonly string[];
  readonly maintainers?: readonly ChartMaintainer[];
  readonly annotations?: Readonly<Record<string, string>>;
  readonly deprecated?: boolean;
  readonly dependencies: readonly ChartDependency[];
}

/** A file Helm takes from the chart, by `/`-separated path relative to the chart root. */
export interface ChartFile {
  readonly path: string;
  readonly data: Buffer;
}

/** Where a chart was read from. */
export type ChartOrigin =
  | { readonly kind: 'directory'; readonly dir: string }
  | { readonly kind: 'archive'; readonly file: string; readonly member?: string };

/** How a dependency came to be part of the chart. */
export type DependencySource =
  /** loaded from a `repository: file://…` path (with its own .helmignore) */
  | 'file'
  /** already unpacked under the chart's `charts/` folder */
  | 'vendored-directory'
  /** a `.tgz` under the chart's `charts/` folder */
  | 'vendored-archive'
  /** a chart folder of the app that the app maps the dependency's repository to */
  | 'mapped'
  /** fetched from its repository (oci:// or http(s)://), or taken from the cache of what was fetched */
  | 'repository';

export interface ResolvedDependency {
  /** Chart name = the folder it gets under `charts/`. */
  readonly name: string;
  readonly source: DependencySource;
  /** Chart.yaml entries satisfied by this chart (several when aliased); empty for an undeclared vendored chart. */
  readonly declared: readonly ChartDependency[];
  readonly chart: ChartSource;
}

/** A chart as Helm would load it, dependencies resolved and in memory. */
export interface ChartSource {
  readonly name: string;
  readonly version: string;
  readonly metadata: ChartMetadata;
  readonly origin: ChartOrigin;
  /** Where Chart.yaml is (a path, or `archive.tgz#chart/Chart.yaml`), for messages. */
  readonly chartFile: string;
  /**
   * The chart's own files after .helmignore, sorted; excludes subcharts under `charts/`. With the
   * Chart.lock `helm dependency build` writes when the loader resolved dependencies from repositories
   * for a chart that had none.
   */
  readonly files: readonly ChartFile[];
  /** Subcharts, one per chart name, sorted by name. */
  readonly dependencies: readonly ResolvedDependency[];
  /** A folder's fingerprint as the loader read it, when asked for (createChartLoader's `fingerprint`; see src/files/folder-fingerprint.ts). */
  readonly fingerprint?: FolderFingerprint;
}

/** A dependency on a chart repository (oci://, https://) the loader asks a {@link RepositoryResolver} for. */
export interface RepositoryRequest {
  /** The chart declaring it, and where its Chart.yaml is (for messages). */
  readonly chart: string;
  readonly chartFile: string;
  readonly dependency: ChartDependency;
  /** The exact version Chart.lock pins, when the chart has a lock (already checked in sync with Chart.yaml). */
  readonly locked?: string;
}

/** What serves a repository dependency: a chart folder (the app's mapping), or a chart archive whose sha256 was checked. */
export type RepositoryChart =
  | { readonly kind: 'directory'; readonly dir: string }
  | { readonly kind: 'archive'; readonly bytes: Buffer; readonly label: string; readonly digest: string };

/** Resolves dependencies on chart repositories as `helm dependency build` would (src/dependencies implements it). */
export interface RepositoryResolver {
  resolve(request: RepositoryRequest): Promise<RepositoryChart>;
}
