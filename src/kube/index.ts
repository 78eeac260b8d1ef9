/**
 * Kubernetes I/O, the only module that talks to a cluster: the client
 * factory, typed API errors, server-side apply, watches, waiting for
 * conditions, discovery checks, the Lease lock, and the cluster-mode stores
 * plugins get through the plugin API's narrow interfaces.
 */
export { connect, KubeConfigError, loadClientModule, type KubeClient, type KubeTarget } from './client.js';
export {
  AlreadyExists,
  Conflict,
  describeObject,
  Forbidden,
  Gone,
  Invalid,
  KubeApiError,
  kubeError,
  NotFound,
  Unauthorized,
  Unavailable,
  type KubeCall,
} from './errors.js';
export { DEFAULT_RETRY_POLICY, kubeCall, kubeRead, retryDelay, withRetry, type RetryClock, type RetryPolicy } from './retry.js';
export { APP_LABEL, clusterStores, ConfigMapRecordStore, KubeClusterObjects, KubeDataError, MANAGED_BY, NOT_GENERATED, PASSWORD_KEY, recordsConfigMapName, SecretPasswordStore } from './stores.js';
export {
  collectionPath,
  deleteObject,
  discoverKind,
  FIELD_MANAGER,
  listObjects,
  mergePatch,
  readObject,
  serverSideApply,
  type ApplyOptions,
  type KindSelector,
  type KubeObject,
  type ServedKind,
} from './objects.js';
export { objectKey, WaitAbortedError, WaitTimeoutError, watchUntil, type WatchChange, type WatchEventType, type WatchJudge, type WatchOptions } from './watch.js';
export { FLUX_KINDS, FluxMissingError, requireFlux } from './discovery.js';
export {
  ABORT_ANNOTATION,
  AbortRequestedError,
  acquireLease,
  DEFAULT_LEASE_SECONDS,
  defaultHolder,
  LockedError,
  LockLostError,
  OPERATION_ANNOTATION,
  requestAbort,
  type HeldLease,
  type LeaseOptions,
} from './lease.js';
