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
import {
  bundleFolder,
  bundleFromBytes,
  chartArchivePath,
  chartArchives,
  CHECKSUM_FILES,
  checkSignature,
  digestHex,
  formatChecksumProblem,
  isChartArchivePath,
  listedDigests,
  MANIFESTS_DIR,
  SIGNATURE_FILE,
  verifyChecksums,
  writeTarGz,
  type OpenedBundle,
  type TarEntry,
} from '../tarball/index.js';
import { readChartArchive } from '../charts/index.js';
import { makeTempDir, removeTempDir, writeFolder } from '../files/index.js';
import { isKubeObjectName, KUBE_OBJECT_NAME_MAX } from '../names/index.js';
import { SYSTEM_NAMESPACE } from '../kube/index.js';
import type { PayloadStore } from './cluster.js';
import { LifecycleError, PayloadIntegrityError } from './errors.js';
import type { PayloadDigests, RecordedBundle } from './record.js';

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

/** Where a payload was stored, and its digests for the record (checked at every read: {@link readPayload}). */
export interface StoredPayload {
  readonly name: string;
  readonly digests: PayloadDigests;
}

/** The name of piece `index` of the payload stored under `base`. */
function pieceName(base: string, index: number): string {
  return index === 0 ? base : `${base}-${index}`;
}

export async function storePayload(payloads: PayloadStore, app: string, version: string, files: ReadonlyMap<string, Buffer>): Promise<StoredPayload> {
  const base = payloadSecretName(app, version);
  const entries: TarEntry[] = [...files].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([path, data]) => ({ path, data }));
  const archive = writeTarGz(entries);
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < archive.length; offset += PIECE_BYTES) pieces.push(archive.subarray(offset, offset + PIECE_BYTES));
  // Re-running an upload writes the same bytes again, over what a killed run left.
  for (const [index, piece] of pieces.entries()) await payloads.write(app, pieceName(base, index), piece, pieces.length);
  return { name: base, digests: { archive: digestHex('sha256', archive), pieces: pieces.map((piece) => digestHex('sha256', piece)) } };
}

/**
 * The payload of an uploaded version, read back from the cluster and
 * checked before anything uses it: every Secret's piece against the digest
 * upload recorded, and, when the cluster has a `signingKey`
 * (`flotilla-config`), the signature it keeps against that key, every file
 * but the cut chart archives against the signed checksums, and the record's
 * chart digests against them too (a record rewritten with the payload does
 * not pass).
 */
export async function readPayload(
  payloads: PayloadStore,
  bundle: Pick<RecordedBundle, 'payload' | 'payloadDigests' | 'charts' | 'source'>,
  signingKey?: string,
): Promise<OpenedBundle> {
  const base = bundle.payload;
  const again = `upload the tarball again (flotilla upload ${bundle.source})`;
  const stored = `${SYSTEM_NAMESPACE}/${base}`;
  const digests = bundle.payloadDigests;
  if (!digests)
    throw new PayloadIntegrityError(`the app record holds no digests of the stored bundle ${stored} (bundle.payloadDigests): it cannot be checked; ${again}`);
  const first = await payloads.read(base);
  if (!first) throw new LifecycleError(`the stored bundle ${stored} is gone; ${again}`);
  const count = digests.pieces.length;
  const pieces: Buffer[] = [];
  for (let index = 0; index < count; index++) {
    const name = pieceName(base, index);
    const piece = index === 0 ? first : await payloads.read(name);
    if (!piece) throw new LifecycleError(`the stored bundle ${stored} is incomplete (piece ${index} of ${count}, Secret ${name}, is gone); ${again}`);
    if (digestHex('sha256', piece) !== digests.pieces[index]) {
      throw new PayloadIntegrityError(
        `Secret ${SYSTEM_NAMESPACE}/${name} (the stored bundle of ${bundle.source}) is not what upload stored: its sha256 differs from the one recorded; it was changed in the cluster; ${again}`,
      );
    }
    pieces.push(piece);
  }
  const archive = Buffer.concat(pieces);
  if (digestHex('sha256', archive) !== digests.archive)
    throw new PayloadIntegrityError(`the stored bundle ${stored} is not what upload stored (its sha256 differs from the one recorded); ${again}`);
  const payload = bundleFromBytes(archive, `stored bundle ${base}`);
  if (signingKey !== undefined) checkSignedPayload(payload.files, bundle, signingKey, `the stored bundle ${stored}`, again);
  return payload;
}

/** The payload's files and the record's chart digests against the signature the payload keeps (see readPayload). */
function checkSignedPayload(files: ReadonlyMap<string, Buffer>, bundle: Pick<RecordedBundle, 'charts'>, signingKey: string, what: string, again: string): void {
  const refuse = (why: string) => new PayloadIntegrityError(`${what} ${why} (the cluster's flotilla-config has a signingKey); ${again}`);
  const checksums = files.get(CHECKSUM_FILES.sha256);
  const signature = files.get(SIGNATURE_FILE);
  if (!checksums || !signature) throw refuse(`holds no ${!checksums ? CHECKSUM_FILES.sha256 : SIGNATURE_FILE}: it is not signed`);
  if (!checkSignature(checksums, signature.toString('utf8'), signingKey, "the cluster's signingKey"))
    throw refuse(`is not signed by the signing key (${SIGNATURE_FILE} is not a valid signature of its ${CHECKSUM_FILES.sha256})`);
  // The payload's chart archives are cut down (Chart.yaml and values.yaml): the signed digests are of the whole ones, which the record keeps.
  const problems = verifyChecksums(files, { required: ['sha256'] }).filter(
    (p) => !('path' in p && isChartArchivePath(p.path) && (p.kind === 'mismatch' || p.kind === 'missing-file')),
  );
  const signed = listedDigests('sha256', checksums);
  for (const chart of bundle.charts) {
    const path = chartArchivePath(chart.name, chart.version);
    if (signed.get(path) !== chart.sha256)
      problems.push({ kind: 'mismatch', checksumFile: 'the app record', line: 0, path, expected: signed.get(path) ?? 'none', actual: chart.sha256 });
  }
  if (problems.length > 0) throw refuse(`does not match its signed ${CHECKSUM_FILES.sha256} (${problems.map(formatChecksumProblem).join('; ')})`);
}

export async function deletePayload(payloads: PayloadStore, base: string): Promise<void> {
  for (let index = 0; await payloads.remove(pieceName(base, index)); index++);
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
