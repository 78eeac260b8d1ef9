/**
 * Loading a plugin bundle (from a built tarball's plugins/, or a fresh
 * build of the sources): the manifest's sha256 are checked against the bytes
 * BEFORE any plugin code is imported; then the plugins are instantiated, in
 * the plugin process (sandbox.ts), never in flotilla's own, and must be
 * exactly what the manifest says, in its order.
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PluginBundleError, TamperedBundleError } from './errors.js';
import { instantiate, type LoadedPlugin } from './instantiate.js';
import { MANIFEST_FILE, parseManifest, sha256, type PluginManifest } from './manifest.js';
import type { PluginFacts } from './sandbox-protocol.js';
import { sandboxFor, type PluginSandbox } from './sandbox.js';

export interface LoadedBundle {
  readonly manifest: PluginManifest;
  /** In manifest order. */
  readonly plugins: readonly LoadedPlugin[];
  /** Where these plugins' instances live: a set in a plugin process (none when the bundle has no plugins). */
  readonly instances?: PluginInstances;
}

export interface PluginInstances {
  readonly sandbox: PluginSandbox;
  readonly set: number;
}

/**
 * Checks a bundle folder without running any of it: the manifest is well
 * formed and every file matches its sha256 (for `verify` of a tarball).
 */
export async function verifyPluginBundle(dir: string): Promise<PluginManifest> {
  return readVerified(await readBundleFolder(dir), dir).manifest;
}

export async function loadPluginBundle(dir: string): Promise<LoadedBundle> {
  return loadPluginBundleFiles(await readBundleFolder(dir), dir);
}

/**
 * {@link loadPluginBundle} of a bundle held in memory (file name → bytes),
 * named `label` in errors: the same checks, no folder written to check it.
 */
export async function loadPluginBundleFiles(files: ReadonlyMap<string, Uint8Array>, label: string): Promise<LoadedBundle> {
  const { manifest, entryBytes } = readVerified(files, label);
  // A bundle of no plugins (an app without plugins/) runs no code: nothing to import.
  if (manifest.plugins.length === 0) return { manifest, plugins: [] };
  const sandbox = sandboxFor(entryBytes, label);
  const { set, facts } = await sandbox.instantiate();
  const inBundle = facts.map((m) => m.file).join(', ');
  const inManifest = manifest.plugins.map((p) => p.file).join(', ');
  if (inBundle !== inManifest) throw new PluginBundleError(`${label}: the bundle holds [${inBundle}] but its manifest lists [${inManifest}]`);
  const plugins = manifest.plugins.map((entry, i) => {
    const plugin = instantiate(facts[i] as PluginFacts, {
      name: entry.name,
      order: entry.order,
      overridesLine: entry.overridesLine ?? 0,
      chartLine: entry.chartLine ?? 0,
      releaseLine: entry.releaseLine ?? 0,
      index: i,
    });
    const chart = plugin.kind === 'chart' ? plugin.chart : undefined;
    const release = plugin.kind === 'chart' ? plugin.release : undefined;
    if (plugin.kind !== entry.kind || chart !== entry.chart || release !== entry.release) {
      throw new PluginBundleError(
        `${entry.file}: the manifest says ${describe(entry.kind, entry.chart, entry.release)}, the code is ${describe(plugin.kind, chart, release)}`,
      );
    }
    return plugin;
  });
  return { manifest, plugins, instances: { sandbox, set } };
}

/** The files of a bundle folder by name (a sub-folder counts as a file, and is refused as one not in the manifest). */
async function readBundleFolder(dir: string): Promise<Map<string, Uint8Array>> {
  if (!existsSync(join(dir, MANIFEST_FILE))) throw new PluginBundleError(`${dir} holds no plugin bundle: ${MANIFEST_FILE} is missing`);
  const files = new Map<string, Uint8Array>();
  for (const entry of await readdir(dir, { withFileTypes: true }))
    files.set(entry.name, entry.isFile() ? await readFile(join(dir, entry.name)) : new Uint8Array());
  return files;
}

function readVerified(files: ReadonlyMap<string, Uint8Array>, label: string): { manifest: PluginManifest; entryBytes: Uint8Array } {
  const manifestBytes = files.get(MANIFEST_FILE);
  if (!manifestBytes) throw new PluginBundleError(`${label} holds no plugin bundle: ${MANIFEST_FILE} is missing`);
  const manifest = parseManifest(Buffer.from(manifestBytes).toString('utf8'), join(label, MANIFEST_FILE));
  return { manifest, entryBytes: verifyFiles(files, manifest, label) };
}

function describe(kind: string, chart: string | undefined, release: string | undefined): string {
  return `a ${kind} plugin${chart ? ` for chart ${chart}` : ''}${release ? ` release ${release}` : ''}`;
}

/**
 * Every file of the bundle but the manifest must be listed with a matching
 * sha256, and every listed file present: an extra file is refused too, as
 * nothing in a bundle should be there unaccounted for. Returns the entry's
 * verified bytes, which are what gets imported.
 */
function verifyFiles(files: ReadonlyMap<string, Uint8Array>, manifest: PluginManifest, label: string): Uint8Array {
  const present = [...files.keys()].filter((f) => f !== MANIFEST_FILE).sort();
  const listed = Object.keys(manifest.files).sort();
  const extra = present.filter((f) => !listed.includes(f));
  const missing = listed.filter((f) => !present.includes(f));
  if (extra.length > 0) throw new TamperedBundleError(`${label}: file(s) not in the plugin manifest: ${extra.join(', ')}; refusing to load the plugins`);
  if (missing.length > 0) throw new PluginBundleError(`${label}: file(s) of the plugin manifest missing: ${missing.join(', ')}`);
  let entry: Uint8Array | undefined;
  for (const name of listed) {
    const bytes = files.get(name)!;
    const actual = sha256(bytes);
    if (actual !== manifest.files[name]) {
      throw new TamperedBundleError(
        `${label}/${name}: sha256 ${actual} does not match the manifest (${manifest.files[name]}); the plugin bundle was changed after it was built, refusing to load it`,
      );
    }
    if (name === manifest.entry) entry = bytes;
  }
  return entry as Uint8Array;
}
