/**
 * The application tarball: its layout (the one place tarball paths are
 * named), opening one in memory and putting one together, and the file I/O
 * underneath — deterministic tar.gz writing (shared with Helm chart
 * packaging), safe reading and extraction of untrusted archives, checksum
 * files and signatures.
 */
export { UnsafeArchiveError, type ArchiveProblem } from './errors.js';
export { checkEntryPath, compareBytewise, type PathCheck } from './paths.js';
export {
  ArchiveWriteError,
  FIXED_MTIME,
  pieceKey,
  tarEntryName,
  writeTar,
  writeTarGz,
  writeTarGzAsync,
  tarGzInMemory,
  writeTarGzFile,
  writeTarGzPieces,
  type PieceRecord,
  type PieceSource,
  type TarEntry,
  type TarWriteOptions,
  type WrittenArchive,
  type WrittenTarGz,
} from './tar-write.js';
export { crc32Combine, deflatePiece, joinGzip, storedPiece, type DeflatePiece, type JoinedGzip } from './gzip-pieces.js';
export {
  DecompressionBudget,
  extractTarGzSafely,
  parseTarSafely,
  readTarGzEntriesSync,
  readTarGzSafely,
  readTarGzSafelySync,
  type ArchiveEntry,
  type ArchiveLimits,
  type ArchiveSource,
  type ExtractedArchive,
  type ReadArchiveOptions,
} from './tar-read.js';
export {
  APP_DIR,
  bundleFileName,
  bundlePath,
  CHARTS_DIR,
  chartArchivePath,
  CHECKSUM_FILES,
  isBundleFileName,
  isChartArchivePath,
  MANIFESTS_DIR,
  METADATA_FILE,
  PLUGINS_DIR,
  SIGNATURE_FILE,
  TOP_LEVEL_ENTRIES,
  type ChecksumAlgorithm,
} from './layout.js';
export {
  BUNDLE_TAR_OPTIONS,
  bundleEntries,
  bundleFolder,
  changedBundleEntries,
  bundleFromBytes,
  bundleMetadata,
  chartArchives,
  openBundle,
  type BundleChart,
  type BundleParts,
  type OpenedBundle,
} from './tarball.js';
export {
  digestHex,
  formatChecksumProblem,
  listedDigests,
  md5sumFile,
  sha256sumFile,
  verifyChecksums,
  type ChecksumProblem,
  type FileSet,
  type VerifyChecksumsOptions,
} from './checksums.js';
export { checkSignature, signBundleFile, SignatureKeyError, type SignedBundle } from './signature.js';
