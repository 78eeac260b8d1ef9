/**
 * `flotilla list` and `flotilla show APP`: what the record says (state,
 * version, progress, history) and what Flux says now (each release's Ready
 * condition with its reason and message). Values are never shown here, so
 * no password can be.
 */
import type { KubeClient } from '../kube/index.js';
import { AppRecords, type AppState, type HistoryEntry, type Progress } from './record.js';
import { releaseStatuses, type ReleaseStatus } from './releases.js';

export interface AppSummary {
  readonly name: string;
  readonly version: string;
  readonly state: AppState;
  readonly progress: Progress | null;
}

export interface AppView extends AppSummary {
  readonly chartRepository: string;
  readonly mode: string | null;
  /** During an update: the version being left. */
  readonly previousVersion: string | null;
  readonly releases: readonly ReleaseStatus[];
  readonly history: readonly HistoryEntry[];
}

export async function listApps(client: KubeClient): Promise<AppSummary[]> {
  return (await new AppRecords(client).list()).map((r) => ({ name: r.name, version: r.bundle.version, state: r.state, progress: r.progress ?? null }));
}

export async function showApp(client: KubeClient, appName: string): Promise<AppView> {
  const { record } = await new AppRecords(client).get(appName);
  const releases = await releaseStatuses(client, appName, record.bundle.releases);
  return {
    name: record.name,
    version: record.bundle.version,
    state: record.state,
    progress: record.progress ?? null,
    chartRepository: record.bundle.repository.url,
    mode: record.mode ?? null,
    previousVersion: record.previous?.version ?? null,
    releases,
    history: record.history,
  };
}
