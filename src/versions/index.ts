/**
 * Versions: the release catalog, the target release of a spec, and image
 * resolution (custom image if set, else the target release's default).
 */
import { FlotillaError, type Diagnostic, type SourceLocation } from '../diagnostics/index.js';
import { imageReferenceProblem, type VersionCatalog, type VersionEntry } from './catalog.js';

export * from './catalog.js';

export class UnknownReleaseError extends FlotillaError {}

export function targetVersion(catalog: VersionCatalog, release: string, location?: SourceLocation): VersionEntry {
  const entry = catalog.versions.get(release);
  if (!entry) {
    const known = [...catalog.versions.keys()].sort();
    throw new UnknownReleaseError(
      `release "${release}" is not in the version catalog (overrides/versions/); available: ${known.join(', ') || 'none'}`,
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
  target: VersionEntry,
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
