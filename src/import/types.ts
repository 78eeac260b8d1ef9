/**
 * The domain of `flotilla import`: a StarlingX FluxCD application as read
 * (fluxcd-manifests tree, metadata, charts), the flotilla release entries it
 * maps to, and what the import reports back.
 */
import type { FluxRelease } from '../flux/index.js';
import type { ChartSource } from '../charts/index.js';
import type { Diagnostic, SourceLocation } from '../diagnostics/index.js';
import type { MapNode, ValueNode } from '../yaml/index.js';
import type { ExternalLink } from '../files/index.js';

/** What StarlingX writes in helmrelease.yaml where the build stamps the chart version. */
export const VERSION_PLACEHOLDER = 'REPLACE_HELM_CHART_VERSION';

export interface ImportOptions {
  /**
   * Folders holding chart source folders and/or `<chart>-<version>.tgz`
   * archives, searched together. Default: `<source>/charts`.
   */
  readonly charts?: readonly string[];
  /** Import into a non-empty APP_DIR, replacing its fluxcd/, charts/ and overrides/ folders. */
  readonly force?: boolean;
  /** Catalog release the imported images are filed under (overrides/versions/<release>.yaml). Default `imported`. */
  readonly catalogRelease?: string;
  /** Read what symbolic links out of the source (or a charts folder) point at instead of refusing them. */
  readonly followExternalSymlinks?: boolean;
}

/** A YAML file of the source, parsed with positions. */
export interface SourceYaml {
  /** Path relative to the source's top level, as shown in messages. */
  readonly file: string;
  readonly text: string;
  readonly root: ValueNode | undefined;
}

/** base/: the HelmRepository every HelmRelease points at. */
export interface StxHelmRepository {
  readonly name: string;
  readonly url: string;
  readonly interval?: string;
  readonly namespace?: string;
  /** spec fields beyond url and interval (secretRef, timeout, type …), carried to fluxcd/build.yaml. */
  readonly spec: Readonly<Record<string, unknown>>;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly location: SourceLocation;
}

/** One release folder of fluxcd-manifests/, checked for the StarlingX shape. */
export interface StxReleaseFolder {
  /** Folder name = HelmRelease name. */
  readonly folder: string;
  /** Where the folder is listed in the top kustomization.yaml. */
  readonly listedAt: SourceLocation;
  /** `namespace` of the folder's kustomization.yaml, if set. */
  readonly namespace?: string;
  readonly helmRelease: SourceYaml & { readonly root: MapNode };
  /** Fields of the folder's kustomization.yaml beyond the generated ones (commonLabels, patches …), carried as written. */
  readonly kustomization: Readonly<Record<string, unknown>>;
  /** `<folder>-static-overrides.yaml`: its bytes go to overrides/static/<chart>.yaml (or <release>.yaml) unchanged. */
  readonly staticOverrides: { readonly file: string; readonly data: Buffer; readonly root: ValueNode | undefined };
}

/** The fluxcd-manifests tree. */
export interface StxManifests {
  /** Folder relative to the source top level. */
  readonly dir: string;
  /** `namespace` of the top kustomization.yaml. */
  readonly namespace: string;
  readonly repository: StxHelmRepository;
  /** Top and base kustomization fields beyond the generated ones, carried to fluxcd/build.yaml. */
  readonly kustomization: Readonly<Record<string, unknown>>;
  readonly baseKustomization: Readonly<Record<string, unknown>>;
  /** Release folders that passed the checks, in the order of the top kustomization's resources. */
  readonly releases: readonly StxReleaseFolder[];
  /** Every release folder listed, including those with problems (for dependsOn checks). */
  readonly listed: readonly string[];
  /** The kustomizations and the HelmRepository as read, by the path flotilla generates them at (kustomization.yaml, base/…, <release>/kustomization.yaml). */
  readonly originals: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  /** Files of the tree the generator does not write (extra resources, patch files), by path inside it: shipped from fluxcd/manifests/. */
  readonly extraFiles: ReadonlyMap<string, Buffer>;
}

/** A release mapped to the flotilla release table, every field resolved (no defaults left to apply). */
export interface ImportedRelease extends FluxRelease {
  /** The concrete chart version written in helmrelease.yaml, or undefined for the build placeholder. */
  readonly requestedVersion?: string;
  readonly requestedVersionAt: SourceLocation;
  readonly service: string;
  /** Releases of the app it depends on (its dependencies that are not external). */
  readonly dependsOn: readonly string[];
  /**
   * The original HelmRelease as Flux reads it, with the defaults the
   * generator writes explicitly filled in; the import is verified against it.
   */
  readonly expected: Record<string, unknown>;
  /** Flux defaults written explicitly where the original left them out (e.g. `install.disableWait: false`). */
  readonly defaultsFilled: readonly string[];
  readonly source: StxReleaseFolder;
}

/** A chart found for the import, and where. */
export interface ImportedChart {
  readonly name: string;
  readonly version: string;
  /** Chart source folder or archive it came from. */
  readonly from: string;
  readonly kind: 'directory' | 'archive';
  readonly chart: ChartSource;
}

export interface HarvestedImage {
  /** Image field in the catalog (overrides/versions/images.yaml). */
  readonly field: string;
  readonly reference: string;
  /** chart → value path. */
  readonly targets: readonly { readonly chart: string; readonly path: string }[];
}

export interface SkippedImage {
  readonly chart: string;
  readonly path: string;
  readonly reason: string;
  readonly location: SourceLocation;
}

export interface ImportReport {
  /** Absolute paths. */
  readonly source: string;
  readonly target: string;
  readonly app: { readonly name: string; readonly version: string };
  readonly releases: readonly {
    readonly name: string;
    readonly chart: string;
    readonly chartVersion: string;
    readonly service: string;
    readonly enabled: boolean;
  }[];
  readonly charts: readonly { readonly name: string; readonly version: string; readonly from: string; readonly kind: 'directory' | 'archive' }[];
  /** Library charts written next to the release charts for their file://../<name> dependencies. */
  readonly libraries: readonly string[];
  readonly images: { readonly harvested: readonly HarvestedImage[]; readonly skipped: readonly SkippedImage[] };
  /** Files written, relative to the target, sorted. */
  readonly files: readonly string[];
  /** Folders of the target replaced because of `force`. */
  readonly replaced: readonly string[];
  /** Symbolic links followed out of the source (only with `followExternalSymlinks`). */
  readonly externalLinks: readonly ExternalLink[];
  readonly warnings: readonly Diagnostic[];
}
