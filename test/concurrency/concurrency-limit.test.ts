import { describe, expect, it } from 'vitest';
import { concurrencyLimit } from '../../src/concurrency/index.js';

/** A call that runs until the test lets it finish (or fail). */
function pending(): { promise: Promise<void>; finish(): void; fail(error: Error): void } {
  let finish!: () => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return { promise, finish, fail };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('concurrencyLimit', () => {
  it('runs at most `limit` calls at once, the others in the order they came as slots free up', async () => {
    const limit = concurrencyLimit(2);
    const calls = Array.from({ length: 5 }, pending);
    const started: number[] = [];
    let running = 0;
    let most = 0;
    const done = calls.map((call, i) =>
      limit(async () => {
        started.push(i);
        most = Math.max(most, ++running);
        await call.promise.finally(() => running--);
        return i;
      }),
    );
    await settle();
    expect(started).toEqual([0, 1]);
    calls[1]!.finish();
    await settle();
    expect(started).toEqual([0, 1, 2]);
    calls[0]!.finish();
    calls[2]!.finish();
    await settle();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    calls[3]!.finish();
    calls[4]!.finish();
    expect(await Promise.all(done)).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
  });

  it('frees the slot of a call that failed, and passes its error on', async () => {
    const limit = concurrencyLimit(1);
    const first = pending();
    const failed = limit(() => first.promise);
    const next = limit(async () => 'next');
    first.fail(new Error('refused'));
    await expect(failed).rejects.toThrow('refused');
    expect(await next).toBe('next');
  });
});
