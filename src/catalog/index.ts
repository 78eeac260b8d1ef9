/**
 * The catalog of OpenStack releases an app ships (overrides/versions/), the
 * target release of a spec, and image resolution (custom image if set, else
 * the target release's default). In this folder "release" is an OpenStack
 * release (2025.1), never a Helm release; types and functions say so.
 */
import { FlotillaError, type Diagnostic, type SourceLocation } from '../diagnostics/index.js';
import { imageReferenceProblem, type VersionCatalog, type OpenStackReleaseEntry } from './catalog.js';

export * from './catalog.js';
export * from './model.js';
export type { AppVersions, AvailableOpenStackRelease, CustomImage } from './state.js';

export class UnknownOpenStackReleaseError extends FlotillaError {}

/**
 * The target of an app without a version catalog: no images, no
 * serviceDefaults; its charts run the images their values set.
 */
const NO_CATALOG_TARGET: OpenStackReleaseEntry = {
  release: '',
  file: '',
  images: new Map(),
  serviceDefaults: {},
  root: { kind: 'map', entries: new Map(), origin: { layer: 'catalog', location: { file: '', line: 0, column: 0 } } },
};

/**
 * The catalog entry `main.release` names. The catalog is a feature an app
 * turns on: without `overrides/versions/<release>.yaml` files and without
 * `main.release` an app has {@link NO_CATALOG_TARGET}; with either, both.
 */
export function targetVersion(catalog: VersionCatalog, release: string, location?: SourceLocation): OpenStackReleaseEntry {
  const known = [...catalog.versions.keys()].sort();
  if (release === '') {
    if (known.length === 0) return NO_CATALOG_TARGET;
    throw new UnknownOpenStackReleaseError(
      `main.release is not set, and the app has a version catalog (overrides/versions/): set it to one of ${known.join(', ')}`,
      {
        location,
      },
    );
  }
  const entry = catalog.versions.get(release);
  if (!entry) {
    const create = `create overrides/versions/${release}.yaml (release: "${release}", its images and serviceDefaults)`;
    throw new UnknownOpenStackReleaseError(
      known.length === 0
        ? `release "${release}" is not in the version catalog: the app has none; ${create}, or remove main.release (an app without a catalog needs none)`
        : `release "${release}" is not in the version catalog (overrides/versions/); available: ${known.join(', ')}; or ${create}`,
      { location },
    );
  }
  return entry;
}

export type ImageSource = 'release' | 'custom';

export interface ResolvedImage {
  readonly field: string;
  readonly reference: string;
  readonly source: ImageSource;
  readonly location: SourceLocation;
}

/**
 * The images the charts get: the target release's, with custom images on top.
 * A custom image for a field no chart takes, or one that is not a pinned
 * reference, is an error at the line that sets it.
 */
export function resolveImages(
  catalog: VersionCatalog,
  target: OpenStackReleaseEntry,
  custom: ReadonlyMap<string, { reference: string; location: SourceLocation }>,
): { images: Map<string, ResolvedImage>; diagnostics: Diagnostic[] } {
  const images = new Map<string, ResolvedImage>();
  const diagnostics: Diagnostic[] = [];
  for (const [field, setting] of target.images) images.set(field, { field, reference: setting.reference, source: 'release', location: setting.location });
  for (const [field, setting] of custom) {
    const path = ['main', 'customImages', field];
    const problem = catalog.targets.has(field)
      ? imageReferenceProblem(setting.reference)
      : `is not an image field of the catalog (fields: overrides/versions/images.yaml)`;
    if (problem) diagnostics.push({ severity: 'error', message: `custom image ${field}: ${problem}`, location: setting.location, path });
    else images.set(field, { field, reference: setting.reference, source: 'custom', location: setting.location });
  }
  return { images, diagnostics };
}
