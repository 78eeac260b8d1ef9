/**
 * Finding the container images an app references: `images.tags.<field>`
 * (openstack-helm style), `image: <ref>` strings and `image: {repository, tag}`
 * maps in chart values and static overrides, and the release catalog's images.
 */
import { APP_FILES } from '../app/index.js';
import { APP_DIR, bundleFolder } from '../bundle/index.js';
import { parseYamlValue } from '../document/index.js';
import type { BundledChart } from './bundle.js';

export interface ImageReference {
  readonly reference: string;
  /** Where it was found, e.g. `charts/keystone-0.1.0.tgz values.yaml images.tags.keystone_api`. */
  readonly where: string;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function imagesInValues(values: unknown, where: string): ImageReference[] {
  const found: ImageReference[] = [];
  const walk = (value: unknown, path: string[]) => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...path, String(i)]));
    if (!isMap(value)) return;
    for (const [key, child] of Object.entries(value)) {
      const here = [...path, key];
      const underTags = path.length >= 2 && path[path.length - 1] === 'tags' && path[path.length - 2] === 'images';
      if (typeof child === 'string' && child !== '' && (underTags || key === 'image')) {
        found.push({ reference: child, where: `${where} ${here.join('.')}` });
      } else if (key === 'image' && isMap(child) && typeof child.repository === 'string') {
        const tag = child.tag === undefined || child.tag === null || child.tag === '' ? '' : `:${String(child.tag)}`;
        found.push({ reference: `${child.repository}${tag}`, where: `${where} ${here.join('.')}` });
      } else walk(child, here);
    }
  };
  walk(values, []);
  return found;
}

/** Every image a tarball references: chart defaults, static overrides, release catalogs. */
export function bundleImages(bundle: { readonly files: ReadonlyMap<string, Buffer> }, charts: readonly BundledChart[]): ImageReference[] {
  const fromCharts = charts.flatMap(({ file, archive }) => {
    const values = archive.chart.files.find((f) => f.path === 'values.yaml');
    return values ? imagesInValues(parse(values.data), `${file} values.yaml`) : [];
  });
  return [...fromCharts, ...appImages(bundle)];
}

/** Images in the app payload: static overrides, and every release catalog's `images` map. */
function appImages(bundle: { readonly files: ReadonlyMap<string, Buffer> }): ImageReference[] {
  const found: ImageReference[] = [];
  const app = bundleFolder(bundle.files, APP_DIR);
  const inFolder = (path: string, folder: string) => path.startsWith(`${folder}/`) && path.endsWith('.yaml') && !path.slice(folder.length + 1).includes('/');
  for (const where of [...app.keys()].sort()) {
    if (inFolder(where, APP_FILES.static)) found.push(...imagesInValues(parse(app.get(where)), where));
    if (inFolder(where, APP_FILES.versions) && where !== APP_FILES.imageTargets) {
      const catalog = parse(app.get(where));
      const images = isMap(catalog) && isMap(catalog.images) ? catalog.images : {};
      for (const [field, ref] of Object.entries(images)) if (typeof ref === 'string') found.push({ reference: ref, where: `${where} images.${field}` });
    }
  }
  return found;
}

function parse(data: Buffer | undefined): unknown {
  try {
    return data ? parseYamlValue(data.toString('utf8'), 'values') : undefined;
  } catch {
    return undefined;
  }
}
