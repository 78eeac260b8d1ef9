/**
 * File-system failures in the user's words: which path, and what is wrong
 * with it, on one line (never an errno dump or a stack trace).
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { FlotillaError } from '../diagnostics/index.js';

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or folder',
  EISDIR: 'is a folder, not a file',
  ENOTDIR: 'a part of the path is not a folder',
  ENAMETOOLONG: 'name too long for the file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'symbolic link loop',
  EEXIST: 'already exists',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files',
  EBUSY: 'busy',
};

/** What an error of a file-system call means, when it is one. */
export function fileErrorReason(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? REASONS[code] : undefined;
}

/** What went wrong, for a message: a file-system failure in words, else the error's own message. */
export function fileErrorText(error: unknown): string {
  return fileErrorReason(error) ?? (error instanceof Error ? error.message : String(error));
}

/** A file or folder the user named cannot be used. */
export class FileAccessError extends FlotillaError {
  readonly path: string;
  /** What is wrong with it, in words (`no such file or folder`). */
  readonly reason: string;
  constructor(path: string, reason: string) {
    super(`${path}: ${reason}`);
    this.path = path;
    this.reason = reason;
  }
}

/** A file-system failure that names its own path (as Node's do) as a {@link FileAccessError}; undefined for any other error. */
export function systemFileError(error: unknown): FileAccessError | undefined {
  const reason = fileErrorReason(error);
  const { path, dest } = (error ?? {}) as NodeJS.ErrnoException & { dest?: unknown };
  if (reason === undefined || typeof path !== 'string') return undefined;
  return new FileAccessError(typeof dest === 'string' ? `${path} → ${dest}` : path, reason);
}

/** The error as a {@link FileAccessError} naming `path` when it is a file-system failure; otherwise as it is. */
export function asFileAccessError(error: unknown, path: string): unknown {
  const reason = fileErrorReason(error);
  return reason === undefined ? error : new FileAccessError(path, reason);
}

/**
 * readFile of a file the user named, failing with a {@link FileAccessError}
 * that names the path. Only a regular file is read: a FIFO or a device would
 * block or never end, a folder is no file.
 */
export async function readInputFile(path: string): Promise<Buffer> {
  try {
    const info = await stat(path);
    if (info.isDirectory()) throw new FileAccessError(path, REASONS.EISDIR!);
    if (!info.isFile()) throw new FileAccessError(path, 'is not a regular file (a FIFO, a socket or a device)');
    return await readFile(path);
  } catch (error) {
    throw asFileAccessError(error, path);
  }
}

/**
 * A folder the user named (an output folder) and its missing parents, made
 * one level at a time: Node's recursive mkdir never returns on some paths
 * (under /proc it retries forever). An existing file in the way, or a level
 * that cannot be made, is a {@link FileAccessError} naming it.
 */
export async function makeFolder(path: string, options: { readonly mode?: number } = {}): Promise<void> {
  const missing: string[] = [];
  for (let at = resolve(path); ;) {
    const info = await stat(at).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw asFileAccessError(error, at);
    });
    if (info) {
      if (!info.isDirectory()) throw new FileAccessError(at, 'is not a folder');
      break;
    }
    missing.push(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const dir of missing.reverse()) {
    await mkdir(dir, options.mode === undefined ? {} : { mode: options.mode }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw asFileAccessError(error, dir);
    });
  }
}
