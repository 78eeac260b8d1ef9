/**
 * The staged update (docs/versions.md, "Staged update"): when an apply
 * would change the image of a release already in the cluster and the app
 * declares `updatePhases`, its releases are written phase by phase, each
 * phase waited on until every release of it is Ready for it (readiness.ts,
 * as for any apply) before the next is written.
 *
 * A release is written in its first phase with all its changes except the
 * image fields of later phases, which keep what the cluster runs now (read
 * from the release's system overrides Secret); a later phase naming one of
 * those fields writes it again. A release no phase up to now has reached is
 * not written at all. A phase whose objects are all in the cluster already,
 * and Ready, has nothing to change and is skipped: so a run killed anywhere
 * resumes at the phase it was in, and the phases of a recovery that changed
 * nothing are not touched either.
 */
import { assignPhases, type App, type Release, type UpdatePhase } from '../app/index.js';
import { dumpYaml, parseYamlValue } from '../yaml/index.js';
import { HELM_RELEASE_API, OVERRIDES_KINDS, overridesValuesKey } from '../flux/index.js';
import type { KubeObject } from '../kube/index.js';
import type { ObjectStore } from './cluster.js';
import { unknownName } from '../names/index.js';
import { imageReferenceProblem, type AppVersions } from '../catalog/index.js';
import type { ReleaseValues } from '../values/index.js';
import { LifecycleError, PhaseFailedError, PhaseUsageError, ReleaseFailedError } from './errors.js';
import type { EventSink } from './events.js';
import type { RecordHandle } from './operation.js';
import type { AppRecord } from './record.js';
import { readiness, REQUESTED_AT, RESET_AT, type HelmReleaseView } from './readiness.js';
import { isHelmRelease } from './render.js';

/** One phase as it runs: the objects it writes (overrides Secrets, then HelmReleases) and the releases it waits for. */
interface PhaseWrite {
  readonly name: string;
  readonly releases: readonly string[];
  readonly secrets: readonly KubeObject[];
  readonly helmReleases: readonly KubeObject[];
}

/** A staged apply: the objects that belong to no release (written first) and the phases in order. */
export interface StagedApply {
  readonly shared: readonly KubeObject[];
  readonly phases: readonly PhaseWrite[];
}

/** A phase that changes nothing (every object as the cluster has it, every release Ready) — or why it must run. */
type PhaseCheck = { readonly skip: true; readonly why: string } | { readonly skip: false };

/** The image value paths of one release: image field → the paths in its chart's values (overrides/versions/images.yaml). */
/** Where an image field lands in a release's values: one path, or (a split landing) its repository's, tag's and digest's; `key` names it. */
interface ImageSlot {
  readonly field: string;
  readonly key: string;
  readonly paths: readonly (readonly string[])[];
}

function imagePaths(app: Pick<App, 'catalog'>, release: Pick<Release, 'chart'>): ImageSlot[] {
  return [...app.catalog.targets].flatMap(([field, targets]) =>
    targets
      .filter((t) => t.chart === release.chart)
      .map((t) => ({ field, key: t.path.join('.'), paths: t.split ? [t.path, t.split.tag, ...(t.split.digest ? [t.split.digest] : [])] : [t.path] })),
  );
}

/** The reference the parts at a slot make: the one value, or repository:tag[@digest]. */
function slotReference(parts: readonly unknown[]): unknown {
  if (parts.length === 1) return parts[0];
  const [repository, tag, digest] = parts;
  if (typeof repository !== 'string' || (tag !== undefined && typeof tag !== 'string') || (digest !== undefined && typeof digest !== 'string'))
    return undefined;
  return `${repository}${tag ? `:${tag}` : ''}${digest ? `@${digest}` : ''}`;
}

function valueAt(tree: unknown, path: readonly string[]): unknown {
  let at = tree;
  for (const key of path) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** A copy of `tree` with `value` at `path` (maps copied along the path, the rest shared). */
function withValueAt(tree: unknown, path: readonly string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [key, ...rest] = path as [string, ...string[]];
  const map = tree !== null && typeof tree === 'object' && !Array.isArray(tree) ? (tree as Record<string, unknown>) : {};
  return { ...map, [key]: withValueAt(map[key], rest, value) };
}

/** Whether `actual` holds everything `wanted` says (maps: every key of wanted; lists and scalars: equal). */
function contains(actual: unknown, wanted: unknown): boolean {
  if (wanted === null || typeof wanted !== 'object') return actual === wanted;
  if (Array.isArray(wanted)) return Array.isArray(actual) && actual.length === wanted.length && wanted.every((w, i) => contains(actual[i], w));
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  return Object.entries(wanted).every(([k, w]) => contains((actual as Record<string, unknown>)[k], w));
}

const secretData = (object: KubeObject): Record<string, string> => (object as { data?: Record<string, string> }).data ?? {};

/** The Secret of the set holding a release's values of `kind`. */
function overridesSecretOf(objects: readonly KubeObject[], release: string, kind: (typeof OVERRIDES_KINDS)[number]): KubeObject | undefined {
  const key = overridesValuesKey(release, kind);
  return objects.find((o) => o.kind === 'Secret' && key in secretData(o));
}

/**
 * The image references the cluster's system overrides of a release hold
 * now, by value path (undefined: the release has none there yet). What is
 * read back is only ever written back as it was, and only when it is an
 * image reference.
 */
async function deployedImages(
  cluster: ObjectStore,
  release: Release,
  secret: KubeObject | undefined,
  paths: readonly ImageSlot[],
): Promise<Map<string, readonly unknown[]>> {
  const found = new Map<string, readonly unknown[]>();
  if (!secret || paths.length === 0) return found;
  const key = overridesValuesKey(release.name, 'system');
  const live = await cluster.read({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: secret.metadata.name, ...(secret.metadata.namespace ? { namespace: secret.metadata.namespace } : {}) },
  });
  const data = live && secretData(live)[key];
  if (!data) return found;
  const where = `Secret ${secret.metadata.namespace ?? ''}/${secret.metadata.name} key ${key}`;
  const values = parseYamlValue(Buffer.from(data, 'base64').toString('utf8'), where);
  for (const slot of paths) {
    const parts = slot.paths.map((path) => valueAt(values, path));
    if (parts[0] === undefined) continue;
    const value = slotReference(parts);
    const problem = typeof value === 'string' ? imageReferenceProblem(value) : 'not a string';
    if (problem)
      throw new LifecycleError(
        `${where}: the image at ${slot.paths.map((path) => path.join('.')).join(' + ')} the cluster runs now is not an image reference (${problem}); it was changed outside flotilla`,
      );
    found.set(slot.key, parts);
  }
  return found;
}

/**
 * The staged apply of a rendered set, or undefined when the apply is not
 * staged: the app declares no phases, or no release in the cluster would
 * get another image.
 */
export async function stageApply(
  cluster: ObjectStore,
  app: Pick<App, 'catalog' | 'releases' | 'updatePhases'>,
  planned: readonly string[],
  objects: readonly KubeObject[],
  values: ReadonlyMap<string, ReleaseValues>,
): Promise<StagedApply | undefined> {
  const phases: readonly UpdatePhase[] = app.updatePhases;
  if (phases.length === 0) return undefined;
  const assignment = assignPhases(phases);
  const byName = new Map(app.releases.map((r) => [r.name, r]));
  const releases = planned.map((name) => byName.get(name)).filter((r): r is Release => r !== undefined);
  const owned = new Set<KubeObject>();
  const perRelease = await Promise.all(
    releases.map(async (release) => {
      const paths = imagePaths(app, release);
      const system = overridesSecretOf(objects, release.name, 'system');
      const secrets = OVERRIDES_KINDS.map((kind) => overridesSecretOf(objects, release.name, kind)).filter((s): s is KubeObject => s !== undefined);
      const helmRelease = objects.find(
        (o) => isHelmRelease(o) && o.metadata.name === release.name && (o.metadata.namespace ?? release.namespace) === release.namespace,
      );
      for (const object of [...secrets, ...(helmRelease ? [helmRelease] : [])]) owned.add(object);
      const deployed = await deployedImages(cluster, release, system, paths);
      const wanted = values.get(release.name)?.systemOverrides;
      const changes = paths.some(
        (slot) => deployed.has(slot.key) && slotReference(deployed.get(slot.key) ?? []) !== slotReference(slot.paths.map((path) => valueAt(wanted, path))),
      );
      return { release, paths, system, secrets, helmRelease, deployed, wanted, changes };
    }),
  );
  if (!perRelease.some((r) => r.changes)) return undefined;

  const staged = phases.map((phase, index): PhaseWrite => {
    // Its own phase, or one changing an image field of it (a release is first written in the earliest of those).
    const written = perRelease.filter(
      ({ release, paths }) => assignment.home(release.name) === index || paths.some(({ field }) => assignment.imagePhase(release.name, field) === index),
    );
    return {
      name: phase.name,
      releases: written.map((r) => r.release.name),
      secrets: written.flatMap(({ release, paths, system, secrets, deployed, wanted }) => {
        // The image fields of later phases keep what the cluster runs now.
        let held: unknown = wanted;
        for (const { field, key, paths: parts } of paths) {
          const now = deployed.get(key);
          if (now !== undefined && assignment.imagePhase(release.name, field) > index)
            parts.forEach((path, i) => {
              if (now[i] !== undefined) held = withValueAt(held, path, now[i]);
            });
        }
        return secrets.map((secret) => (secret === system && held !== wanted ? withSystemOverrides(secret, release.name, held) : secret));
      }),
      helmReleases: written.flatMap((r) => (r.helmRelease ? [r.helmRelease] : [])),
    };
  });
  return { shared: objects.filter((o) => !owned.has(o)), phases: staged };
}

function withSystemOverrides(secret: KubeObject, release: string, values: unknown): KubeObject {
  const data = { ...secretData(secret), [overridesValuesKey(release, 'system')]: Buffer.from(dumpYaml(values)).toString('base64') };
  return { ...secret, data } as KubeObject;
}

/** The phase's HelmReleases with its own reconcile request: a release written in two phases is waited on for each. */
function stampPhase(objects: readonly KubeObject[], token: string): KubeObject[] {
  return objects.map((o) => ({ ...o, metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, [REQUESTED_AT]: token, [RESET_AT]: token } } }));
}

/**
 * Whether a phase has nothing to change: no release of it enabled, or every
 * object of it as the cluster has it and every release Ready for the last
 * request written to it. The phase a killed run was in (`interrupted`) is
 * never skipped for its objects: the run may have written its Secrets and
 * not yet the reconcile request that makes Flux read them.
 */
async function checkPhase(cluster: ObjectStore, phase: PhaseWrite, interrupted: boolean): Promise<PhaseCheck> {
  if (phase.releases.length === 0) return { skip: true, why: 'none of its releases is enabled' };
  if (interrupted) return { skip: false };
  for (const secret of phase.secrets) {
    const live = await cluster.read(secret);
    if (!live || !contains(secretData(live), secretData(secret))) return { skip: false };
  }
  for (const wanted of phase.helmReleases) {
    const live = await cluster.read<KubeObject & HelmReleaseView>({ ...wanted, apiVersion: HELM_RELEASE_API });
    if (
      !live ||
      !contains((live as { spec?: unknown }).spec, (wanted as { spec?: unknown }).spec) ||
      readiness(live, live.metadata.annotations?.[REQUESTED_AT]).state !== 'ready'
    )
      return { skip: false };
  }
  return { skip: true, why: 'nothing to change: its releases run what it would write, Ready' };
}

export interface StagedRun {
  readonly cluster: ObjectStore;
  readonly handle: RecordHandle;
  readonly events: EventSink;
  /** Writes a phase's overrides Secrets and HelmReleases (stamped with `token`) and waits until each release is Ready for it. */
  deliver(secrets: readonly KubeObject[], helmReleases: readonly KubeObject[], token: string): Promise<void>;
  /** A phase was skipped: its releases run what it would write. */
  skipped(releases: readonly string[]): void;
}

/**
 * Runs the phases in order: each skipped when it has nothing to change,
 * stopped before when it is held, else written and waited on; the record
 * says which phase is under way (show and `version status` read it).
 * `held`: the run stopped before a held phase that has something to change.
 */
export async function runStagedApply(staged: StagedApply, run: StagedRun): Promise<'applied' | 'held'> {
  const { handle, events } = run;
  const interrupted = handle.record.versions?.phase;
  for (const phase of staged.phases) {
    const check = await checkPhase(run.cluster, phase, phase.name === interrupted);
    if (check.skip) {
      events({ type: 'step', message: `phase ${phase.name}: skipped (${check.why})` });
      run.skipped(phase.releases);
      continue;
    }
    if (handle.record.versions?.holdAt?.includes(phase.name)) {
      await handle.update((r) => withVersions(r, (v) => ({ ...v, phase: phase.name, held: phase.name })));
      events({ type: 'step', message: `phase ${phase.name}: held; release it with flotilla version continue ${handle.record.name} --phase ${phase.name}` });
      return 'held';
    }
    await handle.update((r) => withVersions(r, ({ held: _held, ...v }) => ({ ...v, phase: phase.name })));
    events({ type: 'step', message: `phase ${phase.name}: ${phase.releases.join(', ')}` });
    const token = `${new Date().toISOString()} ${phase.name}`;
    try {
      await run.deliver(phase.secrets, stampPhase(phase.helmReleases, token), token);
    } catch (error) {
      throw error instanceof ReleaseFailedError ? new PhaseFailedError(phase.name, error) : error;
    }
  }
  return 'applied';
}

/** Records `--hold` phases (each one the app declares) for this run and the next ones, until continued. */
export async function holdPhases(handle: RecordHandle, phases: readonly UpdatePhase[], hold: readonly string[]): Promise<void> {
  const names = phases.map((p) => p.name);
  for (const phase of hold) {
    if (!names.includes(phase))
      throw new PhaseUsageError(
        `--hold ${phase}: ${names.length === 0 ? 'the app declares no update phases (updatePhases in fluxcd/releases.yaml)' : unknownName('update phase', phase, names)}`,
      );
  }
  await handle.update((r) => withVersions(r, (v) => ({ ...v, holdAt: [...new Set([...(v.holdAt ?? []), ...hold])] })));
}

/** The record with its version state changed (a record written before the version model has none to change). */
export function withVersions(record: AppRecord, change: (versions: AppVersions) => AppVersions): AppRecord {
  return record.versions ? { ...record, versions: change(record.versions) } : record;
}
