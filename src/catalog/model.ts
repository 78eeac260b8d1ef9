/**
 * The version model's rules (docs/versions.md): how releases are ordered,
 * what an upload makes known, which target changes are allowed, and how
 * the operator's custom images are named and resolved. Pure functions over
 * {@link AppVersions}; the lifecycle reads and writes the record around them.
 */
import { FlotillaError, type SourceLocation } from '../diagnostics/index.js';
import { nearest } from '../names/index.js';
import { imageReferenceProblem, type VersionCatalog, type OpenStackReleaseEntry } from './catalog.js';
import type { AppVersions, AvailableOpenStackRelease, CustomImage } from './state.js';

/** A target change, a custom image or a release the version model refuses; the message says why and what to do. */
export class VersionRefusedError extends FlotillaError {}

/** Orders release names by their numbers (2024.1 < 2024.2 < 2025.1), then as text. */
export function compareOpenStackReleases(a: string, b: string): number {
  const numbers = (r: string) =>
    r
      .split(/[^0-9]+/)
      .filter(Boolean)
      .map(Number);
  const x = numbers(a);
  const y = numbers(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? -1) - (y[i] ?? -1);
    if (d !== 0) return d;
  }
  return a.localeCompare(b);
}

/** OpenStack's cadence: two releases a year, YYYY.1 then YYYY.2. */
const CADENCE = /^(\d{4})\.([12])$/;

/**
 * The release one step after `release`: OpenStack's next (2024.1 → 2024.2 →
 * 2025.1) for names of its cadence, else the next newer one known.
 */
export function nextOpenStackRelease(release: string, known: readonly string[]): string | undefined {
  const cadence = CADENCE.exec(release);
  if (cadence) return cadence[2] === '1' ? `${cadence[1]}.2` : `${Number(cadence[1]) + 1}.1`;
  return [...known].sort(compareOpenStackReleases).find((r) => compareOpenStackReleases(r, release) > 0);
}

/** What the app's metadata allows beyond one release at a time (`flotilla.releaseUpgrades.skipLevel`). */
export interface UpgradeRules {
  readonly skipLevel: readonly { readonly from: string; readonly to: string }[];
}

function snapshot(entry: OpenStackReleaseEntry, bundle: string, inBundle: boolean): AvailableOpenStackRelease {
  return {
    release: entry.release,
    bundle,
    inBundle,
    images: Object.fromEntries([...entry.images].map(([field, image]) => [field, image.reference])),
    serviceDefaults: structuredClone(entry.serviceDefaults) as AvailableOpenStackRelease['serviceDefaults'],
  };
}

/**
 * The version state after a bundle is uploaded: its catalog's releases
 * available (newest first), earlier bundles' releases it lacks still known
 * (marked), the target kept when the operator set it, else the spec's.
 */
export function afterUpload(previous: AppVersions | undefined, catalog: VersionCatalog, bundleVersion: string, specRelease: string): AppVersions {
  const available = new Map<string, AvailableOpenStackRelease>();
  for (const entry of catalog.versions.values()) available.set(entry.release, snapshot(entry, bundleVersion, true));
  for (const known of previous?.available ?? []) if (!available.has(known.release)) available.set(known.release, { ...known, inBundle: false });
  return {
    available: [...available.values()].sort((a, b) => compareOpenStackReleases(b.release, a.release)),
    target: previous?.targetSet ? previous.target : specRelease,
    ...(previous?.targetSet ? { targetSet: previous.targetSet } : {}),
    ...(previous?.deployed !== undefined ? { deployed: previous.deployed } : {}),
    ...(previous?.phase !== undefined ? { phase: previous.phase } : {}),
    ...(previous?.held !== undefined ? { held: previous.held } : {}),
    ...(previous?.heldOperation !== undefined ? { heldOperation: previous.heldOperation } : {}),
    ...(previous?.holdAt !== undefined ? { holdAt: previous.holdAt } : {}),
    customImages: previous?.customImages ?? {},
    customImagesAtTarget: previous?.customImagesAtTarget ?? {},
  };
}

export interface TargetOptions {
  /** Allow a downgrade (development only). */
  readonly force?: boolean;
  /** The custom images set are meant to stay across this target change. */
  readonly ackCustomImages?: boolean;
  readonly by: string;
  readonly now: string;
}

/**
 * The state with `release` as the target, or a refusal saying why and what
 * to do: a release neither available nor known, a downgrade (unless
 * forced; the warning says so), a jump the metadata does not allow, or
 * custom images unchanged since the last target (a forgotten hotfix) unless
 * acknowledged.
 */
export function retarget(state: AppVersions, release: string, rules: UpgradeRules, options: TargetOptions): { versions: AppVersions; warnings: string[] } {
  const known = state.available.map((a) => a.release);
  if (!known.includes(release)) {
    const close = nearest(release, known);
    throw new VersionRefusedError(
      `release "${release}" is neither available nor known to this app${close ? ` (did you mean "${close}"?)` : ''}; available: ${known.join(', ') || 'none'}. Upload a bundle whose catalog (overrides/versions/) has it first`,
    );
  }
  const warnings: string[] = [];
  const from = state.deployed ?? state.target;
  if (release === state.target) return { versions: state, warnings: [`the target is already ${release}: nothing changes`] };
  if (from !== '' && from !== release) {
    if (compareOpenStackReleases(release, from) < 0) {
      if (!options.force) {
        throw new VersionRefusedError(
          `${release} is older than ${from}: downgrades are refused (OpenStack's database migrations run forward only). Target ${from} or a newer release; --force exists for development clusters only`,
        );
      }
      warnings.push(
        `DOWNGRADE FORCED: ${from} → ${release}. OpenStack does not support downgrades; databases migrated by ${from} may not work with ${release}. Use this on development clusters only`,
      );
    } else {
      const step = nextOpenStackRelease(from, known);
      const skip = rules.skipLevel.some((pair) => pair.from === from && pair.to === release);
      if (release !== step && !skip) {
        const pairs = rules.skipLevel.filter((p) => p.from === from).map((p) => p.to);
        throw new VersionRefusedError(
          `${from} → ${release} skips releases: the app updates one release at a time${step ? ` (next: ${step})` : ''}${pairs.length > 0 ? ` or by the skip-level jumps its metadata names (${from} → ${pairs.join(', ')})` : ', and its metadata names no skip-level jump from ' + from} (fluxcd/metadata.yaml flotilla.releaseUpgrades.skipLevel). Target ${[step, ...pairs].filter((r) => r && known.includes(r)).join(' or ') || 'an intermediate release'} first`,
        );
      }
    }
  }
  const unchanged = Object.entries(state.customImages)
    .filter(([field, image]) => state.customImagesAtTarget[field] === image.reference)
    .map(([field]) => field)
    .sort();
  if (unchanged.length > 0) {
    if (!options.ackCustomImages) {
      throw new VersionRefusedError(
        `custom images are set and unchanged since the target was last set (${unchanged.join(', ')}): they would stay on top of ${release}'s images (a forgotten hotfix). Remove them (flotilla version image unset APP FIELD), set ones built for ${release}, or keep them with --ack-custom-images`,
      );
    }
    warnings.push(`custom images kept across the target change: ${unchanged.join(', ')}`);
  }
  return {
    versions: {
      ...state,
      target: release,
      targetSet: { at: options.now, by: options.by },
      customImagesAtTarget: Object.fromEntries(Object.entries(state.customImages).map(([field, image]) => [field, image.reference])),
    },
    warnings,
  };
}

/** The backend key that stands for the image every backend without its own uses. */
const DEFAULT_BACKEND = 'default';

/**
 * The catalog field a custom image field names: a field of
 * overrides/versions/images.yaml, or `FIELD.<backend>` of a per-backend map
 * (images.yaml `backendMaps`): `cinder_volume.ceph` → `cinder_volume_ceph`;
 * `cinder_volume.default` → `cinder_volume`, the image of every backend
 * without its own.
 */
export function customImageTarget(field: string, catalog: Pick<VersionCatalog, 'targets' | 'backendMaps'>): string {
  const { targets } = catalog;
  const dot = field.indexOf('.');
  if (dot < 0) {
    if (targets.has(field)) return field;
    const close = nearest(field, targets.keys());
    throw new VersionRefusedError(
      `"${field}" is not an image field of the app${close ? ` (did you mean "${close}"?)` : ''}: the fields are those of overrides/versions/images.yaml (flotilla version image list APP)`,
    );
  }
  const base = field.slice(0, dot);
  const backend = field.slice(dot + 1);
  if (!catalog.backendMaps.has(base)) {
    const maps = [...catalog.backendMaps].sort();
    throw new VersionRefusedError(
      `"${base}" has no per-backend images: FIELD.<backend> works for the fields images.yaml lists under backendMaps (${maps.join(', ') || 'none'})`,
    );
  }
  const backends = [...targets.keys()].filter((f) => f.startsWith(`${base}_`)).map((f) => f.slice(base.length + 1));
  if (backend === DEFAULT_BACKEND) return base;
  if (backends.includes(backend)) return `${base}_${backend}`;
  throw new VersionRefusedError(
    `${base} has no backend "${backend}": known backends ${[DEFAULT_BACKEND, ...backends].join(', ')} (a backend without its own image uses ${base}.${DEFAULT_BACKEND}; a new backend is a ${base}_<backend> field in overrides/versions/images.yaml)`,
  );
}

/** The state with a custom image set; the reference must be pinned and of the distribution grammar. */
export function withCustomImage(
  state: AppVersions,
  field: string,
  reference: string,
  catalog: Pick<VersionCatalog, 'targets' | 'backendMaps'>,
  who: { by: string; now: string },
): AppVersions {
  customImageTarget(field, catalog);
  const problem = imageReferenceProblem(reference);
  if (problem) throw new VersionRefusedError(`custom image ${field}: ${JSON.stringify(reference)} ${problem}`);
  const image: CustomImage = { reference, set: who.now, by: who.by };
  return { ...state, customImages: { ...state.customImages, [field]: image } };
}

export function withoutCustomImage(state: AppVersions, field: string): AppVersions {
  if (!(field in state.customImages)) {
    const set = Object.keys(state.customImages).sort();
    throw new VersionRefusedError(`no custom image is set for ${field}; set: ${set.join(', ') || 'none'}`);
  }
  const { [field]: _removed, ...rest } = state.customImages;
  return { ...state, customImages: rest };
}

/** The catalog entry of the target: the bundle's, or one an earlier bundle shipped (kept in the record). */
export function targetEntry(catalog: VersionCatalog, state: AppVersions): OpenStackReleaseEntry {
  const own = catalog.versions.get(state.target);
  if (own) return own;
  const known = state.available.find((a) => a.release === state.target);
  if (!known)
    throw new VersionRefusedError(
      `the target release "${state.target}" is neither in this bundle's catalog nor known from an earlier one: set another (flotilla version target APP RELEASE)`,
    );
  const location: SourceLocation = { file: `release ${known.release} (known from bundle ${known.bundle})`, line: 0, column: 0 };
  return {
    release: known.release,
    file: location.file,
    images: new Map(Object.entries(known.images).map(([field, reference]) => [field, { reference, location }])),
    serviceDefaults: known.serviceDefaults,
    root: { kind: 'map', entries: new Map(), origin: { layer: 'catalog', location } },
  };
}

/** The operator's custom images as `resolveImages` takes them, by the catalog field each lands on, each with where it was set. */
export function clusterCustomImages(
  state: AppVersions,
  catalog: Pick<VersionCatalog, 'targets' | 'backendMaps'>,
): Map<string, { reference: string; location: SourceLocation }> {
  const out = new Map<string, { reference: string; location: SourceLocation }>();
  for (const [field, image] of Object.entries(state.customImages)) {
    out.set(customImageTarget(field, catalog), {
      reference: image.reference,
      location: { file: `custom image ${field}, set ${image.set} by ${image.by}`, line: 0, column: 0 },
    });
  }
  return out;
}

/** The state once the app's releases are removed: none runs, so none is deployed. */
export function withoutDeployed(state: AppVersions): AppVersions {
  const { deployed: _deployed, phase: _phase, held: _held, ...rest } = state;
  return rest;
}

/**
 * The state after a bundle whose spec names `specRelease` is uploaded over a
 * deployed app whose target follows the spec: a target change like any
 * other, held to the same rules (no downgrade, no jump the metadata does
 * not allow, no forgotten custom images); the target keeps following the spec.
 */
export function afterSpecUpload(
  previous: AppVersions | undefined,
  catalog: VersionCatalog,
  bundleVersion: string,
  specRelease: string,
  rules: UpgradeRules,
): AppVersions {
  const next = afterUpload(previous, catalog, bundleVersion, specRelease);
  if (!previous?.deployed || previous.targetSet || next.target === previous.target) return next;
  try {
    retarget({ ...next, target: previous.target }, next.target, rules, { by: '', now: '' });
  } catch (error) {
    if (!(error instanceof VersionRefusedError)) throw error;
    throw new VersionRefusedError(
      `bundle ${bundleVersion} changes main.release, and so the target, from ${previous.target} to ${next.target}, which is refused: ${error.message}`,
    );
  }
  return next;
}

/** The state once an update to the target finished with every release Ready on its images: the target is deployed, no phase runs. */
export function deployedTarget(state: AppVersions): AppVersions {
  const { phase: _phase, held: _held, ...rest } = state;
  return { ...rest, deployed: state.target };
}
