/** Bounded parallel work: many helm processes or chart packagings, a few at a time. */

/** Maps `items` with at most `limit` calls of `fn` in flight; results keep the input order. */
export async function mapConcurrently<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}

/**
 * A gate for work that arrives over time (not a list known up front): each
 * call runs `fn` once fewer than `limit` run, in the order the calls came.
 */
export function concurrencyLimit(limit: number): <R>(fn: () => Promise<R>) => Promise<R> {
  let running = 0;
  const queued: (() => void)[] = [];
  // A finished call hands its slot to the next queued one, if any.
  const release = () => {
    const next = queued.shift();
    if (next) next();
    else running--;
  };
  return async <R>(fn: () => Promise<R>): Promise<R> => {
    if (running >= Math.max(1, limit)) await new Promise<void>((start) => queued.push(start));
    else running++;
    try {
      return await fn();
    } finally {
      release();
    }
  };
}
