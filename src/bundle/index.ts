/**
 * The application tarball's file I/O, independent of what is inside it:
 * deterministic tar.gz writing (shared with Helm chart packaging), safe
 * reading and extraction of untrusted archives, and checksum files.
 */
export { UnsafeArchiveError, type ArchiveProblem } from './errors.js';
export { checkEntryPath, compareBytewise, realpathLoose, type PathCheck } from './paths.js';
export {
  ArchiveWriteError,
  FIXED_MTIME,
  pieceKey,
  writeTar,
  writeTarGz,
  writeTarGzAsync,
  writeTarGzFile,
  writeTarGzPieces,
  type PieceRecord,
  type PieceSource,
  type TarEntry,
  type TarWriteOptions,
  type WrittenArchive,
  type WrittenTarGz,
} from './tar-write.js';
export { crc32Combine, deflatePiece, headerPiece, joinGzip, storedPiece, type DeflatePiece, type JoinedGzip } from './gzip-pieces.js';
export {
  DEFAULT_ARCHIVE_LIMITS,
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
  CHECKSUM_FILES,
  checksumFile,
  digestHex,
  formatChecksumProblem,
  md5sumFile,
  sha256sumFile,
  verifyChecksums,
  type ChecksumAlgorithm,
  type ChecksumProblem,
  type FileSet,
  type VerifyChecksumsOptions,
} from './checksums.js';
export { checkSignature, SIGNATURE_FILE, signBundleFile, SignatureKeyError, signChecksums, type SignedBundle } from './signature.js';
