/**
 * `flotilla list` and `flotilla show APP`: what the record says (state,
 * version, history) and what Flux says now (each release's Ready condition
 * with its reason and message, read as readiness.ts reads it). While no
 * operation runs, progress is counted from the releases themselves, and
 * show lists what Flux is still doing. Values are never shown here, so no
 * password can be.
 */
import { dependenciesFirst } from '../app/index.js';
import type { Cluster } from './cluster.js';
import { AppRecords, completion, type AppRecord, type AppState, type HistoryEntry, type Progress, type RecordedRelease } from './record.js';
import { releaseStatuses, type ReleaseStatus } from './releases.js';

export interface AppSummary {
  readonly name: string;
  readonly version: string;
  readonly state: AppState;
  /** While an operation runs: what it last saved. Otherwise counted from the releases as Flux reports them now. */
  readonly progress: Progress | null;
  /** Whether an operation is running (its history entry is open). */
  readonly running: boolean;
}

export interface AppView extends AppSummary {
  readonly chartRepository: string;
  readonly mode: string | null;
  /** During an update: the version being left. */
  readonly previousVersion: string | null;
  readonly releases: readonly ReleaseStatus[];
  /** Releases Flux is still working on (or has given up on) while no operation waits for them: after an abort, a `--no-wait` or a failed apply. */
  readonly flux: readonly string[];
  /** The update phase under way or held (docs/versions.md), null when no staged update is. */
  readonly phase: string | null;
  /** The phase the update stopped before, waiting for `flotilla version continue`. */
  readonly held: string | null;
  readonly history: readonly HistoryEntry[];
}

/** An operation runs while its history entry is open (a killed run's entry is closed by the next operation). */
const isRunning = (record: AppRecord): boolean => record.history.at(-1)?.finished === undefined && record.history.length > 0;

/** The releases that count: those the record says are in the cluster, else the bundle's. */
function countedReleases(record: AppRecord): readonly RecordedRelease[] {
  const deployed = new Set(record.deployed);
  const some = record.bundle.releases.filter((r) => deployed.has(r.name));
  return some.length > 0 ? some : record.bundle.releases;
}

/** Progress as the releases say it now: Ready ones counted, the first not Ready (dependencies first) named. */
function progressNow(record: AppRecord, statuses: readonly ReleaseStatus[]): Progress {
  const counted = countedReleases(record);
  const byName = new Map(statuses.map((s) => [s.name, s]));
  const ready = counted.filter((r) => byName.get(r.name)?.state === 'ready').length;
  const waiting = dependenciesFirst(counted).find((r) => byName.get(r.name)?.state !== 'ready');
  return completion(ready, counted.length, record.bundle.applyProgressAdjust, waiting?.name);
}

function fluxDoing(status: ReleaseStatus): string {
  if (status.state === 'failed') return 'Flux gave up';
  if (status.staleFailure)
    return `Flux keeps an earlier failure on Ready, though Helm runs what was applied (an apply, or flux reconcile helmrelease ${status.name} -n ${status.namespace} --force, clears it)`;
  return 'Flux is still reconciling';
}

async function summarize(cluster: Cluster, record: AppRecord): Promise<{ summary: AppSummary; statuses: ReleaseStatus[] }> {
  const statuses = await releaseStatuses(cluster.objects, record.name, record.bundle.releases);
  const running = isRunning(record);
  const progress = running ? (record.progress ?? null) : record.deployed.length > 0 ? progressNow(record, statuses) : (record.progress ?? null);
  return { summary: { name: record.name, version: record.bundle.version, state: record.state, progress, running }, statuses };
}

export async function listApps(cluster: Cluster): Promise<AppSummary[]> {
  const records = await new AppRecords(cluster.records).list();
  return Promise.all(records.map(async (record) => (await summarize(cluster, record)).summary));
}

export async function showApp(cluster: Cluster, appName: string): Promise<AppView> {
  const { record } = await new AppRecords(cluster.records).get(appName);
  const { summary, statuses } = await summarize(cluster, record);
  const deployed = new Set(record.deployed);
  const flux = summary.running
    ? []
    : statuses
        .filter((s) => deployed.has(s.name) && s.state !== 'ready' && s.state !== 'absent')
        .map(
          (s) =>
            `${s.name}: ${fluxDoing(s)}${s.suspended ? ' (suspended)' : ''}${s.attempt ? ` — ${s.attempt}` : s.reason ? ` — ${s.reason}${s.message ? `: ${s.message.split('\n')[0]}` : ''}` : ''}`,
        );
  return {
    ...summary,
    chartRepository: record.bundle.repository.url,
    mode: record.mode ?? null,
    previousVersion: record.previous?.version ?? null,
    releases: statuses,
    flux,
    phase: record.versions?.phase ?? null,
    held: record.versions?.held ?? null,
    history: record.history,
  };
}
