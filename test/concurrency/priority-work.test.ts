/**
 * PriorityWork (src/concurrency): work that arrives over time runs at most
 * `limit` at once, the first by its order of all waiting next; a failure
 * goes to onError and the rest still runs.
 */
import { describe, expect, it } from 'vitest';
import { PriorityWork } from '../../src/concurrency/index.js';

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('PriorityWork', () => {
  it('runs at most `limit` at once, and the most urgent waiting item next, even one added later', async () => {
    const started: number[] = [];
    const finish = new Map<number, ReturnType<typeof deferred>>();
    const work = new PriorityWork<number>(
      2,
      (a, b) => a - b,
      (n) => {
        started.push(n);
        const d = deferred();
        finish.set(n, d);
        return d.promise;
      },
      () => undefined,
    );
    work.add([5, 3, 9]);
    expect(started).toEqual([3, 5]);
    work.add([7, 1]);
    expect(started).toEqual([3, 5]);
    finish.get(5)!.resolve();
    await settle();
    // 1 came after 7 and 9, and goes first.
    expect(started).toEqual([3, 5, 1]);
    finish.get(3)!.resolve();
    await settle();
    expect(started).toEqual([3, 5, 1, 7]);
    finish.get(1)!.resolve();
    finish.get(7)!.resolve();
    await settle();
    expect(started).toEqual([3, 5, 1, 7, 9]);
  });

  it('hands a failure to onError and runs the rest', async () => {
    const errors: unknown[] = [];
    const done: string[] = [];
    const work = new PriorityWork<string>(
      1,
      (a, b) => a.localeCompare(b),
      async (item) => {
        if (item === 'b') throw new Error('b failed');
        done.push(item);
      },
      (error) => errors.push(error),
    );
    work.add(['c', 'a', 'b']);
    for (let i = 0; i < 5; i++) await settle();
    expect(done).toEqual(['a', 'c']);
    expect(errors.map((e) => (e as Error).message)).toEqual(['b failed']);
  });
});
