/**
 * Kubernetes I/O, the only module that talks to a cluster: the client
 * factory, typed API errors, server-side apply, watches, waiting for
 * conditions, discovery checks, the Lease lock, the cluster-mode stores
 * plugins get through the plugin API's narrow interfaces, and the cluster
 * the lifecycle asks for (`kubeCluster`, src/lifecycle/cluster.ts).
 */
export { connect, KubeConfigError, type KubeClient, type KubeTarget } from './client.js';
export { AlreadyExists, Conflict, Forbidden, Gone, Invalid, KubeApiError, kubeError, NotFound, Unauthorized, Unavailable, type KubeCall } from './errors.js';
export { DEFAULT_RETRY_POLICY, retryDelay, withRetry, type RetryClock, type RetryPolicy } from './retry.js';
export { APP_LABEL, clusterStores, ConfigMapRecordStore, KubeDataError, MANAGED_BY, recordsConfigMapName, SecretPasswordStore } from './stores.js';
export { FIELD_MANAGER, serverSideApply, type ApplyOptions, type KindSelector, type KubeObject, type ServedKind } from './objects.js';
export { WaitAbortedError, WaitTimeoutError, watchUntil, type WatchChange, type WatchEventType, type WatchJudge, type WatchOptions } from './watch.js';
export { FluxMissingError, requireFlux } from './discovery.js';
export { kubeCluster, recordSecretName, SYSTEM_NAMESPACE } from './cluster.js';
export {
  AbortRequestedError,
  acquireLease,
  acquireLeaseIn,
  defaultHolder,
  LockedError,
  LockLostError,
  requestAbort,
  requestAbortIn,
  type HeldLease,
  type LeaseClock,
  type LeaseOptions,
  type LeaseState,
  type LeaseStorage,
} from './lease.js';
