/**
 * Running a hook under a time limit. The hook gets its own abort signal,
 * fired when the limit passes or the operation is cancelled; the runner stops
 * waiting at that moment. JavaScript cannot kill a hook that ignores its
 * signal: it may go on in the background, but nothing waits for it and
 * nothing after it runs.
 */

export interface TimeLimit {
  readonly limitMs: number;
  /** The operation's signal: cancelling it aborts the hook too. */
  readonly parent?: AbortSignal;
  readonly onTimeout: () => Error;
  readonly onCancel: (reason: unknown) => Error;
}

export async function runWithTimeLimit<T>(run: (signal: AbortSignal) => T | Promise<T>, limit: TimeLimit): Promise<T> {
  if (limit.parent?.aborted) throw limit.onCancel(limit.parent.reason);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onParentAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = limit.onTimeout();
      controller.abort(error);
      reject(error);
    }, limit.limitMs);
    onParentAbort = () => {
      const error = limit.onCancel(limit.parent?.reason);
      controller.abort(error);
      reject(error);
    };
    limit.parent?.addEventListener('abort', onParentAbort, { once: true });
  });
  try {
    // `then` so a hook that throws synchronously rejects like an async one.
    return await Promise.race([Promise.resolve().then(() => run(controller.signal)), stopped]);
  } finally {
    clearTimeout(timer);
    if (onParentAbort) limit.parent?.removeEventListener('abort', onParentAbort);
  }
}
