/**
 * Versions: the release catalog, the target release of a spec, and image
 * resolution (custom image if set, else the target release's default).
 */
import { FlotillaError, type SourceLocation } from '../diagnostics/index.js';
import type { VersionCatalog, VersionEntry } from './catalog.js';

export * from './catalog.js';

export class UnknownReleaseError extends FlotillaError {}

export function targetVersion(catalog: VersionCatalog, release: string, location?: SourceLocation): VersionEntry {
  const entry = catalog.versions.get(release);
  if (!entry) {
    const known = [...catalog.versions.keys()].sort();
    throw new UnknownReleaseError(
      `OpenStack release "${release}" is not in the catalog (overrides/versions/); available: ${known.join(', ') || 'none'}`,
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

/** Images of the target release with custom images on top; a custom image for an unknown field is an error. */
export function resolveImages(
  catalog: VersionCatalog,
  target: VersionEntry,
  custom: ReadonlyMap<string, { reference: string; location: SourceLocation }>,
): Map<string, ResolvedImage> {
  const resolved = new Map<string, ResolvedImage>();
  for (const [field, setting] of target.images) resolved.set(field, { field, reference: setting.reference, source: 'release', location: setting.location });
  for (const [field, setting] of custom) {
    if (!catalog.targets.has(field)) {
      throw new FlotillaError(`custom image for unknown image field "${field}"; known fields: see overrides/versions/images.yaml`, { location: setting.location });
    }
    resolved.set(field, { field, reference: setting.reference, source: 'custom', location: setting.location });
  }
  return resolved;
}
