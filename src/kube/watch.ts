/**
 * Watching objects: list once, then follow a watch from the list's
 * resourceVersion with bookmarks; when the server says the version is too
 * old (410 Gone, in the stream or as the answer) list again and carry on;
 * when the server ends a watch, resume from the last version seen. A caller
 * judges the current set after every change, so waiting for a condition
 * costs one request, not one per poll.
 */
import { FlotillaError } from '../diagnostics/index.js';
import type { KubeClient } from './client.js';
import { loadClientModule } from './client.js';
import { Gone, kubeError, type KubeApiError } from './errors.js';
import { collectionPath, listObjects, type KindSelector, type KubeObject } from './objects.js';
import { DEFAULT_RETRY_POLICY, REAL_CLOCK, retryDelay } from './retry.js';

export type WatchEventType = 'LIST' | 'ADDED' | 'MODIFIED' | 'DELETED';

/** What changed: the whole set after a (re-)list, or one object. */
export interface WatchChange<T> {
  readonly type: WatchEventType;
  readonly object?: T;
}

/** Returns a value to stop watching with it, undefined to keep going; throws to fail the wait. */
export type WatchJudge<T, R> = (objects: ReadonlyMap<string, T>, change: WatchChange<T>) => R | undefined;

export interface WatchOptions {
  /** Fails the wait with `WaitTimeoutError` after this long. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** What is being waited for, for the time-out message (`HelmRelease openstack/keystone to be Ready`); a function is asked when the time is up. */
  readonly waitingFor: string | (() => string);
}

export class WaitTimeoutError extends FlotillaError {}
export class WaitAbortedError extends FlotillaError {}

/** `namespace/name`: the key of the judged map. */
function objectKey(object: Pick<KubeObject, 'metadata'>): string {
  return object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name;
}

export async function watchUntil<T extends KubeObject, R>(
  client: Pick<KubeClient, 'objects' | 'config' | 'core' | 'custom'>,
  selector: KindSelector,
  judge: WatchJudge<T, R>,
  options: WatchOptions,
): Promise<R> {
  const { Watch } = await loadClientModule();
  const path = await collectionPath(client, selector);
  const call = { verb: 'watch', kind: selector.kind, ...(selector.namespace ? { namespace: selector.namespace } : {}) };
  const objects = new Map<string, T>();
  let resourceVersion = '';
  let settled = false;
  let current: AbortController | undefined;

  return new Promise<R>((resolve, reject) => {
    const timer =
      options.timeoutMs !== undefined
        ? setTimeout(
            () => finish(() => reject(new WaitTimeoutError(`timed out after ${formatMillis(options.timeoutMs ?? 0)} waiting for ${describe()}`))),
            options.timeoutMs,
          )
        : undefined;
    const describe = () => (typeof options.waitingFor === 'string' ? options.waitingFor : options.waitingFor());
    const onAbort = () => finish(() => reject(new WaitAbortedError(`stopped waiting for ${describe()}: ${reasonText(options.signal?.reason)}`)));
    options.signal?.addEventListener('abort', onAbort, { once: true });

    function finish(settle: () => void): void {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      current?.abort();
      settle();
    }

    function judgeNow(change: WatchChange<T>): void {
      try {
        const verdict = judge(objects, change);
        if (verdict !== undefined) finish(() => resolve(verdict));
      } catch (error) {
        finish(() => reject(error));
      }
    }

    async function relist(): Promise<void> {
      const list = await listObjects<T>(client, selector);
      objects.clear();
      for (const item of list.items) objects.set(objectKey(item), item);
      resourceVersion = list.resourceVersion;
      judgeNow({ type: 'LIST' });
    }

    /** One watch request; resolves when the stream ends, with whether the version was too old. */
    function watchOnce(): Promise<'ended' | 'gone'> {
      return new Promise((done, failed) => {
        let gone = false;
        const params: Record<string, string | boolean> = { resourceVersion, allowWatchBookmarks: true };
        if (selector.labelSelector) params.labelSelector = selector.labelSelector;
        new Watch(client.config)
          .watch(
            path,
            params,
            (type: string, object: unknown) => {
              if (settled) return;
              const body = object as T & { kind?: string; code?: number };
              if (type === 'ERROR') {
                const typed = kubeError(call, body);
                if (typed instanceof Gone) gone = true;
                else failed(typed);
                current?.abort();
                return;
              }
              const version = body.metadata?.resourceVersion;
              if (version) resourceVersion = version;
              if (type === 'BOOKMARK') return;
              if (type === 'DELETED') objects.delete(objectKey(body));
              else objects.set(objectKey(body), body);
              judgeNow({ type: type as WatchEventType, object: body });
            },
            (error: unknown) => {
              if (!error || settled || (error as { name?: string }).name === 'AbortError') return done(gone ? 'gone' : 'ended');
              const typed = kubeError(call, error);
              if (typed instanceof Gone) return done('gone');
              failed(typed);
            },
          )
          .then((controller) => {
            current = controller;
            if (settled) controller.abort();
          }, failed);
      });
    }

    (async () => {
      await relist();
      // Transient failures in a row; a watch that ran starts the backoff afresh. The wait's own timeout bounds them.
      let failures = 0;
      while (!settled) {
        try {
          if ((await watchOnce()) === 'gone' && !settled) await relist();
          failures = 0;
        } catch (error) {
          // The API server restarted, dropped the connection or shed load: resume from the last version seen,
          // paced as every other call is (retry.ts).
          const delay = retryDelay(error as KubeApiError, failures++, DEFAULT_RETRY_POLICY, REAL_CLOCK.random);
          if (delay === undefined) throw error;
          await REAL_CLOCK.sleep(delay);
        }
      }
    })().catch((error: unknown) => finish(() => reject(error)));
  });
}

function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason ?? 'aborted');
}

function formatMillis(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
