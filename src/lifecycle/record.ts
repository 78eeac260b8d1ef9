/**
 * The app state record: one Secret per app in the system namespace,
 * `flotilla-app-<app>`, its `record` key holding the record as gzipped JSON
 * (the way Helm keeps a release). Writes go through the resourceVersion read,
 * so a concurrent writer is a Conflict, never a lost update.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type { V1Secret } from '@kubernetes/client-node';
import { AlreadyExists, APP_LABEL, kubeCall, kubeRead, MANAGED_BY, type KubeClient } from '../kube/index.js';
import type { JsonValue } from '../plugins/index.js';
import { AppNotFoundError, LifecycleError } from './errors.js';

/** Where flotilla keeps its own objects: app records, stored bundles, locks, its config. */
export const SYSTEM_NAMESPACE = 'flotilla-system';
export const RECORD_TYPE = 'flotilla.starlingx.io/app.v1';
const RECORD_KEY = 'record';
/** Label telling app records from flotilla's other Secrets (listing by Secret type is not served everywhere). */
const KIND_LABEL = 'flotilla.starlingx.io/kind';

/** StarlingX's application states. */
export const APP_STATES = ['uploading', 'uploaded', 'upload-failed', 'applying', 'applied', 'apply-failed', 'updating', 'recovering', 'removing', 'remove-failed'] as const;
export type AppState = (typeof APP_STATES)[number];

export type OperationName = 'upload' | 'apply' | 'update' | 'recover' | 'remove' | 'delete' | 'abort' | 'override';
/** `killed`: its run ended without a word (kill -9, a lost node); closed by the next operation that took the lock. */
export type OperationResult = 'succeeded' | 'failed' | 'refused' | 'aborted' | 'recovered' | 'killed';

export interface HistoryEntry {
  readonly operation: OperationName;
  readonly version: string;
  readonly started: string;
  readonly finished?: string;
  readonly result?: OperationResult;
  /** Why it ended as it did (the failed release and Flux's message, the refusing plugin's reason, …). */
  readonly reason?: string;
  /** Who ran it. */
  readonly by?: string;
}

/** A release as the record keeps it: enough to apply, wait and remove in order without the bundle. */
export interface RecordedRelease {
  readonly name: string;
  readonly namespace: string;
  readonly chart: string;
  readonly chartVersion: string;
  readonly releaseName: string;
  readonly dependsOn: readonly string[];
}

/** Where the charts were delivered. */
export interface ChartRepository {
  /** `oci://host/path` or `http(s)://host/path`. */
  readonly url: string;
  readonly type: 'oci' | 'default';
  /** The registry speaks plain HTTP (a loopback registry in tests). */
  readonly plainHttp?: boolean;
  /** A Helm HTTP repository: the folder its web server serves at `url`. */
  readonly dir?: string;
}

/** One uploaded version of the app. */
export interface RecordedBundle {
  readonly version: string;
  /** sha256 of the tarball uploaded. */
  readonly sha256: string;
  /** Where it came from (file name or oci:// reference), for show. */
  readonly source: string;
  /** The Secret holding what apply needs of the tarball (payload.ts). */
  readonly payload: string;
  readonly charts: readonly { readonly name: string; readonly version: string; readonly sha256: string }[];
  readonly releases: readonly RecordedRelease[];
  readonly repository: ChartRepository;
  readonly maintainUserOverrides: boolean;
  readonly updateFailureNoRollback: boolean;
  /** `upgrades.from_versions`, as written. */
  readonly fromVersions: readonly string[];
  readonly applyProgressAdjust: number;
  readonly uploaded: string;
}

export interface Progress {
  readonly ready: number;
  readonly total: number;
  /** What is being waited on, or the step running. */
  readonly current?: string;
  readonly percent: number;
}

/** User overrides (values layer 8), per chart. */
export type UserOverrides = Readonly<Record<string, { readonly [key: string]: JsonValue }>>;

export interface AppRecord {
  readonly name: string;
  readonly state: AppState;
  readonly bundle: RecordedBundle;
  /** During an update: the version being left and its user overrides, for recovery. */
  readonly previous?: RecordedBundle;
  readonly previousUserOverrides?: UserOverrides;
  readonly userOverrides: UserOverrides;
  /** HelmReleases this app has in the cluster now (names), for clean-up and removal. */
  readonly deployed: readonly string[];
  readonly mode?: string;
  readonly progress?: Progress;
  readonly history: readonly HistoryEntry[];
}

/** Entries kept in the history; older ones are dropped. */
export const HISTORY_LIMIT = 20;

export function recordSecretName(app: string): string {
  return `flotilla-app-${app}`;
}

export function encodeRecord(record: AppRecord): string {
  return gzipSync(Buffer.from(JSON.stringify(record), 'utf8')).toString('base64');
}

export function decodeRecord(data: string, where: string): AppRecord {
  try {
    return JSON.parse(gunzipSync(Buffer.from(data, 'base64')).toString('utf8')) as AppRecord;
  } catch (error) {
    throw new LifecycleError(`${where} does not hold a readable app record (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** A record read from the cluster, with the version to write back against. */
export interface StoredRecord {
  readonly record: AppRecord;
  readonly resourceVersion: string;
}

export class AppRecords {
  constructor(private readonly client: Pick<KubeClient, 'core'>) {}

  async read(app: string): Promise<StoredRecord | undefined> {
    const name = recordSecretName(app);
    const secret = await kubeRead({ verb: 'read', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () => this.client.core.readNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE }));
    if (!secret) return undefined;
    const data = secret.data?.[RECORD_KEY];
    if (data === undefined) throw new LifecycleError(`Secret ${SYSTEM_NAMESPACE}/${name} holds no "${RECORD_KEY}"`);
    // The API base64-encodes Secret data; inside is the gzipped record, base64 again like Helm's.
    return { record: decodeRecord(Buffer.from(data, 'base64').toString('utf8'), `Secret ${SYSTEM_NAMESPACE}/${name}`), resourceVersion: secret.metadata?.resourceVersion ?? '' };
  }

  async get(app: string): Promise<StoredRecord> {
    const stored = await this.read(app);
    if (!stored) throw new AppNotFoundError(`no app "${app}" in this cluster; upload it first (flotilla upload BUNDLE)`);
    return stored;
  }

  async list(): Promise<AppRecord[]> {
    const secrets = await kubeCall({ verb: 'list', kind: 'Secret', namespace: SYSTEM_NAMESPACE }, () =>
      this.client.core.listNamespacedSecret({ namespace: SYSTEM_NAMESPACE, labelSelector: `${KIND_LABEL}=app-record` }),
    );
    return secrets.items
      .filter((s) => s.type === RECORD_TYPE && s.data?.[RECORD_KEY] !== undefined)
      .map((s) => decodeRecord(Buffer.from(s.data?.[RECORD_KEY] ?? '', 'base64').toString('utf8'), `Secret ${SYSTEM_NAMESPACE}/${s.metadata?.name}`))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Creates the record; AlreadyExists when there is another one (a retried create finding its own first attempt stored is no error). */
  async create(record: AppRecord): Promise<StoredRecord> {
    const body = this.secret(record);
    try {
      const created = await kubeCall({ verb: 'create', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name: recordSecretName(record.name) }, () =>
        this.client.core.createNamespacedSecret({ namespace: SYSTEM_NAMESPACE, body }),
      );
      return { record, resourceVersion: created.metadata?.resourceVersion ?? '' };
    } catch (error) {
      const stored = error instanceof AlreadyExists ? await this.read(record.name) : undefined;
      if (stored && sameRecord(stored.record, record)) return stored;
      throw error;
    }
  }

  /** Writes the record over the version read; Conflict when someone wrote in between. */
  async write(record: AppRecord, resourceVersion: string): Promise<StoredRecord> {
    const name = recordSecretName(record.name);
    const body = this.secret(record, resourceVersion);
    const written = await kubeCall({ verb: 'update', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () =>
      this.client.core.replaceNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE, body }),
    );
    return { record, resourceVersion: written.metadata?.resourceVersion ?? '' };
  }

  async remove(app: string): Promise<void> {
    const name = recordSecretName(app);
    await kubeRead({ verb: 'delete', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () => this.client.core.deleteNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE }));
  }

  private secret(record: AppRecord, resourceVersion?: string): V1Secret {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      type: RECORD_TYPE,
      metadata: {
        name: recordSecretName(record.name),
        namespace: SYSTEM_NAMESPACE,
        labels: { ...MANAGED_BY, [KIND_LABEL]: 'app-record', [APP_LABEL]: record.name, 'flotilla.starlingx.io/state': record.state, 'flotilla.starlingx.io/version': labelSafe(record.bundle.version) },
        ...(resourceVersion ? { resourceVersion } : {}),
      },
      data: { [RECORD_KEY]: Buffer.from(encodeRecord(record), 'utf8').toString('base64') },
    };
  }
}

/** Label values are at most 63 characters of [A-Za-z0-9._-]. */
function labelSafe(value: string): string {
  return value.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 63).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
}

/** The record with one more history entry, the oldest dropped past the limit. */
export function withHistory(record: AppRecord, entry: HistoryEntry): AppRecord {
  return { ...record, history: [...record.history, entry].slice(-HISTORY_LIMIT) };
}

/** The record with its last history entry (the running operation) finished. */
export function finishHistory(record: AppRecord, result: OperationResult, reason?: string): AppRecord {
  const last = record.history.at(-1);
  if (!last || last.finished) return record;
  const done: HistoryEntry = { ...last, finished: new Date().toISOString(), result, ...(reason ? { reason } : {}) };
  return { ...record, history: [...record.history.slice(0, -1), done] };
}

/** Whether two records say the same (as stored: fields set to undefined are not written). */
export function sameRecord(a: AppRecord, b: AppRecord): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** How far an operation got: `ready` of `total` releases, as StarlingX counts it (`apply_progress_adjust` percent given up front). */
export function completion(ready: number, total: number, progressAdjust: number, current?: string): Progress {
  const adjust = Math.max(0, Math.min(100, progressAdjust));
  const percent = total === 0 ? 100 : Math.min(100, adjust + Math.round((ready / total) * (100 - adjust)));
  return { ready, total, percent, ...(current ? { current } : {}) };
}
