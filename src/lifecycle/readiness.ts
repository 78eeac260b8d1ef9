/**
 * What a HelmRelease's status says about one apply: not yet handled, ready,
 * still progressing, or failed (with Flux's reason and message). An apply
 * stamps `reconcile.fluxcd.io/requestedAt` on every release it writes;
 * helm-controller copies the token to `status.lastHandledReconcileAt` once it
 * has reconciled that request, so an old Ready (or an old failure) is never
 * taken for this apply's result. It stamps `reconcile.fluxcd.io/resetAt` too:
 * a release that exhausted its retries earlier gets a fresh start.
 */
import type { Condition, HelmRelease } from '../flux/index.js';

export const REQUESTED_AT = 'reconcile.fluxcd.io/requestedAt';
/** With the same token: an apply is a new attempt, so failure counts of earlier attempts are reset (as `flux reconcile --reset` does). */
export const RESET_AT = 'reconcile.fluxcd.io/resetAt';

/** What readiness reads of a HelmRelease: its metadata and status. */
export type HelmReleaseView = Pick<HelmRelease, 'metadata' | 'status'>;

/**
 * Reasons of Ready=False that are helm-controller's verdict on this
 * release's install, upgrade, test or rollback: reported at once. Anything
 * else (a source not ready yet, a dependency, progress) is waited through,
 * unless Flux marks the release Stalled (it gave up).
 */
const FAILURE_REASONS = new Set(['InstallFailed', 'UpgradeFailed', 'TestFailed', 'RollbackFailed', 'UninstallFailed', 'InitFailed']);

export type Readiness =
  | { readonly state: 'pending'; readonly reason?: string; readonly message?: string }
  | { readonly state: 'ready'; readonly reason?: string; readonly message?: string }
  | { readonly state: 'failed'; readonly reason: string; readonly message: string };

export function readyCondition(release: HelmReleaseView): Condition | undefined {
  return release.status?.conditions?.find((c) => c.type === 'Ready');
}

/**
 * Where a release stands for the apply that stamped `token`. Without a token
 * (show, list) the current condition is taken as it is.
 */
export function readiness(release: HelmReleaseView, token?: string): Readiness {
  const ready = readyCondition(release);
  const status = release.status;
  const handled =
    token === undefined ||
    status?.lastHandledReconcileAt === token ||
    // A generation the controller has seen, whose Ready was judged for it: a spec change this apply made.
    (release.metadata.generation !== undefined && (ready?.observedGeneration ?? status?.observedGeneration ?? -1) >= release.metadata.generation && release.metadata.annotations?.[REQUESTED_AT] === token && status?.lastHandledReconcileAt === undefined);
  if (!ready || !handled) return { state: 'pending', ...(ready?.reason ? { reason: ready.reason } : {}), ...(ready?.message ? { message: ready.message } : {}) };
  const detail = { ...(ready.reason ? { reason: ready.reason } : {}), ...(ready.message ? { message: ready.message } : {}) };
  if (ready.status === 'True') return { state: 'ready', ...detail };
  const stalled = release.status?.conditions?.find((c) => c.type === 'Stalled' && c.status === 'True');
  if (ready.status === 'False' && (FAILURE_REASONS.has(ready.reason ?? '') || stalled)) {
    return { state: 'failed', reason: ready.reason ?? stalled?.reason ?? 'Failed', message: ready.message ?? stalled?.message ?? '' };
  }
  return { state: 'pending', ...detail };
}
