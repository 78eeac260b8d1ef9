/**
 * The StarlingX platform path. On a StarlingX platform an app's plugins are
 * Python wheels, so a flotilla bundle applied by the platform gets only its
 * static overrides and the user overrides stored with `system
 * helm-override-update`. Two exports close that gap (docs/starlingx.md):
 *
 * - `exportSystemOverrides` (`flotilla overrides --all -d DIR`): the layers
 *   flotilla computes (2–7) as one values file per enabled release, with a
 *   script of `helm-override-update` commands — the values only;
 * - `exportForPlatform` (`flotilla starlingx export`): what an operator
 *   deploys for one deployment spec — a tarball whose top kustomization
 *   lists only the releases that deployment enables (sysinv applies every
 *   release listed there) and whose static overrides carry every image (the
 *   only values sysinv rewrites to its registry), the values files without
 *   those images, and `apply.sh`; the apply's check hooks run first.
 */
import { existsSync, readdirSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { isMap, visit, type Document } from 'yaml';
import type { App, Release } from '../app/index.js';
import { buildApp } from '../build/index.js';
import {
  BUNDLE_TAR_OPTIONS,
  bundleFileName,
  bundlePath,
  changedBundleEntries,
  MANIFESTS_DIR,
  openBundle,
  writeTarGzFile,
  type TarEntry,
} from '../tarball/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import { dumpYaml, parseYamlDocument, type PlainValue } from '../yaml/index.js';
import { makeFolder, withTempDir } from '../files/index.js';
import { FLUX_TREE, fluxTreePath, overridesValuesKey } from '../flux/index.js';
import { kustomizationResources, planApply, type ApplyPlan } from '../lifecycle/index.js';
import { defaultStateDir } from '../plugins/index.js';
import type { Session } from '../session/index.js';
import { platformImageValues, withoutPaths, type PlatformImageValue } from './images.js';

/** The script `overrides --all` writes next to the values files. */
const OVERRIDES_SCRIPT = 'helm-override-update.sh';
/** The script `starlingx export` writes next to the tarball and the values files. */
const APPLY_SCRIPT = 'apply.sh';

export interface OverridesExportOptions {
  /** Folder to write into; must be empty or absent. */
  readonly dir: string;
}

export interface ExportedOverrides {
  readonly release: string;
  readonly chart: string;
  readonly namespace: string;
  /** File name inside the folder. */
  readonly file: string;
  /** Top-level keys set (empty: the release has no system overrides). */
  readonly keys: readonly string[];
}

export interface OverridesExport {
  readonly dir: string;
  readonly script: string;
  readonly releases: readonly ExportedOverrides[];
}

export class OverridesExportError extends FlotillaError {}

/** Single quotes around every word: a name never splits or expands, whatever it holds. */
const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

function refuseNonEmpty(dir: string, given: string, what: string): void {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new OverridesExportError(`${given} is not empty: give a new or empty folder for ${what}`);
}

interface ReleaseFile {
  readonly release: Release;
  readonly file: string;
  readonly overrides: PlainValue;
}

/** A values file: a comment saying what it is and how it is stored, then the values. */
function valuesFileText(appName: string, { release, file, overrides }: ReleaseFile, layers: string): string {
  const header = [
    `# System overrides of ${release.name} (chart ${release.chart}, namespace ${release.namespace}) computed by flotilla:`,
    `# ${layers}`,
    `# Stored with: system helm-override-update ${appName} ${release.name} ${release.namespace} --reuse-values --values ${file}`,
    '',
  ].join('\n');
  const empty = typeof overrides !== 'object' || overrides === null || Object.keys(overrides).length === 0;
  return header + (empty ? '{}\n' : dumpYaml(overrides));
}

/** Folder 0700, then every file 0600 (created, never replaced), the script 0700. */
async function writePrivately(
  dir: string,
  files: readonly { readonly name: string; readonly text: string | Buffer }[],
  script: { readonly name: string; readonly text: string },
): Promise<void> {
  await makeFolder(dir, { mode: 0o700 });
  await chmod(dir, 0o700);
  for (const { name, text } of files) await writeFile(join(dir, name), text, { mode: 0o600, flag: 'wx' });
  await writeFile(join(dir, script.name), script.text, { mode: 0o700, flag: 'wx' });
  await chmod(join(dir, script.name), 0o700);
}

const overrideUpdate = (release: Release, file: string) =>
  `system helm-override-update "$APP" ${shellQuote(release.name)} ${shellQuote(release.namespace)} --reuse-values --values ${shellQuote(file)}`;

/**
 * Sets `value` at `path` in a YAML document, edited in place: the author's
 * comments and layout stay, missing maps are made as plain maps, and new
 * strings are double-quoted, so PyYAML (YAML 1.1, sysinv's reader) reads
 * them as Helm does.
 */
function setKeepingLayout(doc: Document, path: readonly string[], value: PlainValue): void {
  if (doc.contents === null) doc.contents = doc.createNode({});
  // The maps already there along the path; the rest (and any scalar in its way) is made anew.
  let known = 0;
  while (known < path.length - 1 && isMap(doc.getIn(path.slice(0, known + 1), true))) known++;
  const node = doc.createNode(path.slice(known + 1).reduceRight<PlainValue>((inner, key) => ({ [key]: inner }), value));
  visit(node, {
    Scalar(_, scalar) {
      if (typeof scalar.value === 'string') scalar.type = 'QUOTE_DOUBLE';
    },
  });
  doc.setIn(path.slice(0, known + 1), node);
}

/** The enabled releases in apply order. */
function inApplyOrder(session: Session, names?: ReadonlySet<string>): Release[] {
  const app = session.app;
  const order = new Map(app.graph.waves.flat().map((r, i) => [r.name, i]));
  return app.enabled.filter((r) => names === undefined || names.has(r.name)).sort((a, b) => (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0));
}

/**
 * Writes the system overrides (layers 2–7) of every release the spec
 * enables, in apply order, with the passwords of the session's offline store
 * in clear (the files are 0600: they are meant for the platform, not for
 * git). The session must have no user overrides provider: the platform keeps
 * the operator's own overrides, and the script merges these into them.
 */
export async function exportSystemOverrides(session: Session, options: OverridesExportOptions): Promise<OverridesExport> {
  const app = session.app;
  const dir = resolve(options.dir);
  refuseNonEmpty(dir, options.dir, 'the exported overrides');
  const written: ReleaseFile[] = [];
  for (const release of inApplyOrder(session)) {
    written.push({ release, file: `${release.name}.yaml`, overrides: (await session.releaseValues(release)).systemOverrides });
  }
  const layers = 'values layers 2-7 (templates, catalog images, policy set, plugin, common and service values).';
  const script = [
    '#!/bin/sh',
    `# Generated by \`flotilla overrides --all\` for ${app.metadata.appName} ${app.metadata.appVersion}: stores each release's`,
    '# system overrides as user overrides on a StarlingX platform (see docs/starlingx.md), then',
    '# `system application-apply` makes Flux use them. --reuse-values keeps what operators set before.',
    'set -eu',
    `APP="\${APP:-${app.metadata.appName}}"`,
    'cd "$(dirname "$0")"',
    ...written.map(({ release, file }) => overrideUpdate(release, file)),
    'echo "overrides stored; run: system application-apply $APP"',
    '',
  ].join('\n');
  await writePrivately(
    dir,
    written.map((w) => ({ name: w.file, text: valuesFileText(app.metadata.appName, w, layers) })),
    { name: OVERRIDES_SCRIPT, text: script },
  );
  return {
    dir,
    script: join(dir, OVERRIDES_SCRIPT),
    releases: written.map(({ release, file, overrides }) => ({
      release: release.name,
      chart: release.chart,
      namespace: release.namespace,
      file,
      keys: keysOf(overrides),
    })),
  };
}

const keysOf = (values: PlainValue): string[] => (typeof values === 'object' && values !== null && !Array.isArray(values) ? Object.keys(values) : []);

export interface PlatformExportOptions {
  /** The app source tree the session was opened on: built into the tarball. */
  readonly appDir: string;
  /** Folder to write into; must be empty or absent. */
  readonly dir: string;
}

/** An image value moved from a release's system overrides into its static overrides. */
export interface MovedImage {
  /** Dotted path of the value. */
  readonly path: string;
  readonly value: PlainValue;
}

export interface PlatformRelease extends ExportedOverrides {
  /** Image values the export moved into the tarball's static overrides, where sysinv rewrites them to its registry. */
  readonly movedImages: readonly MovedImage[];
}

export interface PlatformExport {
  readonly dir: string;
  /** The tarball for `system application-upload`. */
  readonly tarball: string;
  readonly script: string;
  /** The folder of the generated passwords: keep it, the services' credentials are these. */
  readonly passwordStore: string;
  /** The releases the deployment enables, in apply order: the only ones the tarball deploys. */
  readonly releases: readonly PlatformRelease[];
  /** Releases of the app the deployment leaves out (shipped, never deployed). */
  readonly leftOut: readonly string[];
}

/**
 * Where `starlingx export` keeps generated passwords unless told: one store
 * per app and deployment (named by the deployment file), outside the export
 * folder, so exporting again gives the same passwords.
 */
export function platformPasswordStore(appName: string, deploymentFile: string | undefined): string {
  const name = deploymentFile === undefined ? 'deployment' : basename(deploymentFile, extname(deploymentFile));
  return join(defaultStateDir(appName), 'starlingx', name);
}

/**
 * Everything an operator needs to deploy the session's app and deployment
 * spec with StarlingX's own `system application-*` commands (see the module
 * comment). The session's plugins must keep passwords in `passwordStore`.
 * Nothing is written when a check hook refuses or a value fails.
 */
export async function exportForPlatform(session: Session, options: PlatformExportOptions & { readonly passwordStore: string }): Promise<PlatformExport> {
  const app = session.app;
  const dir = resolve(options.dir);
  refuseNonEmpty(dir, options.dir, 'the StarlingX export');
  // What apply refuses: its check hooks, and a plan the kustomize operator cannot make.
  const host = await session.plugins();
  await host.runHooks({ operation: 'apply', timing: 'pre', kind: 'check' });
  const plan = await planApply(host);
  const planned = new Set(plan.releases.map((r) => r.name));
  const exported = await exportedValues(session, planned);
  const tarball = await platformTarball(app, options.appDir, plan, exported);
  await makeFolder(dir, { mode: 0o700 });
  await writeTarGzFile(join(dir, tarball.name), tarball.entries, BUNDLE_TAR_OPTIONS);
  const layers = 'values layers 2-7 (templates, plugin, policy set, common and service values); images are in the static overrides of the tarball.';
  await writePrivately(
    dir,
    exported.map((e) => ({ name: e.file, text: valuesFileText(app.metadata.appName, e, layers) })),
    { name: APPLY_SCRIPT, text: applyScript(app, tarball.name, exported) },
  );
  return {
    dir,
    tarball: join(dir, tarball.name),
    script: join(dir, APPLY_SCRIPT),
    passwordStore: options.passwordStore,
    releases: exported.map(({ release, file, overrides, moved }) => ({
      release: release.name,
      chart: release.chart,
      namespace: release.namespace,
      file,
      keys: keysOf(overrides),
      movedImages: moved.map((m) => ({ path: m.path.join('.'), value: m.value })),
    })),
    leftOut: app.releases.filter((r) => !planned.has(r.name)).map((r) => r.name),
  };
}

/** A planned release's values file, and the image values moved from it into the tarball's static overrides (where sysinv rewrites them). */
type ExportedRelease = ReleaseFile & { readonly moved: readonly PlatformImageValue[] };

/** Each planned release's system overrides, in apply order, without the image values the tarball carries instead. */
async function exportedValues(session: Session, planned: ReadonlySet<string>): Promise<ExportedRelease[]> {
  const exported: ExportedRelease[] = [];
  for (const release of inApplyOrder(session, planned)) {
    const values = await session.releaseValues(release);
    const moved = platformImageValues(values.systemOverrides);
    exported.push({
      release,
      file: `${release.name}.yaml`,
      overrides: withoutPaths(
        values.systemOverrides,
        moved.map((m) => m.path),
      ),
      moved,
    });
  }
  return exported;
}

/** The app built, then changed for the platform: the top kustomization limited to the plan's releases, the moved image values in the static overrides. */
async function platformTarball(
  app: App,
  appDir: string,
  plan: ApplyPlan,
  exported: readonly ExportedRelease[],
): Promise<{ readonly name: string; readonly entries: TarEntry[] }> {
  return withTempDir('starlingx-export', async (temp) => {
    const built = await buildApp(appDir, { outDir: temp, cacheDir: false });
    const bundle = await openBundle(built.file);
    const changes = new Map<string, Buffer>();
    const topPath = bundlePath(MANIFESTS_DIR, FLUX_TREE.kustomization);
    const { doc: top } = parseYamlDocument(bundle.files.get(topPath)?.toString('utf8') ?? '', topPath);
    const resources = (top.get('resources') as { toJSON(): unknown } | undefined)?.toJSON();
    if (!Array.isArray(resources)) throw new OverridesExportError(`${topPath} in the built tarball has no resources list`);
    top.set(
      'resources',
      kustomizationResources(
        resources as string[],
        app.releases.map((r) => r.name),
        plan,
      ),
    );
    changes.set(topPath, Buffer.from(top.toString(), 'utf8'));
    for (const { release, moved } of exported) {
      if (moved.length === 0) continue;
      const path = bundlePath(MANIFESTS_DIR, fluxTreePath(release.name, overridesValuesKey(release.name, 'static')));
      const { doc } = parseYamlDocument(bundle.files.get(path)?.toString('utf8') ?? '', path);
      for (const { path: valuePath, value } of moved) setKeepingLayout(doc, valuePath, value);
      changes.set(path, Buffer.from(doc.toString(), 'utf8'));
    }
    return { name: bundleFileName(app.metadata.appName, app.metadata.appVersion), entries: changedBundleEntries(bundle, changes) };
  });
}

/** apply.sh: each exported release's overrides stored as user overrides, then the app applied. */
function applyScript(app: App, tarballName: string, exported: readonly ExportedRelease[]): string {
  return [
    '#!/bin/sh',
    `# Generated by \`flotilla starlingx export\` for ${app.metadata.appName} ${app.metadata.appVersion} (docs/starlingx.md).`,
    `# Run it on the active controller once \`system application-upload ${tarballName}\` has finished`,
    '# (`system application-show` says uploaded), with the platform credentials loaded:',
    `#   source /etc/platform/openrc && sh ${APPLY_SCRIPT}`,
    "# It stores each enabled release's overrides as user overrides (--reuse-values keeps what",
    '# operators set before), then applies the app. The values files beside it hold generated',
    '# passwords in clear: delete this folder once the app is applied (flotilla keeps the passwords).',
    'set -eu',
    `APP=${shellQuote(app.metadata.appName)}`,
    'cd "$(dirname "$0")"',
    ...exported.map(({ release, file }) => overrideUpdate(release, file)),
    'system application-apply "$APP"',
    '',
  ].join('\n');
}
