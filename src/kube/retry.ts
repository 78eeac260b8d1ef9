/**
 * The one retry policy for calls to the API server. A 429 or 503 that says
 * `Retry-After` is retried after that long; other 5xx answers, dropped
 * connections and timeouts are retried after an exponential backoff with
 * jitter (so many clients do not come back at once); everything else (a
 * 404, a conflict, an invalid object) is an answer, never retried. A call
 * keeps trying for at most its budget, then fails naming the call, the
 * attempts and the last error. Writes are safe to repeat: server-side
 * apply and deletes are idempotent, and a write through a resourceVersion
 * that was stored by an attempt whose answer was lost comes back as a
 * Conflict its caller re-reads (see RecordHandle, ConfigMapRecordStore).
 */
import { kubeError, NotFound, Unavailable, type KubeApiError, type KubeCall } from './errors.js';

export interface RetryPolicy {
  /** How long one call may keep retrying, counted from its first attempt. */
  readonly budgetMs: number;
  /** The first backoff; each further one doubles, up to `maxDelayMs`. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { budgetMs: 60_000, baseDelayMs: 250, maxDelayMs: 8_000 };

/** Time as the policy sees it: real by default, a fake in tests. */
export interface RetryClock {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** In [0, 1). */
  random(): number;
}

export const REAL_CLOCK: RetryClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};

/**
 * How long to wait before trying `error`'s call again (attempt 0 is the
 * first retry), or undefined when the error is an answer and not a fault.
 */
export function retryDelay(error: KubeApiError, attempt: number, policy: RetryPolicy, random: () => number): number | undefined {
  if (!(error instanceof Unavailable) || error.status === 501) return undefined;
  if ((error.status === 429 || error.status === 503) && error.retryAfterSeconds !== undefined) return error.retryAfterSeconds * 1000;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  // "Equal jitter": never less than half the backoff, so a retry storm still spreads out.
  return ceiling / 2 + random() * (ceiling / 2);
}

/** The error a call ends with when it ran out of budget: the last one, with the attempts said. */
function gaveUp(call: KubeCall, last: KubeApiError, attempts: number, elapsedMs: number): KubeApiError {
  return new Unavailable(call, last.status, last.reason, last.serverMessage, {
    cause: last,
    note: `gave up after ${attempts} attempts in ${Math.round(elapsedMs / 100) / 10}s`,
  });
}

/**
 * Runs `attempt` under `policy`: each failure is typed by `type`; transient
 * ones are retried while the budget lasts (a wait that would end past the
 * budget is not started).
 */
export async function withRetry<T>(
  call: KubeCall,
  attempt: () => Promise<T>,
  type: (error: unknown) => KubeApiError,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  clock: RetryClock = REAL_CLOCK,
): Promise<T> {
  const started = clock.now();
  for (let tried = 0; ; tried++) {
    try {
      return await attempt();
    } catch (error) {
      const typed = type(error);
      const delay = retryDelay(typed, tried, policy, clock.random);
      if (delay === undefined) throw typed;
      if (clock.now() - started + delay > policy.budgetMs)
        throw tried === 0 && policy.budgetMs === 0 ? typed : gaveUp(call, typed, tried + 1, clock.now() - started);
      await clock.sleep(delay);
    }
  }
}

/**
 * Runs one API call under the retry policy; a failure becomes the
 * typed error naming `call`. `policy` narrows the budget where a caller must
 * answer sooner (a lease renewal within its interval).
 */
export function kubeCall<T>(call: KubeCall, run: () => Promise<T>, policy?: RetryPolicy): Promise<T> {
  return withRetry(call, run, (error) => kubeError(call, error), policy);
}

/** Like kubeCall, but a 404 gives `undefined`. */
export async function kubeRead<T>(call: KubeCall, run: () => Promise<T>, policy?: RetryPolicy): Promise<T | undefined> {
  try {
    return await kubeCall(call, run, policy);
  } catch (error) {
    if (error instanceof NotFound) return undefined;
    throw error;
  }
}
