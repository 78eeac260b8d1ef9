/**
 * Where paths lie once the file system has resolved them: for the checks
 * that a folder written to is not one read from (build, import, staging a
 * chart), where a link or `..` must not hide an overlap. Node's built-ins
 * only.
 */
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';

/**
 * The real path of `path`, every link in the part that exists resolved; the
 * rest as written (a folder not made yet). `..` is read as text first, as
 * `join` and `resolve` read it in the paths the build, import and staging
 * write to: `link/..` is the link's folder, not its target's parent.
 */
export function realpathLoose(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync.native(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(realpathLoose(parent), basename(absolute));
  }
}

/** Whether `path` is `folder` or lies below it (both absolute and resolved alike). */
export function isWithin(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);
}
