/**
 * What the lifecycle needs of a cluster, in its own terms: where app
 * records, stored payloads and flotilla's settings are kept, the objects an
 * apply writes and watches, the app's lock, and the stores plugins get. The
 * lifecycle reaches a cluster only through these; src/kube implements them
 * over the Kubernetes API (`kubeCluster`, every call under its one retry
 * policy) and test/support/memory-cluster.ts in memory, for the lifecycle's
 * own tests. A command wires the one to the other (src/cli).
 */
import type { HeldLease, KindSelector, KubeObject, LeaseOptions, WatchJudge, WatchOptions } from '../kube/index.js';
import type { ClusterStores } from '../plugins/index.js';

/** One object named by kind and name (its namespace too, when it has one). */
export type ObjectRef = Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>;

export interface Cluster {
  readonly records: AppRecordStore;
  readonly payloads: PayloadStore;
  readonly settings: SettingsStore;
  readonly objects: ObjectStore;
  readonly locks: LockStore;
  /** Refuses (FluxMissingError) a cluster that does not serve the Flux kinds an apply writes. */
  requireFlux(): Promise<void>;
  /** The passwords, records and objects one app's plugins get in `namespace`; read-only ones write nothing (a diff). */
  pluginStores(namespace: string, appName: string, options: { readonly readOnly: boolean }): ClusterStores;
}

/** An app record as kept: its encoded text (record.ts encodes and decodes it) and the revision to write back against. */
export interface EncodedRecord {
  readonly text: string;
  readonly revision: string;
  /** Where it is kept, for messages (`Secret flotilla-system/flotilla-app-x`). */
  readonly where: string;
}

/** What a store shows of a record without decoding it (for `kubectl get -l`). */
export interface RecordSummary {
  readonly state: string;
  readonly version: string;
}

/** One record per app; a write names the revision it read, so a concurrent writer is a Conflict (src/kube), never a lost update. */
export interface AppRecordStore {
  read(app: string): Promise<EncodedRecord | undefined>;
  list(): Promise<EncodedRecord[]>;
  /** The new revision; AlreadyExists when the app has a record. */
  create(app: string, text: string, summary: RecordSummary): Promise<string>;
  /** The new revision; Conflict when `revision` is not the stored one. */
  replace(app: string, text: string, summary: RecordSummary, revision: string): Promise<string>;
  remove(app: string): Promise<void>;
}

/** The pieces of stored payloads, by name (payload.ts names, splits and checks them; src/kube keeps each as a Secret of the system namespace). */
export interface PayloadStore {
  /** Stores one piece of `app`'s payload, one of `count`, over what a killed run left under that name. */
  write(app: string, name: string, piece: Buffer, count: number): Promise<void>;
  read(name: string): Promise<Buffer | undefined>;
  /** False when there was no such piece. */
  remove(name: string): Promise<boolean>;
}

/** flotilla's settings in the cluster (config.ts reads them), as text fields. */
export interface SettingsStore {
  read(): Promise<Readonly<Record<string, string>>>;
  /** Sets these fields, keeping the others. */
  merge(fields: Readonly<Record<string, string>>): Promise<void>;
}

/** Objects of any kind: what an apply writes, reads back, waits on and deletes. */
export interface ObjectStore {
  /** Server-side apply under flotilla's field manager (`force`: take over fields another manager set); what was stored, in order. */
  apply(objects: readonly KubeObject[], options?: { readonly force?: boolean }): Promise<KubeObject[]>;
  read<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined>;
  /** NotFound when the kind is not served. */
  list<T extends KubeObject = KubeObject>(selector: KindSelector): Promise<T[]>;
  /** A JSON merge patch, for a field flotilla does not own. */
  patch(ref: ObjectRef, patch: Record<string, unknown>): Promise<KubeObject>;
  /** True when it was there; deletion may finish later (finalizers). */
  delete(ref: ObjectRef): Promise<boolean>;
  /** Whether the cluster serves the kind (false when not even its group/version is). */
  serves(apiVersion: string, kind: string): Promise<boolean>;
  /** The namespace exists (created when missing). */
  ensureNamespace(name: string): Promise<void>;
  /** Follows the selected objects, judging them after each change, until the judge returns a value (src/kube's `watchUntil`). */
  watch<T extends KubeObject, R>(selector: KindSelector, judge: WatchJudge<T, R>, options: WatchOptions): Promise<R>;
}

/** One lock per app, held for the length of an operation (src/kube's Lease lock). */
export interface LockStore {
  acquire(options: LeaseOptions): Promise<HeldLease>;
  /** Asks the holder to stop; its holder and operation, or undefined when nobody holds it. */
  requestAbort(namespace: string, name: string, by: string): Promise<{ holder: string; operation?: string } | undefined>;
  /** Forgets the lock (nothing of the app is left to guard). */
  remove(namespace: string, name: string): Promise<void>;
}
