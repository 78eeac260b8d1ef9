/**
 * A coordination.k8s.io/v1 Lease as a lock: one per app, held for the length
 * of an operation and renewed while it runs. A second operation is refused
 * with the holder's name and since when; a lease nobody renewed for its
 * duration (the holder crashed) is taken over. Every change goes through the
 * resourceVersion read, so two takers cannot both win. The protocol runs
 * over a `LeaseStorage` and a `LeaseClock`: the Kubernetes API and real time
 * here, memory and a clock a test moves in test/support/memory-cluster.ts.
 */
import { hostname, userInfo } from 'node:os';
import type { V1Lease } from '@kubernetes/client-node';
import { FlotillaError } from '../diagnostics/index.js';
import type { KubeClient } from './client.js';
import { loadClientModule } from './client.js';
import { AlreadyExists, Conflict, NotFound } from './errors.js';
import { DEFAULT_RETRY_POLICY, kubeCall, kubeRead, type RetryPolicy } from './retry.js';
import { MANAGED_BY } from './stores.js';

/** Annotation naming the operation the holder runs (`apply`, `remove`, …). */
const OPERATION_ANNOTATION = 'flotilla.starlingx.io/operation';

export interface LeaseOptions {
  readonly namespace: string;
  readonly name: string;
  /** What the holder is doing, shown to whoever is refused. */
  readonly operation: string;
  /** Seconds without renewal after which the lease is free to take. */
  readonly durationSeconds?: number;
  /** Who holds it; `user@host pid N` by default. */
  readonly holder?: string;
}

export class LockedError extends FlotillaError {
  constructor(
    message: string,
    readonly holder: string,
    readonly since: Date | undefined,
  ) {
    super(message);
  }
}

/** Annotation asking the holder to stop: who asked, and when. */
const ABORT_ANNOTATION = 'flotilla.starlingx.io/abort-requested';

/** The lease was taken over or deleted while held: the operation must stop. */
export class LockLostError extends FlotillaError {}

/** Someone asked the holder to stop (`flotilla abort`). */
export class AbortRequestedError extends FlotillaError {}

export interface HeldLease {
  readonly holder: string;
  /** True when a stale lease of another holder was taken over. */
  readonly tookOver?: { readonly holder: string; readonly operation?: string; readonly lastRenewed?: string };
  /** Aborted when a renewal finds the lease lost. */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

/** A Lease as the lock reads and writes it. */
export interface LeaseState {
  readonly holder?: string;
  readonly acquired?: Date;
  readonly renewed?: Date;
  readonly durationSeconds?: number;
  readonly transitions?: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** The revision a write goes through. */
  readonly revision: string;
}

/**
 * Where leases are kept. A replace or delete through a revision that is not
 * the stored one is a Conflict; a create of one that exists, AlreadyExists.
 * `policy` narrows the retry budget of a call that must answer sooner.
 */
export interface LeaseStorage {
  read(namespace: string, name: string, policy?: RetryPolicy): Promise<LeaseState | undefined>;
  create(namespace: string, name: string, state: Omit<LeaseState, 'revision'>): Promise<void>;
  replace(namespace: string, name: string, state: LeaseState, policy?: RetryPolicy): Promise<void>;
  delete(namespace: string, name: string, revision: string): Promise<void>;
}

/** Time as the lock sees it. */
export interface LeaseClock {
  /** Milliseconds on this process's monotonic clock: what another holder's liveness is judged by. */
  monotonic(): number;
  /** The wall time a Lease's stamps record, for people reading it. */
  wall(): Date;
  sleep(ms: number): Promise<void>;
  /** Calls `tick` every `ms` until the returned stop is called (never keeping the process alive). */
  every(ms: number, tick: () => void): () => void;
}

const REAL_LEASE_CLOCK: LeaseClock = {
  monotonic: () => performance.now(),
  wall: () => new Date(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

const DEFAULT_LEASE_SECONDS = 30;

export function defaultHolder(): string {
  return `${userInfo().username}@${hostname()} pid ${process.pid}`;
}

function time(value: Date | string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * The holder's record as client-go's leader election compares it: any
 * change (a renewal, a new holder, a new duration) means someone is alive.
 */
function holderRecord(lease: LeaseState): string {
  return JSON.stringify([
    lease.holder,
    lease.renewed?.toISOString() ?? '',
    lease.acquired?.toISOString() ?? '',
    lease.durationSeconds,
    lease.transitions,
    lease.revision,
  ]);
}

/** How often a waiting taker reads the lease again while it judges whether the holder is alive. */
function observeEveryMs(durationSeconds: number): number {
  return Math.min(1000, Math.max(50, (durationSeconds * 1000) / 10));
}

export function acquireLease(client: Pick<KubeClient, 'coordination'>, options: LeaseOptions): Promise<HeldLease> {
  return acquireLeaseIn(new KubeLeases(client), options, REAL_LEASE_CLOCK);
}

/** The lock protocol over any storage and clock (acquireLease: the Kubernetes API and real time). */
export async function acquireLeaseIn(storage: LeaseStorage, options: LeaseOptions, clock: LeaseClock): Promise<HeldLease> {
  const holder = options.holder ?? defaultHolder();
  const seconds = options.durationSeconds ?? DEFAULT_LEASE_SECONDS;
  const { namespace, name } = options;
  let tookOver: HeldLease['tookOver'];
  // Another holder's lease is judged as client-go judges it: by when THIS process saw its record change, on
  // this process's monotonic clock — never by comparing the holder's renewTime with our wall clock.
  let observed: { readonly record: string; readonly at: number } | undefined;

  for (let attempt = 0; ;) {
    const existing = await storage.read(namespace, name);
    const stamp = clock.wall();
    try {
      const current = existing?.holder;
      if (existing && current && current !== holder) {
        const record = holderRecord(existing);
        const durationSeconds = existing.durationSeconds ?? DEFAULT_LEASE_SECONDS;
        const lockedError = () => {
          const since = existing.acquired;
          const operation = existing.annotations[OPERATION_ANNOTATION];
          return new LockedError(
            `${name} is locked by ${current}${operation ? ` (${operation})` : ''} since ${since?.toISOString() ?? 'an unknown time'}` +
              `; it renews the lock, which is free to take once nobody renewed it for ${durationSeconds}s`,
            current,
            since,
          );
        };
        if (observed && observed.record !== record) throw lockedError();
        observed ??= { record, at: clock.monotonic() };
        const durationMs = durationSeconds * 1000;
        const waited = clock.monotonic() - observed.at;
        if (waited < durationMs) {
          await clock.sleep(Math.min(observeEveryMs(durationSeconds), durationMs - waited));
          continue;
        }
      }
      if (!existing) {
        await storage.create(namespace, name, {
          holder,
          durationSeconds: seconds,
          acquired: stamp,
          renewed: stamp,
          transitions: 0,
          labels: { ...MANAGED_BY },
          annotations: { [OPERATION_ANNOTATION]: options.operation },
        });
      } else {
        if (current && current !== holder) {
          const operation = existing.annotations[OPERATION_ANNOTATION];
          tookOver = { holder: current, ...(operation ? { operation } : {}), ...(existing.renewed ? { lastRenewed: existing.renewed.toISOString() } : {}) };
        }
        await storage.replace(namespace, name, {
          ...existing,
          annotations: { ...withoutKey(existing.annotations, ABORT_ANNOTATION), [OPERATION_ANNOTATION]: options.operation },
          holder,
          durationSeconds: seconds,
          acquired: stamp,
          renewed: stamp,
          transitions: (existing.transitions ?? 0) + (current && current !== holder ? 1 : 0),
        });
      }
      break;
    } catch (error) {
      // Someone else changed the lease between our read and write: read it again and decide again.
      if ((error instanceof Conflict || error instanceof AlreadyExists) && attempt++ < 5) continue;
      throw error;
    }
  }

  const lost = new AbortController();
  let released = false;
  const renewEveryMs = Math.max(200, (seconds * 1000) / 3);
  // A renewal retries transient faults only until the next one is due.
  const renewal = { ...DEFAULT_RETRY_POLICY, budgetMs: renewEveryMs };
  const renew = async (): Promise<void> => {
    const lease = await storage.read(namespace, name, renewal);
    if (released) return;
    if (!lease || lease.holder !== holder) {
      lost.abort(new LockLostError(`lost the lock ${namespace}/${name}: ${lease ? `now held by ${lease.holder ?? 'nobody'}` : 'the Lease was deleted'}`));
      return;
    }
    const abort = lease.annotations[ABORT_ANNOTATION];
    if (abort && !lost.signal.aborted) lost.abort(new AbortRequestedError(`aborted: ${abort}`));
    // Renewed on while the aborted operation winds down, until it releases the lock: whoever asked it
    // to stop waits for a live holder, and must not take it for dead because it went quiet.
    await storage.replace(namespace, name, { ...lease, renewed: clock.wall() }, renewal);
  };
  // A failed renewal is retried at the next tick; the lease only lapses after a whole duration of failures.
  const stopRenewing = clock.every(renewEveryMs, () => {
    renew().catch(() => undefined);
  });

  return {
    holder,
    ...(tookOver ? { tookOver } : {}),
    lost: lost.signal,
    async release() {
      if (released) return;
      released = true;
      stopRenewing();
      for (let attempt = 0; attempt < 5; attempt++) {
        const lease = await storage.read(namespace, name);
        if (!lease || lease.holder !== holder) return;
        try {
          await storage.delete(namespace, name, lease.revision);
          return;
        } catch (error) {
          if (error instanceof NotFound) return;
          if (!(error instanceof Conflict)) throw error;
        }
      }
    },
  };
}

function withoutKey(map: Readonly<Record<string, string>> | undefined, key: string): Record<string, string> {
  const { [key]: _dropped, ...rest } = map ?? {};
  return rest;
}

/**
 * Asks the holder of the lease to stop: its next renewal sees the request
 * and aborts its operation. Returns the holder and its operation, or
 * undefined when nobody holds the lease.
 */
export function requestAbort(
  client: Pick<KubeClient, 'coordination'>,
  namespace: string,
  name: string,
  by: string,
): Promise<{ holder: string; operation?: string } | undefined> {
  return requestAbortIn(new KubeLeases(client), namespace, name, by, REAL_LEASE_CLOCK);
}

/** requestAbort over any storage and clock. */
export async function requestAbortIn(
  storage: LeaseStorage,
  namespace: string,
  name: string,
  by: string,
  clock: LeaseClock,
): Promise<{ holder: string; operation?: string } | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const lease = await storage.read(namespace, name);
    const holder = lease?.holder;
    // Whether the holder is alive is not judged here (only observing the lease for its duration can tell):
    // a live holder sees the request at its next renewal; a dead one's lease is taken over by the next operation.
    if (!lease || !holder) return undefined;
    try {
      await storage.replace(namespace, name, {
        ...lease,
        annotations: { ...lease.annotations, [ABORT_ANNOTATION]: `requested by ${by} at ${clock.wall().toISOString()}` },
      });
      const operation = lease.annotations[OPERATION_ANNOTATION];
      return { holder, ...(operation ? { operation } : {}) };
    } catch (error) {
      if (!(error instanceof Conflict)) throw error;
    }
  }
  return undefined;
}

/** Leases as coordination.k8s.io/v1 objects. */
class KubeLeases implements LeaseStorage {
  constructor(private readonly client: Pick<KubeClient, 'coordination'>) {}

  async read(namespace: string, name: string, policy?: RetryPolicy): Promise<LeaseState | undefined> {
    const lease = await kubeRead(
      { verb: 'read', kind: 'Lease', namespace, name },
      () => this.client.coordination.readNamespacedLease({ name, namespace }),
      policy,
    );
    if (!lease) return undefined;
    const spec = lease.spec ?? {};
    const acquired = time(spec.acquireTime);
    const renewed = time(spec.renewTime);
    return {
      ...(spec.holderIdentity ? { holder: spec.holderIdentity } : {}),
      ...(acquired ? { acquired } : {}),
      ...(renewed ? { renewed } : {}),
      ...(spec.leaseDurationSeconds !== undefined ? { durationSeconds: spec.leaseDurationSeconds } : {}),
      ...(spec.leaseTransitions !== undefined ? { transitions: spec.leaseTransitions } : {}),
      labels: lease.metadata?.labels ?? {},
      annotations: lease.metadata?.annotations ?? {},
      revision: lease.metadata?.resourceVersion ?? '',
    };
  }

  async create(namespace: string, name: string, state: Omit<LeaseState, 'revision'>): Promise<void> {
    const body = await this.lease(namespace, name, state);
    await kubeCall({ verb: 'create', kind: 'Lease', namespace, name }, () => this.client.coordination.createNamespacedLease({ namespace, body }));
  }

  async replace(namespace: string, name: string, state: LeaseState, policy?: RetryPolicy): Promise<void> {
    const body = await this.lease(namespace, name, state, state.revision);
    await kubeCall(
      { verb: 'update', kind: 'Lease', namespace, name },
      () => this.client.coordination.replaceNamespacedLease({ name, namespace, body }),
      policy,
    );
  }

  async delete(namespace: string, name: string, revision: string): Promise<void> {
    await kubeCall({ verb: 'delete', kind: 'Lease', namespace, name }, () =>
      this.client.coordination.deleteNamespacedLease({ name, namespace, body: { preconditions: { resourceVersion: revision } } }),
    );
  }

  private async lease(namespace: string, name: string, state: Omit<LeaseState, 'revision'>, resourceVersion?: string): Promise<V1Lease> {
    const { V1MicroTime } = await loadClientModule();
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace, labels: { ...state.labels }, annotations: { ...state.annotations }, ...(resourceVersion ? { resourceVersion } : {}) },
      spec: {
        ...(state.holder !== undefined ? { holderIdentity: state.holder } : {}),
        ...(state.durationSeconds !== undefined ? { leaseDurationSeconds: state.durationSeconds } : {}),
        ...(state.acquired ? { acquireTime: new V1MicroTime(state.acquired.getTime()) } : {}),
        ...(state.renewed ? { renewTime: new V1MicroTime(state.renewed.getTime()) } : {}),
        ...(state.transitions !== undefined ? { leaseTransitions: state.transitions } : {}),
      },
    };
  }
}
