/**
 * The release catalog: overrides/versions/<release>.yaml (images and
 * serviceDefaults of one OpenStack release) and overrides/versions/images.yaml
 * (where each image field lands: chart → value path).
 */
import type { Diagnostic, DocPath, SourceLocation } from '../diagnostics/index.js';
import { getNode, toPlain, type ValueNode } from '../document/index.js';
import { malformedImageReference, splitReference, type ReferenceParts } from '../names/index.js';


export interface ImageSetting {
  readonly reference: string;
  readonly location: SourceLocation;
}

export interface VersionEntry {
  readonly release: string;
  readonly file: string;
  readonly images: ReadonlyMap<string, ImageSetting>;
  readonly serviceDefaults: Readonly<Record<string, unknown>>;
  /** The file's tree, for provenance of serviceDefaults. */
  readonly root: ValueNode;
}

export interface ImageTarget {
  readonly chart: string;
  /** Dotted value path inside the chart's values. */
  readonly path: readonly string[];
  readonly location: SourceLocation;
}

export interface VersionCatalog {
  readonly versions: ReadonlyMap<string, VersionEntry>;
  /** image field → where it lands. */
  readonly targets: ReadonlyMap<string, readonly ImageTarget[]>;
}

/** Why an image reference is not acceptable (the distribution grammar, and pinned), or undefined when it is. */
export function imageReferenceProblem(reference: string): string | undefined {
  const malformed = malformedImageReference(reference);
  if (malformed) return `not a valid image reference ([registry/]path[:tag][@sha256:digest]): ${malformed}`;
  const parsed = splitReference(reference) as ReferenceParts;
  if (!parsed.tag && !parsed.digest) return 'has no tag or digest; pin every image';
  if (parsed.tag === 'latest' && !parsed.digest) return 'uses the floating tag "latest"; pin every image';
  return undefined;
}

function diagnostic(message: string, location: SourceLocation | undefined, path: DocPath): Diagnostic {
  return { severity: 'error', message, location, path };
}

export function readVersionFile(root: ValueNode | undefined, file: string, expectedRelease: string): { entry?: VersionEntry; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const at = (path: DocPath) => (root ? getNode(root, path)?.origin.location : undefined) ?? { file, line: 0, column: 0 };
  if (!root || root.kind !== 'map') return { diagnostics: [diagnostic('expected a map with release, images and serviceDefaults', at([]), [])] };
  const plain = toPlain(root) as Record<string, unknown>;
  for (const key of Object.keys(plain)) {
    if (!['release', 'images', 'serviceDefaults', 'description'].includes(key)) {
      diagnostics.push(diagnostic(`unknown key "${key}" (expected release, images, serviceDefaults, description)`, at([key]), [key]));
    }
  }
  if (String(plain.release ?? '') !== expectedRelease) {
    diagnostics.push(diagnostic(`release must be "${expectedRelease}" to match the file name, got ${JSON.stringify(plain.release)}`, at(['release']), ['release']));
  }
  const images = new Map<string, ImageSetting>();
  const imagesNode = getNode(root, ['images']);
  if (imagesNode?.kind !== 'map') diagnostics.push(diagnostic('expected "images": a map of image field → reference', at(['images']), ['images']));
  else {
    for (const [field, node] of imagesNode.entries) {
      const reference = node.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined;
      const problem = reference === undefined ? 'expected a string image reference' : imageReferenceProblem(reference);
      if (problem) diagnostics.push(diagnostic(`image ${field}: ${problem}`, node.origin.location, ['images', field]));
      else images.set(field, { reference: reference as string, location: node.origin.location });
    }
  }
  const defaults = getNode(root, ['serviceDefaults']);
  if (defaults && defaults.kind !== 'map') diagnostics.push(diagnostic('expected "serviceDefaults" to be a map', defaults.origin.location, ['serviceDefaults']));
  if (diagnostics.length > 0) return { diagnostics };
  return {
    entry: { release: expectedRelease, file, images, serviceDefaults: (plain.serviceDefaults ?? {}) as Record<string, unknown>, root },
    diagnostics,
  };
}

export function readImageTargets(root: ValueNode | undefined): { targets: Map<string, ImageTarget[]>; diagnostics: Diagnostic[] } {
  const targets = new Map<string, ImageTarget[]>();
  const diagnostics: Diagnostic[] = [];
  if (!root) return { targets, diagnostics };
  if (root.kind !== 'map') return { targets, diagnostics: [diagnostic('expected a map: image field → {chart: value.path}', root.origin.location, [])] };
  for (const [field, node] of root.entries) {
    if (node.kind !== 'map' || node.entries.size === 0) {
      diagnostics.push(diagnostic(`image field ${field}: expected a map of chart name → dotted value path`, node.origin.location, [field]));
      continue;
    }
    const list: ImageTarget[] = [];
    for (const [chart, pathNode] of node.entries) {
      const path = pathNode.kind === 'scalar' && typeof pathNode.value === 'string' ? pathNode.value : '';
      if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(path)) {
        diagnostics.push(diagnostic(`image field ${field} → chart ${chart}: expected a dotted value path such as images.tags.${field}`, pathNode.origin.location, [field, chart]));
        continue;
      }
      list.push({ chart, path: path.split('.'), location: pathNode.origin.location });
    }
    targets.set(field, list);
  }
  return { targets, diagnostics };
}

/** Cross-checks: every image field of every release lands somewhere. */
export function checkCatalog(catalog: VersionCatalog): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const entry of catalog.versions.values()) {
    for (const [field, setting] of entry.images) {
      if (!catalog.targets.has(field)) {
        out.push(diagnostic(`image field ${field} of release ${entry.release} lands nowhere: add it to overrides/versions/images.yaml`, setting.location, ['images', field]));
      }
    }
  }
  return out;
}
