/**
 * HelmReleases in the cluster: waiting (by watch) until each of a set is
 * Ready for this apply, failing at once when one fails with Flux's reason
 * and message; deleting releases in reverse dependency order, each waited
 * on until it is gone; and reading their current conditions for show.
 */
import { dependenciesFirst } from '../app/index.js';
import { HELM_RELEASE_API, OVERRIDES_KINDS, overridesSecretName } from '../flux/index.js';
import { APP_LABEL, NotFound, type KubeObject } from '../kube/index.js';
import type { ObjectStore } from './cluster.js';
import { ReleaseFailedError } from './errors.js';
import {
  describeAttempt,
  FORCE_AT,
  helmActionUnderWay,
  readiness,
  readyAsReported,
  REQUESTED_AT,
  type Attempt,
  type HelmReleaseView,
  type Readiness,
} from './readiness.js';
import type { RecordedRelease } from './record.js';

export type ReleaseKey = Pick<RecordedRelease, 'name' | 'namespace'>;

export interface WaitOptions {
  readonly appName: string;
  readonly token: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Called once per release, when it becomes Ready for this apply. */
  readonly onReady?: (release: ReleaseKey) => void;
  /** The release being waited on changed (the first one not ready, in apply order). */
  readonly onWaiting?: (release: ReleaseKey | undefined) => void;
  /** Flux retries a release after a failed attempt (called once per attempt). */
  readonly onAttempt?: (release: ReleaseKey, attempt: Attempt) => void;
  /** When the release was written (undefined: not yet); its own time counts from then. */
  readonly writtenAt?: (release: ReleaseKey) => number | undefined;
  /** The release's own time (schedule.ts): past it, the release fails with Flux's last word. */
  readonly releaseTimeMs?: (release: ReleaseKey) => number;
}

/** How often the releases' own times are checked. */
const RELEASE_TIME_CHECK_MS = 1000;

const keyOf = (r: ReleaseKey) => `${r.namespace}/${r.name}`;

/**
 * Resolves when every release is Ready for the apply that stamped `token`;
 * rejects with ReleaseFailedError at the first failure. A release Flux
 * finds in sync while it keeps an earlier failure on Ready (readiness.ts,
 * `staleFailure`) is asked once for a forced upgrade, under a token of its
 * own: Flux's Ready is what its dependants wait for, so the wait does too.
 */
export async function waitForReleases(objects: ObjectStore, releases: readonly ReleaseKey[], options: WaitOptions): Promise<void> {
  const ready = new Set<string>();
  /** The request each release answers: the apply's token, or the token of the forced upgrade it was asked for. */
  const tokens = new Map<string, string>();
  /** What Flux last said of each release not ready yet, for a time-out message. */
  const lastSaid = new Map<string, string>();
  /** The attempt each release is on, once Flux has retried it. */
  const attempts = new Map<string, number>();
  const byNamespace = new Map<string, ReleaseKey[]>();
  for (const r of releases) byNamespace.set(r.namespace, [...(byNamespace.get(r.namespace) ?? []), r]);
  let waitingFor: string | undefined;
  const noteWaiting = () => {
    const next = releases.find((r) => !ready.has(keyOf(r)));
    const key = next && keyOf(next);
    if (key !== waitingFor) {
      waitingFor = key;
      options.onWaiting?.(next);
    }
  };
  noteWaiting();
  // A release past its own time, or a forced upgrade that could not be asked for, stops the wait: its watch and every other.
  const stopped = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stopped.signal]) : stopped.signal;
  const force = (release: ReleaseKey) => {
    // A token of its own, not the apply's: Flux handles a force only when forceAt equals a requestedAt it has not handled.
    const token = `${options.token}-forced`;
    tokens.set(keyOf(release), token);
    const ref = { apiVersion: HELM_RELEASE_API, kind: 'HelmRelease', metadata: { name: release.name, namespace: release.namespace } };
    objects.patch(ref, { metadata: { annotations: { [REQUESTED_AT]: token, [FORCE_AT]: token } } }).catch((error: unknown) => stopped.abort(error));
  };
  const checkTimes = setInterval(() => {
    const now = Date.now();
    for (const release of releases) {
      const since = options.writtenAt?.(release);
      const allowed = options.releaseTimeMs?.(release);
      if (ready.has(keyOf(release)) || since === undefined || allowed === undefined || now - since <= allowed) continue;
      const said = lastSaid.get(keyOf(release));
      stopped.abort(
        new ReleaseFailedError(
          release.name,
          'Timeout',
          `not Ready within its own time (${Math.round(allowed / 1000)}s: its Helm timeout for each attempt its remediation allows, plus Flux's overheads)${said ? `; Flux last said: ${said}` : ''}`,
        ),
      );
      return;
    }
  }, RELEASE_TIME_CHECK_MS);
  try {
    await waitForAll();
  } catch (error) {
    throw stopped.signal.aborted ? stopped.signal.reason : error;
  } finally {
    clearInterval(checkTimes);
  }

  function waitForAll(): Promise<unknown> {
    return Promise.all(
      [...byNamespace].map(([namespace, wanted]) =>
        objects.watch<KubeObject & HelmReleaseView, true>(
          { apiVersion: HELM_RELEASE_API, kind: 'HelmRelease', namespace, labelSelector: `${APP_LABEL}=${options.appName}` },
          (current) => {
            for (const release of wanted) {
              if (ready.has(keyOf(release))) continue;
              const object = current.get(keyOf(release));
              if (!object) continue;
              const state = readiness(object, tokens.get(keyOf(release)) ?? options.token);
              if (state.state === 'failed') throw new ReleaseFailedError(release.name, state.reason, state.message);
              if (state.state === 'pending' && state.staleFailure && !tokens.has(keyOf(release))) force(release);
              if (state.state === 'pending' && state.attempt && attempts.get(keyOf(release)) !== state.attempt.number) {
                attempts.set(keyOf(release), state.attempt.number);
                options.onAttempt?.(release, state.attempt);
              }
              if (state.reason)
                lastSaid.set(
                  keyOf(release),
                  state.state === 'pending' && state.attempt
                    ? describeAttempt(release.name, state.attempt)
                    : `${state.reason}${state.message ? `: ${state.message}` : ''}`,
                );
              if (state.state === 'ready') {
                ready.add(keyOf(release));
                options.onReady?.(release);
                noteWaiting();
              }
            }
            return wanted.every((r) => ready.has(keyOf(r))) ? true : undefined;
          },
          {
            timeoutMs: options.timeoutMs,
            signal,
            waitingFor: () =>
              `${wanted.length} HelmRelease(s) in ${namespace} to be Ready; not ready: ${wanted
                .filter((r) => !ready.has(keyOf(r)))
                .map((r) => `${r.name}${lastSaid.has(keyOf(r)) ? ` (${lastSaid.get(keyOf(r))})` : ''}`)
                .join(', ')}`,
          },
        ),
      ),
    );
  }
}

/**
 * Resolves once no release of the app is in the middle of a Helm action
 * (Reconciling with Ready Unknown: helm-controller is running an install,
 * upgrade or remediation): a recovery must not write over an upgrade under
 * way, which Helm would then find locked ("another operation is in progress").
 */
export async function waitForSettled(
  objects: ObjectStore,
  appName: string,
  namespaces: readonly string[],
  options: { readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<void> {
  await Promise.all(
    [...new Set(namespaces)].map((namespace) =>
      objects.watch<KubeObject & HelmReleaseView, true>(
        { apiVersion: HELM_RELEASE_API, kind: 'HelmRelease', namespace, labelSelector: `${APP_LABEL}=${appName}` },
        (current) => ([...current.values()].some(helmActionUnderWay) ? undefined : true),
        {
          timeoutMs: options.timeoutMs,
          ...(options.signal ? { signal: options.signal } : {}),
          waitingFor: `the Helm actions under way in ${namespace} to finish`,
        },
      ),
    ),
  );
}

/** Releases in reverse dependency order: dependants before what they depend on. */
export function removalOrder<T extends Pick<RecordedRelease, 'name' | 'dependsOn'>>(releases: readonly T[]): T[] {
  return dependenciesFirst(releases).reverse();
}

/** Deletes one release and its overrides Secrets, and waits until the HelmRelease is gone (Flux uninstalls it first). */
export async function deleteRelease(
  objects: ObjectStore,
  release: ReleaseKey,
  options: { readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<void> {
  const ref = { apiVersion: HELM_RELEASE_API, kind: 'HelmRelease', metadata: { name: release.name, namespace: release.namespace } };
  // Waited on even when the delete found nothing: a retried delete whose first attempt was heard finds nothing
  // while Flux is still uninstalling (the watch's first list answers at once when it is gone).
  await objects.delete(ref);
  await objects.watch(
    { apiVersion: HELM_RELEASE_API, kind: 'HelmRelease', namespace: release.namespace },
    (current) => (current.has(keyOf(release)) ? undefined : true),
    { timeoutMs: options.timeoutMs, ...(options.signal ? { signal: options.signal } : {}), waitingFor: `HelmRelease ${keyOf(release)} to be deleted` },
  );
  for (const name of OVERRIDES_KINDS.map((kind) => overridesSecretName(release.name, kind))) {
    await objects.delete({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: release.namespace } });
  }
}

/**
 * Each release as Flux reports it now: its Ready condition (null when Flux
 * has not said yet or the release is not there) and flotilla's verdict on
 * it. The reason and message are Ready's, or the failure's once the verdict
 * is that Flux gave up.
 */
export interface ReleaseStatus {
  readonly name: string;
  readonly namespace: string;
  readonly ready: boolean | null;
  /** readiness.ts's reading: `ready`, `pending` (still being tried or waited on) or `failed` (Flux gave up); `absent` when there is no HelmRelease. */
  readonly state: Readiness['state'] | 'absent';
  readonly reason?: string;
  readonly message?: string;
  /** Flux is retrying: which attempt, and what Helm said of the last. */
  readonly attempt?: string;
  readonly suspended?: boolean;
  /** Helm runs what was applied, but Flux keeps an earlier failure on Ready until an upgrade is forced (readiness.ts). */
  readonly staleFailure?: boolean;
}

export async function releaseStatuses(objects: ObjectStore, appName: string, releases: readonly ReleaseKey[]): Promise<ReleaseStatus[]> {
  const namespaces = [...new Set(releases.map((r) => r.namespace))];
  const found = new Map<string, HelmReleaseView>();
  for (const namespace of namespaces) {
    // A cluster without Flux's API (removed since, or never there for an app only uploaded) has no release to show.
    const listed = await objects
      .list<KubeObject & HelmReleaseView>({ apiVersion: HELM_RELEASE_API, kind: 'HelmRelease', namespace, labelSelector: `${APP_LABEL}=${appName}` })
      .catch((error: unknown) => {
        if (error instanceof NotFound) return [];
        throw error;
      });
    for (const item of listed) found.set(`${namespace}/${item.metadata.name}`, item);
  }
  return releases.map((release) => releaseStatus(release, found.get(keyOf(release))));
}

/** One release's status, from its HelmRelease (undefined when there is none). */
export function releaseStatus(release: ReleaseKey, object: HelmReleaseView | undefined): ReleaseStatus {
  const reported = object ? readyAsReported(object) : { ready: null };
  const verdict = object ? readiness(object) : undefined;
  // A failure is told by the verdict: while Flux retries one that stored nothing, Ready says only Progressing.
  const told = verdict?.state === 'failed' ? verdict : reported;
  return {
    name: release.name,
    namespace: release.namespace,
    ready: reported.ready,
    state: verdict?.state ?? 'absent',
    ...(told?.reason ? { reason: told.reason } : {}),
    ...(told?.message ? { message: told.message } : {}),
    ...(verdict?.state === 'pending' && verdict.attempt ? { attempt: describeAttempt(release.name, verdict.attempt) } : {}),
    ...(object?.spec?.suspend === true ? { suspended: true } : {}),
    ...(verdict?.state === 'pending' && verdict.staleFailure ? { staleFailure: true } : {}),
  };
}
