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
import { mapConcurrently, PriorityWork } from '../concurrency/index.js';
import { culpritsOf, describeOrigin, type ReleaseValues } from '../values/index.js';
import { formatPath } from '../diagnostics/index.js';
import { AppStateError, ObjectTooLargeError, PayloadIntegrityError, ReleaseFailedError, PhaseUsageError } from './errors.js';
import { holdPhases, runStagedApply, stageApply, withVersions, type StagedApply } from './phases.js';
import { decidedOrRefused, RecordHandle, reasonOf, withAppLock, type LockedRun, type OperationOptions } from './operation.js';
import { planApply, requireApplyMode, UnknownApplyModeError, type ApplyPlan } from './plan.js';
import { completion, type AppRecord, type AppState, type OperationName, type Progress, type RecordedBundle } from './record.js';
import { deleteRelease, removalOrder, waitForReleases, type ReleaseKey } from './releases.js';
import { describeAttempt } from './readiness.js';
import { criticalPathMs, releaseTimeMs, WriteSchedule, type ScheduledRelease } from './schedule.js';
import type { HelmReleaseSpec } from '../flux/index.js';
import { isHelmRelease, renderApplySet, type ApplySet } from './render.js';
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

/**
 * The apply itself, without the state bookkeeping: the version loaded, then
 * the steps of BundleApply in order. Returns how far it went: every
 * release Ready (`applied`), written and not waited for (`submitted`), or
 * stopped before a held update phase (`held`).
 */
export async function applyBundle(
  run: LockedRun,
  handle: RecordHandle,
  bundle: RecordedBundle,
  options: ApplyOptions & { readonly operation: OperationName },
): Promise<'applied' | 'submitted' | 'held'> {
  const started = Date.now();
  const loaded = await loadVersion(run.cluster, bundle, handle.record.name, {
    events: run.events,
    signal: run.signal,
    userOverrides: handle.record.userOverrides,
    ...(handle.record.versions ? { versions: handle.record.versions } : {}),
    ...(options.mode ? { applyMode: options.mode } : {}),
  });
  try {
    const apply = new BundleApply(run, handle, bundle, options, loaded, started);
    await apply.prepare();
    const rendered = await apply.render();
    const staged = await apply.writeAllButReleases(rendered);
    if (options.wait === false) {
      await apply.submitReleases(rendered);
      return 'submitted';
    }
    if ((await apply.deliverReleases(rendered, staged)) === 'held') return 'held';
    await apply.runPostHooks();
    await apply.removeReleasesLeftOut(rendered.plan);
    return 'applied';
  } finally {
    await loaded.dispose();
  }
}

/** What an apply computed before writing anything: the plan, each release's values, the objects, and the token they carry. */
interface RenderedApply {
  readonly plan: ApplyPlan;
  readonly values: ReadonlyMap<string, ReleaseValues>;
  readonly set: ApplySet;
  readonly token: string;
}

/** One apply of a loaded version, step by step (applyBundle runs them in order). */
class BundleApply {
  /** An update or a recovery applies a version like any apply: its own hooks run around the apply hooks. */
  private readonly stages: readonly ('update' | 'recover' | 'apply')[];
  private readonly cluster: Cluster;
  /** Sources and the releases' values, written before the HelmReleases that need them (set by writeAllButReleases). */
  private prerequisites: ReleasePrerequisites | undefined;

  constructor(
    private readonly run: LockedRun,
    private readonly handle: RecordHandle,
    private readonly bundle: RecordedBundle,
    private readonly options: ApplyOptions & { readonly operation: OperationName },
    private readonly loaded: LoadedVersion,
    /** When the apply began, for the elapsed time progress reports. */
    private readonly started: number,
  ) {
    this.cluster = run.cluster;
    this.stages = options.operation === 'update' || options.operation === 'recover' ? [options.operation, 'apply'] : ['apply'];
  }

  private step(message: string): void {
    this.run.events({ type: 'step', message });
  }

  /** Namespaces made, the mode and held phases checked, check hooks and pre hooks run (a check may refuse). */
  async prepare(): Promise<void> {
    const { app } = this.loaded;
    // Plugins keep passwords and records in the app's namespaces: they exist before any hook runs.
    for (const namespace of new Set([this.loaded.namespace, ...app.releases.map((r) => r.namespace)])) await this.cluster.objects.ensureNamespace(namespace);
    requireApplyMode(this.loaded.host, this.options.mode);
    if (this.options.hold && this.options.hold.length > 0) await holdPhases(this.handle, app.updatePhases, this.options.hold);
    this.step(`running ${this.stages.join(' and ')} checks and pre hooks`);
    for (const operation of this.stages) await this.loaded.host.runStage({ operation, timing: 'pre' });
  }

  /** The plan, each planned release's values and the objects to write; the releases that may now exist recorded first. */
  async render(): Promise<RenderedApply> {
    const { app } = this.loaded;
    const plan = await planApply(this.loaded.host, { ...(this.options.mode ? { mode: this.options.mode } : {}), deployed: this.handle.record.deployed });
    this.step(`computing the overrides of ${plan.releases.length} release(s)${plan.mode !== 'normal' ? ` (mode ${plan.mode})` : ''}`);
    const values = await computeValues(this.loaded, plan);
    const token = new Date().toISOString();
    const set = await renderApplySet({
      appName: this.handle.record.name,
      manifests: this.loaded.manifests,
      releases: app.releases,
      plan,
      values,
      repository: this.bundle.repository,
      token,
      payloadDigest: this.bundle.payloadDigests?.archive,
      notes: (message) => this.run.events({ type: 'debug', message }),
      annotations: new Map(app.releases.map((r) => [r.name, app.serviceDefaultAnnotations(r.chart)])),
    });
    // Recorded before anything is written: a run killed after this knows which releases may exist.
    await this.handle.update((r) => ({
      ...r,
      deployed: union(
        r.deployed,
        plan.releases.map((p) => p.name),
      ),
      ...(this.options.mode ? { mode: this.options.mode } : {}),
    }));
    return { plan, values, set, token };
  }

  /**
   * Namespaces, then sources; each release's values (the overrides Secrets
   * no update phase owns) go just before it (writeReleases): a HelmRelease
   * never reconciles against a source or values not written yet. Returns
   * the staged apply when this one changes images of releases in the
   * cluster (phases.ts).
   */
  async writeAllButReleases({ plan, values, set }: RenderedApply): Promise<StagedApply | undefined> {
    this.step(`server-side apply (field manager ${FIELD_MANAGER}) of ${set.namespaces.length + set.objects.length} objects`);
    await this.cluster.objects.apply(set.namespaces);
    const staged = await stageApply(
      this.cluster.objects,
      this.loaded.app,
      plan.releases.map((r) => r.name),
      set.objects,
      values,
    );
    if (staged && this.options.wait === false)
      throw new PhaseUsageError(
        `this apply changes images of releases in the cluster: it runs in update phases, each waited on before the next (docs/versions.md); run it without --no-wait`,
      );
    this.prerequisites = releasePrerequisites(
      (objects) => this.cluster.objects.apply(objects, { force: true }),
      (staged?.shared ?? set.objects).filter((o) => !isHelmRelease(o)),
      set.objects.filter(isHelmRelease),
    );
    await this.prerequisites.writeShared();
    return staged;
  }

  /** `--no-wait`: the HelmReleases written wave by wave (nobody waits to write dependants later, so Flux's generation check holds a spec change). */
  async submitReleases({ set }: RenderedApply): Promise<void> {
    for (const wave of WriteSchedule.waves(scheduledReleases(set.objects.filter(isHelmRelease)))) await this.writeReleases(wave);
  }

  private async writeReleases(batch: readonly ScheduledRelease<KubeObject>[]): Promise<void> {
    if (batch.length === 0) return;
    const objects = batch.map((r) => r.object);
    await this.prerequisites?.writeValuesOf(objects);
    await this.cluster.objects.apply(objects, { force: true });
  }

  /** The HelmReleases written and waited Ready: phase by phase for a staged apply (which may stop at a held phase), else all at once. */
  async deliverReleases(rendered: RenderedApply, staged: StagedApply | undefined): Promise<'applied' | 'held'> {
    const progress = new ApplyProgress(this.run, this.handle, this.bundle, rendered.plan, staged, this.started);
    try {
      if (!staged) {
        await this.deliver(rendered, progress, rendered.set.objects.filter(isHelmRelease), rendered.token);
        return 'applied';
      }
      const outcome = await runStagedApply(staged, {
        cluster: this.cluster.objects,
        handle: this.handle,
        events: this.run.events,
        skipped: (releases) => progress.skipped(releases),
        deliver: async (secrets, helmReleases, token) => {
          if (secrets.length > 0) await this.cluster.objects.apply(secrets, { force: true });
          await this.deliver(rendered, progress, helmReleases, token);
        },
      });
      if (outcome === 'held') return 'held';
      // Every phase ran or had nothing to change: no update phase is under way any more (a recovery's included).
      await this.handle.update((r) => withVersions(r, ({ phase: _phase, held: _held, heldOperation: _heldOperation, ...v }) => v));
      return 'applied';
    } finally {
      await progress.saved();
    }
  }

  /** Writes the HelmReleases, each once what it depends on is Ready for this request (schedule.ts), and waits until all are Ready. */
  private async deliver({ plan, values }: RenderedApply, progress: ApplyProgress, helmReleases: readonly KubeObject[], token: string): Promise<void> {
    const scheduled = scheduledReleases(helmReleases);
    const schedule = new WriteSchedule(scheduled);
    const writtenAt = new Map<string, number>();
    const timeOf = new Map(scheduled.map((r) => [r.key, Math.max(releaseTimeMs(r.spec, 'install'), releaseTimeMs(r.spec, 'upgrade'))]));
    const writing = new AbortController();
    // Dependants are written as they fall due, the most urgent of all due first, a few at once.
    const dueWrites = new PriorityWork<ScheduledRelease<KubeObject>>(
      WRITES_AT_ONCE,
      schedule.byUrgency,
      async (release) => {
        await this.writeReleases([release]);
        writtenAt.set(release.key, Date.now());
      },
      (error) => writing.abort(error),
    );
    const first = schedule.first();
    await this.writeReleases(first);
    for (const r of first) writtenAt.set(r.key, Date.now());
    // The other releases' values are written while the first install; each dependant's write waits for its own.
    this.prerequisites?.writeAllValues().catch(() => undefined);
    const releases = helmReleases.map((o) => ({ name: o.metadata.name, namespace: o.metadata.namespace ?? this.loaded.namespace }));
    progress.waitingFor(releases.map((r) => r.name));
    // Status hooks run one at a time, in the order releases become Ready; the first failure fails the apply.
    let statusHooks: Promise<unknown> = Promise.resolve();
    try {
      await waitForReleases(this.cluster.objects, releases, {
        appName: this.handle.record.name,
        token,
        timeoutMs: this.options.timeoutMs ?? criticalPathMs(scheduled),
        signal: AbortSignal.any([this.run.signal, writing.signal]),
        writtenAt: (release) => writtenAt.get(`${release.namespace}/${release.name}`),
        releaseTimeMs: (release) => timeOf.get(`${release.namespace}/${release.name}`) ?? 0,
        onAttempt: (release, attempt) => this.run.events({ type: 'warning', message: describeAttempt(release.name, attempt) }),
        onWaiting: (release) => progress.current(release?.name),
        onReady: (release) => {
          dueWrites.add(schedule.markReady(`${release.namespace}/${release.name}`));
          progress.releaseReady(release.name);
          statusHooks = statusHooks.then(() => this.loaded.host.runStatus(release.name));
        },
      });
      await statusHooks;
    } catch (error) {
      statusHooks.catch(() => undefined);
      if (writing.signal.aborted) throw writing.signal.reason;
      throw explainFailure(error, this.loaded, plan, values);
    }
  }

  async runPostHooks(): Promise<void> {
    this.step(`running ${this.stages.join(' and ')} post hooks`);
    for (const operation of [...this.stages].reverse()) await this.loaded.host.runStage({ operation, timing: 'post' });
  }

  /** Releases the plan no longer has, deleted dependants first, each waited on until Flux has uninstalled it. */
  async removeReleasesLeftOut(plan: ApplyPlan): Promise<void> {
    if (plan.removed.length === 0) return;
    // An update removes releases of the version it leaves: their namespace and dependsOn are recorded there.
    const recorded = new Map([...(this.handle.record.previous?.releases ?? []), ...this.handle.record.bundle.releases].map((r) => [r.name, r]));
    const gone = removalOrder(plan.removed.map((name) => recorded.get(name) ?? { name, namespace: this.loaded.namespace, dependsOn: [] }));
    for (const release of gone) {
      this.step(`removing ${release.name}: the plan no longer has it`);
      await deleteRelease(this.cluster.objects, release as ReleaseKey, {
        timeoutMs: this.options.timeoutMs ?? DEFAULT_RELEASE_WAIT_MS,
        signal: this.run.signal,
      });
      await this.handle.update((r) => ({ ...r, deployed: r.deployed.filter((n) => n !== release.name) }));
    }
  }
}

/**
 * How far an apply's wait got: the plan's releases Ready (a staged apply
 * counts those no phase writes from the start, and those of a skipped phase
 * when it is skipped), reported as events and saved into the record at most
 * once a second, and once at the end.
 */
class ApplyProgress {
  private readonly readyNames: Set<string>;
  private readonly total: number;
  private waitedOn: string | undefined;
  private readonly saver: { touch(): void; flush(): Promise<void> };

  constructor(
    private readonly run: LockedRun,
    handle: RecordHandle,
    private readonly bundle: RecordedBundle,
    plan: ApplyPlan,
    staged: StagedApply | undefined,
    private readonly started: number,
  ) {
    this.total = plan.releases.length;
    const phased = new Set(staged?.phases.flatMap((p) => p.releases) ?? []);
    this.readyNames = new Set<string>(staged ? plan.releases.map((r) => r.name).filter((name) => !phased.has(name)) : []);
    this.saver = progressSaver(handle, () => this.now());
  }

  private now(): Progress {
    return completion(this.readyNames.size, this.total, this.bundle.applyProgressAdjust, this.waitedOn);
  }

  private report(): void {
    this.run.events({ type: 'progress', progress: this.now(), elapsedMs: Date.now() - this.started });
  }

  /** These releases are written and waited on (again): not ready until they say so. */
  waitingFor(releases: readonly string[]): void {
    for (const name of releases) this.readyNames.delete(name);
    this.report();
  }

  current(release: string | undefined): void {
    this.waitedOn = release;
    this.report();
  }

  releaseReady(release: string): void {
    this.readyNames.add(release);
    this.run.events({ type: 'release-ready', release, elapsedMs: Date.now() - this.started });
    this.report();
    this.saver.touch();
  }

  skipped(releases: readonly string[]): void {
    for (const name of releases) this.readyNames.add(name);
    this.report();
  }

  saved(): Promise<void> {
    return this.saver.flush();
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

/** HelmRelease writes in flight at once while waiting (the first ones go in one batch): few, so that a release falling due waits behind few writes sent before it. */
const WRITES_AT_ONCE = 4;

const SOURCE_KINDS = new Set(['HelmRepository', 'OCIRepository', 'GitRepository', 'Bucket', 'HelmChart']);

interface ReleasePrerequisites {
  /** Sources, then the objects no release reads its values from. */
  writeShared(): Promise<void>;
  /** The objects these HelmReleases read their values from, each written once. */
  writeValuesOf(releases: readonly KubeObject[]): Promise<void>;
  /** Every release's values not written yet. */
  writeAllValues(): Promise<void>;
}

/**
 * What must be in the cluster before a HelmRelease is written: every source,
 * and the objects it reads its values from (`valuesFrom`). Shared objects
 * (sources, then anything no release reads) are written first; a release's
 * values just before it, each object once: the first releases do not wait
 * for the values of all the others.
 */
function releasePrerequisites(
  apply: (objects: readonly KubeObject[]) => Promise<unknown>,
  objects: readonly KubeObject[],
  helmReleases: readonly KubeObject[],
): ReleasePrerequisites {
  const keyOf = (kind: string, namespace: string | undefined, name: string) => `${kind}/${namespace ?? ''}/${name}`;
  const byKey = new Map(objects.map((o) => [keyOf(o.kind, o.metadata.namespace, o.metadata.name), o]));
  const valuesOf = (release: KubeObject): KubeObject[] =>
    ((release.spec as HelmReleaseSpec | undefined)?.valuesFrom ?? []).flatMap((ref) => byKey.get(keyOf(ref.kind, release.metadata.namespace, ref.name)) ?? []);
  const values = new Set(helmReleases.flatMap(valuesOf));
  const written = new Map<KubeObject, Promise<unknown>>();
  const write = async (batch: readonly KubeObject[]): Promise<void> => {
    const missing = batch.filter((o) => !written.has(o));
    if (missing.length > 0) {
      const writing = apply(missing);
      for (const o of missing) written.set(o, writing);
    }
    await Promise.all(batch.map((o) => written.get(o)));
  };
  return {
    async writeShared() {
      const shared = objects.filter((o) => !values.has(o));
      await write(shared.filter((o) => SOURCE_KINDS.has(o.kind)));
      await write(shared.filter((o) => !SOURCE_KINDS.has(o.kind)));
    },
    writeValuesOf: (releases) => write(releases.flatMap(valuesOf)),
    writeAllValues: () => write([...values]),
  };
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
