/**
 * `flotilla images pin`: every image reference the app writes (the catalog
 * entry of every release, each a possible target, or of `--release R`), resolved to
 * the digest its tag points to (an image index for a multi-platform image)
 * through the OCI distribution API, and written as `name:tag@sha256:…` with
 * the edit rules of `overrides set`. `--check` asks the registries again:
 * a pinned digest that no longer exists, or a tag that now points elsewhere,
 * is reported. Every lookup is made before anything is written; one failure
 * writes nothing.
 */
import { loadApp, type App } from '../app/index.js';
import { BUILD_TOKEN } from '../build/index.js';
import { mapConcurrently } from '../concurrency/index.js';
import { DiagnosticsError, formatLocation, type Diagnostic } from '../diagnostics/index.js';
import { ManifestUnknown, OciClient, parseReference, RegistryError, type OciClientOptions } from '../oci/index.js';
import { unknownName } from '../names/index.js';
import { UnknownOpenStackReleaseError } from '../catalog/index.js';
import { ChangeSet, type FileChange } from './changes.js';
import { scanPlaces, setReference, type ImagePlace } from './images.js';

export interface PinOptions {
  /** Docker-style config file with registry credentials (default ~/.docker/config.json). */
  readonly registryConfig?: string;
  /** Registries reached over plain HTTP (loopback ones always are). */
  readonly insecureRegistries?: readonly string[];
  /** Resolve already pinned references again and replace their digest. */
  readonly repin?: boolean;
  /** Only these catalog releases (default: every release of overrides/versions/, each a possible target). */
  readonly releases?: readonly string[];
}

/** One distinct reference and every place that writes it. */
export interface ImageUse {
  readonly reference: string;
  readonly places: readonly ImagePlace[];
}

export interface PinnedImage extends ImageUse {
  readonly digest: string;
  readonly mediaType: string;
  readonly pinned: string;
}

export interface PinResult {
  readonly changes: readonly FileChange[];
  readonly pinned: readonly PinnedImage[];
  /** References left as they are, and why (already pinned, a build token). */
  readonly skipped: readonly (ImageUse & { readonly reason: string })[];
}

export type PinStatus = 'current' | 'digest-gone' | 'tag-moved' | 'tag-gone' | 'not-pinned';

export interface PinCheck extends ImageUse {
  readonly status: PinStatus;
  readonly detail: string;
}

/** Lookups that failed (unreachable registry, missing tag, refused credentials): each names the image and where it is written. */
export class ImageLookupError extends DiagnosticsError {}

const where = (places: readonly ImagePlace[]) => places.map((p) => formatLocation(p.location)).join(', ');

/**
 * The app's references, each once, with every place that writes it: the
 * catalog entry of every release (or of `releases`), and, when the app's
 * own release is among them, its custom images, static overrides and
 * template text.
 */
async function imageUses(app: App, releases?: readonly string[]): Promise<ImageUse[]> {
  const known = [...app.catalog.versions.keys()].sort();
  for (const release of releases ?? []) {
    if (!app.catalog.versions.has(release))
      throw new UnknownOpenStackReleaseError(`--release ${release}: ${unknownName('release', release, known)} (overrides/versions/)`);
  }
  const wanted = (release: string) => releases === undefined || releases.includes(release);
  const places = await scanPlaces(app);
  const ownRelease = wanted(app.target.release) ? [...[...places.byField.values()].flat(), ...places.unmapped, ...places.templates] : [];
  const catalogs: ImagePlace[] = [...app.catalog.versions.values()]
    .filter((entry) => entry.release !== app.target.release && wanted(entry.release))
    .flatMap((entry) =>
      [...entry.images].map(([field, setting]) => ({
        kind: 'catalog' as const,
        reference: setting.reference,
        location: setting.location,
        path: ['images', field],
      })),
    );
  const seen = new Set<string>();
  const byReference = new Map<string, ImagePlace[]>();
  for (const place of [...ownRelease, ...catalogs]) {
    const key = `${place.location.file}:${place.offset ?? (place.path ?? []).join('\u0000')}`;
    if (seen.has(key)) continue;
    seen.add(key);
    byReference.set(place.reference, [...(byReference.get(place.reference) ?? []), place]);
  }
  return [...byReference].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([reference, list]) => ({ reference, places: list }));
}

function clientOf(options: PinOptions): OciClient {
  const clientOptions: OciClientOptions = { registryConfig: options.registryConfig, insecureRegistries: options.insecureRegistries };
  return new OciClient(clientOptions);
}

/** Runs one lookup per use; throws (nothing written) when any failed. */
async function lookUpAll<T>(uses: readonly ImageUse[], lookup: (use: ImageUse) => Promise<T>): Promise<T[]> {
  const failures: Diagnostic[] = [];
  const results = await mapConcurrently(uses, 4, async (use) => {
    try {
      return await lookup(use);
    } catch (error) {
      if (!(error instanceof RegistryError)) throw error;
      const others = use.places.length > 1 ? ` (also written at ${where(use.places.slice(1))})` : '';
      const why = error.message.startsWith(`${error.subject}: `) ? error.message.slice(error.subject.length + 2) : error.message;
      failures.push({ severity: 'error', message: `image ${use.reference}${others}: ${why}`, location: use.places[0]?.location });
      return undefined;
    }
  });
  if (failures.length > 0) {
    const sorted = failures.sort((a, b) => formatLocation(a.location).localeCompare(formatLocation(b.location)));
    throw new ImageLookupError(`${failures.length} image lookup${failures.length === 1 ? '' : 's'} failed; nothing was written:`, sorted);
  }
  return results as T[];
}

export async function pinImages(appDir: string, options: PinOptions = {}): Promise<PinResult> {
  const app = await loadApp(appDir);
  const uses = await imageUses(app, options.releases);
  const skipped: (ImageUse & { reason: string })[] = [];
  const wanted = uses.filter((use) => {
    if (BUILD_TOKEN.test(use.reference)) skipped.push({ ...use, reason: 'holds a build token: the registry is known only when the app is built' });
    else if (use.reference.includes('@') && !options.repin) skipped.push({ ...use, reason: 'already pinned (--repin resolves its tag again)' });
    else return true;
    return false;
  });
  const client = clientOf(options);
  const pinned = await lookUpAll(wanted, async (use): Promise<PinnedImage> => {
    const ref = parseReference(use.reference);
    if (ref.tag === undefined && ref.digest !== undefined) return { ...use, digest: ref.digest, mediaType: '', pinned: use.reference };
    const descriptor = await client.resolve(ref.withTag(ref.tag ?? 'latest'));
    return { ...use, digest: descriptor.digest, mediaType: descriptor.mediaType, pinned: `${use.reference.split('@')[0]}@${descriptor.digest}` };
  });
  const set = new ChangeSet((file) => app.path(file));
  for (const image of pinned) for (const place of image.places) if (image.pinned !== place.reference) await setReference(set, place, image.pinned);
  return { changes: set.changes(), pinned, skipped };
}

/** Asks the registries whether each pinned digest still exists and each tag still points to it. */
export async function checkPins(appDir: string, options: PinOptions = {}): Promise<PinCheck[]> {
  const uses = (await imageUses(await loadApp(appDir), options.releases)).filter((use) => !BUILD_TOKEN.test(use.reference));
  const client = clientOf(options);
  return lookUpAll(uses, async (use): Promise<PinCheck> => {
    const ref = parseReference(use.reference);
    if (ref.digest === undefined) return { ...use, status: 'not-pinned', detail: 'not pinned to a digest (flotilla images pin)' };
    try {
      await client.resolve(ref.withTag(undefined).withDigest(ref.digest));
    } catch (error) {
      if (error instanceof ManifestUnknown) return { ...use, status: 'digest-gone', detail: `the pinned digest ${ref.digest} no longer exists in ${ref.name}` };
      throw error;
    }
    if (ref.tag === undefined) return { ...use, status: 'current', detail: 'the pinned digest exists' };
    try {
      const now = await client.resolve(ref.withTag(ref.tag));
      if (now.digest !== ref.digest) return { ...use, status: 'tag-moved', detail: `tag ${ref.tag} now points to ${now.digest}, not the pinned ${ref.digest}` };
    } catch (error) {
      if (error instanceof ManifestUnknown) return { ...use, status: 'tag-gone', detail: `tag ${ref.tag} no longer exists (the pinned digest does)` };
      throw error;
    }
    return { ...use, status: 'current', detail: `tag ${ref.tag} still points to the pinned digest` };
  });
}
