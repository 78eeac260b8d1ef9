/**
 * The version state of an app on a cluster (docs/versions.md), kept in the
 * app record (src/lifecycle/record.ts `versions`): the three versions —
 * available, target, deployed — the operator's custom images, and where a
 * staged update stands (phase, held). One type, shared by the version
 * commands and the phased update.
 */
import type { JsonValue } from '../plugins/api.js';

/** A catalog release the cluster knows of. */
export interface AvailableOpenStackRelease {
  readonly release: string;
  /** The app version of the last uploaded bundle whose catalog has it. */
  readonly bundle: string;
  /** In the catalog of the bundle uploaded now; false: known only from an earlier bundle. */
  readonly inBundle: boolean;
  /** The release's catalog entry as that bundle shipped it: a target known only from an earlier bundle resolves from it. */
  readonly images: Readonly<Record<string, string>>;
  readonly serviceDefaults: Readonly<Record<string, JsonValue>>;
}

/** A custom image the operator set in the cluster (`flotilla version image set`). */
export interface CustomImage {
  /** A pinned image reference (the distribution grammar). */
  readonly reference: string;
  /** When it was set (ISO 8601). */
  readonly set: string;
  /** Who set it. */
  readonly by: string;
}

export interface AppVersions {
  /** Known catalog releases, newest first. */
  readonly available: readonly AvailableOpenStackRelease[];
  /** The release the operator asked for (until then, the deployment spec's main.release); the next apply carries it out. */
  readonly target: string;
  /** When and by whom the target was set; absent while it follows the deployment spec's main.release. */
  readonly targetSet?: { readonly at: string; readonly by: string };
  /** The release running: set only when an update to it finished and every release was Ready with its images. */
  readonly deployed?: string;
  /** The phase a staged update is in (or stopped in), until it finishes. */
  readonly phase?: string;
  /** The phase held for the operator's go (`flotilla version continue`). */
  readonly held?: string;
  /** The operation the held run was: `continue` finishes an update as an update (its post hooks run). */
  readonly heldOperation?: 'update';
  /** Phases an update stops before until continued (`--hold PHASE`, src/lifecycle/phases.ts). */
  readonly holdAt?: readonly string[];
  /** Image field (or `field.<backend>`) → the operator's custom image; on top of the target release's. */
  readonly customImages: Readonly<Record<string, CustomImage>>;
  /** The custom images (field → reference) when the target was last set: unchanged ones at the next target change are a forgotten hotfix. */
  readonly customImagesAtTarget: Readonly<Record<string, string>>;
}
