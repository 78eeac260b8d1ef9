/** Whether a process is still there, and what a process that is gone left behind. Node's built-ins only (the build server's client uses it). */
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** True while process `pid` exists, whoever owns it (EPERM: it does, but is another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the entries of `dir` that a process gone since left behind: those
 * whose name `pattern` matches, its first group the process's id, of the
 * `kind` it makes. Only this user's own, and never through a link. Returns
 * the paths removed.
 */
export function removeLeftBehind(dir: string, pattern: RegExp, kind: 'file' | 'directory'): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const pid = Number(pattern.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || processAlive(pid)) continue;
    const path = join(dir, name);
    try {
      const info = lstatSync(path);
      if ((kind === 'directory' ? !info.isDirectory() : !info.isFile()) || (uid !== undefined && info.uid !== uid)) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // gone already, or not ours to remove
    }
  }
  return removed;
}
