/**
 * The frame every state-changing operation runs in: the app's Lease held
 * for its length (a second operation is refused, a stale lock taken over),
 * the app record read and written through its resourceVersion, the state
 * and history updated on the way in and on the way out — so a failure says
 * why, and a run killed at any point leaves a state the next run converges from.
 */
import { Conflict, type HeldLease } from '../kube/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import type { Cluster } from './cluster.js';
import { decide, type DecidedOperation, type Decision } from './decide.js';
import { AppStateError } from './errors.js';
import type { EventSink } from './events.js';
import {
  AppRecords,
  finishHistory,
  sameRecord,
  SYSTEM_NAMESPACE,
  withHistory,
  type AppRecord,
  type AppState,
  type OperationName,
  type OperationResult,
  type StoredRecord,
} from './record.js';

export interface OperationOptions {
  readonly signal?: AbortSignal;
  readonly events?: EventSink;
  /** Lock duration in seconds (tests shorten it). */
  readonly leaseSeconds?: number;
  /** Who runs it, in the lock and the history; `user@host pid N` by default. */
  readonly holder?: string;
}

export function lockName(app: string): string {
  return `flotilla-lock-${app}`;
}

/** The record of one app during an operation: read once, written through its resourceVersion. */
export class RecordHandle {
  constructor(
    private readonly records: AppRecords,
    private stored: StoredRecord,
  ) {}

  get record(): AppRecord {
    return this.stored.record;
  }

  /**
   * Writes `change(record)`. A Conflict means someone wrote in between, or
   * a retried write whose first answer was lost had been stored: re-read,
   * and either find this very record there or apply the change again.
   */
  async update(change: (record: AppRecord) => AppRecord): Promise<AppRecord> {
    for (let attempt = 0; ; attempt++) {
      const wanted = change(this.stored.record);
      try {
        this.stored = await this.records.write(wanted, this.stored.resourceVersion);
        return this.stored.record;
      } catch (error) {
        if (!(error instanceof Conflict) || attempt >= 3) throw error;
        this.stored = await this.records.get(this.stored.record.name);
        if (sameRecord(this.stored.record, wanted)) return this.stored.record;
      }
    }
  }

  /** Starts an operation: state and a new history entry. */
  begin(operation: OperationName, state: AppState, by: string, version = this.record.bundle.version): Promise<AppRecord> {
    return this.update((r) => withHistory({ ...r, state }, { operation, version, started: new Date().toISOString(), by }));
  }

  /** Ends it: the state it leaves, the result and why. */
  end(state: AppState, result: OperationResult, reason?: string, more: Partial<AppRecord> = {}): Promise<AppRecord> {
    return this.update((r) => finishHistory({ ...r, ...more, state }, result, reason));
  }
}

export interface LockedRun {
  readonly cluster: Cluster;
  readonly records: AppRecords;
  readonly lease: HeldLease;
  /** Aborted when the caller cancels or the lock is lost. */
  readonly signal: AbortSignal;
  readonly events: EventSink;
}

/** Runs `work` holding the app's lock; the lock is released however it ends. */
export async function withAppLock<T>(
  cluster: Cluster,
  app: string,
  operation: OperationName,
  options: OperationOptions,
  work: (run: LockedRun) => Promise<T>,
): Promise<T> {
  const events = options.events ?? (() => undefined);
  await cluster.objects.ensureNamespace(SYSTEM_NAMESPACE);
  const lease = await cluster.locks.acquire({
    namespace: SYSTEM_NAMESPACE,
    name: lockName(app),
    operation,
    ...(options.leaseSeconds !== undefined ? { durationSeconds: options.leaseSeconds } : {}),
    ...(options.holder !== undefined ? { holder: options.holder } : {}),
  });
  if (lease.tookOver)
    events({
      type: 'warning',
      message: `took over the expired lock of ${lease.tookOver.holder}${lease.tookOver.operation ? ` (${lease.tookOver.operation})` : ''}; its run is gone`,
    });
  const signal = options.signal ? AbortSignal.any([options.signal, lease.lost]) : lease.lost;
  try {
    const records = new AppRecords(cluster.records);
    await closeKilledRun(records, app, lease.tookOver?.lastRenewed);
    return await work({ cluster, records, lease, signal, events });
  } finally {
    await lease.release().catch(() => undefined);
  }
}

/**
 * Under the lock no other run is alive: a history entry left open was a run
 * that ended without a word. It is closed `killed`, with when its lock was
 * last renewed; the state it left stays, for the decision to resume from.
 */
async function closeKilledRun(records: AppRecords, app: string, lastRenewed: string | undefined): Promise<void> {
  const stored = await records.read(app);
  const open = stored?.record.history.at(-1);
  if (!stored || !open || open.finished) return;
  const handle = new RecordHandle(records, stored);
  await handle.update((r) =>
    finishHistory(r, 'killed', `its run (${open.by ?? 'unknown'}) ended without finishing; last seen ${lastRenewed ?? 'at an unknown time'}`),
  );
}

/** The operation's decision (decide.ts): a refusal thrown as AppStateError, a resumption said. */
export function decidedOrRefused(record: AppRecord, request: DecidedOperation, events: EventSink): Decision {
  const decision = decide(record, request);
  if (decision.kind === 'refuse') throw new AppStateError(decision.reason);
  if (decision.kind === 'resume') events({ type: 'step', message: `resuming ${decision.what}` });
  return decision;
}

/** The message of an error for the history and the user: flotilla's own as is, anything else named. */
export function reasonOf(error: unknown): string {
  if (error instanceof FlotillaError) return error.message;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
