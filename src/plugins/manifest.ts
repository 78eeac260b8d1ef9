/**
 * The plugin bundle's manifest (`manifest.json` next to the bundle module):
 * the entry module, the plugins in order, the sha256 of every bundle file
 * (checked before anything is imported) and of every source file under
 * plugins/ (so a bundle says exactly which sources it came from).
 * Written with a fixed key order and sorted maps: same input, same bytes.
 */
import { createHash } from 'node:crypto';
import { PLUGIN_API_VERSION, type PluginKind } from './brand.js';
import { PluginBundleError } from './errors.js';

export const MANIFEST_FILE = 'manifest.json';
export const ENTRY_FILE = 'plugins.mjs';
export const MANIFEST_FORMAT = 'flotilla-plugin-bundle/v1';

export interface ManifestPlugin {
  readonly order: number;
  /** From the file name: `030_glance.ts` → `glance`. */
  readonly name: string;
  /** Source file, relative to the app root. */
  readonly file: string;
  readonly kind: PluginKind;
  /** Chart plugins: the chart, and the release when bound to one. */
  readonly chart?: string;
  readonly release?: string;
  /** Line of `getOverrides` in the source, for provenance. */
  readonly overridesLine?: number;
  /** Lines of the `chart` and `release` fields, for errors binding the plugin to releases. */
  readonly chartLine?: number;
  readonly releaseLine?: number;
}

export interface PluginManifest {
  readonly format: typeof MANIFEST_FORMAT;
  /** The host/plugin contract the bundle was built against. */
  readonly apiVersion: number;
  /** The module to import, a file of the bundle folder. */
  readonly entry: string;
  readonly plugins: readonly ManifestPlugin[];
  /** Bundle file name → sha256 (hex) of its bytes; the entry is one of them. */
  readonly files: Readonly<Record<string, string>>;
  /** Source file under plugins/ (relative to the app root) → sha256 (hex). */
  readonly sources: Readonly<Record<string, string>>;
}

export function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function sorted(record: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((k) => [k, record[k] as string]),
  );
}

export function serializeManifest(manifest: PluginManifest): string {
  const ordered = {
    format: manifest.format,
    apiVersion: manifest.apiVersion,
    entry: manifest.entry,
    plugins: manifest.plugins.map((p) => ({
      order: p.order,
      name: p.name,
      file: p.file,
      kind: p.kind,
      ...(p.chart !== undefined ? { chart: p.chart } : {}),
      ...(p.release !== undefined ? { release: p.release } : {}),
      ...(p.overridesLine !== undefined ? { overridesLine: p.overridesLine } : {}),
      ...(p.chartLine !== undefined ? { chartLine: p.chartLine } : {}),
      ...(p.releaseLine !== undefined ? { releaseLine: p.releaseLine } : {}),
    })),
    files: sorted(manifest.files),
    sources: sorted(manifest.sources),
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

const SHA256 = /^[0-9a-f]{64}$/;
/** A bare file name: bundle files never point outside their folder. */
const BUNDLE_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const KINDS: readonly PluginKind[] = ['chart', 'lifecycle', 'kustomize'];

/** Reads and checks a manifest; `where` names it in messages. */
export function parseManifest(text: string, where: string): PluginManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new PluginBundleError(`${where}: not JSON (${(error as Error).message})`);
  }
  const bad = (what: string): never => {
    throw new PluginBundleError(`${where}: ${what}`);
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return bad('expected a JSON object');
  const m = raw as Record<string, unknown>;
  if (m.format !== MANIFEST_FORMAT) bad(`format is ${JSON.stringify(m.format)}, expected "${MANIFEST_FORMAT}"`);
  if (m.apiVersion !== PLUGIN_API_VERSION) bad(`built for plugin API ${String(m.apiVersion)}; this flotilla speaks ${PLUGIN_API_VERSION}: rebuild the app`);
  const hashes = (value: unknown, field: string, key: RegExp): Record<string, string> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad(`${field} must be a map of file → sha256`);
    for (const [name, hash] of Object.entries(value)) {
      if (!key.test(name)) bad(`${field}: "${name}" is not an acceptable file name`);
      if (typeof hash !== 'string' || !SHA256.test(hash)) bad(`${field}["${name}"] is not a sha256 in hex`);
    }
    return value as Record<string, string>;
  };
  const files = hashes(m.files, 'files', BUNDLE_FILE);
  const sources = hashes(m.sources, 'sources', /^plugins\/[^\\]+$/);
  if (typeof m.entry !== 'string' || !(m.entry in files)) bad('entry must name one of the bundle files');
  if (!Array.isArray(m.plugins)) return bad('plugins must be a list');
  const plugins = m.plugins.map((p: unknown, i: number): ManifestPlugin => {
    const at = `plugins[${i}]`;
    if (typeof p !== 'object' || p === null) return bad(`${at} must be an object`);
    const e = p as Record<string, unknown>;
    if (typeof e.order !== 'number' || !Number.isInteger(e.order)) bad(`${at}.order must be an integer`);
    if (typeof e.name !== 'string' || typeof e.file !== 'string') bad(`${at} needs name and file`);
    if (!KINDS.includes(e.kind as PluginKind)) bad(`${at}.kind must be one of ${KINDS.join(', ')}`);
    for (const field of ['chart', 'release'] as const) if (e[field] !== undefined && typeof e[field] !== 'string') bad(`${at}.${field} must be a string`);
    for (const field of ['overridesLine', 'chartLine', 'releaseLine'] as const)
      if (e[field] !== undefined && typeof e[field] !== 'number') bad(`${at}.${field} must be a number`);
    return e as unknown as ManifestPlugin;
  });
  return { format: MANIFEST_FORMAT, apiVersion: PLUGIN_API_VERSION, entry: m.entry as string, plugins, files, sources };
}
