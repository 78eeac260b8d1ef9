/**
 * Image references in an app source tree: where each image field of the
 * catalog is set and where it lands (`images list`), and rewriting them
 * (`images bump --to RELEASE`, `images bump --field F=REF`).
 *
 * A reference is written in four kinds of places: the release catalog
 * (overrides/versions/<release>.yaml), custom images in the deployment spec
 * (main.customImages), static overrides (at the value paths
 * overrides/versions/images.yaml names, and StarlingX's `images.tags`), and
 * values templates (a default written in the template text).
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { APP_FILES, loadApp, type App } from '../app/index.js';
import { BUILD_TOKEN } from '../build/index.js';
import { FlotillaError, formatLocation, type SourceLocation } from '../diagnostics/index.js';
import { getNode, parseYaml, type ValueNode } from '../yaml/index.js';
import { imageReferenceProblem, targetVersion } from '../catalog/index.js';
import { ChangeSet, type FileChange } from './changes.js';
import { formatValuePath, type ValuePath } from './path.js';

export type ImagePlaceKind = 'catalog' | 'custom' | 'static' | 'template';

/** One place an image reference is written. */
export interface ImagePlace {
  readonly kind: ImagePlaceKind;
  readonly reference: string;
  readonly location: SourceLocation;
  /** The value path inside a YAML file (catalog, custom, static). */
  readonly path?: ValuePath;
  /** For static overrides: the chart. */
  readonly chart?: string;
  /** For templates: the offset of the reference in the text. */
  readonly offset?: number;
}

/** Where a field lands: a chart and its value path, with the chart default's line when values.yaml has it. */
export interface ImageLanding {
  readonly chart: string;
  readonly path: string;
  /** The line of overrides/versions/images.yaml that says so. */
  readonly declaredAt: SourceLocation;
  /** The chart's own default (charts/<chart>/values.yaml), when it has one. */
  readonly chartDefault?: SourceLocation;
  /** False when no release of the app uses the chart. */
  readonly chartInApp: boolean;
}

export interface ImageField {
  /** The catalog field, or `<chart>:<value path>` for an image only static overrides hold. */
  readonly field: string;
  /** The image the charts get (custom image, else the app's release), when the catalog has one. */
  readonly reference?: string;
  readonly source?: 'release' | 'custom' | 'static';
  readonly lands: readonly ImageLanding[];
  /** Every place the field's reference is written. */
  readonly places: readonly ImagePlace[];
  /** Problems to report (a field that lands nowhere, a static override that disagrees). */
  readonly problems: readonly string[];
}

export interface ImageInventory {
  readonly release: string;
  readonly fields: readonly ImageField[];
}

/** Every image field of the app, its reference, where it lands and where it is written. */
export async function listImages(appDir: string): Promise<ImageInventory> {
  const app = await loadApp(appDir);
  return inventory(app, await scanPlaces(app));
}

export interface Places {
  readonly byField: Map<string, ImagePlace[]>;
  /** Static overrides' images that no catalog field lands on. */
  readonly unmapped: ImagePlace[];
  readonly templates: ImagePlace[];
  readonly chartValues: ReadonlyMap<string, ValueNode | undefined>;
}

function inventory(app: App, places: Places): ImageInventory {
  const fields: ImageField[] = [];
  const names = new Set([...app.catalog.targets.keys(), ...app.target.images.keys(), ...app.images.keys()]);
  const chartsInApp = new Set(app.releases.map((r) => r.chart));
  for (const field of [...names].sort()) {
    const resolved = app.images.get(field);
    const problems: string[] = [];
    const targets = app.catalog.targets.get(field) ?? [];
    if (targets.length === 0) problems.push(`lands nowhere: ${field} is not in ${APP_FILES.imageTargets}`);
    const lands = targets.map((t) => ({
      chart: t.chart,
      // A split landing reads as the paths its parts go to: image.repository + image.tag (+ image.digest).
      path: [t.path, ...(t.split ? [t.split.tag, ...(t.split.digest ? [t.split.digest] : [])] : [])].map((p) => p.join('.')).join(' + '),
      declaredAt: t.location,
      chartDefault: getNode(places.chartValues.get(t.chart), t.path)?.origin.location,
      chartInApp: chartsInApp.has(t.chart),
    }));
    for (const landing of lands) if (!landing.chartInApp) problems.push(`lands in chart ${landing.chart}, which no release of ${APP_FILES.releases} uses`);
    const written = [...(places.byField.get(field) ?? [])];
    if (resolved) written.push(...places.templates.filter((p) => p.reference === resolved.reference && !written.includes(p)));
    for (const place of written) {
      if (place.kind === 'static' && resolved && place.reference !== resolved.reference) {
        problems.push(
          `${formatLocation(place.location)}: the static override holds ${place.reference}, not ${resolved.reference}; the system overrides win over it`,
        );
      }
    }
    fields.push({ field, reference: resolved?.reference, source: resolved?.source, lands, places: written, problems });
  }
  for (const place of places.unmapped) {
    fields.push({
      field: `${place.chart}:${formatValuePath(place.path ?? [])}`,
      reference: place.reference,
      source: 'static',
      lands: [],
      places: [place],
      problems: [],
    });
  }
  return { release: app.target.release, fields };
}

/** Each chart's values.yaml, for the line of the default an image field overrides. */
async function readChartValues(app: App): Promise<Map<string, ValueNode | undefined>> {
  const out = new Map<string, ValueNode | undefined>();
  for (const release of app.releases) {
    if (out.has(release.chart)) continue;
    const file = join(release.chartPath, 'values.yaml');
    out.set(release.chart, existsSync(app.path(file)) ? parseYaml(await readFile(app.path(file), 'utf8'), file, { layer: 'chart' }).root : undefined);
  }
  return out;
}

/** Every place an image reference is written, by field. */
export async function scanPlaces(app: App): Promise<Places> {
  const byField = new Map<string, ImagePlace[]>();
  const add = (field: string, place: ImagePlace) => byField.set(field, [...(byField.get(field) ?? []), place]);
  for (const [field, setting] of app.target.images)
    add(field, { kind: 'catalog', reference: setting.reference, location: setting.location, path: ['images', field] });
  for (const [field, image] of app.images) {
    if (image.source === 'custom') add(field, { kind: 'custom', reference: image.reference, location: image.location, path: ['main', 'customImages', field] });
  }
  // Static overrides: the landing paths of every field, then whatever else sits under images.tags.
  const unmapped: ImagePlace[] = [];
  const charts = [...new Set(app.releases.map((r) => r.chart))].sort();
  for (const chart of charts) {
    const file = `${APP_FILES.static}/${chart}.yaml`;
    if (!existsSync(app.path(file))) continue;
    const root = parseYaml(await readFile(app.path(file), 'utf8'), file, { layer: 'static' }).root;
    const claimed = new Set<string>();
    for (const [field, targets] of app.catalog.targets) {
      // A split landing holds no whole reference to read back (its parts are the app's to write through the catalog).
      for (const target of targets.filter((t) => t.chart === chart && !t.split)) {
        const node = getNode(root, target.path);
        if (node?.kind !== 'scalar' || typeof node.value !== 'string') continue;
        claimed.add(target.path.join('\u0000'));
        add(field, { kind: 'static', reference: node.value, location: node.origin.location, path: target.path, chart });
      }
    }
    const tags = getNode(root, ['images', 'tags']);
    if (tags?.kind !== 'map') continue;
    for (const [key, node] of tags.entries) {
      if (claimed.has(['images', 'tags', key].join('\u0000')) || node.kind !== 'scalar' || typeof node.value !== 'string') continue;
      unmapped.push({ kind: 'static', reference: node.value, location: node.origin.location, path: ['images', 'tags', key], chart });
    }
  }
  return {
    byField,
    unmapped,
    chartValues: await readChartValues(app),
    templates: await scanTemplates(app, [...new Set([...app.catalog.versions.values()].flatMap((v) => [...v.images.values()].map((i) => i.reference)))]),
  };
}

const REFERENCE_CHAR = /[A-Za-z0-9._:/@-]/;

/** Catalog references written literally in values templates (a `default`, a fixed sidecar). */
async function scanTemplates(app: App, references: readonly string[]): Promise<ImagePlace[]> {
  const dir = app.path(APP_FILES.templates);
  if (!existsSync(dir)) return [];
  const out: ImagePlace[] = [];
  for (const name of (await readdir(dir)).filter((f) => f.endsWith('.hbs')).sort()) {
    const file = `${APP_FILES.templates}/${name}`;
    const text = await readFile(join(dir, name), 'utf8');
    for (const reference of references) {
      for (let at = text.indexOf(reference); at >= 0; at = text.indexOf(reference, at + 1)) {
        if (REFERENCE_CHAR.test(text[at - 1] ?? ' ') || REFERENCE_CHAR.test(text[at + reference.length] ?? ' ')) continue;
        const before = text.slice(0, at);
        out.push({ kind: 'template', reference, offset: at, location: { file, line: before.split('\n').length, column: at - before.lastIndexOf('\n') } });
      }
    }
  }
  return out;
}

export interface ImageChange {
  readonly field: string;
  readonly place: ImagePlace;
  readonly to: string;
}

export interface ImageBumpResult {
  readonly changes: readonly FileChange[];
  readonly rewritten: readonly ImageChange[];
  /** What was left alone, and why. */
  readonly notes: readonly string[];
}

export class ImageBumpError extends FlotillaError {}

/**
 * Moves the app to another release's images: every place that holds an image
 * of the current release's catalog entry gets the same field's image of
 * `release`, and the deployment spec's main.release names it.
 */
export async function bumpToRelease(appDir: string, release: string): Promise<ImageBumpResult> {
  const app = await loadApp(appDir);
  const next = targetVersion(app.catalog, release);
  const current = app.target;
  if (next.release === current.release) throw new ImageBumpError(`the app already targets release ${release} (main.release in ${deploymentFile(app)})`);
  const places = await scanPlaces(app);
  const set = new ChangeSet((file) => app.path(file));
  const rewritten: ImageChange[] = [];
  const notes: string[] = [];
  // old reference → the new references of the fields that had it (one: unambiguous outside a landing path).
  const successors = new Map<string, Set<string>>();
  for (const [field, setting] of current.images) {
    const to = next.images.get(field)?.reference;
    if (to === undefined) notes.push(`${field}: release ${release} has no image for it; left as ${setting.reference}`);
    else successors.set(setting.reference, (successors.get(setting.reference) ?? new Set()).add(to));
  }
  const rewrite = async (field: string, place: ImagePlace, to: string) => {
    if (place.reference === to) return;
    await setReference(set, place, to);
    rewritten.push({ field, place, to });
  };
  for (const [field, setting] of current.images) {
    const to = next.images.get(field)?.reference;
    if (to === undefined) continue;
    for (const place of places.byField.get(field) ?? []) {
      if (place.kind === 'catalog') continue; // each release keeps its own entry
      if (place.kind === 'custom') {
        notes.push(`${field}: the custom image ${place.reference} (${formatLocation(place.location)}) stays; custom images win over the release`);
        continue;
      }
      if (place.reference === setting.reference) await rewrite(field, place, to);
      else
        notes.push(
          `${field}: ${formatLocation(place.location)} holds ${place.reference}, not release ${current.release}'s ${setting.reference}; left as it is`,
        );
    }
  }
  for (const place of [...places.unmapped, ...places.templates]) {
    const options = successors.get(place.reference);
    if (!options) continue;
    if (options.size > 1) {
      notes.push(
        `${formatLocation(place.location)}: ${place.reference} is the image of several fields that differ in release ${release} (${[...options].join(', ')}); left as it is`,
      );
      continue;
    }
    const fields = [...current.images].filter(([, s]) => s.reference === place.reference).map(([f]) => f);
    await rewrite(fields.join(','), place, [...options][0] as string);
  }
  const spec = await set.yaml(deploymentFile(app));
  spec.set(['main', 'release'], release);
  return { changes: set.changes(), rewritten, notes };
}

/**
 * Sets one image field everywhere it is written: the app release's catalog
 * entry, its custom image, static overrides at its landing paths, and
 * template text holding its old reference alone. A field the release does
 * not set (a per-backend image) becomes a custom image.
 */
export async function bumpField(appDir: string, bumps: ReadonlyMap<string, string>): Promise<ImageBumpResult> {
  const app = await loadApp(appDir);
  const places = await scanPlaces(app);
  const set = new ChangeSet((file) => app.path(file));
  const rewritten: ImageChange[] = [];
  const notes: string[] = [];
  for (const [field, to] of bumps) {
    if (!app.catalog.targets.has(field)) {
      throw new ImageBumpError(
        `image field ${field} lands nowhere: it is not in ${APP_FILES.imageTargets} (fields: ${[...app.catalog.targets.keys()].sort().join(', ')})`,
      );
    }
    const problem = imageReferenceProblem(to);
    if (problem) throw new ImageBumpError(`--field ${field}=${to}: ${problem}`, { exitCode: 2 });
    const old = app.images.get(field)?.reference;
    const written = (places.byField.get(field) ?? []).filter((p) => p.kind !== 'template');
    const sharedBy = [...app.images].filter(([f, image]) => f !== field && image.reference === old).map(([f]) => f);
    for (const place of places.templates.filter((p) => p.reference === old)) {
      if (sharedBy.length > 0) notes.push(`${formatLocation(place.location)}: ${old} is also the image of ${sharedBy.join(', ')}; left as it is`);
      else written.push(place);
    }
    for (const place of written) {
      if (place.reference === to) continue;
      await setReference(set, place, to);
      rewritten.push({ field, place, to });
    }
    if (!written.some((p) => p.kind === 'catalog' || p.kind === 'custom')) {
      const file = deploymentFile(app);
      (await set.yaml(file)).set(['main', 'customImages', field], to);
      notes.push(`${field}: release ${app.target.release} has no image for it; set as a custom image (main.customImages.${field}) in ${file}`);
    }
  }
  return { changes: set.changes(), rewritten, notes };
}

/** Writes `to` where `place` holds its reference (YAML value or template text). */
export async function setReference(set: ChangeSet, place: ImagePlace, to: string): Promise<void> {
  if (place.kind === 'template') {
    (await set.textFile(place.location.file)).replace(place.offset ?? 0, place.reference.length, to, 'template text');
    return;
  }
  // A build token in the old reference stays only if the new one keeps it; refusing is the editor's job.
  (await set.yaml(place.location.file)).set(place.path ?? [], to, { force: !BUILD_TOKEN.test(place.reference) });
}

function deploymentFile(app: App): string {
  return app.specLayers[app.specLayers.length - 1]?.file ?? APP_FILES.deployment;
}
