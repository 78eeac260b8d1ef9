/**
 * The operator's lifecycle of an app on a cluster: upload, apply, update,
 * remove, delete, abort, list/show, user overrides and diff. It talks to the
 * cluster only through the interfaces of cluster.ts (src/kube implements
 * them); its state lives in the cluster (record.ts).
 */
export { abortApp, type AbortOutcome } from './abort.js';
export { continueApp } from './continue.js';
export type { AppRecordStore, Cluster, EncodedRecord, LockStore, ObjectRef, ObjectStore, PayloadStore, RecordSummary, SettingsStore } from './cluster.js';
export { applyApp, type ApplyOptions } from './apply.js';
export { diffApp, type DiffOptions, type DiffReport, type ObjectChange, type ReleaseDiff, type ValueChange } from './diff.js';
export { ChartRepositoryError, parseChartRepository, type ClusterConfig } from './config.js';
export {
  AppNotFoundError,
  AppStateError,
  LifecycleError,
  ObjectTooLargeError,
  PayloadIntegrityError,
  PhaseFailedError,
  PhaseUsageError,
  ReleaseFailedError,
  UpdateRefusedError,
  UploadRejectedError,
} from './errors.js';
export type { EventSink, LifecycleEvent } from './events.js';
export { decide, type DecidedOperation, type Decision, type RecordFacts } from './decide.js';
export { lockName, type OperationOptions } from './operation.js';
export { kustomizationResources, planApply, UnknownApplyModeError, type ApplyPlan, type PlanOptions } from './plan.js';
export { RecordFieldError, SYSTEM_NAMESPACE, type AppRecord, type AppState, type ChartRepository, type HistoryEntry, type Progress } from './record.js';
export type { ReleaseStatus } from './releases.js';
export { deleteApp, removeApp, SuspendedReleasesError, type DeleteOptions, type DeleteOutcome, type RemoveOptions } from './remove.js';
export { LeftBehindError } from './leftovers.js';
export { listApps, showApp, type AppSummary, type AppView } from './show.js';
export {
  applyOverrideChange,
  deleteOverrides,
  OverrideRejectedError,
  OverrideUsageError,
  setOverrides,
  showOverrides,
  type OverrideChange,
  type OverridesSet,
  type SetOverridesOptions,
  type Values,
} from './overrides.js';
export { updateApp, UpdateRecoveredError, type UpdateOptions } from './update.js';
export { uploadApp, type UploadOptions } from './upload.js';
export {
  listCustomImages,
  setCustomImage,
  setVersionTarget,
  unsetCustomImage,
  versionStatus,
  type CustomImageOptions,
  type StatusImage,
  type StatusServiceDefault,
  type TargetChangeOptions,
  type VersionStatus,
} from './versions.js';
