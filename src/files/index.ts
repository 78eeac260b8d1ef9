/**
 * Files: trees of files read from a folder or from memory alike, and the
 * atomic write every module uses for files the user or a later run depends
 * on (docs/architecture.md, "Shared helpers").
 */
export { createExclusive, tempNameFor, writeFileAtomic, type AtomicWriteOptions } from './atomic.js';
export { writeFolder } from './folder.js';
export { makeTempDir, removeTempDir, sweepStaleTempDirs, withTempDir } from './temp.js';
export { checkSourceTree, SourceTreeError, type ExternalLink, type SourceTreeOptions } from './symlinks.js';
export { directorySource, emptyReadMemory, memorySource, type EntryKind, type FileSource, type ReadMemory } from './source.js';
export { asFileAccessError, FileAccessError, fileErrorReason, fileErrorText, makeFolder, readInputFile, systemFileError } from './errors.js';
export { userCacheDir } from './user-cache.js';
export { processAlive, removeLeftBehind } from './process.js';
export { isWithin, realpathLoose } from './real-path.js';
export { FolderFingerprinter, fingerprintFolder, type FolderFingerprint } from './folder-fingerprint.js';
