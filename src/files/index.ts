/**
 * Files: trees of files read from a folder or from memory alike, and the
 * atomic write every module uses for files the user or a later run depends
 * on (docs/architecture.md, "Shared helpers").
 */
export { writeFileAtomic, type AtomicWriteOptions } from './atomic.js';
export { directorySource, memorySource, type EntryKind, type FileSource } from './source.js';
