/**
 * The retry policy of src/kube on a fake clock: which answers are retried
 * and after how long (Retry-After honoured, backoff with jitter for other
 * faults), which are answers, and the bound after which a call fails naming
 * itself, its attempts and the last error.
 */
import { describe, expect, it } from 'vitest';
import {
  Conflict,
  DEFAULT_RETRY_POLICY,
  kubeError,
  NotFound,
  retryDelay,
  Unavailable,
  withRetry,
  type KubeCall,
  type RetryClock,
} from '../../src/kube/index.js';

const CALL: KubeCall = { verb: 'apply', kind: 'HelmRelease', namespace: 'openstack', name: 'glance' };

/** client-node's ApiException, by shape: status, Status body, response headers (lower-case, as node-fetch gives them). */
const apiError = (code: number, headers: Record<string, string> = {}, details?: object) => ({
  code,
  body: JSON.stringify({
    kind: 'Status',
    code,
    reason: code === 429 ? 'TooManyRequests' : 'ServiceUnavailable',
    message: `injected ${code}`,
    ...(details ? { details } : {}),
  }),
  headers,
});
/** node-fetch's error for a connection the server closed. */
const reset = () => Object.assign(new Error('request to http://127.0.0.1/x failed, reason: socket hang up'), { code: 'ECONNRESET', type: 'system' });

function fakeClock(random = 0.5): RetryClock & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return { slept, now: () => now, random: () => random, sleep: async (ms) => void (slept.push(ms), (now += ms)) };
}

/** A call that fails with each of `failures` in turn, then answers 'ok'; counts its attempts. */
function scripted(failures: unknown[]): { run: () => Promise<string>; attempts: () => number } {
  let attempts = 0;
  return {
    attempts: () => attempts,
    run: async () => {
      const failure = failures[attempts++];
      if (failure !== undefined) throw failure;
      return 'ok';
    },
  };
}

const typed = (error: unknown) => kubeError(CALL, error);

describe('the retry policy', () => {
  it('waits what Retry-After says on 429 and 503, from the header or the Status details', async () => {
    const clock = fakeClock();
    const call = scripted([apiError(429, { 'retry-after': '3' }), apiError(503, {}, { retryAfterSeconds: 2 })]);
    expect(await withRetry(CALL, call.run, typed, DEFAULT_RETRY_POLICY, clock)).toBe('ok');
    expect(clock.slept).toEqual([3000, 2000]);
    expect(call.attempts()).toBe(3);
  });

  it('backs off exponentially with jitter on 5xx, 429 without Retry-After and dropped connections', () => {
    const policy = { budgetMs: 60_000, baseDelayMs: 100, maxDelayMs: 1000 };
    const error = kubeError(CALL, reset());
    expect(error).toBeInstanceOf(Unavailable);
    // Equal jitter: between half the ceiling and the ceiling, the ceiling doubling up to maxDelayMs.
    expect([0, 1, 2, 3, 4, 5].map((attempt) => retryDelay(error, attempt, policy, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([0, 1, 2, 3, 4, 5].map((attempt) => retryDelay(error, attempt, policy, () => 0.999999))).toEqual(
      [100, 200, 400, 800, 1000, 1000].map((ms) => expect.closeTo(ms, 2)),
    );
    for (const status of [500, 502, 504]) expect(retryDelay(kubeError(CALL, apiError(status)), 0, policy, () => 0)).toBe(50);
    expect(retryDelay(kubeError(CALL, apiError(429)), 0, policy, () => 0)).toBe(50);
  });

  it('never retries an answer: not found, conflict, invalid, forbidden, not implemented', async () => {
    for (const [code, kind] of [
      [404, NotFound],
      [409, Conflict],
    ] as const) {
      const clock = fakeClock();
      const call = scripted([{ code, body: { kind: 'Status', code, message: 'no' } }]);
      await expect(withRetry(CALL, call.run, typed, DEFAULT_RETRY_POLICY, clock)).rejects.toBeInstanceOf(kind);
      expect(call.attempts()).toBe(1);
    }
    for (const code of [400, 401, 403, 422, 501]) expect(retryDelay(kubeError(CALL, apiError(code)), 0, DEFAULT_RETRY_POLICY, () => 0)).toBeUndefined();
  });

  it('survives a connection reset on a write', async () => {
    const clock = fakeClock();
    const call = scripted([reset(), reset()]);
    expect(await withRetry(CALL, call.run, typed, DEFAULT_RETRY_POLICY, clock)).toBe('ok');
    expect(call.attempts()).toBe(3);
  });

  it('fails at the bound, naming the call, the attempts and the last error', async () => {
    const clock = fakeClock(0);
    const policy = { budgetMs: 2000, baseDelayMs: 200, maxDelayMs: 1000 };
    const call = scripted(Array.from({ length: 100 }, () => apiError(503)));
    const failure = withRetry(CALL, call.run, typed, policy, clock);
    await expect(failure).rejects.toBeInstanceOf(Unavailable);
    await expect(failure).rejects.toThrow(
      /^cannot apply HelmRelease openstack\/glance: injected 503 \(HTTP 503 ServiceUnavailable; gave up after 6 attempts in 1\.7s\)$/,
    );
    // 100 + 200 + 400 + 500 + 500 = 1.7 s slept; the next 500 would pass the 2 s bound, so it is not started.
    expect(clock.slept).toEqual([100, 200, 400, 500, 500]);
  });

  it('does not start a Retry-After wait that would end past the bound', async () => {
    const clock = fakeClock();
    const call = scripted([apiError(429, { 'retry-after': '120' })]);
    await expect(withRetry(CALL, call.run, typed, DEFAULT_RETRY_POLICY, clock)).rejects.toThrow(/gave up after 1 attempts/);
    expect(clock.slept).toEqual([]);
  });
});
