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
 * Work that arrives over time, done at most `limit` at a time, the first
 * by `order` of all that is waiting next. A failure goes to `onError`; the
 * rest still runs.
 */
export class PriorityWork<T> {
  private readonly waiting: T[] = [];
  private running = 0;

  constructor(
    private readonly limit: number,
    private readonly order: (a: T, b: T) => number,
    private readonly run: (item: T) => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  add(items: readonly T[]): void {
    this.waiting.push(...items);
    this.waiting.sort(this.order);
    this.start();
  }

  private start(): void {
    while (this.running < Math.max(1, this.limit) && this.waiting.length > 0) {
      const item = this.waiting.shift() as T;
      this.running++;
      this.run(item)
        .catch(this.onError)
        .finally(() => {
          this.running--;
          this.start();
        });
    }
  }
}
