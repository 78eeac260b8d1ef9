/**
 * Writing the imported tree into APP_DIR, and nowhere else.
 *
 * - APP_DIR must be empty or absent; with `force`, an existing folder is
 *   accepted and the import's top-level folders (fluxcd/, charts/,
 *   overrides/) are replaced, everything else is left alone.
 * - APP_DIR may not be, contain, or lie inside the source or a chart folder.
 * - Files are first written into a staging folder INSIDE APP_DIR (created
 *   by the temp-folder helper of src/files, files opened with O_EXCL so nothing planted there is
 *   followed), checked by the caller, then moved into place with rename; a
 *   failure removes the staging folder and leaves APP_DIR as it was.
 * - Every path is checked to stay inside the staging folder.
 */
import { lstat, mkdir, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { checkEntryPath } from '../tarball/index.js';
import { isWithin, makeFolder, makeTempDir, realpathLoose, removeTempDir } from '../files/index.js';
import { ImportTargetError } from './errors.js';

/** The folders an import owns in APP_DIR. */
const IMPORT_FOLDERS = ['fluxcd', 'charts', 'overrides'] as const;

export interface Target {
  /** Absolute (real) path of APP_DIR. */
  readonly dir: string;
  /** APP_DIR did not exist; it is removed again if the import fails. */
  readonly created: boolean;
}

/** Checks APP_DIR before anything is read or written; does not create it. */
export async function checkTarget(appDir: string, readFrom: readonly string[], force: boolean): Promise<Target> {
  const dir = realpathLoose(appDir);
  for (const place of readFrom) {
    const real = realpathLoose(place);
    if (isWithin(real, dir) || isWithin(dir, real)) {
      throw new ImportTargetError(`APP_DIR ${dir} overlaps ${real}, which the import reads; choose a folder outside it`);
    }
  }
  const info = await lstat(dir).catch(() => undefined);
  if (!info) return { dir, created: true };
  if (!info.isDirectory()) throw new ImportTargetError(`APP_DIR ${dir} exists and is not a folder`);
  const entries = await readdir(dir);
  if (entries.length > 0 && !force) {
    throw new ImportTargetError(
      `APP_DIR ${dir} is not empty (${entries.slice(0, 5).join(', ')}${entries.length > 5 ? ', …' : ''}); use --force to replace its ${IMPORT_FOLDERS.join('/, ')}/ folders`,
    );
  }
  return { dir, created: false };
}

/** A staging folder inside APP_DIR holding the whole tree, not yet in place. */
export interface Staged {
  readonly dir: string;
  readonly files: readonly string[];
}

/** Writes `files` (paths relative to the app root) into a new staging folder inside the target. */
export async function stageTree(target: Target, files: ReadonlyMap<string, Buffer | string>): Promise<Staged> {
  await makeFolder(target.dir);
  const staging = await makeTempDir('import', { parent: target.dir });
  try {
    const written: string[] = [];
    for (const [path, data] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const checked = checkEntryPath(path);
      const top = path.split('/')[0] as (typeof IMPORT_FOLDERS)[number];
      if (!checked.ok || checked.path !== path || !IMPORT_FOLDERS.includes(top)) {
        throw new ImportTargetError(`refusing to write ${JSON.stringify(path)}: not a path under ${IMPORT_FOLDERS.join('/, ')}/`);
      }
      const full = resolve(staging, ...path.split('/'));
      if (!full.startsWith(staging + sep)) throw new ImportTargetError(`refusing to write ${JSON.stringify(path)}: outside APP_DIR`);
      await mkdir(dirname(full), { recursive: true, mode: 0o755 });
      await writeFile(full, data, { flag: 'wx', mode: 0o644 });
      written.push(path);
    }
    return { dir: staging, files: written };
  } catch (error) {
    await removeTempDir(staging);
    throw error;
  }
}

/** Moves the staged folders into place (replacing existing ones: only reached with --force); returns the replaced ones. */
export async function commitStaged(target: Target, staged: Staged): Promise<string[]> {
  const replaced: string[] = [];
  try {
    for (const folder of IMPORT_FOLDERS) {
      const from = join(staged.dir, folder);
      if (!(await lstat(from).catch(() => undefined))) continue;
      const to = join(target.dir, folder);
      if (await lstat(to).catch(() => undefined)) {
        // rm does not follow a symlink: a planted link is removed, not its target.
        await rm(to, { recursive: true, force: true });
        replaced.push(folder);
      }
      await rename(from, to);
    }
  } finally {
    await removeTempDir(staged.dir);
  }
  return replaced;
}

/** Undoes a failed import: the staging folder, and APP_DIR itself when the import created it. */
export async function discardStaged(target: Target, staged: Staged | undefined): Promise<void> {
  if (staged) await removeTempDir(staged.dir);
  if (target.created) await rmdir(target.dir).catch(() => undefined);
}
