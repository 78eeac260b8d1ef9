/**
 * What a StarlingX platform (sysinv, starlingx/config) does with an
 * application tarball's fluxcd-manifests at upload, transcribed from its
 * code for tests — on purpose not shared with src/starlingx, so the export is
 * held to the platform's rules as sysinv states them, not to its own reading:
 *
 * - which releases deploy (AppOperator's chart listing): every entry of the
 *   top kustomization's `resources` but `base` whose folder holds
 *   helmrelease.yaml and kustomization.yaml — for an app without Python
 *   plugins, `disabled_charts` and the charts' `enabled` attribute play no
 *   part;
 * - the image rewrite (AppImageParser and `_get_image_tags_by_charts_fluxcd`):
 *   image references found in the chart's values.yaml and in the release's
 *   static overrides are merged (static over chart), prefixed with
 *   `registry.local:9001/` (and `docker.io/` when the first part is not a
 *   domain), and merged back into the static overrides file, written with
 *   PyYAML's safe_dump. System and user overrides are left as they are.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';

type Values = Record<string, unknown>;
const isDict = (v: unknown): v is Values => typeof v === 'object' && v !== null && !Array.isArray(v);
const TAG_LIST = ['tag', 'imageTag', 'imagetag'];

/** Release folders sysinv deploys, by HelmRelease name, in kustomization order. */
export function sysinvChartListing(manifests: string): { release: string; folder: string }[] {
  const top = load(readFileSync(join(manifests, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  const listed: { release: string; folder: string }[] = [];
  for (const group of top.resources) {
    if (group === 'base') continue;
    const folder = join(manifests, group);
    if (!existsSync(join(folder, 'helmrelease.yaml')) || !existsSync(join(folder, 'kustomization.yaml'))) continue;
    const release = load(readFileSync(join(folder, 'helmrelease.yaml'), 'utf8')) as { metadata: { name: string } };
    listed.push({ release: release.metadata.name, folder });
  }
  return listed;
}

/** sysinv's `_find_images_in_dict`, merged as its `find_images_in_dict` merges the results. */
function findImages(values: unknown): Values {
  const found: Values = {};
  if (!isDict(values)) return found;
  for (const [k, v] of Object.entries(values)) {
    const key = k.toLowerCase();
    if (key === 'images') {
      if (isDict(v) && 'tags' in v) found[k] = { tags: v.tags };
      else if (isDict(v) && Object.keys(v).length > 0) found[k] = v;
    } else if (key === 'image') {
      if (isDict(v)) {
        const image: Values = {};
        if ('repository' in v) {
          image.repository = v.repository;
          if ('registry' in v) image.repository = `${String(v.registry)}/${String(v.repository)}`;
        }
        if ('tag' in v) image.tag = v.tag;
        if (Object.keys(image).length > 0) found[k] = image;
      } else if (typeof v === 'string' || v === null) {
        found[k] = v;
      }
    } else if (TAG_LIST.includes(key)) {
      if (typeof v === 'string' || v === null) found[k] = v;
    } else if (isDict(v)) {
      const inner = findImages(v);
      if (Object.keys(inner).length > 0) found[k] = inner;
    }
  }
  return found;
}

/** sysinv's merge_dict: `overrides` into (a copy of) `source`. */
function mergeDict(source: Values, overrides: Values): Values {
  const out: Values = { ...source };
  for (const [k, v] of Object.entries(overrides)) out[k] = isDict(v) ? mergeDict(isDict(out[k]) ? out[k] : {}, v) : v;
  return out;
}

/** `is_valid_domain_name` on the part before the first `/`, as sysinv takes it (`v[:v.find('/')]`). */
const firstPartIsDomain = (v: string): boolean => /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+(:[0-9]+)?$/.test(v.slice(0, v.indexOf('/')));

/** sysinv's update_images_with_local_registry. */
function withLocalRegistry(images: Values): Values {
  const out: Values = {};
  for (const [k, v] of Object.entries(images)) {
    if (typeof v === 'string' && v !== '' && !/^.+:.+\//.test(v) && !TAG_LIST.includes(k))
      out[k] = `registry.local:9001/${firstPartIsDomain(v) ? v : `docker.io/${v}`}`;
    else if (isDict(v)) out[k] = withLocalRegistry(v);
    else out[k] = v;
  }
  return out;
}

/** A chart archive's values.yaml, read with GNU tar. */
function chartValues(archive: string, chart: string): unknown {
  return load(execFileSync('tar', ['-xzOf', archive, `${chart}/values.yaml`], { encoding: 'utf8' }));
}

/**
 * The upload's image rewrite on an extracted tarball (`root` holds charts/
 * and fluxcd-manifests/): each listed release's static overrides file gets the
 * rewritten references, as sysinv writes it. Returns the files it rewrote.
 */
export function sysinvRewriteImages(root: string): string[] {
  const rewritten: string[] = [];
  for (const { folder } of sysinvChartListing(join(root, 'fluxcd-manifests'))) {
    const release = load(readFileSync(join(folder, 'helmrelease.yaml'), 'utf8')) as {
      spec: { chart: { spec: { chart: string; version: string } }; valuesFrom: { valuesKey: string }[] };
    };
    const { chart, version } = release.spec.chart.spec;
    const chartImages = findImages(chartValues(join(root, 'charts', `${chart}-${version}.tgz`), chart));
    const staticKey = release.spec.valuesFrom.find((v) => v.valuesKey.endsWith('static-overrides.yaml'))?.valuesKey;
    if (!staticKey) throw new Error(`${folder}: no static overrides in valuesFrom (sysinv refuses the app)`);
    const staticFile = join(folder, staticKey);
    const staticValues = (load(readFileSync(staticFile, 'utf8')) ?? {}) as Values;
    const staticImages = findImages(staticValues);
    const merged = withLocalRegistry(mergeDict(chartImages, staticImages));
    if (JSON.stringify(merged) === JSON.stringify(staticImages)) continue;
    writeFileSync(staticFile, dump(mergeDict(staticValues, merged)));
    rewritten.push(staticFile);
  }
  return rewritten;
}
