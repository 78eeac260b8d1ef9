/**
 * What a HelmRelease's status says about one apply, judged as Flux judges
 * it: not handled yet, ready, still trying (which attempt, and what Helm
 * said of the last one), or failed — and failed only when Flux has given
 * up: its remediation retries are used up, it marked the release Stalled,
 * its remediation itself failed, or the failure came before Helm wrote a
 * release (values, render, schema), which Flux would retry forever with the
 * same result. The table of helm-controller's conditions and reasons and
 * the verdict each gives is in docs/lifecycle.md, "Readiness".
 *
 * An apply stamps `reconcile.fluxcd.io/requestedAt` on every release it
 * writes; helm-controller copies the token to `status.lastHandledReconcileAt`
 * once it has reconciled that request, so an old Ready (or an old failure)
 * is never taken for this apply's result. It stamps
 * `reconcile.fluxcd.io/resetAt` too: a release that exhausted its retries
 * earlier gets a fresh start.
 */
import { condition, type HelmRelease, type HelmReleaseAction } from '../flux/index.js';

export const REQUESTED_AT = 'reconcile.fluxcd.io/requestedAt';
/** With the same token: an apply is a new attempt, so failure counts of earlier attempts are reset (as `flux reconcile --reset` does). */
export const RESET_AT = 'reconcile.fluxcd.io/resetAt';
/** With the same token as requestedAt: Flux upgrades the release even when it finds it in sync (`flux reconcile --force`). */
export const FORCE_AT = 'reconcile.fluxcd.io/forceAt';

/** What readiness reads of a HelmRelease: its metadata, status, whether it is suspended and its remediation settings. */
export type HelmReleaseView = Pick<HelmRelease, 'metadata' | 'status'> & {
  readonly spec?: Pick<HelmRelease['spec'], 'suspend'> & {
    readonly install?: Pick<HelmReleaseAction, 'remediation'>;
    readonly upgrade?: Pick<HelmReleaseAction, 'remediation'>;
  };
};

export type ReleaseAction = 'install' | 'upgrade';

/** An install or upgrade Flux is still trying: attempt `number` of `of` (undefined: unlimited retries). */
export interface Attempt {
  readonly action: ReleaseAction;
  readonly number: number;
  readonly of?: number;
  /** Helm's message about the attempt before. */
  readonly last: string;
}

export type Readiness =
  | {
      readonly state: 'pending';
      readonly reason?: string;
      readonly message?: string;
      readonly attempt?: Attempt;
      /**
       * Helm runs what was asked, but Flux keeps an earlier attempt's failure on
       * Ready: it runs no action for a release in sync, so Ready stays False
       * (fluxcd/helm-controller#1362) and every release depending on it waits
       * for ever. Only a forced upgrade (`FORCE_AT`) makes it Ready.
       */
      readonly staleFailure?: true;
    }
  | { readonly state: 'ready'; readonly reason?: string; readonly message?: string }
  | { readonly state: 'failed'; readonly reason: string; readonly message: string };

/** A Helm action failed (or was remediated): Flux counts it and retries while its remediation allows. */
const COUNTED_FAILURES: Readonly<Record<string, ReleaseAction | undefined>> = {
  InstallFailed: 'install',
  UpgradeFailed: 'upgrade',
  TestFailed: undefined,
  // After a remediation Ready carries the Remediated condition's reason (helm-controller v1.x).
  UninstallSucceeded: 'install',
  RollbackSucceeded: 'upgrade',
};

/** Flux's remediation itself failed: the release is left as Helm left it, nothing further is tried. */
const REMEDIATION_FAILED = new Set(['RollbackFailed', 'UninstallFailed']);

/** Ready=False reasons of a reconcile that waits for something else (a dependency, a source, the next step). */
const WAITING = new Set(['DependencyNotReady', 'ArtifactFailed', 'SourceNotReady', 'Progressing']);

/** Ready=False reasons set before any Helm action whose cause is the configuration itself: the same digest fails the same way. */
const CONFIGURATION_FAILED = new Set(['ValuesError', 'InitFailed']);

/** `describe` of a pending attempt: `upgrading glance: attempt 2 of 4, last: <Helm's message>`. */
export function describeAttempt(release: string, attempt: Attempt): string {
  return `${attempt.action === 'install' ? 'installing' : 'upgrading'} ${release}: attempt ${attempt.number}${attempt.of !== undefined ? ` of ${attempt.of}` : ' (retries unlimited)'}, last: ${attempt.last}`;
}

interface HistorySnapshot {
  readonly configDigest?: unknown;
  readonly chartVersion?: unknown;
  readonly status?: unknown;
}

/**
 * The configuration the last reconcile attempted is the release Helm has
 * deployed: helm-controller found the release in sync and ran nothing
 * (atomic release, `ReleaseStatusInSync`). It leaves Released, and so
 * Ready, as an earlier failed attempt set them (values that failed Helm's
 * schema, since reverted): the release runs what this apply asked for,
 * yet Flux calls it not Ready, and so do its dependants' dependency checks.
 */
function deployedAsAttempted(release: HelmReleaseView): boolean {
  const status = release.status ?? {};
  const latest = (Array.isArray(status.history) ? (status.history as readonly HistorySnapshot[]) : [])[0];
  const digest = status.lastAttemptedConfigDigest;
  return (
    latest?.status === 'deployed' &&
    typeof digest === 'string' &&
    latest.configDigest === digest &&
    typeof status.lastAttemptedRevision === 'string' &&
    latest.chartVersion === status.lastAttemptedRevision
  );
}

/** Which action Flux is on and how its failures stand against its retries. */
function failureCount(release: HelmReleaseView, reason: string | undefined): { action: ReleaseAction; failures: number; retries: number } {
  const status = release.status ?? {};
  const attempted = status.lastAttemptedReleaseAction;
  const action: ReleaseAction = attempted === 'install' || attempted === 'upgrade' ? attempted : (COUNTED_FAILURES[reason ?? ''] ?? 'install');
  const failures = Number(status[`${action}Failures`] ?? 0);
  const retries = release.spec?.[action]?.remediation?.retries ?? 0;
  return { action, failures: Number.isFinite(failures) ? failures : 0, retries };
}

/**
 * Whether the failed attempt left a release in Helm's storage: helm-controller
 * counts (and history records) only attempts that did; a values, render or
 * schema failure stores nothing and moves no counter.
 */
function helmStoredTheAttempt(release: HelmReleaseView, failures: number): boolean {
  if (failures === 0) return false;
  const status = release.status ?? {};
  const latest = (Array.isArray(status.history) ? (status.history as readonly HistorySnapshot[]) : [])[0];
  const digest = status.lastAttemptedConfigDigest;
  if (!latest || typeof digest !== 'string') return true;
  return latest.configDigest === digest && (status.lastAttemptedRevision === undefined || latest.chartVersion === status.lastAttemptedRevision);
}

/** Whether helm-controller has reconciled the request that stamped `token` (always, without a token). */
function handled(release: HelmReleaseView, token: string | undefined): boolean {
  if (token === undefined) return true;
  const status = release.status;
  if (status?.lastHandledReconcileAt === token) return true;
  // A generation the controller has seen, whose Ready was judged for it: a spec change this apply made.
  const ready = condition(release, 'Ready');
  const generation = release.metadata.generation;
  return (
    generation !== undefined &&
    (ready?.observedGeneration ?? status?.observedGeneration ?? -1) >= generation &&
    release.metadata.annotations?.[REQUESTED_AT] === token &&
    status?.lastHandledReconcileAt === undefined
  );
}

/** What Flux's Ready condition says as it is: true, false, or null when Flux has not said (no condition, or Unknown). */
export function readyAsReported(release: HelmReleaseView): { readonly ready: boolean | null; readonly reason?: string; readonly message?: string } {
  const ready = condition(release, 'Ready');
  return {
    ready: !ready || ready.status === 'Unknown' ? null : ready.status === 'True',
    ...(ready?.reason ? { reason: ready.reason } : {}),
    ...(ready?.message ? { message: ready.message } : {}),
  };
}

/** Whether helm-controller is running a Helm action on the release now (an install, upgrade or remediation): Reconciling, Ready Unknown. */
export function helmActionUnderWay(release: HelmReleaseView): boolean {
  return condition(release, 'Reconciling')?.status === 'True' && condition(release, 'Ready')?.status === 'Unknown';
}

/**
 * Where a release stands for the apply that stamped `token`. Without a token
 * (show, list) the current status is judged as it is.
 */
export function readiness(release: HelmReleaseView, token?: string): Readiness {
  // helm-controller marks a request on a suspended release handled and keeps its old Ready: for an apply
  // that is no verdict at all, so it fails at once rather than pass on a stale Ready (docs/lifecycle.md, "Suspended releases").
  if (token !== undefined && release.spec?.suspend === true) {
    const { name, namespace } = release.metadata;
    return {
      state: 'failed',
      reason: 'Suspended',
      message: `spec.suspend is true: Flux ignores this apply until the release is resumed (flux resume helmrelease ${name}${namespace ? ` -n ${namespace}` : ''})`,
    };
  }
  const ready = condition(release, 'Ready');
  const detail = { ...(ready?.reason ? { reason: ready.reason } : {}), ...(ready?.message ? { message: ready.message } : {}) };
  if (!ready || !handled(release, token)) return { state: 'pending', ...detail };
  if (ready.status === 'True') return { state: 'ready', ...detail };
  // Only a failure reason: a reconcile that stopped earlier (a dependency, the source) attempted nothing, its lastAttempted* are older.
  const releaseFailure = ready.status === 'False' && (ready.reason === 'UpgradeFailed' || ready.reason === 'InstallFailed');
  if (releaseFailure && condition(release, 'Stalled')?.status !== 'True' && deployedAsAttempted(release))
    return { state: 'pending', ...detail, staleFailure: true };

  const stalled = condition(release, 'Stalled');
  // A Stalled left from an earlier attempt while this reconcile waits on a dependency or a source is not its verdict:
  // a stalled release does not get that far (helm-controller stops before dependencies and sources).
  if (stalled?.status === 'True' && !(ready.status === 'False' && WAITING.has(ready.reason ?? ''))) {
    // Flux gave up (RetriesExceeded, or a terminal error): the failure is Helm's last, Stalled says why Flux stopped.
    const failure = [ready, condition(release, 'Released')].find((c) => c?.status === 'False' && (c.reason ?? '') in COUNTED_FAILURES);
    const gaveUp = `Flux gave up: ${stalled.message || 'stalled'} (${stalled.reason ?? 'Stalled'})`;
    return failure
      ? { state: 'failed', reason: failure.reason ?? 'Failed', message: `${failure.message ?? ''}; ${gaveUp}` }
      : { state: 'failed', reason: stalled.reason ?? 'Stalled', message: gaveUp };
  }
  const reason = ready.reason ?? '';
  const message = ready.message ?? '';
  if (ready.status === 'False' && (REMEDIATION_FAILED.has(reason) || CONFIGURATION_FAILED.has(reason))) return { state: 'failed', reason, message };

  const released = condition(release, 'Released');
  const lastFailure = ready.status === 'False' && reason in COUNTED_FAILURES ? ready : released?.status === 'False' ? released : undefined;
  if (!lastFailure) return { state: 'pending', ...detail };
  const { action, failures, retries } = failureCount(release, lastFailure.reason);
  if (ready.status === 'False' && (reason === 'InstallFailed' || reason === 'UpgradeFailed') && !helmStoredTheAttempt(release, failures)) {
    // Nothing reached Helm's storage: Flux retries with backoff forever, with the same values and chart failing the same way.
    return { state: 'failed', reason, message };
  }
  if (
    ready.status === 'Unknown' &&
    failures === 0 &&
    Number(release.status?.failures ?? 0) > 0 &&
    (lastFailure.reason === 'InstallFailed' || lastFailure.reason === 'UpgradeFailed')
  ) {
    // Flux retrying a failure that stored nothing, for this configuration (its failure counts are cleared when the configuration changes): the same failure again.
    return { state: 'failed', reason: lastFailure.reason, message: lastFailure.message ?? '' };
  }
  if (failures === 0) return { state: 'pending', ...detail };
  if (retries >= 0 && failures > retries) {
    // Out of retries; helm-controller marks it Stalled RetriesExceeded on its next pass — the verdict is the same.
    const helm = released?.status === 'False' && released.message ? released.message : message;
    return {
      state: 'failed',
      reason: released?.status === 'False' && released.reason ? released.reason : reason,
      message: `${helm}; failed ${failures} time(s), remediation retries: ${retries}`,
    };
  }
  const last = released?.status === 'False' && released.message ? released.message : (lastFailure.message ?? '');
  return { state: 'pending', ...detail, attempt: { action, number: failures + 1, ...(retries >= 0 ? { of: retries + 1 } : {}), last } };
}
