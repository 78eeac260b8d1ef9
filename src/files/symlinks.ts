/**
 * Symbolic links in a source tree that flotilla packs or converts (the app
 * for `build`, the StarlingX app for `import`). A link may point anywhere
 * inside its root; one that resolves outside would pack a file of the
 * builder's machine (a key, a password file) into a tarball meant to be
 * shipped, so it is refused, naming the link and its target, unless the user
 * asks for it (`--follow-external-symlinks`). Loops and unreadable folders
 * are clean errors naming the path.
 */
import { accessSync, constants, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { FlotillaError } from '../diagnostics/index.js';
import { fileErrorText } from './errors.js';
import { isWithin } from './real-path.js';

/** A link followed out of its root (only with `followExternal`). */
export interface ExternalLink {
  readonly link: string;
  readonly target: string;
}

export class SourceTreeError extends FlotillaError {
  /** The path at fault (the link, for a link). */
  readonly path: string;
  constructor(path: string, message: string) {
    super(message);
    this.path = path;
  }
}

export interface SourceTreeOptions {
  /** Follow links that resolve outside the root instead of refusing them. */
  readonly followExternal?: boolean;
  /** What the root is, for messages ("the app", "the import source"). */
  readonly rootName: string;
}

/** Folders that hold dependencies or history, never content of their own: not walked. */
const NOT_CONTENT = new Set(['.git', 'node_modules']);

/**
 * Checks every link below `dir` (a folder or file inside `root`): returns the
 * links followed out of the root, or throws a {@link SourceTreeError}.
 */
export function checkSourceTree(dir: string, root: string, options: SourceTreeOptions): ExternalLink[] {
  const realRoot = realpathSync.native(resolve(root));
  const external: ExternalLink[] = [];
  // Relative to where the user is when that is shorter and plain; absolute otherwise.
  const show = (path: string): string => {
    const rel = relative(process.cwd(), path);
    return rel === '' || rel.startsWith('..') ? path : rel;
  };
  const visit = (abs: string, real: string, ancestors: ReadonlySet<string>): void => {
    let entries;
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch (error) {
      throw new SourceTreeError(abs, `${show(abs)}: cannot read the folder (${fileErrorText(error)})`);
    }
    for (const entry of entries) {
      if (NOT_CONTENT.has(entry.name)) continue;
      const child = join(abs, entry.name);
      let childReal = join(real, entry.name);
      let isDir = entry.isDirectory();
      if (entry.isSymbolicLink()) {
        try {
          childReal = realpathSync.native(child);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') continue; // dangling: points at nothing, so it leaks nothing; the readers say what they make of it
          throw new SourceTreeError(child, `${show(child)}: ${fileErrorText(error)}`);
        }
        if (!isWithin(childReal, realRoot)) {
          if (!options.followExternal) {
            throw new SourceTreeError(
              child,
              `${show(child)} → ${childReal}: symbolic link resolves outside ${options.rootName} (${realRoot}); --follow-external-symlinks allows it`,
            );
          }
          external.push({ link: child, target: childReal });
        }
        isDir = statSync(childReal).isDirectory();
      }
      if (isDir) {
        if (ancestors.has(childReal)) throw new SourceTreeError(child, `${show(child)}: symbolic link loop (back to ${childReal})`);
        visit(child, childReal, new Set([...ancestors, childReal]));
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        try {
          accessSync(child, constants.R_OK);
        } catch (error) {
          throw new SourceTreeError(child, `${show(child)}: cannot read the file (${fileErrorText(error)})`);
        }
      }
    }
  };
  const start = resolve(dir);
  let startReal: string;
  try {
    startReal = realpathSync.native(start);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return external;
    throw new SourceTreeError(start, `${show(start)}: ${fileErrorText(error)}`);
  }
  if (!isWithin(startReal, realRoot)) {
    if (!options.followExternal)
      throw new SourceTreeError(
        start,
        `${show(start)} → ${startReal}: symbolic link resolves outside ${options.rootName} (${realRoot}); --follow-external-symlinks allows it`,
      );
    external.push({ link: start, target: startReal });
  }
  if (statSync(startReal).isDirectory()) visit(start, startReal, new Set([startReal]));
  return external;
}
