/**
 * The app state record: one per app, encoded as gzipped JSON (the way Helm
 * keeps a release) and kept by the cluster's AppRecordStore (cluster.ts;
 * src/kube keeps it in the Secret `flotilla-app-<app>` of the system
 * namespace). Writes go through the revision read, so a concurrent writer
 * is a Conflict, never a lost update.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { AlreadyExists, SYSTEM_NAMESPACE } from '../kube/index.js';
import type { JsonValue } from '../plugins/index.js';
import type { AppVersions } from '../catalog/index.js';
import type { AppRecordStore } from './cluster.js';
import { AppNotFoundError, LifecycleError } from './errors.js';

/** Where flotilla keeps its own objects (app records, stored bundles, locks, its config): src/kube says. */
export { SYSTEM_NAMESPACE };

/** StarlingX's application states. */
const APP_STATES = [
  'uploading',
  'uploaded',
  'upload-failed',
  'applying',
  'applied',
  'apply-failed',
  'updating',
  'recovering',
  'removing',
  'remove-failed',
] as const;
export type AppState = (typeof APP_STATES)[number];

export type OperationName = 'upload' | 'apply' | 'update' | 'recover' | 'remove' | 'delete' | 'abort' | 'override' | 'version';
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

/** sha256 (hex) of the stored payload: the whole archive, and each Secret's piece of it in order. */
export interface PayloadDigests {
  readonly archive: string;
  readonly pieces: readonly string[];
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
  /** The payload's digests as uploaded, checked at every read (payload.ts); absent only while an upload runs. */
  readonly payloadDigests?: PayloadDigests;
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
  /** The OpenStack version model (src/catalog/state.ts, docs/versions.md); absent in records written before it. */
  readonly versions?: AppVersions;
}

/** Entries kept in the history; older ones are dropped. */
const HISTORY_LIMIT = 20;

export function encodeRecord(record: AppRecord): string {
  return gzipSync(Buffer.from(JSON.stringify(record), 'utf8')).toString('base64');
}

export function decodeRecord(data: string, where: string): AppRecord {
  let value: unknown;
  try {
    value = JSON.parse(gunzipSync(Buffer.from(data, 'base64')).toString('utf8'));
  } catch (error) {
    throw new LifecycleError(`${where} does not hold a readable app record (${error instanceof Error ? error.message : String(error)})`);
  }
  checkRecord(value, where);
  return value;
}

/** A field of an app record read back from the cluster is missing or not what flotilla writes there. */
export class RecordFieldError extends LifecycleError {
  constructor(
    readonly where: string,
    readonly field: string,
    readonly expected: string,
  ) {
    super(
      `${where}: the app record's ${field} is missing or invalid (expected ${expected}); it was not written by flotilla: restore the Secret, or delete it and upload the tarball again`,
    );
  }
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Holds a record read back from the cluster (not trusted: docs/security.md)
 * to the fields the lifecycle relies on, naming the first one that fails.
 */
function checkRecord(value: unknown, where: string): asserts value is AppRecord {
  const fail = (field: string, expected: string): never => {
    throw new RecordFieldError(where, field, expected);
  };
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const object = (v: unknown, field: string): Record<string, unknown> => (isObject(v) ? v : fail(field, 'an object'));
  const text = (v: unknown, field: string, pattern?: RegExp, expected = 'a string'): string =>
    typeof v === 'string' && (!pattern || pattern.test(v)) ? v : fail(field, expected);
  const list = (v: unknown, field: string): unknown[] => (Array.isArray(v) ? v : fail(field, 'a list'));
  const texts = (v: unknown, field: string) => list(v, field).forEach((item, i) => text(item, `${field}[${i}]`));
  const flag = (v: unknown, field: string) => typeof v === 'boolean' || fail(field, 'true or false');
  const bundle = (v: unknown, field: string) => {
    const b = object(v, field);
    text(b.version, `${field}.version`, /./, 'a version');
    text(b.sha256, `${field}.sha256`, SHA256_HEX, 'a sha256 in hex');
    text(b.source, `${field}.source`);
    text(b.payload, `${field}.payload`);
    if (b.payloadDigests !== undefined) {
      const d = object(b.payloadDigests, `${field}.payloadDigests`);
      text(d.archive, `${field}.payloadDigests.archive`, SHA256_HEX, 'a sha256 in hex');
      const pieces = list(d.pieces, `${field}.payloadDigests.pieces`);
      if (pieces.length === 0) fail(`${field}.payloadDigests.pieces`, 'one digest per payload Secret');
      pieces.forEach((p, i) => text(p, `${field}.payloadDigests.pieces[${i}]`, SHA256_HEX, 'a sha256 in hex'));
    }
    list(b.charts, `${field}.charts`).forEach((c, i) => {
      const chart = object(c, `${field}.charts[${i}]`);
      text(chart.name, `${field}.charts[${i}].name`);
      text(chart.version, `${field}.charts[${i}].version`);
      text(chart.sha256, `${field}.charts[${i}].sha256`, SHA256_HEX, 'a sha256 in hex');
    });
    list(b.releases, `${field}.releases`).forEach((r, i) => {
      const release = object(r, `${field}.releases[${i}]`);
      for (const key of ['name', 'namespace', 'chart', 'chartVersion', 'releaseName']) text(release[key], `${field}.releases[${i}].${key}`);
      texts(release.dependsOn, `${field}.releases[${i}].dependsOn`);
    });
    const repository = object(b.repository, `${field}.repository`);
    text(repository.url, `${field}.repository.url`);
    if (repository.type !== 'oci' && repository.type !== 'default') fail(`${field}.repository.type`, '"oci" or "default"');
    flag(b.maintainUserOverrides, `${field}.maintainUserOverrides`);
    flag(b.updateFailureNoRollback, `${field}.updateFailureNoRollback`);
    texts(b.fromVersions, `${field}.fromVersions`);
    if (typeof b.applyProgressAdjust !== 'number') fail(`${field}.applyProgressAdjust`, 'a number');
  };
  const record = object(value, 'record');
  text(record.name, 'name');
  if (!(APP_STATES as readonly unknown[]).includes(record.state)) fail('state', `one of ${APP_STATES.join(', ')}`);
  bundle(record.bundle, 'bundle');
  if (record.previous !== undefined) bundle(record.previous, 'previous');
  object(record.userOverrides, 'userOverrides');
  if (record.previousUserOverrides !== undefined) object(record.previousUserOverrides, 'previousUserOverrides');
  texts(record.deployed, 'deployed');
  list(record.history, 'history').forEach((h, i) => object(h, `history[${i}]`));
  if (record.versions !== undefined) {
    const v = object(record.versions, 'versions');
    text(v.target, 'versions.target');
    for (const key of ['deployed', 'phase', 'held'] as const) if (v[key] !== undefined) text(v[key], `versions.${key}`, /./, 'a non-empty string');
    list(v.available, 'versions.available').forEach((a, i) => {
      const known = object(a, `versions.available[${i}]`);
      text(known.release, `versions.available[${i}].release`, /./, 'a release name');
      text(known.bundle, `versions.available[${i}].bundle`);
      flag(known.inBundle, `versions.available[${i}].inBundle`);
      Object.entries(object(known.images, `versions.available[${i}].images`)).forEach(([field, ref]) => text(ref, `versions.available[${i}].images.${field}`));
      object(known.serviceDefaults, `versions.available[${i}].serviceDefaults`);
    });
    Object.entries(object(v.customImages, 'versions.customImages')).forEach(([field, c]) => {
      const image = object(c, `versions.customImages.${field}`);
      for (const key of ['reference', 'set', 'by']) text(image[key], `versions.customImages.${field}.${key}`);
    });
    Object.entries(object(v.customImagesAtTarget, 'versions.customImagesAtTarget')).forEach(([field, ref]) =>
      text(ref, `versions.customImagesAtTarget.${field}`),
    );
    if (v.holdAt !== undefined) texts(v.holdAt, 'versions.holdAt');
    if (v.heldOperation !== undefined) text(v.heldOperation, 'versions.heldOperation', /^update$/, '"update"');
  }
}

/** A record read from the cluster, with the version to write back against. */
export interface StoredRecord {
  readonly record: AppRecord;
  readonly resourceVersion: string;
}

/** The app records of a cluster, decoded and checked as they are read. */
export class AppRecords {
  constructor(private readonly store: AppRecordStore) {}

  async read(app: string): Promise<StoredRecord | undefined> {
    const stored = await this.store.read(app);
    return stored && { record: decodeRecord(stored.text, stored.where), resourceVersion: stored.revision };
  }

  async get(app: string): Promise<StoredRecord> {
    const stored = await this.read(app);
    if (!stored) throw new AppNotFoundError(`no app "${app}" in this cluster; upload it first (flotilla upload BUNDLE)`);
    return stored;
  }

  async list(): Promise<AppRecord[]> {
    return (await this.store.list()).map((stored) => decodeRecord(stored.text, stored.where)).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Creates the record; AlreadyExists when there is another one (a retried create finding its own first attempt stored is no error). */
  async create(record: AppRecord): Promise<StoredRecord> {
    try {
      return { record, resourceVersion: await this.store.create(record.name, encodeRecord(record), summaryOf(record)) };
    } catch (error) {
      const stored = error instanceof AlreadyExists ? await this.read(record.name) : undefined;
      if (stored && sameRecord(stored.record, record)) return stored;
      throw error;
    }
  }

  /** Writes the record over the version read; Conflict when someone wrote in between. */
  async write(record: AppRecord, resourceVersion: string): Promise<StoredRecord> {
    return { record, resourceVersion: await this.store.replace(record.name, encodeRecord(record), summaryOf(record), resourceVersion) };
  }

  remove(app: string): Promise<void> {
    return this.store.remove(app);
  }
}

function summaryOf(record: AppRecord): { state: string; version: string } {
  return { state: record.state, version: record.bundle.version };
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
