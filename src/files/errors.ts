/**
 * File-system failures in the user's words: which path, and what is wrong
 * with it, on one line (never an errno dump or a stack trace).
 */
import { readFile } from 'node:fs/promises';
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
  constructor(path: string, reason: string) {
    super(`${path}: ${reason}`);
    this.path = path;
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

/** readFile, failing with a {@link FileAccessError} that names the path. */
export async function readInputFile(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw asFileAccessError(error, path);
  }
}
