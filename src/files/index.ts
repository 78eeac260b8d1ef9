/**
 * Filesystem helpers shared by every module that writes files the user or a
 * later run depends on (docs/architecture.md, "Shared helpers").
 */
export { writeFileAtomic, type AtomicWriteOptions } from './atomic.js';
export { makeTempDir, removeTempDir, sweepStaleTempDirs, withTempDir } from './temp.js';
export { checkSourceTree, SourceTreeError, type ExternalLink, type SourceTreeOptions } from './symlinks.js';
