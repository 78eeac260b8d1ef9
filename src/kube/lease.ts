/**
 * A coordination.k8s.io/v1 Lease as a lock: one per app, held for the length
 * of an operation and renewed while it runs. A second operation is refused
 * with the holder's name and since when; a lease nobody renewed for its
 * duration (the holder crashed) is taken over. Every change goes through the
 * resourceVersion read, so two takers cannot both win.
 */
import { hostname, userInfo } from 'node:os';
import type { V1Lease } from '@kubernetes/client-node';
import { FlotillaError } from '../diagnostics/index.js';
import type { KubeClient } from './client.js';
import { loadClientModule } from './client.js';
import { AlreadyExists, Conflict, NotFound } from './errors.js';
import { DEFAULT_RETRY_POLICY, kubeCall, kubeRead } from './retry.js';
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
function holderRecord(lease: V1Lease): string {
  const spec = lease.spec ?? {};
  return JSON.stringify([
    spec.holderIdentity,
    String(spec.renewTime ?? ''),
    String(spec.acquireTime ?? ''),
    spec.leaseDurationSeconds,
    spec.leaseTransitions,
    lease.metadata?.resourceVersion,
  ]);
}

/** How often a waiting taker reads the lease again while it judges whether the holder is alive. */
function observeEveryMs(durationSeconds: number): number {
  return Math.min(1000, Math.max(50, (durationSeconds * 1000) / 10));
}

export async function acquireLease(client: Pick<KubeClient, 'coordination'>, options: LeaseOptions): Promise<HeldLease> {
  const { V1MicroTime } = await loadClientModule();
  const holder = options.holder ?? defaultHolder();
  const seconds = options.durationSeconds ?? DEFAULT_LEASE_SECONDS;
  const { namespace, name } = options;
  const call = { kind: 'Lease', namespace, name };
  const now = () => new V1MicroTime(Date.now());
  let tookOver: HeldLease['tookOver'];
  // Another holder's lease is judged as client-go judges it: by when THIS process saw its record change, on
  // this process's monotonic clock — never by comparing the holder's renewTime with our wall clock.
  let observed: { readonly record: string; readonly at: number } | undefined;

  for (let attempt = 0; ;) {
    const existing = await kubeRead({ ...call, verb: 'read' }, () => client.coordination.readNamespacedLease({ name, namespace }));
    const stamp = now();
    try {
      const current = existing?.spec?.holderIdentity;
      if (existing && current && current !== holder) {
        const record = holderRecord(existing);
        const lockedError = () => {
          const since = time(existing.spec?.acquireTime);
          const operation = existing.metadata?.annotations?.[OPERATION_ANNOTATION];
          return new LockedError(
            `${name} is locked by ${current}${operation ? ` (${operation})` : ''} since ${since?.toISOString() ?? 'an unknown time'}` +
              `; it renews the lock, which is free to take once nobody renewed it for ${existing.spec?.leaseDurationSeconds ?? DEFAULT_LEASE_SECONDS}s`,
            current,
            since,
          );
        };
        if (observed && observed.record !== record) throw lockedError();
        observed ??= { record, at: performance.now() };
        const durationMs = (existing.spec?.leaseDurationSeconds ?? DEFAULT_LEASE_SECONDS) * 1000;
        const waited = performance.now() - observed.at;
        if (waited < durationMs) {
          await new Promise((resolve) =>
            setTimeout(resolve, Math.min(observeEveryMs(existing.spec?.leaseDurationSeconds ?? DEFAULT_LEASE_SECONDS), durationMs - waited)),
          );
          continue;
        }
      }
      if (!existing) {
        const body: V1Lease = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace, labels: { ...MANAGED_BY }, annotations: { [OPERATION_ANNOTATION]: options.operation } },
          spec: { holderIdentity: holder, leaseDurationSeconds: seconds, acquireTime: stamp, renewTime: stamp, leaseTransitions: 0 },
        };
        await kubeCall({ ...call, verb: 'create' }, () => client.coordination.createNamespacedLease({ namespace, body }));
      } else {
        if (current && current !== holder) {
          const operation = existing.metadata?.annotations?.[OPERATION_ANNOTATION];
          const renewed = time(existing.spec?.renewTime);
          tookOver = { holder: current, ...(operation ? { operation } : {}), ...(renewed ? { lastRenewed: renewed.toISOString() } : {}) };
        }
        const body: V1Lease = {
          ...existing,
          metadata: {
            ...existing.metadata,
            annotations: { ...withoutKey(existing.metadata?.annotations, ABORT_ANNOTATION), [OPERATION_ANNOTATION]: options.operation },
          },
          spec: {
            ...existing.spec,
            holderIdentity: holder,
            leaseDurationSeconds: seconds,
            acquireTime: stamp,
            renewTime: stamp,
            leaseTransitions: (existing.spec?.leaseTransitions ?? 0) + (current && current !== holder ? 1 : 0),
          },
        };
        await kubeCall({ ...call, verb: 'update' }, () => client.coordination.replaceNamespacedLease({ name, namespace, body }));
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
    const lease = await kubeRead({ ...call, verb: 'read' }, () => client.coordination.readNamespacedLease({ name, namespace }), renewal);
    if (released) return;
    if (!lease || lease.spec?.holderIdentity !== holder) {
      lost.abort(
        new LockLostError(`lost the lock ${namespace}/${name}: ${lease ? `now held by ${lease.spec?.holderIdentity ?? 'nobody'}` : 'the Lease was deleted'}`),
      );
      return;
    }
    const abort = lease.metadata?.annotations?.[ABORT_ANNOTATION];
    if (abort) {
      lost.abort(new AbortRequestedError(`aborted: ${abort}`));
      return;
    }
    const body: V1Lease = { ...lease, spec: { ...lease.spec, renewTime: now() } };
    await kubeCall({ ...call, verb: 'update' }, () => client.coordination.replaceNamespacedLease({ name, namespace, body }), renewal);
  };
  const timer = setInterval(() => {
    // A failed renewal is retried at the next tick; the lease only lapses after a whole duration of failures.
    renew().catch(() => undefined);
  }, renewEveryMs);
  timer.unref();

  return {
    holder,
    ...(tookOver ? { tookOver } : {}),
    lost: lost.signal,
    async release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      for (let attempt = 0; attempt < 5; attempt++) {
        const lease = await kubeRead({ ...call, verb: 'read' }, () => client.coordination.readNamespacedLease({ name, namespace }));
        if (!lease || lease.spec?.holderIdentity !== holder) return;
        try {
          await kubeCall({ ...call, verb: 'delete' }, () =>
            client.coordination.deleteNamespacedLease({ name, namespace, body: { preconditions: { resourceVersion: lease.metadata?.resourceVersion } } }),
          );
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
export async function requestAbort(
  client: Pick<KubeClient, 'coordination'>,
  namespace: string,
  name: string,
  by: string,
): Promise<{ holder: string; operation?: string } | undefined> {
  const call = { kind: 'Lease', namespace, name };
  for (let attempt = 0; attempt < 5; attempt++) {
    const lease = await kubeRead({ ...call, verb: 'read' }, () => client.coordination.readNamespacedLease({ name, namespace }));
    const holder = lease?.spec?.holderIdentity;
    // Whether the holder is alive is not judged here (only observing the lease for its duration can tell):
    // a live holder sees the request at its next renewal; a dead one's lease is taken over by the next operation.
    if (!lease || !holder) return undefined;
    const body: V1Lease = {
      ...lease,
      metadata: { ...lease.metadata, annotations: { ...lease.metadata?.annotations, [ABORT_ANNOTATION]: `requested by ${by} at ${new Date().toISOString()}` } },
    };
    try {
      await kubeCall({ ...call, verb: 'update' }, () => client.coordination.replaceNamespacedLease({ name, namespace, body }));
      const operation = lease.metadata?.annotations?.[OPERATION_ANNOTATION];
      return { holder, ...(operation ? { operation } : {}) };
    } catch (error) {
      if (!(error instanceof Conflict)) throw error;
    }
  }
  return undefined;
}
