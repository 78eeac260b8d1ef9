/**
 * The container images an app references, found as the values engine finds
 * them (src/values `imagesIn`: `images.tags.<field>`, `image:` strings and
 * maps) in chart values and static overrides, and the release catalog's
 * images; each read with the distribution reference grammar (src/names).
 */
import { APP_FILES } from '../app/index.js';
import { APP_DIR, bundleFolder } from '../tarball/index.js';
import { formatLocation, formatPath } from '../diagnostics/index.js';
import { parseYaml, type ValueNode } from '../yaml/index.js';
import { malformedImageReference } from '../names/index.js';
import { imagesIn } from '../values/index.js';
import type { BundledChart } from './bundle.js';

export interface ImageReference {
  readonly reference: string;
  /** Where it was found, e.g. `charts/keystone-0.1.0.tgz values.yaml:12:5 images.tags.keystone_api`. */
  readonly where: string;
  /** Why it is not an image reference, when it is not one. */
  readonly problem?: string;
}

function found(root: ValueNode | undefined, prefix: string): ImageReference[] {
  return imagesIn(root)
    .filter((image) => !image.reference.includes('{{'))
    .map((image) => {
      const problem = malformedImageReference(image.reference);
      return {
        reference: image.reference,
        where: `${prefix}${formatLocation(image.node.origin.location)} ${formatPath(image.path)}`,
        ...(problem ? { problem } : {}),
      };
    });
}

/** Every image a tarball references: chart defaults, static overrides, release catalogs. */
export function bundleImages(bundle: { readonly files: ReadonlyMap<string, Buffer> }, charts: readonly BundledChart[]): ImageReference[] {
  const fromCharts = charts.flatMap(({ file, archive }) => {
    const values = archive.chart.files.find((f) => f.path === 'values.yaml');
    return values ? found(parse(values.data, 'values.yaml'), `${file} `) : [];
  });
  return [...fromCharts, ...appImages(bundle)];
}

/** Images in the app payload: static overrides, and every release catalog's `images` map. */
function appImages(bundle: { readonly files: ReadonlyMap<string, Buffer> }): ImageReference[] {
  const images: ImageReference[] = [];
  const app = bundleFolder(bundle.files, APP_DIR);
  const inFolder = (path: string, folder: string) => path.startsWith(`${folder}/`) && path.endsWith('.yaml') && !path.slice(folder.length + 1).includes('/');
  for (const where of [...app.keys()].sort()) {
    if (inFolder(where, APP_FILES.static)) images.push(...found(parse(app.get(where), where), ''));
    if (inFolder(where, APP_FILES.versions) && where !== APP_FILES.imageTargets) {
      const catalog = parse(app.get(where), where);
      const map = catalog?.kind === 'map' ? catalog.entries.get('images') : undefined;
      if (map?.kind !== 'map') continue;
      for (const [field, ref] of map.entries) {
        if (ref.kind !== 'scalar' || typeof ref.value !== 'string') continue;
        const problem = malformedImageReference(ref.value);
        images.push({ reference: ref.value, where: `${formatLocation(ref.origin.location)} images.${field}`, ...(problem ? { problem } : {}) });
      }
    }
  }
  return images;
}

/** A file that does not parse holds no images here: the checks that read it as what it is report it. */
function parse(data: Buffer | undefined, file: string): ValueNode | undefined {
  try {
    return data ? parseYaml(data.toString('utf8'), file, { layer: file }).root : undefined;
  } catch {
    return undefined;
  }
}
