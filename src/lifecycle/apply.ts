/**
 * `flotilla apply APP`: check hooks (may refuse) → pre hooks → system
 * overrides (layers 2–8, plugins in cluster mode) → the kustomize
 * operator's plan → one server-side apply of namespaces, sources, overrides
 * Secrets and HelmReleases → a watch on every HelmRelease until Ready (a
 * failure reported at once, with Flux's reason and message) → status hooks
 * as releases become Ready → post hooks → releases the plan turned off
 * deleted → `applied`. Every step is idempotent: a run killed anywhere is
 * finished by the next.
 */
import type { Release } from '../app/index.js';
import { OperationRefusedError, type ReleaseRef } from '../plugins/index.js';
import { FIELD_MANAGER, type KubeObject } from '../kube/index.js';
import type { Cluster } from './cluster.js';
import { mapConcurrently } from '../concurrency/index.js';
import { culpritsOf, describeOrigin, type ReleaseValues } from '../values/index.js';
import { formatPath } from '../diagnostics/index.js';
import { AppStateError, ObjectTooLargeError, PayloadIntegrityError, ReleaseFailedError, PhaseUsageError } from './errors.js';
import { holdPhases, runStagedApply, stageApply, withVersions } from './phases.js';
import { decidedOrRefused, RecordHandle, reasonOf, withAppLock, type LockedRun, type OperationOptions } from './operation.js';
import { planApply, requireApplyMode, UnknownApplyModeError, type ApplyPlan } from './plan.js';
import { completion, type AppRecord, type AppState, type OperationName, type Progress, type RecordedBundle } from './record.js';
import { deleteRelease, removalOrder, waitForReleases, type ReleaseKey } from './releases.js';
import { describeAttempt } from './readiness.js';
import { criticalPathMs, releaseTimeMs, WriteSchedule, type ScheduledRelease } from './schedule.js';
import type { HelmReleaseSpec } from '../flux/index.js';
import { isHelmRelease, renderApplySet } from './render.js';
import { loadVersion, type LoadedVersion } from './version.js';
import { deployedTarget } from '../catalog/index.js';

/** How long one release may take to be uninstalled, or to finish a Helm action under way before a recovery, unless --timeout says otherwise. */
export const DEFAULT_RELEASE_WAIT_MS = 30 * 60_000;

export interface ApplyOptions extends OperationOptions {
  /** Apply mode offered by the app's kustomize operator; `normal` by default. */
  readonly mode?: string;
  /** How long to wait for all releases to be Ready. */
  readonly timeoutMs?: number;
  /** False: stop after the server-side apply, leaving the app `applying` (a later apply finishes). */
  readonly wait?: boolean;
  /** Update phases to stop before (kept in the record until continued: `flotilla version continue`). */
  readonly hold?: readonly string[];
}

export async function applyApp(cluster: Cluster, appName: string, options: ApplyOptions = {}): Promise<AppRecord> {
  return withAppLock(cluster, appName, 'apply', options, async (run) => {
    await cluster.requireFlux();
    const handle = new RecordHandle(run.records, await run.records.get(appName));
    decidedOrRefused(handle.record, { operation: 'apply' }, run.events);
    return applyWithState(run, handle, handle.record.bundle, { ...options, operation: 'apply', running: 'applying', failed: 'apply-failed' });
  });
}

interface ApplyStates extends ApplyOptions {
  readonly operation: OperationName;
  readonly running: AppState;
  readonly failed: AppState;
}

/** One apply of `bundle` with the record kept up to date: history entry in, state out. */
export async function applyWithState(run: LockedRun, handle: RecordHandle, bundle: RecordedBundle, options: ApplyStates): Promise<AppRecord> {
  const before = handle.record.state;
  await handle.begin(options.operation, options.running, run.lease.holder, bundle.version);
  try {
    const outcome = await applyBundle(run, handle, bundle, options);
    if (outcome === 'submitted') return handle.end(options.running, 'succeeded', 'submitted; not waited for (run apply again to wait)');
    if (outcome === 'held') return await handle.end('applied', 'succeeded', heldReason(handle.record));
    // The progress saved at the end of the wait counts the plan's releases (a mode may apply fewer than the bundle has).
    // Every release was waited Ready with the target's images: the target is deployed.
    const versions = handle.record.versions;
    return await handle.end('applied', 'succeeded', undefined, versions ? { versions: deployedTarget(versions) } : {});
  } catch (error) {
    // A check hook's refusal, a mode the app does not know, an object too large to write, a stored payload changed: nothing was done, the state stays.
    const refused = refusedBeforeChange(error);
    const aborted = run.signal.aborted;
    await handle.end(refused ? before : options.failed, refused ? 'refused' : aborted ? 'aborted' : 'failed', reasonOf(error)).catch(() => undefined);
    throw error;
  }
}

/** A check hook's refusal, a mode the app does not know, an object too large to write, a staged update asked not to wait: all found before the apply writes anything. */
export function refusedBeforeChange(error: unknown): boolean {
  return (
    error instanceof OperationRefusedError ||
    error instanceof UnknownApplyModeError ||
    error instanceof ObjectTooLargeError ||
    error instanceof PayloadIntegrityError ||
    error instanceof PhaseUsageError
  );
}

/** Why a run ended before a held phase, and how to go on. */
export function heldReason(record: AppRecord): string {
  const phase = record.versions?.held ?? '';
  return `held before update phase ${phase}: the phases before it are Ready; go on with flotilla version continue ${record.name} --phase ${phase}`;
}

/** The apply itself, without the state bookkeeping. */
export async function applyBundle(
  run: LockedRun,
  handle: RecordHandle,
  bundle: RecordedBundle,
  options: ApplyOptions & { readonly operation: OperationName },
): Promise<'applied' | 'submitted' | 'held'> {
  const { cluster, events } = run;
  const started = Date.now();
  const step = (message: string) => events({ type: 'step', message });
  const loaded = await loadVersion(cluster, bundle, handle.record.name, {
    events,
    signal: run.signal,
    userOverrides: handle.record.userOverrides,
    ...(handle.record.versions ? { versions: handle.record.versions } : {}),
    ...(options.mode ? { applyMode: options.mode } : {}),
  });
  try {
    // Plugins keep passwords and records in the app's namespaces: they exist before any hook runs.
    for (const namespace of new Set([loaded.namespace, ...loaded.app.releases.map((r) => r.namespace)])) await cluster.objects.ensureNamespace(namespace);
    requireApplyMode(loaded.host, options.mode);
    if (options.hold && options.hold.length > 0) await holdPhases(handle, loaded.app.updatePhases, options.hold);
    // An update or a recovery applies a version like any apply: its own hooks run around the apply hooks.
    const stages = options.operation === 'update' || options.operation === 'recover' ? ([options.operation, 'apply'] as const) : (['apply'] as const);
    step(`running ${stages.join(' and ')} checks and pre hooks`);
    for (const operation of stages) await loaded.host.runStage({ operation, timing: 'pre' });

    const plan = await planApply(loaded.host, { ...(options.mode ? { mode: options.mode } : {}), deployed: handle.record.deployed });
    step(`computing the overrides of ${plan.releases.length} release(s)${plan.mode !== 'normal' ? ` (mode ${plan.mode})` : ''}`);
    const values = await computeValues(loaded, plan);

    const token = new Date().toISOString();
    const annotations = new Map(loaded.app.releases.map((r) => [r.name, loaded.app.serviceDefaultAnnotations(r.chart)]));
    const set = await renderApplySet({
      appName: handle.record.name,
      manifests: loaded.manifests,
      releases: loaded.app.releases,
      plan,
      values,
      repository: bundle.repository,
      token,
      annotations,
    });
    // Recorded before anything is written: a run killed after this knows which releases may exist.
    await handle.update((r) => ({
      ...r,
      deployed: union(
        r.deployed,
        plan.releases.map((p) => p.name),
      ),
      ...(options.mode ? { mode: options.mode } : {}),
    }));
    step(`server-side apply (field manager ${FIELD_MANAGER}) of ${set.namespaces.length + set.objects.length} objects`);
    await cluster.objects.apply(set.namespaces);
    // An apply that changes the image of a release in the cluster, of an app declaring update phases, goes phase by phase (phases.ts).
    const staged = await stageApply(
      cluster.objects,
      loaded.app,
      plan.releases.map((r) => r.name),
      set.objects,
      values,
    );
    if (staged && options.wait === false)
      throw new PhaseUsageError(
        `this apply changes images of releases in the cluster: it runs in update phases, each waited on before the next (docs/versions.md); run it without --no-wait`,
      );
    // Sources first, then values, releases last: a HelmRelease never reconciles against a source or values not written yet.
    for (const group of applyGroups((staged?.shared ?? set.objects).filter((o) => !isHelmRelease(o)))) await cluster.objects.apply(group, { force: true });
    const writeReleases = async (batch: readonly ScheduledRelease<KubeObject>[]) => {
      if (batch.length > 0)
        await cluster.objects.apply(
          batch.map((r) => r.object),
          { force: true },
        );
    };
    if (options.wait === false) {
      // Nobody waits to write dependants later: wave by wave, so Flux's generation check holds a spec change.
      for (const wave of WriteSchedule.waves(scheduledReleases(set.objects.filter(isHelmRelease)))) await writeReleases(wave);
      return 'submitted';
    }
    const total = plan.releases.length;
    // A staged apply counts the releases no phase writes from the start, and those of a skipped phase when it is skipped.
    const phased = new Set(staged?.phases.flatMap((p) => p.releases) ?? []);
    const ready = new Set<string>(staged ? plan.releases.map((r) => r.name).filter((name) => !phased.has(name)) : []);
    let current: string | undefined;
    const progress = (): Progress => completion(ready.size, total, bundle.applyProgressAdjust, current);
    const report = () => events({ type: 'progress', progress: progress(), elapsedMs: Date.now() - started });
    const saver = progressSaver(handle, progress);
    // Status hooks run one at a time, in the order releases become Ready; the first failure fails the apply.
    let statusHooks: Promise<unknown> = Promise.resolve();
    /** Writes the HelmReleases, each once what it depends on is Ready for this request (schedule.ts), and waits until all are Ready. */
    const deliver = async (helmReleases: readonly KubeObject[], token: string): Promise<void> => {
      const scheduled = scheduledReleases(helmReleases);
      const schedule = new WriteSchedule(scheduled);
      const writtenAt = new Map<string, number>();
      const timeOf = new Map(scheduled.map((r) => [r.key, Math.max(releaseTimeMs(r.spec, 'install'), releaseTimeMs(r.spec, 'upgrade'))]));
      const writing = new AbortController();
      let writes: Promise<void> = Promise.resolve();
      const writeWhenDue = (batch: ScheduledRelease<KubeObject>[]) => {
        writes = writes
          .then(async () => {
            await writeReleases(batch);
            for (const r of batch) writtenAt.set(r.key, Date.now());
          })
          .catch((error: unknown) => writing.abort(error));
      };
      writeWhenDue(schedule.first());
      await writes;
      if (writing.signal.aborted) throw writing.signal.reason;
      const releases = helmReleases.map((o) => ({ name: o.metadata.name, namespace: o.metadata.namespace ?? loaded.namespace }));
      for (const release of releases) ready.delete(release.name);
      report();
      try {
        await waitForReleases(cluster.objects, releases, {
          appName: handle.record.name,
          token,
          timeoutMs: options.timeoutMs ?? criticalPathMs(scheduled),
          signal: AbortSignal.any([run.signal, writing.signal]),
          writtenAt: (release) => writtenAt.get(`${release.namespace}/${release.name}`),
          releaseTimeMs: (release) => timeOf.get(`${release.namespace}/${release.name}`) ?? 0,
          onAttempt: (release, attempt) => events({ type: 'warning', message: describeAttempt(release.name, attempt) }),
          onWaiting: (release) => {
            current = release?.name;
            report();
          },
          onReady: (release) => {
            writeWhenDue(schedule.markReady(`${release.namespace}/${release.name}`));
            ready.add(release.name);
            events({ type: 'release-ready', release: release.name, elapsedMs: Date.now() - started });
            report();
            saver.touch();
            statusHooks = statusHooks.then(() => loaded.host.runStatus(release.name));
          },
        });
        await statusHooks;
      } catch (error) {
        statusHooks.catch(() => undefined);
        if (writing.signal.aborted) throw writing.signal.reason;
        throw explainFailure(error, loaded, plan, values);
      }
    };
    try {
      if (staged) {
        const outcome = await runStagedApply(staged, {
          cluster: cluster.objects,
          handle,
          events,
          skipped: (releases) => {
            for (const name of releases) ready.add(name);
            report();
          },
          deliver: async (secrets, helmReleases, token) => {
            if (secrets.length > 0) await cluster.objects.apply(secrets, { force: true });
            await deliver(helmReleases, token);
          },
        });
        if (outcome === 'held') return 'held';
        // Every phase ran or had nothing to change: no update phase is under way any more (a recovery's included).
        await handle.update((r) => withVersions(r, ({ phase: _phase, held: _held, heldOperation: _heldOperation, ...v }) => v));
      } else await deliver(set.objects.filter(isHelmRelease), token);
    } finally {
      await saver.flush();
    }

    step(`running ${stages.join(' and ')} post hooks`);
    for (const operation of [...stages].reverse()) await loaded.host.runStage({ operation, timing: 'post' });

    if (plan.removed.length > 0) {
      // An update removes releases of the version it leaves: their namespace and dependsOn are recorded there.
      const recorded = new Map([...(handle.record.previous?.releases ?? []), ...handle.record.bundle.releases].map((r) => [r.name, r]));
      const gone = removalOrder(plan.removed.map((name) => recorded.get(name) ?? { name, namespace: loaded.namespace, dependsOn: [] }));
      for (const release of gone) {
        step(`removing ${release.name}: the plan no longer has it`);
        await deleteRelease(cluster.objects, release as ReleaseKey, { timeoutMs: options.timeoutMs ?? DEFAULT_RELEASE_WAIT_MS, signal: run.signal });
        await handle.update((r) => ({ ...r, deployed: r.deployed.filter((n) => n !== release.name) }));
      }
    }
    return 'applied';
  } finally {
    await loaded.dispose();
  }
}

async function computeValues(loaded: LoadedVersion, plan: ApplyPlan): Promise<Map<string, ReleaseValues>> {
  const byName = new Map<string, Release>(loaded.app.releases.map((r) => [r.name, r]));
  const computed = await mapConcurrently([...plan.releases], 4, async (ref: ReleaseRef) => {
    const release = byName.get(ref.name);
    if (!release) throw new AppStateError(`release ${ref.name} of the plan is not in the app`);
    return [ref.name, await loaded.values(release)] as const;
  });
  return new Map(computed);
}

/** A failed release's error with the values Helm's message names and the layer that set each (passwords redacted). */
function explainFailure(error: unknown, loaded: LoadedVersion, plan: ApplyPlan, values: ReadonlyMap<string, ReleaseValues>): unknown {
  if (!(error instanceof ReleaseFailedError)) return error;
  const merged = values.get(error.release)?.merged;
  const culprits = merged ? culpritsOf(error.detail, merged) : [];
  if (culprits.length === 0 || !plan.releases.some((r) => r.name === error.release)) return error;
  const lines = culprits.map(
    (leaf) => `  ${formatPath(leaf.path)} = ${JSON.stringify(loaded.host.redact(leaf.value, leaf.path))} set by ${describeOrigin(leaf.origin)}`,
  );
  return new ReleaseFailedError(error.release, error.reason, `${error.detail}\n${lines.join('\n')}`);
}

const SOURCE_KINDS = new Set(['HelmRepository', 'OCIRepository', 'GitRepository', 'Bucket', 'HelmChart']);

/** Sources, then everything else (overrides Secrets): each group applied before the next starts. */
function applyGroups(objects: readonly KubeObject[]): KubeObject[][] {
  const rank = (o: KubeObject) => (SOURCE_KINDS.has(o.kind) ? 0 : 1);
  return [0, 1].map((r) => objects.filter((o) => rank(o) === r)).filter((g) => g.length > 0);
}

/** The HelmReleases as the schedule reads them: `namespace/name` keys, dependsOn the same way. */
function scheduledReleases(objects: readonly KubeObject[]): ScheduledRelease<KubeObject>[] {
  return objects.map((object) => {
    const namespace = object.metadata.namespace ?? '';
    const spec = (object.spec ?? {}) as HelmReleaseSpec;
    return { key: `${namespace}/${object.metadata.name}`, dependsOn: (spec.dependsOn ?? []).map((d) => `${d.namespace ?? namespace}/${d.name}`), spec, object };
  });
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort();
}

/** Writes progress into the record at most once a second while waiting, and once at the end. */
function progressSaver(handle: RecordHandle, progress: () => Progress): { touch(): void; flush(): Promise<void> } {
  let last = 0;
  let writing: Promise<unknown> = Promise.resolve();
  const write = () => {
    last = Date.now();
    writing = writing.then(() => handle.update((r) => ({ ...r, progress: progress() }))).catch(() => undefined);
  };
  return {
    touch() {
      if (Date.now() - last >= 1000) write();
    },
    async flush() {
      write();
      await writing;
    },
  };
}
