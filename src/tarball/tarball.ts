/**
 * A built application tarball as files in memory: opened with the safe reader
 * (nothing is written to disk), taken apart by folder, and put together in
 * the layout of layout.ts. Build, sign, verify, inspect and import go
 * through here; none of them spells a tarball path.
 */
import { basename } from 'node:path';
import { FlotillaError } from '../diagnostics/index.js';
import { readInputFile } from '../files/index.js';
import { digestHex, md5sumFile, sha256sumFile } from './checksums.js';
import {
  APP_DIR,
  bundlePath,
  CHARTS_DIR,
  chartArchivePath,
  CHECKSUM_FILES,
  isBundleFileName,
  isChartArchivePath,
  isChecksumFile,
  MANIFESTS_DIR,
  METADATA_FILE,
  PLUGINS_DIR,
} from './layout.js';
import { DecompressionBudget, readTarGzEntriesSync, type ArchiveLimits } from './tar-read.js';
import type { TarEntry, TarWriteOptions } from './tar-write.js';

/**
 * How the application tarball is written: `./`-prefixed, as StarlingX's own
 * build (`tar czf app.tgz .`) writes it — sysinv registers a bundle by its
 * member `./metadata.yaml` — and at a light gzip level, as its entries are
 * mostly compressed chart archives already.
 */
export const BUNDLE_TAR_OPTIONS: TarWriteOptions = { dotRoot: true, level: 1 };

export interface OpenedBundle {
  readonly path: string;
  /** Every file by its path in the tarball. */
  readonly files: ReadonlyMap<string, Buffer>;
  /** The folder entries the tarball lists (flotilla writes `./` and its folders first, as `tar czf app.tgz .` does), for the layout check. */
  readonly directories: readonly string[];
  /** What the archives inside (charts) may still decompress: shared, so nesting cannot multiply it. */
  readonly budget: DecompressionBudget;
}

/** Reads a tarball into memory with the safe reader; refuses a name that is not `.tgz` / `.tar.gz`. */
export async function openBundle(path: string, limits: ArchiveLimits = {}): Promise<OpenedBundle> {
  if (!isBundleFileName(path)) throw new FlotillaError(`${basename(path)}: an application tarball must end in .tgz or .tar.gz`);
  return bundleFromBytes(await readInputFile(path), path, limits);
}

/** A tarball already in memory (one kept in the cluster), read like openBundle reads a file; `path` names it in messages. */
export function bundleFromBytes(bytes: Buffer, path: string, limits: ArchiveLimits = {}): OpenedBundle {
  const budget = limits.budget ?? DecompressionBudget.forArchive(bytes.length);
  const entries = readTarGzEntriesSync(bytes, { ...limits, budget, label: basename(path) });
  const files = new Map<string, Buffer>();
  const directories: string[] = [];
  for (const entry of entries) {
    if (entry.type === 'file') files.set(entry.path, entry.data);
    else directories.push(entry.path);
  }
  return { path, files, directories, budget };
}

type BundleDir = typeof CHARTS_DIR | typeof MANIFESTS_DIR | typeof PLUGINS_DIR | typeof APP_DIR;

/** The files below one of the tarball's folders, by their path inside it. */
export function bundleFolder(files: ReadonlyMap<string, Buffer>, dir: BundleDir): Map<string, Buffer> {
  const prefix = `${dir}/`;
  const out = new Map<string, Buffer>();
  for (const [path, data] of files) if (path.startsWith(prefix)) out.set(path.slice(prefix.length), data);
  return out;
}

/** metadata.yaml's bytes, if present. */
export function bundleMetadata(files: ReadonlyMap<string, Buffer>): Buffer | undefined {
  return files.get(METADATA_FILE);
}

/** The chart archives directly under charts/, by tarball path, in tarball order. */
export function chartArchives(files: ReadonlyMap<string, Buffer>): [path: string, bytes: Buffer][] {
  return [...files].filter(([path]) => isChartArchivePath(path));
}

export interface BundleChart {
  readonly name: string;
  readonly version: string;
  readonly bytes: Buffer;
  /** Digests of `bytes` when known: an unchanged archive is not hashed again for the checksum files. */
  readonly sha256?: string;
  readonly md5?: string;
}

/** What a tarball is made of; each map is keyed by the path inside its folder. */
export interface BundleParts {
  readonly metadata: Buffer;
  readonly charts: readonly BundleChart[];
  readonly manifests: ReadonlyMap<string, Buffer | string>;
  readonly plugins: ReadonlyMap<string, Buffer>;
  readonly app: ReadonlyMap<string, Buffer>;
}

/** The tarball's entries in their fixed order, checksum files last (they cover everything before them). */
export function bundleEntries(parts: BundleParts): TarEntry[] {
  const entries: TarEntry[] = [{ path: METADATA_FILE, data: parts.metadata }];
  // A chart archive is compressed already: stored, not deflated again.
  for (const chart of parts.charts)
    entries.push({ path: chartArchivePath(chart.name, chart.version), data: chart.bytes, compression: 'stored', sha256: chart.sha256, md5: chart.md5 });
  for (const [path, data] of parts.manifests)
    entries.push({ path: bundlePath(MANIFESTS_DIR, path), data: typeof data === 'string' ? Buffer.from(data, 'utf8') : data });
  for (const [path, data] of parts.plugins) entries.push({ path: bundlePath(PLUGINS_DIR, path), data });
  for (const [path, data] of parts.app) entries.push({ path: bundlePath(APP_DIR, path), data });
  return withChecksumFiles(entries);
}

/** The entries, each digested once (the checksum files list them, and the tarball writer keys reusable pieces by the sha256), then the checksum files. */
function withChecksumFiles(entries: readonly TarEntry[]): TarEntry[] {
  const digested: TarEntry[] = entries.map((entry) => ({
    ...entry,
    sha256: entry.sha256 ?? digestHex('sha256', entry.data),
    md5: entry.md5 ?? digestHex('md5', entry.data),
  }));
  digested.push({ path: CHECKSUM_FILES.md5, data: md5sumFile(digested) }, { path: CHECKSUM_FILES.sha256, data: sha256sumFile(digested) });
  return digested;
}

/**
 * The entries of an opened tarball with some files' content replaced (by
 * tarball path), in the same order, the checksum files made anew; a
 * signature is dropped, since it signed the old checksums.
 */
export function changedBundleEntries(bundle: Pick<OpenedBundle, 'files'>, changes: ReadonlyMap<string, Buffer>): TarEntry[] {
  for (const path of changes.keys()) if (!bundle.files.has(path)) throw new Error(`no ${path} in the tarball to change`);
  const entries: TarEntry[] = [];
  for (const [path, data] of bundle.files) {
    if (isChecksumFile(path)) continue;
    entries.push({ path, data: changes.get(path) ?? data, ...(isChartArchivePath(path) ? { compression: 'stored' as const } : {}) });
  }
  return withChecksumFiles(entries);
}
