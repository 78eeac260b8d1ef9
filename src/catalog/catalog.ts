/**
 * The release catalog: overrides/versions/<release>.yaml (images and
 * serviceDefaults of one OpenStack release) and overrides/versions/images.yaml
 * (where each image field lands: chart → value path).
 */
import type { Diagnostic, DocPath, SourceLocation } from '../diagnostics/index.js';
import { getNode, toPlain, type ValueNode } from '../yaml/index.js';
import { malformedImageReference, splitReference, type ReferenceParts } from '../names/index.js';

export interface ImageSetting {
  readonly reference: string;
  readonly location: SourceLocation;
}

export interface OpenStackReleaseEntry {
  readonly release: string;
  readonly file: string;
  readonly images: ReadonlyMap<string, ImageSetting>;
  readonly serviceDefaults: Readonly<Record<string, unknown>>;
  /** The file's tree, for provenance of serviceDefaults. */
  readonly root: ValueNode;
}

export interface ImageTarget {
  readonly chart: string;
  /** Value path inside the chart's values: of the whole reference, or (with `split`) of its repository. */
  readonly path: readonly string[];
  /** The tag's and the digest's own paths, for a chart that takes `image.repository` + `image.tag` (what `helm create` writes). */
  readonly split?: { readonly tag: readonly string[]; readonly digest?: readonly string[] };
  readonly location: SourceLocation;
}

/** The keys of a split landing in images.yaml: `{repository: PATH, tag: PATH, digest: PATH}` (digest optional). */
const SPLIT_KEYS = ['repository', 'tag', 'digest'] as const;

export interface VersionCatalog {
  readonly versions: ReadonlyMap<string, OpenStackReleaseEntry>;
  /** image field → where it lands. */
  readonly targets: ReadonlyMap<string, readonly ImageTarget[]>;
  /** Image fields with one image per backend (images.yaml `backendMaps`). */
  readonly backendMaps: ReadonlySet<string>;
  /** The service defaults the app declares (overrides/service-defaults.yaml): fallbacks and annotations. */
  readonly defaults: ReadonlyMap<string, ServiceDefaultDeclaration>;
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

export function readVersionFile(
  root: ValueNode | undefined,
  file: string,
  expectedRelease: string,
): { entry?: OpenStackReleaseEntry; diagnostics: Diagnostic[] } {
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
    diagnostics.push(
      diagnostic(`release must be "${expectedRelease}" to match the file name, got ${JSON.stringify(plain.release)}`, at(['release']), ['release']),
    );
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
  if (defaults && defaults.kind !== 'map')
    diagnostics.push(diagnostic('expected "serviceDefaults" to be a map', defaults.origin.location, ['serviceDefaults']));
  if (diagnostics.length > 0) return { diagnostics };
  return {
    entry: { release: expectedRelease, file, images, serviceDefaults: (plain.serviceDefaults ?? {}) as Record<string, unknown>, root },
    diagnostics,
  };
}

/**
 * The key of images.yaml listing per-backend maps: each FIELD named there,
 * with its `FIELD_<backend>` fields, is one image per backend
 * (`FIELD.<backend>` to `flotilla version image`), FIELD the image of
 * every backend without its own.
 */
const BACKEND_MAPS_KEY = 'backendMaps';

export function readImageTargets(root: ValueNode | undefined): { targets: Map<string, ImageTarget[]>; backendMaps: Set<string>; diagnostics: Diagnostic[] } {
  const targets = new Map<string, ImageTarget[]>();
  const backendMaps = new Set<string>();
  const diagnostics: Diagnostic[] = [];
  if (!root) return { targets, backendMaps, diagnostics };
  if (root.kind !== 'map')
    return { targets, backendMaps, diagnostics: [diagnostic('expected a map: image field → {chart: value.path}', root.origin.location, [])] };
  for (const [field, node] of root.entries) {
    if (field === BACKEND_MAPS_KEY) {
      const names = node.kind === 'seq' ? node.items : [];
      if (node.kind !== 'seq')
        diagnostics.push(
          diagnostic(`${BACKEND_MAPS_KEY}: expected a list of image fields that have one image per backend (FIELD_<backend>)`, node.origin.location, [field]),
        );
      for (const item of names) {
        if (item.kind === 'scalar' && typeof item.value === 'string') backendMaps.add(item.value);
        else diagnostics.push(diagnostic(`${BACKEND_MAPS_KEY}: expected an image field name`, item.origin.location, [field]));
      }
      continue;
    }
    if (node.kind !== 'map' || node.entries.size === 0) {
      diagnostics.push(diagnostic(`image field ${field}: expected a map of chart name → dotted value path`, node.origin.location, [field]));
      continue;
    }
    const list: ImageTarget[] = [];
    for (const [chart, pathNode] of node.entries) {
      const expected = `expected a dotted value path such as images.tags.${field}, or {repository: image.repository, tag: image.tag, digest: image.digest} (digest optional)`;
      if (pathNode.kind === 'map') {
        const paths = new Map<string, string[]>();
        for (const [key, partNode] of pathNode.entries) {
          const path = dottedPath(partNode);
          if (!(SPLIT_KEYS as readonly string[]).includes(key) || path === undefined) {
            diagnostics.push(diagnostic(`image field ${field} → chart ${chart} → ${key}: ${expected}`, partNode.origin.location, [field, chart, key]));
            continue;
          }
          paths.set(key, path);
        }
        const repository = paths.get('repository');
        const tag = paths.get('tag');
        if (repository === undefined || tag === undefined) {
          if (paths.size === pathNode.entries.size)
            diagnostics.push(
              diagnostic(`image field ${field} → chart ${chart}: ${expected}; repository and tag are required`, pathNode.origin.location, [field, chart]),
            );
          continue;
        }
        const digest = paths.get('digest');
        list.push({ chart, path: repository, split: { tag, ...(digest ? { digest } : {}) }, location: pathNode.origin.location });
        continue;
      }
      const path = dottedPath(pathNode);
      if (path === undefined) {
        diagnostics.push(diagnostic(`image field ${field} → chart ${chart}: ${expected}`, pathNode.origin.location, [field, chart]));
        continue;
      }
      list.push({ chart, path, location: pathNode.origin.location });
    }
    targets.set(field, list);
  }
  const mapsNode = getNode(root, [BACKEND_MAPS_KEY]);
  for (const field of backendMaps) {
    if (!targets.has(field))
      diagnostics.push(diagnostic(`${BACKEND_MAPS_KEY}: ${field} is not an image field of this file`, mapsNode?.origin.location, [BACKEND_MAPS_KEY]));
  }
  return { targets, backendMaps, diagnostics };
}

/** A dotted value path (`images.tags.web`) as its keys, or undefined when the node is not one. */
function dottedPath(node: ValueNode): string[] | undefined {
  const text = node.kind === 'scalar' && typeof node.value === 'string' ? node.value : '';
  return /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(text) ? text.split('.') : undefined;
}

/**
 * Cross-checks: every image field of every release lands somewhere; once an
 * app declares its service defaults, every release's are declared (a
 * warning: an undeclared one has no fallback and no annotation).
 */
export function checkCatalog(catalog: VersionCatalog): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const entry of catalog.versions.values()) {
    for (const [field, setting] of entry.images) {
      if (!catalog.targets.has(field)) {
        out.push(
          diagnostic(`image field ${field} of release ${entry.release} lands nowhere: add it to overrides/versions/images.yaml`, setting.location, [
            'images',
            field,
          ]),
        );
      }
    }
    if (catalog.defaults.size === 0) continue;
    for (const name of Object.keys(entry.serviceDefaults)) {
      if (catalog.defaults.has(name)) continue;
      out.push({
        severity: 'warning',
        message: `serviceDefaults.${name} of release ${entry.release} is not declared in overrides/service-defaults.yaml: a release lacking it gets no fallback, and no HelmRelease is annotated with it`,
        location: getNode(entry.root, ['serviceDefaults', name])?.origin.location ?? { file: entry.file, line: 0, column: 0 },
        path: ['serviceDefaults', name],
      });
    }
  }
  return out;
}

/**
 * A service default the app declares (overrides/service-defaults.yaml):
 * the value a catalog entry lacking it gets, and the HelmRelease annotation
 * it becomes on the charts it affects.
 */
export interface ServiceDefaultDeclaration {
  readonly name: string;
  readonly fallback: string | number | boolean;
  /** Written on the HelmRelease of each chart in `charts`, always: `"true"`/`"false"` (or the value as text). */
  readonly annotation?: string;
  readonly charts: readonly string[];
  readonly location: SourceLocation;
}

/** A service default as it applies to a target: the release's own value, or the documented fallback. */
export interface EffectiveServiceDefault {
  readonly value: string | number | boolean;
  readonly source: 'release' | 'fallback';
}

const ANNOTATION_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

export function readServiceDefaults(root: ValueNode | undefined): { declarations: Map<string, ServiceDefaultDeclaration>; diagnostics: Diagnostic[] } {
  const declarations = new Map<string, ServiceDefaultDeclaration>();
  const diagnostics: Diagnostic[] = [];
  if (!root) return { declarations, diagnostics };
  if (root.kind !== 'map')
    return { declarations, diagnostics: [diagnostic('expected a map: service default → {fallback, annotation, charts}', root.origin.location, [])] };
  for (const [name, node] of root.entries) {
    const plain = toPlain(node) as Record<string, unknown> | null;
    const at = (key: string) => getNode(node, [key])?.origin.location ?? node.origin.location;
    if (node.kind !== 'map' || plain === null) {
      diagnostics.push(diagnostic(`service default ${name}: expected a map with fallback, and annotation with charts`, node.origin.location, [name]));
      continue;
    }
    const problems: Diagnostic[] = [];
    for (const key of Object.keys(plain)) {
      if (!['fallback', 'annotation', 'charts', 'description'].includes(key))
        problems.push(diagnostic(`service default ${name}: unknown key "${key}" (expected fallback, annotation, charts, description)`, at(key), [name, key]));
    }
    const fallback = plain.fallback;
    if (!['string', 'number', 'boolean'].includes(typeof fallback))
      problems.push(
        diagnostic(`service default ${name}: "fallback" must be a boolean, number or string (what a release lacking it gets)`, at('fallback'), [
          name,
          'fallback',
        ]),
      );
    const annotation = plain.annotation;
    if (annotation !== undefined && (typeof annotation !== 'string' || !ANNOTATION_KEY.test(annotation)))
      problems.push(
        diagnostic(`service default ${name}: "annotation" must be an annotation key such as glance.openstack.org/wsgi`, at('annotation'), [name, 'annotation']),
      );
    const charts = plain.charts ?? [];
    if (!Array.isArray(charts) || !charts.every((c) => typeof c === 'string'))
      problems.push(diagnostic(`service default ${name}: "charts" must be a list of chart names`, at('charts'), [name, 'charts']));
    else if ((annotation === undefined) !== (charts.length === 0))
      problems.push(
        diagnostic(
          `service default ${name}: "annotation" and "charts" go together (the annotation is written on those charts' HelmReleases)`,
          node.origin.location,
          [name],
        ),
      );
    diagnostics.push(...problems);
    if (problems.length === 0) {
      declarations.set(name, {
        name,
        fallback: fallback as string | number | boolean,
        ...(annotation ? { annotation: annotation as string } : {}),
        charts: charts as string[],
        location: node.origin.location,
      });
    }
  }
  return { declarations, diagnostics };
}

/** A target's service defaults: each declared one with the release's value or its fallback, then those only the release has. */
export function effectiveServiceDefaults(
  declarations: ReadonlyMap<string, ServiceDefaultDeclaration>,
  serviceDefaults: Readonly<Record<string, unknown>>,
): Map<string, EffectiveServiceDefault> {
  const out = new Map<string, EffectiveServiceDefault>();
  for (const [name, declaration] of declarations) {
    const own = serviceDefaults[name];
    const usable = typeof own === 'string' || typeof own === 'number' || typeof own === 'boolean';
    out.set(name, usable ? { value: own, source: 'release' } : { value: declaration.fallback, source: 'fallback' });
  }
  for (const [name, value] of Object.entries(serviceDefaults)) {
    if (!out.has(name) && (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) out.set(name, { value, source: 'release' });
  }
  return out;
}

/** The annotations a chart's HelmRelease carries for the service defaults that affect it. */
export function serviceDefaultAnnotations(
  declarations: ReadonlyMap<string, ServiceDefaultDeclaration>,
  effective: ReadonlyMap<string, EffectiveServiceDefault>,
  chart: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const declaration of declarations.values()) {
    const value = effective.get(declaration.name)?.value ?? declaration.fallback;
    if (declaration.annotation && declaration.charts.includes(chart)) out[declaration.annotation] = String(value);
  }
  return out;
}
