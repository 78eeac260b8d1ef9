/**
 * What apply needs of an uploaded tarball, kept in the cluster: every entry
 * except the chart archives (those went to the chart repository), plus each
 * chart's Chart.yaml and values.yaml (the app model needs the one, values
 * layer 0 the other). Stored gzipped in Secrets of the system namespace,
 * split in pieces under the API server's object size limit, and turned back
 * into an app folder (the app source the tarball carries under app/, its
 * metadata, chart headers, fluxcd-manifests/ and plugins/) when an operation
 * needs it.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { V1Secret } from '@kubernetes/client-node';
import { APP_FILES, readReleases } from '../app/index.js';
import { readTarGzSafelySync, writeTarGz, type TarEntry } from '../bundle/index.js';
import type { ChartArchive } from '../charts/index.js';
import { parseYaml } from '../document/index.js';
import { APP_LABEL, kubeCall, kubeRead, MANAGED_BY, NotFound, type KubeClient } from '../kube/index.js';
import { LifecycleError } from './errors.js';
import { SYSTEM_NAMESPACE } from './record.js';

export const PAYLOAD_TYPE = 'flotilla.starlingx.io/bundle.v1';
/** Bytes of payload per Secret: well under the API server's 1.5 MiB request limit once base64-encoded. */
const PIECE_BYTES = 700 * 1024;
/** Where chart headers sit in the payload. */
const CHART_HEADERS = 'chart-headers';

export function payloadSecretName(app: string, version: string): string {
  return `flotilla-bundle-${app}-${version}`.toLowerCase().replace(/[^a-z0-9.-]/g, '-').slice(0, 253);
}

/** The payload of a tarball: its files minus chart archives, plus chart headers. */
export function payloadFiles(files: ReadonlyMap<string, Buffer>, charts: readonly ChartArchive[]): Map<string, Buffer> {
  const payload = new Map<string, Buffer>();
  for (const [name, data] of files) if (!/^charts\/[^/]+\.tgz$/.test(name)) payload.set(name, data);
  for (const chart of charts) {
    for (const file of chart.chart.files) {
      if (file.path === 'Chart.yaml' || file.path === 'values.yaml') payload.set(`${CHART_HEADERS}/${chart.name}/${file.path}`, Buffer.from(file.data));
    }
  }
  return payload;
}

export async function storePayload(client: Pick<KubeClient, 'core'>, app: string, version: string, files: ReadonlyMap<string, Buffer>): Promise<string> {
  const base = payloadSecretName(app, version);
  const entries: TarEntry[] = [...files].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([path, data]) => ({ path, data }));
  const archive = writeTarGz(entries);
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < archive.length; offset += PIECE_BYTES) pieces.push(archive.subarray(offset, offset + PIECE_BYTES));
  for (const [index, piece] of pieces.entries()) {
    const name = index === 0 ? base : `${base}-${index}`;
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: PAYLOAD_TYPE,
      metadata: { name, namespace: SYSTEM_NAMESPACE, labels: { ...MANAGED_BY, [APP_LABEL]: app }, annotations: { 'flotilla.starlingx.io/pieces': String(pieces.length) } },
      data: { payload: piece.toString('base64') },
    };
    // Re-running an upload writes the same bytes again: replace what a killed run left.
    const existing = await kubeRead({ verb: 'read', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () => client.core.readNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE }));
    if (existing) {
      await kubeCall({ verb: 'update', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () =>
        client.core.replaceNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE, body: { ...body, metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion } } }),
      );
    } else {
      await kubeCall({ verb: 'create', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () => client.core.createNamespacedSecret({ namespace: SYSTEM_NAMESPACE, body }));
    }
  }
  return base;
}

export async function readPayload(client: Pick<KubeClient, 'core'>, base: string): Promise<Map<string, Buffer>> {
  const read = (name: string) => kubeRead({ verb: 'read', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () => client.core.readNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE }));
  const first = await read(base);
  if (!first) throw new LifecycleError(`the stored bundle ${SYSTEM_NAMESPACE}/${base} is gone; upload the tarball again`);
  const count = Number(first.metadata?.annotations?.['flotilla.starlingx.io/pieces'] ?? '1');
  const pieces = [Buffer.from(first.data?.payload ?? '', 'base64')];
  for (let index = 1; index < count; index++) {
    const piece = await read(`${base}-${index}`);
    if (!piece) throw new LifecycleError(`the stored bundle ${SYSTEM_NAMESPACE}/${base} is incomplete (piece ${index} of ${count} is gone); upload the tarball again`);
    pieces.push(Buffer.from(piece.data?.payload ?? '', 'base64'));
  }
  return readTarGzSafelySync(Buffer.concat(pieces), { label: `stored bundle ${base}` });
}

export async function deletePayload(client: Pick<KubeClient, 'core'>, base: string): Promise<void> {
  for (let index = 0; ; index++) {
    const name = index === 0 ? base : `${base}-${index}`;
    try {
      await kubeCall({ verb: 'delete', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () => client.core.deleteNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE }));
    } catch (error) {
      if (error instanceof NotFound) return;
      throw error;
    }
  }
}

/** A payload written out as an app folder; `dispose` removes it. */
export interface MaterializedApp {
  /** The app source root (loadApp reads it). */
  readonly root: string;
  /** The tarball's fluxcd-manifests/ folder. */
  readonly manifests: string;
  /** The tarball's plugin bundle folder. */
  readonly plugins: string;
  dispose(): Promise<void>;
}

const MANIFESTS_DIR = '.flotilla/fluxcd-manifests';
const PLUGINS_DIR = '.flotilla/plugins';

export async function materialize(files: ReadonlyMap<string, Buffer>, label: string): Promise<MaterializedApp> {
  const root = await mkdtemp(join(tmpdir(), 'flotilla-app-'));
  try {
    const put = async (rel: string, data: Buffer) => {
      const abs = join(root, rel);
      await mkdir(dirname(abs), { recursive: true });
      await writeFile(abs, data);
    };
    const releasesText = files.get(`app/${APP_FILES.releases}`);
    if (!releasesText) throw new LifecycleError(`${label} has no app/${APP_FILES.releases}: it was not built by flotilla`);
    const { releases, diagnostics } = readReleases(parseYaml(releasesText.toString('utf8'), APP_FILES.releases, { layer: 'releases' }).root, APP_FILES.releases);
    if (diagnostics.some((d) => d.severity === 'error')) throw new LifecycleError(`${label}: app/${APP_FILES.releases} is invalid: ${diagnostics[0]?.message}`);
    const chartPaths = new Map<string, Set<string>>();
    for (const release of releases) chartPaths.set(release.chart, (chartPaths.get(release.chart) ?? new Set()).add(release.chartPath));
    for (const [name, data] of files) {
      if (name.startsWith('app/')) await put(name.slice('app/'.length), data);
      else if (name === 'metadata.yaml') await put(APP_FILES.metadata, data);
      else if (name.startsWith('fluxcd-manifests/')) await put(join(MANIFESTS_DIR, name.slice('fluxcd-manifests/'.length)), data);
      else if (name.startsWith('plugins/')) await put(join(PLUGINS_DIR, name.slice('plugins/'.length)), data);
      else if (name.startsWith(`${CHART_HEADERS}/`)) {
        const [, chart, file] = name.split('/') as [string, string, string];
        for (const path of chartPaths.get(chart) ?? []) await put(join(path, file), data);
      }
    }
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  return { root, manifests: join(root, MANIFESTS_DIR), plugins: join(root, PLUGINS_DIR), dispose: () => rm(root, { recursive: true, force: true }) };
}
