/**
 * Caches hold no authority (docs/security.md): the one folder rule, the one
 * entry format, and the cache folder every build cache goes through.
 */
export { CacheFolder, inputDigest, type CacheNotes } from './cache-folder.js';
export { folderProblem, type FolderRule } from './folder.js';
export { cacheKey, openEntry, sealEntry } from './seal.js';
