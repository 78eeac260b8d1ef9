/** Build: an app source tree → a reproducible StarlingX-compatible application tarball. */
export { buildApp, ChartVersionError, type BuildOptions, type BuildResult, type BuiltChart } from './build.js';
export { BUILD_CONFIG_FILE, buildConfigSchema, readBuildConfig, resolveHelmRepository, UnsupportedHelmRepoError, type BuildConfig } from './config.js';
export { BUILD_TOKEN, parseTokenArguments, substituteTokens, UnresolvedTokenError } from './tokens.js';
export { nextPatchVersion, readPreviousCharts, unbumpedChangeOf, type PreviousCharts, type VersionProblem } from './against.js';
export { watchApp, type Watch, type WatchedBuild, type WatchOptions } from './watch.js';
export { KeptBuilds } from './kept.js';
