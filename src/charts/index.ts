/**
 * Helm charts: read chart sources (Chart.yaml, .helmignore, dependencies),
 * stage renderable copies, package byte-reproducible archives, and build
 * repository indexes.
 */
export type {
  ChartApiVersion,
  ChartDependency,
  ChartFile,
  ChartMaintainer,
  ChartMetadata,
  ChartOrigin,
  ChartSource,
  ChartType,
  DependencySource,
  RepositoryChart,
  RepositoryRequest,
  RepositoryResolver,
  ResolvedDependency,
} from './types.js';
export { ChartArchiveError, ChartDependencyError, ChartError, ChartFileError, HelmignoreError } from './errors.js';
export { chartMetadata, parseChartYaml, rewriteChartVersion } from './chart-file.js';
export { HelmignoreRules, type HelmignoreRule } from './helmignore.js';
export { compareVersions, parseConstraint, parseVersion, type SemVer, type VersionConstraint } from './semver.js';
export { createChartLoader, loadChart, loadChartArchive, type ChartLoader, type ChartLoaderOptions } from './load.js';
export { lockDigest, lockedVersions, parseChartLock, type ChartLock, type LockedDependency } from './chart-lock.js';
export { goJson } from './go-json.js';
export { chartTree } from './layout.js';
export { stageChart } from './stage.js';
export { ChartSizeError, HELM_LOADER_LIMITS } from './helm-limits.js';
export {
  chartContentDigest,
  listArchiveFiles,
  packageChart,
  readChartArchive,
  type ChartArchive,
  type PackagedChart,
  type PackageOptions,
} from './package.js';
export { publishToFolder, type PublishOptions, type PublishedRepository } from './publish.js';
export { buildRepoIndex, ChartVersionConflictError, type IndexedChart, type MergedRepoIndex, type RepoIndexOptions } from './repo-index.js';
