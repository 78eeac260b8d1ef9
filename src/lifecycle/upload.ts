/**
 * `flotilla upload BUNDLE`: verify the tarball (checksums; the signature
 * when the cluster has a signing key), deliver its charts to the chart
 * repository, keep what apply needs in the cluster, record the app as
 * `uploaded`. Nothing in the cluster changes until verification passed.
 * Re-running an upload of the same version converges (delivery and the
 * stored payload are idempotent).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { App, AppMetadata } from '../app/index.js';
import { chartArchives, openBundle, type OpenedBundle } from '../tarball/index.js';
import { readChartArchive } from '../charts/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import { makeTempDir, removeTempDir } from '../files/index.js';
import type { Cluster } from './cluster.js';
import { OciClient, pullBundle } from '../oci/index.js';
import { Session } from '../session/index.js';
import { verifyBundle } from '../verify/index.js';
import { readClusterConfig, rememberChartRepository, type ClusterConfig } from './config.js';
import { deliverCharts, type DeliveryOptions } from './delivery.js';
import { AppStateError, UploadRejectedError } from './errors.js';
import { decidedOrRefused, RecordHandle, reasonOf, withAppLock, type LockedRun, type OperationOptions } from './operation.js';
import { payloadFiles, storePayload } from './payload.js';
import { afterUpload } from '../catalog/index.js';
import { type AppRecord, type ChartRepository, type RecordedBundle, type RecordedRelease, type StoredRecord } from './record.js';

export interface UploadOptions extends OperationOptions, DeliveryOptions {
  /** Where charts go (remembered in the cluster); the remembered one when absent. */
  readonly chartRepository?: ChartRepository;
}

/** A verified tarball, read into memory, its app assembled from it. */
export interface VerifiedBundle {
  readonly path: string;
  readonly bundle: OpenedBundle;
  readonly app: App;
  readonly metadata: AppMetadata;
  readonly sha256: string;
}

/**
 * A tarball named by a path, or by `oci://HOST/REPO/APP:TAG` (pulled into a
 * private folder with its digests checked; verified like any file after).
 */
export async function fetchBundle(source: string, options: DeliveryOptions = {}): Promise<{ readonly path: string; dispose(): Promise<void> }> {
  if (!source.startsWith('oci://')) return { path: source, dispose: async () => undefined };
  const dir = await makeTempDir('pull');
  const dispose = () => removeTempDir(dir);
  try {
    const client = new OciClient(options.registryConfig ? { registryConfig: options.registryConfig } : {});
    return { path: (await pullBundle(client, source, dir)).file, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** Verification of a tarball as upload does it: every problem named, in one error. */
export async function verifyForUpload(path: string, config: ClusterConfig): Promise<VerifiedBundle> {
  const rejected = (why: string) => new UploadRejectedError(`Application-upload rejected: ${basename(path)}: ${why}`);
  if (!existsSync(path)) throw rejected('no such file');
  const report = await verifyBundle(path, config.signingKey ? { publicKey: config.signingKey } : {});
  if (!report.ok) throw rejected(`\n${report.problems.map((p) => `  ${p}`).join('\n')}`);
  const bundle = await openBundle(path);
  let app: App;
  try {
    app = (await Session.fromBundle(bundle)).app;
  } catch (error) {
    if (error instanceof FlotillaError) throw rejected(error.message);
    throw error;
  }
  return {
    path,
    bundle,
    app,
    metadata: app.metadata,
    sha256: createHash('sha256')
      .update(await readFile(path))
      .digest('hex'),
  };
}

/** Delivers the charts and stores the payload of a verified tarball; returns what the record keeps of it. */
export async function stageBundle(
  cluster: Cluster,
  verified: VerifiedBundle,
  repository: ChartRepository,
  options: DeliveryOptions,
  source = basename(verified.path),
): Promise<RecordedBundle> {
  const { bundle, metadata } = verified;
  const archives = chartArchives(bundle.files);
  const charts = await Promise.all(archives.map(async ([path, bytes]) => ({ path, bytes, archive: await readChartArchive(bytes, { label: path }) })));
  await deliverCharts(
    repository,
    charts.map((c) => ({ label: c.path, bytes: c.bytes })),
    options,
  );
  const payload = await storePayload(cluster.payloads, metadata.appName, metadata.appVersion, await payloadFiles(bundle.files));
  const versions = new Map(charts.map((c) => [c.archive.name, c.archive.version]));
  return {
    version: metadata.appVersion,
    sha256: verified.sha256,
    source,
    payload: payload.name,
    payloadDigests: payload.digests,
    charts: charts.map((c) => ({ name: c.archive.name, version: c.archive.version, sha256: createHash('sha256').update(c.bytes).digest('hex') })),
    releases: verified.app.releases.map((r): RecordedRelease => ({
      name: r.name,
      namespace: r.namespace,
      chart: r.chart,
      chartVersion: versions.get(r.chart) ?? '',
      releaseName: r.releaseName,
      dependsOn: [...r.dependsOn],
    })),
    repository,
    maintainUserOverrides: metadata.maintainUserOverrides,
    updateFailureNoRollback: metadata.upgrades.updateFailureNoRollback,
    fromVersions: fromVersionPatterns(metadata),
    applyProgressAdjust: metadata.applyProgressAdjust,
    uploaded: new Date().toISOString(),
  };
}

/** The repository to deliver to: the one given (then remembered), else the cluster's. */
async function chooseRepository(cluster: Cluster, config: ClusterConfig, given: ChartRepository | undefined): Promise<ChartRepository> {
  if (given) {
    await rememberChartRepository(cluster.settings, given);
    return given;
  }
  if (config.chartRepository) return config.chartRepository;
  throw new AppStateError('no chart repository: pass --chart-repo oci://HOST/PATH (or http(s)://… with --chart-repo-dir) once; the cluster remembers it', {
    exitCode: 2,
  });
}

export async function uploadApp(cluster: Cluster, source: string, options: UploadOptions = {}): Promise<AppRecord> {
  const config = await readClusterConfig(cluster.settings);
  const fetched = await fetchBundle(source, options);
  try {
    return await uploadVerified(cluster, await verifyForUpload(fetched.path, config), source, config, options);
  } finally {
    await fetched.dispose();
  }
}

async function uploadVerified(cluster: Cluster, verified: VerifiedBundle, path: string, config: ClusterConfig, options: UploadOptions): Promise<AppRecord> {
  const { appName, appVersion } = verified.metadata;
  return withAppLock(cluster, appName, 'upload', options, async (run) => {
    const existing = await run.records.read(appName);
    if (existing) {
      const { state, bundle } = existing.record;
      // The same tarball again past its upload: its stored payload is written anew (one changed in the cluster is refused at use).
      const pastUpload = !['uploading', 'upload-failed', 'uploaded'].includes(state);
      if (pastUpload && bundle.version === appVersion && bundle.sha256 === verified.sha256)
        return restorePayload(cluster, run, existing, verified, path, options);
      decidedOrRefused(existing.record, { operation: 'upload', version: appVersion, source: basename(path) }, run.events);
    }
    const repository = await chooseRepository(cluster, config, options.chartRepository);
    const placeholder = existing ?? (await run.records.create(newRecord(verified, repository)));
    const handle = new RecordHandle(run.records, placeholder);
    await handle.begin('upload', 'uploading', run.lease.holder, appVersion);
    try {
      run.events({ type: 'step', message: `delivering the charts to ${repository.url}` });
      const bundle = await stageBundle(cluster, verified, repository, options, path.startsWith('oci://') ? path : basename(path));
      const versions = afterUpload(handle.record.versions, verified.app.catalog, appVersion, verified.app.spec.main.release);
      return await handle.end('uploaded', 'succeeded', undefined, { bundle, versions, progress: { ready: 0, total: bundle.releases.length, percent: 0 } });
    } catch (error) {
      await handle.end('upload-failed', 'failed', reasonOf(error)).catch(() => undefined);
      throw error;
    }
  });
}

/** Stores the payload of the version the app is at again, from the same tarball; the state stays. */
async function restorePayload(
  cluster: Cluster,
  run: LockedRun,
  existing: StoredRecord,
  verified: VerifiedBundle,
  path: string,
  options: UploadOptions,
): Promise<AppRecord> {
  const handle = new RecordHandle(run.records, existing);
  const { state, bundle: recorded } = existing.record;
  await handle.begin('upload', state, run.lease.holder, recorded.version);
  try {
    run.events({ type: 'step', message: `restoring the stored bundle of ${recorded.version}` });
    const bundle = await stageBundle(cluster, verified, recorded.repository, options, path.startsWith('oci://') ? path : basename(path));
    return await handle.end(state, 'succeeded', 'stored bundle restored', { bundle });
  } catch (error) {
    await handle.end(state, 'failed', reasonOf(error)).catch(() => undefined);
    throw error;
  }
}

/** The record of an app uploaded for the first time, naming the version being uploaded. */
function newRecord(verified: VerifiedBundle, repository: ChartRepository): AppRecord {
  return {
    name: verified.metadata.appName,
    state: 'uploading',
    bundle: {
      version: verified.metadata.appVersion,
      sha256: verified.sha256,
      source: basename(verified.path),
      payload: '',
      charts: [],
      releases: [],
      repository,
      maintainUserOverrides: verified.metadata.maintainUserOverrides,
      updateFailureNoRollback: verified.metadata.upgrades.updateFailureNoRollback,
      fromVersions: [],
      applyProgressAdjust: verified.metadata.applyProgressAdjust,
      uploaded: new Date().toISOString(),
    },
    userOverrides: {},
    deployed: [],
    history: [],
  };
}

/** `upgrades.from_versions` as the metadata writes them (the parsed RegExps are anchored copies). */
export function fromVersionPatterns(metadata: Pick<AppMetadata, 'raw'>): string[] {
  return ((metadata.raw.upgrades as { from_versions?: unknown[] } | undefined)?.from_versions ?? []).map(String);
}
