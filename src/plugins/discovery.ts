/**
 * Which files of plugins/ are plugins, and in what order. As in StarlingX, a
 * plugin file's name starts with a three-digit order: `plugins/030_glance.ts`.
 * Other files (helpers without the prefix, sub-folders) are only what plugins
 * import. The order is the file order, so it never depends on the file system.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PluginLoadError } from './errors.js';

export const PLUGINS_DIR = 'plugins';

/** Where an app keeps its plugins' tests (`plugin new` writes one; `plugin check` type-checks them with the plugins). */
export const PLUGIN_TESTS_DIR = 'test/plugins';

/** How a plugin test's file name ends (`<chart>.plugin.test.ts`): what `plugin check` checks of PLUGIN_TESTS_DIR. */
export const PLUGIN_TEST_SUFFIX = '.plugin.test.ts';

/** `NNN_name.ts`, name of lower-case letters, digits, `-` and `_`. */
const PLUGIN_FILE = /^(\d{3})_([a-z0-9][a-z0-9_-]*)\.ts$/;

export interface PluginFile {
  /** Relative to the app root, with `/`: `plugins/030_glance.ts`. */
  readonly file: string;
  readonly order: number;
  /** The file name without the order and extension: `glance`. */
  readonly name: string;
}

export function parsePluginFileName(fileName: string): { order: number; name: string } | undefined {
  const match = PLUGIN_FILE.exec(fileName);
  return match ? { order: Number(match[1]), name: match[2] as string } : undefined;
}

/** The plugin files of an app, in order. Two files with one order number are an error: the order must be chosen. */
export async function discoverPluginFiles(appRoot: string): Promise<PluginFile[]> {
  const dir = join(appRoot, PLUGINS_DIR);
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { withFileTypes: true });
  const files: PluginFile[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const parsed = parsePluginFileName(entry.name);
    if (parsed) files.push({ file: `${PLUGINS_DIR}/${entry.name}`, ...parsed });
    else if (/^\d+_/.test(entry.name) && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      throw new PluginLoadError(`${PLUGINS_DIR}/${entry.name}: a plugin file is named NNN_<name>.ts (three digits, then lower-case letters, digits, - or _)`);
    }
  }
  files.sort((a, b) => a.order - b.order || (a.file < b.file ? -1 : 1));
  for (let i = 1; i < files.length; i++) {
    const [a, b] = [files[i - 1] as PluginFile, files[i] as PluginFile];
    if (a.order === b.order)
      throw new PluginLoadError(`${a.file} and ${b.file} share the order ${String(a.order).padStart(3, '0')}; give each plugin its own number`);
  }
  return files;
}

/** The next free order for a new plugin: the next multiple of ten after the highest, else the lowest unused number. */
export function nextFreeOrder(existing: readonly number[]): number {
  if (existing.length === 0) return 10;
  const next = (Math.floor(Math.max(...existing) / 10) + 1) * 10;
  if (next <= 999) return next;
  for (let n = 1; n <= 999; n++) if (!existing.includes(n)) return n;
  throw new PluginLoadError('no free plugin order number left (001-999 are all used)');
}
