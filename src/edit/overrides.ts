/**
 * `flotilla overrides set|unset`: edits of static overrides (or another file
 * of the app source tree) that change only the named scalars. A path the
 * file does not hold yet must be one the file's reader knows (typo
 * protection), unless `allowNew`.
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import {
  APP_FILES,
  checkSchema,
  deploymentSchema,
  metadataSchema,
  nearest,
  readReleases,
  declaredFluxTarget,
  releasesSchema,
  releasesSchemaFor,
  specLayerSchema,
  type JsonSchema,
  type Release,
} from '../app/index.js';
import { DiagnosticsError, FlotillaError, type Diagnostic } from '../diagnostics/index.js';
import { parseYaml, type ValueNode } from '../yaml/index.js';
import { readImageTargets, readVersionFile } from '../catalog/index.js';
import type { FileChange } from './changes.js';
import { chartKeyReferences, checkKnownPath, schemaReference, type KeyReference } from '../values/index.js';
import { formatValuePath, type Assignment, type ValuePath } from './path.js';
import { EditRefusedError, YamlFileEditor, parseValueArgument } from './yaml-edit.js';

export class UnknownPathError extends EditRefusedError {}

/** An app source tree on disk, read only as far as an edit needs. */
export interface AppTree {
  /** Absolute path of the app root. */
  readonly root: string;
  path(relativePath: string): string;
  display(absolutePath: string): string;
}

export function appTree(appDir: string): AppTree {
  const root = resolve(appDir);
  if (!existsSync(join(root, APP_FILES.metadata))) {
    throw new FlotillaError(`${appDir} is not a flotilla app: ${APP_FILES.metadata} is missing (see docs/app-format.md)`);
  }
  return {
    root,
    path: (p) => (isAbsolute(p) ? p : join(root, p)),
    display: (abs) => {
      const rel = relative(root, abs);
      return rel.startsWith('..') || isAbsolute(rel) ? abs : rel;
    },
  };
}

export async function readReleaseTable(tree: AppTree): Promise<readonly Release[]> {
  const file = APP_FILES.releases;
  const parsed = parseYaml(await readFile(tree.path(file), 'utf8'), file, { layer: 'releases' });
  const { releases, diagnostics } = readReleases(parsed.root, file);
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new DiagnosticsError(`${file} is invalid:`, errors);
  return releases;
}

/** The release of a chart (by chart name, or by release name). */
function releaseOfChart(releases: readonly Release[], name: string): Release {
  const found = releases.find((r) => r.chart === name) ?? releases.find((r) => r.name === name);
  if (found) return found;
  throw unknownChart(
    name,
    releases.map((r) => r.chart),
  );
}

export class UnknownChartError extends FlotillaError {}

export function unknownChart(name: string, charts: readonly string[]): UnknownChartError {
  const known = [...new Set(charts)].sort();
  const guess = nearest(name, known);
  return new UnknownChartError(`no chart "${name}" in ${APP_FILES.releases}${guess ? `; did you mean "${guess}"?` : ''} (charts: ${known.join(', ')})`);
}

export interface OverrideEdit {
  readonly appDir: string;
  /** A chart (or release) name: edits overrides/static/<chart>.yaml. */
  readonly chart?: string;
  /** Another file of the app, relative to the app root (or absolute). */
  readonly file?: string;
  readonly set?: readonly Assignment[];
  readonly unset?: readonly ValuePath[];
  /** Take every VALUE as a string instead of YAML. */
  readonly asString?: boolean;
  /** Accept paths no reference knows. */
  readonly allowNew?: boolean;
  readonly force?: boolean;
}

/** Computes the edit; nothing is written (see writeChanges). */
export async function editOverrides(request: OverrideEdit): Promise<FileChange> {
  const tree = appTree(request.appDir);
  const target = await resolveTarget(tree, request);
  const before = existsSync(target.path) ? await readFile(target.path, 'utf8') : undefined;
  if (before === undefined && !target.mayCreate) throw new FlotillaError(`${target.file} does not exist`);
  const editor = new YamlFileEditor(before ?? '', target.file);
  for (const assignment of request.set ?? []) {
    const value = parseValueArgument(assignment.raw, request.asString ?? false);
    const held = editor.lookup(assignment.path);
    // A path through a scalar is a change of kind, refused by the editor first unless forced.
    if (!request.allowNew && !held.exists && (!held.blocked || request.force)) checkNewPath(target, assignment.path, editor);
    editor.set(assignment.path, value, { force: request.force, raw: assignment.raw });
  }
  for (const path of request.unset ?? []) editor.unset(path, { force: request.force });
  const after = editor.text;
  const problems = target.validate?.(after) ?? [];
  if (problems.length > 0) throw new DiagnosticsError(`the edit would leave ${target.file} invalid; nothing was written:`, problems);
  return { path: target.path, file: target.file, before, after, edits: editor.records };
}

/**
 * A new path must be known to the file's references — or lie under a key the
 * references do not know but the file already holds (the author's own
 * structure, which nothing else describes).
 */
function checkNewPath(target: EditTarget, path: ValuePath, editor: YamlFileEditor): void {
  const check = checkKnownPath(target.references, path);
  if (check.known || (check.depth < path.length - 1 && editor.lookup(path.slice(0, check.depth + 1)).exists)) return;
  const where = formatValuePath(path);
  if (target.references.length === 0)
    throw new UnknownPathError(`${target.file}: ${where} is not in the file, and nothing describes the paths this file may hold; pass --new to add it`);
  const hint = check.suggestion ? `did you mean ${formatValuePath(check.suggestion)}? ` : '';
  throw new UnknownPathError(`${target.file}: ${where} is not a known path (checked against ${check.knownBy}); ${hint}pass --new to add it anyway`);
}

interface EditTarget {
  readonly path: string;
  readonly file: string;
  readonly mayCreate: boolean;
  /** What knows the paths this file may hold. */
  readonly references: readonly KeyReference[];
  /** Problems with the edited text, checked before anything is written. */
  readonly validate?: (text: string) => Diagnostic[];
}

async function resolveTarget(tree: AppTree, request: OverrideEdit): Promise<EditTarget> {
  if (request.file === undefined) {
    if (request.chart === undefined) throw new FlotillaError('name a chart, or a file with --file', { exitCode: 2 });
    const release = releaseOfChart(await readReleaseTable(tree), request.chart);
    // A release with static overrides of its own (staticOverrides) is edited there.
    const file = release.staticOverrides;
    return { path: tree.path(file), file, mayCreate: true, references: await chartReferences(tree, release.chartPath) };
  }
  const path = isAbsolute(request.file) ? request.file : resolve(tree.root, request.file);
  const file = tree.display(path);
  const target = { path, file, mayCreate: false };
  const staticChart = new RegExp(`^${APP_FILES.static}/([^/]+)\\.yaml$`).exec(file)?.[1];
  if (staticChart) {
    const release = releaseOfChart(await readReleaseTable(tree), staticChart);
    return { ...target, references: await chartReferences(tree, release.chartPath) };
  }
  const schemaTarget = (schema: JsonSchema, label: string, schemaOf: (root: ValueNode | undefined) => JsonSchema = () => schema): EditTarget => ({
    ...target,
    references: [schemaReference(label, schema)],
    validate: (text) => {
      const root = parseYaml(text, file, { layer: 'edit', allowListEdits: true }).root;
      return checkSchema(schemaOf(root), root, file).filter((d) => d.severity === 'error');
    },
  });
  if (file === APP_FILES.metadata) return schemaTarget(metadataSchema, 'the StarlingX metadata schema');
  // The table's Flux fields are those of the Flux version it declares.
  if (file === APP_FILES.releases) return schemaTarget(releasesSchema, 'the release table schema', (root) => releasesSchemaFor(declaredFluxTarget(root)));
  if (file === APP_FILES.imageTargets) {
    return {
      ...target,
      references: [],
      validate: (text) => readImageTargets(parseYaml(text, file, { layer: 'images' }).root).diagnostics.filter((d) => d.severity === 'error'),
    };
  }
  if (file.startsWith(`${APP_FILES.versions}/`) && file.endsWith('.yaml')) return catalogTarget(tree, target);
  const features = await featuresSchema(tree);
  if (file.startsWith(`${APP_FILES.presets}/`) || file.startsWith(`${APP_FILES.sizes}/`)) {
    return schemaTarget(withFeatures(specLayerSchema, features), 'the spec layer schema');
  }
  if (file === APP_FILES.deployment || (await looksLikeDeploymentSpec(path))) {
    return schemaTarget(withFeatures(deploymentSchema, features), 'the deployment spec schema');
  }
  return { ...target, references: [] };
}

/** The chart's values.yaml, values.schema.json and Chart.yaml (its dependencies), when present. */
async function chartReferences(tree: AppTree, chartPath: string): Promise<KeyReference[]> {
  const read = async (name: string) => {
    const file = join(chartPath, name);
    return existsSync(tree.path(file)) ? { text: await readFile(tree.path(file), 'utf8'), file } : undefined;
  };
  const [values, schema, chartYaml] = await Promise.all([read('values.yaml'), read('values.schema.json'), read('Chart.yaml')]);
  return chartKeyReferences({ ...(values ? { values } : {}), ...(schema ? { schema } : {}), ...(chartYaml ? { chartYaml } : {}) });
}

async function featuresSchema(tree: AppTree): Promise<JsonSchema | undefined> {
  const file = tree.path(APP_FILES.featuresSchema);
  return existsSync(file) ? (JSON.parse(await readFile(file, 'utf8')) as JsonSchema) : undefined;
}

function withFeatures(schema: JsonSchema, features: JsonSchema | undefined): JsonSchema {
  if (!features) return schema;
  const properties = schema.properties as Record<string, JsonSchema>;
  return { ...schema, properties: { ...properties, features } };
}

async function looksLikeDeploymentSpec(path: string): Promise<boolean> {
  if (!existsSync(path)) return false;
  try {
    const root = parseYaml(await readFile(path, 'utf8'), path, { layer: 'probe', allowListEdits: true }).root;
    return root?.kind === 'map' && root.entries.has('main');
  } catch {
    return false;
  }
}

/**
 * A release catalog file: its keys are fixed, its image fields are those of
 * overrides/versions/images.yaml, its serviceDefaults those any release has.
 */
async function catalogTarget(tree: AppTree, target: { path: string; file: string; mayCreate: boolean }): Promise<EditTarget> {
  const folder = tree.path(APP_FILES.versions);
  const fields: Record<string, JsonSchema> = {};
  if (existsSync(tree.path(APP_FILES.imageTargets))) {
    const parsed = parseYaml(await readFile(tree.path(APP_FILES.imageTargets), 'utf8'), APP_FILES.imageTargets, { layer: 'images' });
    for (const field of readImageTargets(parsed.root).targets.keys()) fields[field] = { type: 'string' };
  }
  const defaults: Record<string, JsonSchema> = {};
  for (const name of (await readdir(folder)).filter((f) => f.endsWith('.yaml') && join(APP_FILES.versions, f) !== APP_FILES.imageTargets)) {
    const file = join(APP_FILES.versions, name);
    const root = parseYaml(await readFile(tree.path(file), 'utf8'), file, { layer: 'version' }).root;
    const sd = root?.kind === 'map' ? root.entries.get('serviceDefaults') : undefined;
    if (sd?.kind === 'map') for (const key of sd.entries.keys()) defaults[key] = {};
  }
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      release: { type: 'string' },
      description: { type: 'string' },
      images: { type: 'object', properties: fields },
      serviceDefaults: { type: 'object', properties: defaults },
    },
  };
  const release = basename(target.file, '.yaml');
  return {
    ...target,
    references: [schemaReference(`the release catalog (fields of ${APP_FILES.imageTargets})`, schema)],
    validate: (text) => {
      const root = parseYaml(text, target.file, { layer: 'version' }).root;
      return readVersionFile(root, target.file, release).diagnostics.filter((d) => d.severity === 'error');
    },
  };
}
