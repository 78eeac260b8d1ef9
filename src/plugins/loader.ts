/**
 * Loading a plugin bundle (from a built tarball's plugins/, or a fresh
 * build of the sources): the manifest's sha256 are checked against the bytes
 * BEFORE any plugin code is imported; then the plugins are instantiated and
 * must be exactly what the manifest says, in its order.
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PluginBundleError, TamperedBundleError } from './errors.js';
import { importBundle, instantiate, type LoadedPlugin } from './instantiate.js';
import { MANIFEST_FILE, parseManifest, sha256, type PluginManifest } from './manifest.js';

export interface LoadedBundle {
  readonly manifest: PluginManifest;
  /** In manifest order. */
  readonly plugins: readonly LoadedPlugin[];
}

/**
 * Checks a bundle folder without running any of it: the manifest is well
 * formed and every file matches its sha256 (for `verify` of a tarball).
 */
export async function verifyPluginBundle(dir: string): Promise<PluginManifest> {
  return (await readVerified(dir)).manifest;
}

export async function loadPluginBundle(dir: string): Promise<LoadedBundle> {
  const { manifest, entryBytes } = await readVerified(dir);
  const modules = await importBundle(entryBytes);
  const inBundle = modules.map((m) => m.file).join(', ');
  const inManifest = manifest.plugins.map((p) => p.file).join(', ');
  if (inBundle !== inManifest) throw new PluginBundleError(`${dir}: the bundle holds [${inBundle}] but its manifest lists [${inManifest}]`);
  const plugins = manifest.plugins.map((entry, i) => {
    const plugin = instantiate(modules[i] as (typeof modules)[number], { name: entry.name, order: entry.order, overridesLine: entry.overridesLine ?? 0, chartLine: entry.chartLine ?? 0, releaseLine: entry.releaseLine ?? 0 });
    const chart = plugin.kind === 'chart' ? plugin.chart : undefined;
    const release = plugin.kind === 'chart' ? plugin.release : undefined;
    if (plugin.kind !== entry.kind || chart !== entry.chart || release !== entry.release) {
      throw new PluginBundleError(
        `${entry.file}: the manifest says ${describe(entry.kind, entry.chart, entry.release)}, the code is ${describe(plugin.kind, chart, release)}`,
      );
    }
    return plugin;
  });
  return { manifest, plugins };
}

async function readVerified(dir: string): Promise<{ manifest: PluginManifest; entryBytes: Uint8Array }> {
  const manifestPath = join(dir, MANIFEST_FILE);
  if (!existsSync(manifestPath)) throw new PluginBundleError(`${dir} holds no plugin bundle: ${MANIFEST_FILE} is missing`);
  const manifest = parseManifest(await readFile(manifestPath, 'utf8'), manifestPath);
  return { manifest, entryBytes: await verifyBundleFiles(dir, manifest) };
}

function describe(kind: string, chart: string | undefined, release: string | undefined): string {
  return `a ${kind} plugin${chart ? ` for chart ${chart}` : ''}${release ? ` release ${release}` : ''}`;
}

/**
 * Every file of the folder but the manifest must be listed with a matching
 * sha256, and every listed file present: an extra file is refused too, as
 * nothing in a bundle should be there unaccounted for. Returns the entry's
 * verified bytes, which are what gets imported.
 */
export async function verifyBundleFiles(dir: string, manifest: PluginManifest): Promise<Uint8Array> {
  const present = (await readdir(dir)).filter((f) => f !== MANIFEST_FILE).sort();
  const listed = Object.keys(manifest.files).sort();
  const extra = present.filter((f) => !listed.includes(f));
  const missing = listed.filter((f) => !present.includes(f));
  if (extra.length > 0) throw new TamperedBundleError(`${dir}: file(s) not in the plugin manifest: ${extra.join(', ')}; refusing to load the plugins`);
  if (missing.length > 0) throw new PluginBundleError(`${dir}: file(s) of the plugin manifest missing: ${missing.join(', ')}`);
  let entry: Uint8Array | undefined;
  for (const name of listed) {
    const bytes = await readFile(join(dir, name));
    const actual = sha256(bytes);
    if (actual !== manifest.files[name]) {
      throw new TamperedBundleError(`${dir}/${name}: sha256 ${actual} does not match the manifest (${manifest.files[name]}); the plugin bundle was changed after it was built, refusing to load it`);
    }
    if (name === manifest.entry) entry = bytes;
  }
  return entry as Uint8Array;
}
