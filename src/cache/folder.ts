/**
 * The one rule for a folder flotilla reads back what it wrote before (a
 * build cache, the user cache with the CLI's code cache and the build
 * servers' sockets): a real folder (not a link), owned by this user, that
 * no one else may write into — anyone who could would plant what a later
 * run trusts. `private` folders (the user cache: code that runs, sockets
 * that run builds) may not even be read by others (mode 0700).
 *
 * Node's built-ins only: the CLI's launcher uses it before flotilla loads.
 */
import { lstatSync, mkdirSync } from 'node:fs';

export interface FolderRule {
  /** Make the folder (mode 0700) when it is missing. */
  readonly create?: boolean;
  /** No access at all for group and others, not only no writing. */
  readonly private?: boolean;
}

/** Why `dir` may not hold a cache, or undefined when it may. */
export function folderProblem(dir: string, rule: FolderRule = {}): string | undefined {
  try {
    if (rule.create) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const info = lstatSync(dir);
    if (!info.isDirectory()) return `${dir} is not a folder${info.isSymbolicLink() ? ' (a symbolic link)' : ''}`;
    if (process.getuid !== undefined && info.uid !== process.getuid()) return `${dir} is owned by another user (uid ${info.uid})`;
    const open = info.mode & (rule.private ? 0o077 : 0o022);
    if (open !== 0)
      return `${dir} is ${rule.private ? 'open to' : 'writable by'} group or others (mode ${(info.mode & 0o777).toString(8)}; chmod ${rule.private ? '700' : 'go-w'} it to use it)`;
    return undefined;
  } catch (error) {
    return `${dir} cannot be used (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
}
