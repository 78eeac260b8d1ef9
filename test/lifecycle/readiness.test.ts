/**
 * readiness.ts's verdict for each of helm-controller's conditions and
 * reasons (v1.x), as docs/lifecycle.md's "Readiness" table says: a release
 * fails only when Flux has given up on it; until then it is pending, with
 * the attempt Flux is on and Helm's message about the last.
 */
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../src/flux/index.js';
import { describeAttempt, readiness, REQUESTED_AT, type HelmReleaseView } from '../../src/lifecycle/readiness.js';
import { releaseStatus } from '../../src/lifecycle/releases.js';

const TOKEN = '2026-11-28T02:00:00.000Z';
const HELM = 'Helm upgrade failed for release openstack/glance with chart glance@0.1.1: context deadline exceeded';

interface Shape {
  readonly conditions: readonly Condition[];
  readonly retries?: number;
  readonly action?: 'install' | 'upgrade';
  readonly failures?: number;
  /** status.failures: every failed reconcile of this configuration, stored or not. */
  readonly total?: number;
  /** The digest and chart of the newest release in Helm's storage (status.history[0]); the attempted ones are d2/0.1.1. */
  readonly stored?: { readonly configDigest: string; readonly chartVersion: string; readonly status?: string };
  readonly handled?: string;
  readonly suspend?: boolean;
}

function release(shape: Shape): HelmReleaseView {
  const action = shape.action ?? 'upgrade';
  return {
    metadata: { name: 'glance', namespace: 'openstack', generation: 4, annotations: { [REQUESTED_AT]: TOKEN } },
    spec: { ...(shape.suspend ? { suspend: true } : {}), [action]: { remediation: { retries: shape.retries ?? 0 } } },
    status: {
      lastHandledReconcileAt: shape.handled ?? TOKEN,
      lastAttemptedReleaseAction: action,
      lastAttemptedConfigDigest: 'sha256:d2',
      lastAttemptedRevision: '0.1.1',
      [`${action}Failures`]: shape.failures ?? 0,
      ...(shape.total !== undefined ? { failures: shape.total } : {}),
      history: [shape.stored ?? { configDigest: 'sha256:d2', chartVersion: '0.1.1' }],
      conditions: shape.conditions,
    },
  };
}

const cond = (type: string, status: Condition['status'], reason: string, message = ''): Condition => ({ type, status, reason, message });
const failedUpgrade = [cond('Ready', 'False', 'UpgradeFailed', HELM), cond('Released', 'False', 'UpgradeFailed', HELM)];
const rolledBack = [
  cond('Ready', 'False', 'RollbackSucceeded', 'Helm rollback to previous release openstack/glance.v3 succeeded'),
  cond('Released', 'False', 'UpgradeFailed', HELM),
  cond('Remediated', 'True', 'RollbackSucceeded', 'Helm rollback … succeeded'),
];

describe('readiness as Flux decides it', () => {
  it('an UpgradeFailed left by an earlier attempt, once the attempted configuration is the deployed release, is a stale failure, not Ready (helm-controller in sync runs nothing and leaves Released as it was; dependants wait on its Ready)', () => {
    const deployed = { configDigest: 'sha256:d2', chartVersion: '0.1.1', status: 'deployed' };
    expect(readiness(release({ conditions: failedUpgrade, stored: deployed }))).toMatchObject({
      state: 'pending',
      reason: 'UpgradeFailed',
      staleFailure: true,
    });
    // A failed release in storage, another digest deployed, or a reconcile that stopped before attempting: no.
    expect(readiness(release({ conditions: failedUpgrade, stored: { ...deployed, status: 'failed' }, failures: 1 })).state).toBe('failed');
    expect(readiness(release({ conditions: failedUpgrade, stored: { ...deployed, configDigest: 'sha256:d1' } })).state).toBe('failed');
    expect(
      readiness(
        release({
          conditions: [
            cond('Ready', 'False', 'DependencyNotReady', 'dependency openstack/keystone is not ready'),
            cond('Released', 'False', 'UpgradeFailed', HELM),
          ],
          stored: deployed,
        }),
      ).state,
    ).toBe('pending');
  });

  it.each([
    ['InstallSucceeded', [cond('Ready', 'True', 'InstallSucceeded'), cond('Released', 'True', 'InstallSucceeded')]],
    ['UpgradeSucceeded', [cond('Ready', 'True', 'UpgradeSucceeded'), cond('Released', 'True', 'UpgradeSucceeded')]],
    ['TestSucceeded', [cond('Ready', 'True', 'TestSucceeded'), cond('TestSuccess', 'True', 'TestSucceeded')]],
  ])('Ready=True %s is ready', (_reason, conditions) => {
    expect(readiness(release({ conditions })).state).toBe('ready');
  });

  it("an UpgradeFailed with retries left is an attempt, with Helm's message (fixture: Ready keeps UpgradeFailed next to Remediated)", () => {
    const verdict = readiness(release({ conditions: [...failedUpgrade, cond('Remediated', 'True', 'RollbackSucceeded')], retries: 3, failures: 1 }));
    expect(verdict).toMatchObject({ state: 'pending', attempt: { action: 'upgrade', number: 2, of: 4, last: HELM } });
    expect(verdict.state === 'pending' && verdict.attempt && describeAttempt('glance', verdict.attempt)).toBe(
      `upgrading glance: attempt 2 of 4, last: ${HELM}`,
    );
  });

  it('RollbackSucceeded (helm-controller: Ready copies Remediated) with retries left is an attempt', () => {
    expect(readiness(release({ conditions: rolledBack, retries: 3, failures: 2 }))).toMatchObject({
      state: 'pending',
      attempt: { number: 3, of: 4, last: HELM },
    });
  });

  it('UninstallSucceeded after a failed install with retries left is an attempt', () => {
    const conditions = [
      cond('Ready', 'False', 'UninstallSucceeded', 'Helm uninstall succeeded'),
      cond('Released', 'False', 'InstallFailed', 'Helm install failed: boom'),
      cond('Remediated', 'True', 'UninstallSucceeded'),
    ];
    expect(readiness(release({ conditions, action: 'install', retries: 1, failures: 1 }))).toMatchObject({
      state: 'pending',
      attempt: { action: 'install', number: 2, of: 2, last: 'Helm install failed: boom' },
    });
  });

  it('Flux retrying (Ready=Unknown) a failure of this configuration that stored nothing is that failure again; a first attempt is pending', () => {
    const conditions = [
      cond('Ready', 'Unknown', 'Progressing', "Running 'upgrade' action with timeout of 5m0s"),
      cond('Released', 'False', 'UpgradeFailed', HELM),
    ];
    const stored = { configDigest: 'sha256:d1', chartVersion: '0.1.0', status: 'deployed' };
    expect(readiness(release({ conditions, stored, total: 2 }))).toEqual({ state: 'failed', reason: 'UpgradeFailed', message: HELM });
    expect(readiness(release({ conditions, stored }))).toMatchObject({ state: 'pending', reason: 'Progressing' });
  });

  it('a release Flux gave up on is shown with the failure, not with the Progressing of the retry under way', () => {
    const conditions = [
      cond('Ready', 'Unknown', 'Progressing', "Running 'upgrade' action with timeout of 5m0s"),
      cond('Released', 'False', 'UpgradeFailed', HELM),
    ];
    const stored = { configDigest: 'sha256:d1', chartVersion: '0.1.0', status: 'deployed' };
    const key = { name: 'glance', namespace: 'openstack' };
    expect(releaseStatus(key, release({ conditions, stored, total: 2 }))).toMatchObject({
      state: 'failed',
      ready: null,
      reason: 'UpgradeFailed',
      message: HELM,
    });
    // Still pending (the first attempt): Ready's own words.
    expect(releaseStatus(key, release({ conditions, stored }))).toMatchObject({
      state: 'pending',
      reason: 'Progressing',
      message: "Running 'upgrade' action with timeout of 5m0s",
    });
    expect(releaseStatus(key, undefined)).toEqual({ ...key, ready: null, state: 'absent' });
  });

  it('the next attempt running (Ready=Unknown) still says which it is', () => {
    const conditions = [
      cond('Ready', 'Unknown', 'Progressing', "Running 'upgrade' action with timeout of 5m0s"),
      cond('Released', 'False', 'UpgradeFailed', HELM),
    ];
    expect(readiness(release({ conditions, retries: 3, failures: 1 }))).toMatchObject({
      state: 'pending',
      reason: 'Progressing',
      attempt: { number: 2, of: 4 },
    });
  });

  it('unlimited retries (negative) never exhaust', () => {
    expect(readiness(release({ conditions: failedUpgrade, retries: -1, failures: 40 }))).toMatchObject({ state: 'pending', attempt: { number: 41 } });
    expect(describeAttempt('glance', { action: 'upgrade', number: 41, last: 'x' })).toBe('upgrading glance: attempt 41 (retries unlimited), last: x');
  });

  it('retries used up is failed, before Flux marks it Stalled', () => {
    expect(readiness(release({ conditions: rolledBack, retries: 3, failures: 4 }))).toEqual({
      state: 'failed',
      reason: 'UpgradeFailed',
      message: `${HELM}; failed 4 time(s), remediation retries: 3`,
    });
    // retries: 0 (the default): the first counted failure is the last.
    expect(readiness(release({ conditions: failedUpgrade, failures: 1 })).state).toBe('failed');
  });

  it("Stalled RetriesExceeded is failed, with Helm's message and why Flux stopped", () => {
    const conditions = [...failedUpgrade, cond('Stalled', 'True', 'RetriesExceeded', 'Failed to upgrade after 4 attempt(s)')];
    expect(readiness(release({ conditions, retries: 3, failures: 4 }))).toEqual({
      state: 'failed',
      reason: 'UpgradeFailed',
      message: `${HELM}; Flux gave up: Failed to upgrade after 4 attempt(s) (RetriesExceeded)`,
    });
    // Stalled for another reason than a Helm failure (a terminal error): its own reason.
    expect(readiness(release({ conditions: [cond('Ready', 'False', 'ReconcileError', 'x'), cond('Stalled', 'True', 'AccessDenied', 'no access')] }))).toEqual({
      state: 'failed',
      reason: 'AccessDenied',
      message: 'Flux gave up: no access (AccessDenied)',
    });
  });

  it('a failure before Helm wrote a release (render, schema) is final: no counter moved, history has no release of this digest', () => {
    const render = [
      cond('Ready', 'False', 'UpgradeFailed', 'Helm upgrade failed: template: glance/templates/x.yaml: fail'),
      cond('Released', 'False', 'UpgradeFailed', 'Helm upgrade failed: template: …'),
    ];
    expect(readiness(release({ conditions: render, retries: 3, failures: 0, stored: { configDigest: 'sha256:d1', chartVersion: '0.1.0' } }))).toMatchObject({
      state: 'failed',
      reason: 'UpgradeFailed',
    });
    // A counted failure earlier in this generation does not make the render failure of a new chart an attempt.
    expect(readiness(release({ conditions: render, retries: 3, failures: 1, stored: { configDigest: 'sha256:d2', chartVersion: '0.1.0' } })).state).toBe(
      'failed',
    );
    expect(readiness(release({ conditions: render, retries: 3, failures: 1, stored: { configDigest: 'sha256:d1', chartVersion: '0.1.1' } })).state).toBe(
      'failed',
    );
  });

  it.each(['ValuesError', 'InitFailed', 'RollbackFailed', 'UninstallFailed'])('Ready=False %s is final', (reason) => {
    expect(readiness(release({ conditions: [cond('Ready', 'False', reason, 'no')], retries: 3 }))).toEqual({ state: 'failed', reason, message: 'no' });
  });

  it.each(['DependencyNotReady', 'ArtifactFailed', 'SourceNotReady', 'ReconcileError', 'StateError', 'Progressing'])(
    'Ready=False %s is waited through',
    (reason) => {
      expect(readiness(release({ conditions: [cond('Ready', 'False', reason, 'later')] }))).toEqual({ state: 'pending', reason, message: 'later' });
    },
  );

  it('a Stalled left from an earlier attempt is no verdict on a reconcile waiting for a dependency or its source', () => {
    const stale = cond('Stalled', 'True', 'RetriesExceeded', 'Failed to upgrade after 4 attempt(s)');
    expect(readiness(release({ conditions: [cond('Ready', 'False', 'ArtifactFailed', 'chart not fetched yet'), stale] })).state).toBe('pending');
    expect(readiness(release({ conditions: [cond('Ready', 'False', 'DependencyNotReady', 'dependency not ready'), stale] })).state).toBe('pending');
  });

  it('TestFailed counts against the action tests ran after', () => {
    const conditions = [cond('Ready', 'False', 'TestFailed', 'test glance-test failed'), cond('TestSuccess', 'False', 'TestFailed', 'test glance-test failed')];
    expect(readiness(release({ conditions, action: 'install', retries: 2, failures: 1 }))).toMatchObject({
      state: 'pending',
      attempt: { action: 'install', number: 2, of: 3 },
    });
    expect(readiness(release({ conditions, action: 'install', retries: 2, failures: 3 })).state).toBe('failed');
  });

  it("a verdict of an earlier request is no verdict: pending until this apply's token is handled", () => {
    expect(readiness(release({ conditions: failedUpgrade, failures: 1, handled: 'earlier' }), TOKEN).state).toBe('pending');
    expect(readiness(release({ conditions: [cond('Ready', 'True', 'UpgradeSucceeded')], handled: 'earlier' }), TOKEN).state).toBe('pending');
    expect(readiness(release({ conditions: [cond('Ready', 'True', 'UpgradeSucceeded')] }), TOKEN).state).toBe('ready');
  });

  it('a suspended release fails an apply at once, with the flux resume command', () => {
    expect(readiness(release({ conditions: [cond('Ready', 'True', 'UpgradeSucceeded')], suspend: true }), TOKEN)).toMatchObject({
      state: 'failed',
      reason: 'Suspended',
      message: expect.stringContaining('flux resume helmrelease glance -n openstack'),
    });
  });
});
