/**
 * The version model on a cluster (docs/versions.md): `flotilla version
 * status | target | image`. The record keeps the state (src/catalog
 * state.ts); src/catalog owns its rules; here they meet the stored
 * bundle: its catalog, its metadata's upgrade rules, the images it resolves.
 * A change is recorded only; the next apply carries it out.
 */
import type { App } from '../app/index.js';
import type { Cluster } from './cluster.js';
import { OciClient, parseReference, type OciClientOptions } from '../oci/index.js';
import { Session } from '../session/index.js';
import {
  afterUpload,
  customImageTarget,
  retarget,
  VersionRefusedError,
  withCustomImage,
  withoutCustomImage,
  type AppVersions,
  type CustomImage,
  type ResolvedImage,
} from '../catalog/index.js';
import { APP_FILES } from '../app/index.js';
import { readClusterConfig } from './config.js';
import { RecordHandle, withAppLock, type OperationOptions } from './operation.js';
import { readPayload } from './payload.js';
import { AppRecords, type AppRecord } from './record.js';

/** Where an image the charts get comes from. */
export interface StatusImage {
  readonly reference: string;
  /** `catalog of release R`, `custom image F set at T by U`, or `main.customImages (file:line)`. */
  readonly source: string;
}

export interface StatusServiceDefault {
  readonly value: string | number | boolean;
  /** `release R` when the target's catalog entry sets it, else `fallback (overrides/service-defaults.yaml)`. */
  readonly source: string;
}

export interface VersionStatus {
  readonly app: string;
  readonly target: string;
  /** When and by whom the target was set; null while it follows the deployment spec. */
  readonly targetSet: { readonly at: string; readonly by: string } | null;
  readonly deployed: string | null;
  /** Newest first; `inBundle: false` for releases known only from an earlier bundle. */
  readonly available: readonly { readonly release: string; readonly bundle: string; readonly inBundle: boolean }[];
  readonly phase: string | null;
  readonly held: string | null;
  /** Catalog image field → what the next apply gives the charts. */
  readonly images: Readonly<Record<string, StatusImage>>;
  readonly serviceDefaults: Readonly<Record<string, StatusServiceDefault>>;
  readonly customImages: Readonly<Record<string, CustomImage>>;
}

/** The record's version state; a record written before the version model gets the one its bundle implies. */
function versionsOf(record: AppRecord, app: App): AppVersions {
  return record.versions ?? afterUpload(undefined, app.catalog, record.bundle.version, app.spec.main.release);
}

/** The stored bundle's app, assembled with the record's version state (no plugin runs). */
async function storedApp(cluster: Cluster, record: AppRecord, versions?: AppVersions): Promise<App> {
  const { signingKey } = await readClusterConfig(cluster.settings);
  const payload = await readPayload(cluster.payloads, record.bundle, signingKey);
  return (await Session.fromBundle(payload, versions ? { versions } : {})).app;
}

function imageSource(image: ResolvedImage, release: string): string {
  if (image.source === 'release') return image.location.line > 0 ? `catalog of release ${release}` : image.location.file;
  return image.location.line > 0 ? `main.customImages (${image.location.file}:${image.location.line})` : image.location.file;
}

export async function versionStatus(cluster: Cluster, appName: string): Promise<VersionStatus> {
  const { record } = await new AppRecords(cluster.records).get(appName);
  // Without a version state (a record written before it) the bundle's own spec is the state: the same app.
  const app = await storedApp(cluster, record, record.versions);
  const versions = versionsOf(record, app);
  return {
    app: appName,
    target: versions.target,
    targetSet: versions.targetSet ?? null,
    deployed: versions.deployed ?? null,
    available: versions.available.map(({ release, bundle, inBundle }) => ({ release, bundle, inBundle })),
    phase: versions.phase ?? null,
    held: versions.held ?? null,
    images: Object.fromEntries(
      [...app.images]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([field, image]) => [field, { reference: image.reference, source: imageSource(image, app.target.release) }]),
    ),
    serviceDefaults: Object.fromEntries(
      [...app.serviceDefaults].map(([name, d]) => [
        name,
        { value: d.value, source: d.source === 'release' ? `release ${app.target.release}` : `fallback (${APP_FILES.serviceDefaults})` },
      ]),
    ),
    customImages: versions.customImages,
  };
}

export interface TargetChangeOptions extends OperationOptions {
  readonly force?: boolean;
  readonly ackCustomImages?: boolean;
}

/** Records `release` as the app's target (the next apply carries it out), or refuses with why and what to do. */
export async function setVersionTarget(
  cluster: Cluster,
  appName: string,
  release: string,
  options: TargetChangeOptions = {},
): Promise<{ versions: AppVersions; warnings: string[] }> {
  return withAppLock(cluster, appName, 'version', options, async (run) => {
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    const app = await storedApp(cluster, handle.record);
    const { versions, warnings } = retarget(versionsOf(handle.record, app), release, app.metadata.releaseUpgrades, {
      ...(options.force ? { force: true } : {}),
      ...(options.ackCustomImages ? { ackCustomImages: true } : {}),
      by: run.lease.holder,
      now: new Date().toISOString(),
    });
    // The new target must assemble (its images land, custom ones included) before it is recorded.
    await storedApp(cluster, handle.record, versions);
    await handle.update((r) => ({ ...r, versions }));
    return { versions, warnings };
  });
}

export interface CustomImageOptions extends OperationOptions {
  /** Pin the reference to the digest its tag points to, through the registry. */
  readonly resolve?: boolean;
  readonly registry?: Pick<OciClientOptions, 'registryConfig' | 'insecureRegistries'>;
}

/** Sets a custom image (FIELD or FIELD.<backend>); returns the reference stored (pinned with `resolve`). */
export async function setCustomImage(
  cluster: Cluster,
  appName: string,
  field: string,
  reference: string,
  options: CustomImageOptions = {},
): Promise<CustomImage> {
  return withAppLock(cluster, appName, 'version', options, async (run) => {
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    const app = await storedApp(cluster, handle.record);
    customImageTarget(field, app.catalog);
    const stored = options.resolve ? await pinned(reference, options.registry ?? {}) : reference;
    const versions = withCustomImage(versionsOf(handle.record, app), field, stored, app.catalog, { by: run.lease.holder, now: new Date().toISOString() });
    await storedApp(cluster, handle.record, versions);
    await handle.update((r) => ({ ...r, versions }));
    return versions.customImages[field] as CustomImage;
  });
}

/** `name:tag@sha256:…`: the digest the tag points to now (an image index for a multi-platform image). */
async function pinned(reference: string, registry: Pick<OciClientOptions, 'registryConfig' | 'insecureRegistries'>): Promise<string> {
  let ref;
  try {
    ref = parseReference(reference);
  } catch (error) {
    throw new VersionRefusedError(`${JSON.stringify(reference)} is not an image reference: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (ref.digest !== undefined) return reference;
  if (ref.tag === undefined)
    throw new VersionRefusedError(`${reference} has neither tag nor digest: give the tag to resolve (--resolve pins NAME:TAG to its digest)`);
  const descriptor = await new OciClient(registry).resolve(ref);
  return `${reference}@${descriptor.digest}`;
}

export async function unsetCustomImage(cluster: Cluster, appName: string, field: string, options: OperationOptions = {}): Promise<void> {
  await withAppLock(cluster, appName, 'version', options, async (run) => {
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    const versions = withoutCustomImage(versionsOf(handle.record, await storedApp(cluster, handle.record)), field);
    await handle.update((r) => ({ ...r, versions }));
  });
}

/** The custom images set, by the field the operator named. */
export async function listCustomImages(cluster: Cluster, appName: string): Promise<Readonly<Record<string, CustomImage>>> {
  const { record } = await new AppRecords(cluster.records).get(appName);
  return record.versions?.customImages ?? {};
}
