/**
 * flotilla as a library: the operations the CLI runs, for scripts and tools.
 * Chart plugins import `flotilla/plugin` instead.
 */
export { loadApp, type App, type LoadOptions, type Release } from './app/index.js';
export { computeReleaseValues, explain, type ReleaseValues } from './values/index.js';
export { preflight, type PreflightReport } from './preflight/index.js';
export { buildApp, watchApp, type BuildOptions, type BuildResult } from './build/index.js';
export { inspectBundle, verifyBundle, type InspectReport, type VerifyReport } from './verify/index.js';
export { importStarlingxApp, type ImportReport } from './import/index.js';
export {
  bumpField,
  bumpToRelease,
  bumpVersions,
  checkPins,
  editOverrides,
  listImages,
  pinImages,
  unifiedDiff,
  writeChanges,
  type FileChange,
  type OverrideEdit,
} from './edit/index.js';
export { signBundleFile } from './tarball/index.js';
export { loadAppPlugins } from './plugins/index.js';
export { Session, type SessionOptions } from './session/index.js';
export { FlotillaError, formatDiagnostic, type Diagnostic, type SourceLocation } from './diagnostics/index.js';
