/**
 * What apply needs of an uploaded tarball, kept in the cluster: the tarball
 * itself except that each chart archive is cut down to its Chart.yaml and
 * values.yaml (the charts went to the chart repository; the app model needs
 * the one, values layer 0 the other). So the payload is a tarball in the same
 * layout, opened like one (src/session assembles the app from it). Stored
 * gzipped in Secrets of the system namespace, split in pieces under the API
 * server's object size limit.
 */
import { createHash } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { bundleFolder, bundleFromBytes, chartArchives, MANIFESTS_DIR, writeTarGz, type OpenedBundle, type TarEntry } from '../bundle/index.js';
import { readChartArchive } from '../charts/index.js';
import { makeTempDir, removeTempDir, writeFolder } from '../files/index.js';
import { isKubeObjectName, KUBE_OBJECT_NAME_MAX } from '../names/index.js';
import { APP_LABEL, kubeCall, kubeRead, MANAGED_BY, NotFound, type KubeClient } from '../kube/index.js';
import { LifecycleError } from './errors.js';
import { SYSTEM_NAMESPACE } from './record.js';

export const PAYLOAD_TYPE = 'flotilla.starlingx.io/bundle.v1';
/** Bytes of payload per Secret: under a Secret's 1 MiB of data (KUBE_DATA_MAX_BYTES), and under the API server's 1.5 MiB request limit once base64-encoded. */
const PIECE_BYTES = 700 * 1024;
/** The chart files the payload keeps. */
const CHART_HEADERS = new Set(['Chart.yaml', 'values.yaml']);

/** Room kept in the first piece's name for the others' `-<index>`. */
const PIECE_SUFFIX_ROOM = 8;

/**
 * The name of the first payload Secret of an app version. A version that
 * makes no valid object name as it is (upper case, `+`, `..`, a dash at the
 * end, too long) is written in a name's characters, cut to fit, and told
 * apart by a digest of itself: two versions never share a name.
 */
export function payloadSecretName(app: string, version: string): string {
  const max = KUBE_OBJECT_NAME_MAX - PIECE_SUFFIX_ROOM;
  const plain = `flotilla-bundle-${app}-${version}`;
  if (plain.length <= max && isKubeObjectName(plain)) return plain;
  const digest = createHash('sha256').update(version).digest('hex').slice(0, 12);
  const readable = `flotilla-bundle-${app}-${version.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`.slice(0, max - digest.length - 1).replace(/-+$/, '');
  return `${readable}-${digest}`;
}

/** The payload of a tarball: its files, each chart archive cut down to Chart.yaml and values.yaml. */
export async function payloadFiles(files: ReadonlyMap<string, Buffer>): Promise<Map<string, Buffer>> {
  const payload = new Map(files);
  for (const [path, bytes] of chartArchives(files)) {
    const archive = await readChartArchive(bytes, { label: path });
    const kept = archive.chart.files.filter((f) => CHART_HEADERS.has(f.path)).map((f) => ({ path: `${archive.topDir}/${f.path}`, data: Buffer.from(f.data) }));
    payload.set(path, writeTarGz(kept));
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

export async function readPayload(client: Pick<KubeClient, 'core'>, base: string): Promise<OpenedBundle> {
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
  return bundleFromBytes(Buffer.concat(pieces), `stored bundle ${base}`);
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

/**
 * The tarball's fluxcd-manifests/ written to a private folder (for `kubectl
 * kustomize`); `dispose` removes it. It holds the app's own files only: the
 * system overrides, passwords included, are joined in memory (render.ts).
 */
export async function writeManifests(bundle: OpenedBundle): Promise<{ readonly dir: string; dispose(): Promise<void> }> {
  const dir = await makeTempDir('manifests');
  const dispose = () => removeTempDir(dir);
  try {
    const files = bundleFolder(bundle.files, MANIFESTS_DIR);
    if (files.size === 0) throw new LifecycleError(`${bundle.path} has no ${MANIFESTS_DIR}/`);
    await writeFolder(dir, files);
  } catch (error) {
    await dispose();
    throw error;
  }
  return { dir, dispose };
}
