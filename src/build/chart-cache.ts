/**
 * Packaged charts kept between builds. An archive is reused when its chart's
 * source folders (the chart and its file:// dependencies) show the same
 * stat data as when it was packaged — the way make and git decide a file is
 * unchanged, without reading it. Files modified within a second of the index
 * being written are not trusted (git's "racily clean" rule): such a chart is
 * loaded and its content digest compared instead, which is always correct.
 * The archives themselves are not copied here: they are taken back out of
 * the previous application tarball (bundle-reuse.ts), where they lie stored.
 */
import { createHash } from 'node:crypto';
import type { CacheFolder } from '../cache/index.js';
import { fingerprintFolder, type FolderFingerprint } from '../files/index.js';
import { chartContentDigest, packageChart, type ChartSource, type PackagedChart } from '../charts/index.js';
import type { BundleReuse } from './bundle-reuse.js';

/** Bumped whenever the packager's output for the same content changes, so old entries are not reused. */
const FORMAT = 'flotilla-chart-cache/9';
const INDEX = 'index.json';
const RACY_MS = 1000;

interface IndexEntry {
  readonly name: string;
  readonly version: string;
  readonly contentDigest: string;
  readonly sha256: string;
  readonly md5: string;
  readonly sourceDirs: readonly string[];
  readonly fingerprint: string;
  /** When the fingerprint began to be taken (ms): files changed within RACY_MS before it are not trusted. */
  readonly takenAt: number;
  /** The app's repository mapping when packaged (see ChartCache.open): another mapping may vendor other charts. */
  readonly repositories: string;
}

/** A chart archive ready to ship: what the tarball needs of a packaged chart. */
export type ShippedArchive = Pick<PackagedChart, 'name' | 'version' | 'fileName' | 'bytes' | 'sha256' | 'md5'>;

function isIndexEntry(value: unknown): value is IndexEntry {
  const e = value as Partial<IndexEntry> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    ['name', 'version', 'contentDigest', 'sha256', 'md5', 'fingerprint'].every((k) => typeof e[k as keyof IndexEntry] === 'string') &&
    // Parts of an entry name in the tarball (charts/<name>-<version>.tgz): nothing that could climb out of charts/.
    [e.name, e.version, e.contentDigest].every((part) => /^[A-Za-z0-9._+-]+$/.test(part as string) && part !== '..') &&
    typeof e.takenAt === 'number' &&
    typeof e.repositories === 'string' &&
    Array.isArray(e.sourceDirs) &&
    e.sourceDirs.every((d) => typeof d === 'string')
  );
}

interface IndexFile {
  readonly format: string;
  readonly charts: Record<string, IndexEntry>;
}

/**
 * Folders whose files make up a chart: its own, and those of file://
 * dependencies and of the app's folders its repositories are mapped to
 * (recursively), each with the fingerprint the loader took as it read
 * it (createChartLoader's `fingerprint`), when it took one.
 */
function sourceFolders(chart: ChartSource, into = new Map<string, FolderFingerprint | undefined>()): Map<string, FolderFingerprint | undefined> {
  if (chart.origin.kind === 'directory') into.set(chart.origin.dir, chart.fingerprint);
  for (const dep of chart.dependencies) if (dep.source === 'file' || dep.source === 'mapped') sourceFolders(dep.chart, into);
  return into;
}

/**
 * What a long-lived process keeps of source folders from build to build:
 * their fingerprints by absolute path (undefined: the folder could not be
 * walked), which its watcher deletes as soon as it hears a change below one
 * (app-watcher.ts), and how many changes that watcher has heard. A fingerprint the
 * loader took after a change was heard may hold what the change replaced,
 * so it is not kept (see ChartCache.fingerprint). A count, not a time: a
 * clock set back cannot make an old change look earlier than a fingerprint.
 */
export interface KeptPrints {
  readonly folderFingerprints: Map<string, FolderFingerprint | undefined>;
  changesHeard(): number;
}

export interface CachedChart {
  readonly archive: ShippedArchive;
  /** Taken from the cache rather than packaged by this build. */
  readonly reused: boolean;
}

export class ChartCache {
  private readonly entries: Record<string, IndexEntry>;
  private changed = false;
  /**
   * Folder fingerprints by absolute path: a library shared by many charts is
   * walked once per build, and `--watch` keeps them from build to build,
   * dropping a folder's as soon as anything below it changes (see watch.ts).
   */
  private readonly fingerprints: Map<string, FolderFingerprint | undefined>;
  /** Whether a change was heard since this build's cache was opened, before any chart of it was read. */
  private readonly changeHeard: () => boolean;
  /**
   * The fingerprints this build took by walking a folder (to tell whether a chart
   * changed): the loader need not fingerprint those folders again as it reads them
   * (see {@link fingerprintsAgain}), and the chart's entry gets the fingerprint taken
   * before its read.
   */
  private readonly walked = new Map<string, FolderFingerprint | undefined>();

  /**
   * The fingerprints of `dirs` joined: those just `read`, else those kept (unless
   * hard-linked), else taken now; `takenAt` the earliest. A fingerprint read is
   * kept only when no change was heard since this cache was opened: one heard while
   * its chart was packaged may lie below its folder, and keeping the fingerprint
   * read before it would hide that change from the next build.
   */
  private fingerprint(dirs: readonly string[], read: ReadonlyMap<string, FolderFingerprint | undefined> = new Map()): FolderFingerprint | undefined {
    const hash = createHash('sha256');
    let newest = 0;
    let takenAt = Infinity;
    for (const dir of dirs) {
      const fresh = read.get(dir);
      if (fresh && !this.changeHeard()) this.fingerprints.set(dir, fresh);
      else if (!fresh && (!this.fingerprints.has(dir) || this.fingerprints.get(dir)?.hardLinked)) {
        const walked = fingerprintFolder(dir);
        this.walked.set(dir, walked);
        this.fingerprints.set(dir, walked);
      }
      const fingerprint = fresh ?? this.fingerprints.get(dir);
      if (!fingerprint) return undefined;
      hash.update(`${dir}\0${fingerprint.digest}\n`);
      newest = Math.max(newest, fingerprint.newest);
      takenAt = Math.min(takenAt, fingerprint.takenAt);
    }
    return { digest: hash.digest('hex'), newest, takenAt };
  }

  private constructor(
    private readonly cache: CacheFolder,
    private readonly previous: IndexFile | undefined,
    private readonly archives: BundleReuse,
    kept: KeptPrints | undefined,
    private readonly repositories: string,
  ) {
    this.entries = { ...(previous?.charts ?? {}) };
    this.fingerprints = kept?.folderFingerprints ?? new Map();
    const changesAtOpen = kept?.changesHeard();
    this.changeHeard = () => kept !== undefined && kept.changesHeard() !== changesAtOpen;
  }

  /**
   * The cache in `dir`; archives are found in `archives`, the previous
   * tarball; `kept`, a long-lived process's folder fingerprints; `repositories`,
   * the app's repository mapping as text (an entry packaged under another
   * is not reused: its dependencies may come from other folders). A torn,
   * foreign or hand-edited index is ignored (and rewritten by this build),
   * never a reason to fail.
   */
  static open(cache: CacheFolder, archives: BundleReuse, kept?: KeptPrints, repositories = ''): ChartCache {
    let index: Partial<IndexFile> | null | undefined;
    try {
      const content = cache.readSync(INDEX, 'chart-index', FORMAT);
      index = content && (JSON.parse(content.toString('utf8')) as Partial<IndexFile> | null);
    } catch {
      index = undefined;
    }
    if (index?.format !== FORMAT || typeof index.charts !== 'object' || index.charts === null)
      return new ChartCache(cache, undefined, archives, kept, repositories);
    const charts = Object.fromEntries(Object.entries(index.charts).filter(([, entry]) => isIndexEntry(entry)));
    return new ChartCache(cache, { format: FORMAT, charts }, archives, kept, repositories);
  }

  /** Whether the chart loader should fingerprint `dir` as it reads it: not when this build walked it already. */
  fingerprintsAgain(dir: string): boolean {
    return !this.walked.has(dir);
  }

  /** The archive of the chart in `chartDir` when nothing below its source folders changed since it was packaged. */
  unchanged(chartDir: string): ShippedArchive | undefined {
    const entry = this.entries[chartDir];
    if (!entry || entry.repositories !== this.repositories) return undefined;
    const now = this.fingerprint(entry.sourceDirs);
    if (!now || now.digest !== entry.fingerprint || now.newest >= entry.takenAt - RACY_MS) return undefined;
    return this.read(entry);
  }

  private read(entry: IndexEntry): ShippedArchive | undefined {
    const fileName = `${entry.name}-${entry.version}.tgz`;
    const bytes = this.archives.storedFile(`charts/${fileName}`, entry.sha256);
    return bytes && { name: entry.name, version: entry.version, fileName, bytes, sha256: entry.sha256, md5: entry.md5 };
  }

  /** The loaded chart's archive: from the cache when its content was packaged before, else packaged now and kept. */
  async packaged(chartDir: string, chart: ChartSource): Promise<CachedChart> {
    const contentDigest = chartContentDigest(chart);
    const known = Object.values(this.entries).find((e) => e.name === chart.name && e.version === chart.version && e.contentDigest === contentDigest);
    const fromCache = known && this.read(known);
    const packaged = fromCache ?? (await packageChart(chart));
    const folders = sourceFolders(chart);
    const dirs = [...folders.keys()];
    // As the loader read the folders, or as this build walked them before the loader read them, else walked now.
    for (const dir of dirs) if (!folders.get(dir) && this.walked.get(dir)) folders.set(dir, this.walked.get(dir));
    const fingerprint = this.fingerprint(dirs, folders);
    if (fingerprint) {
      this.entries[chartDir] = {
        name: packaged.name,
        version: packaged.version,
        contentDigest,
        sha256: packaged.sha256,
        md5: packaged.md5,
        sourceDirs: dirs,
        fingerprint: fingerprint.digest,
        takenAt: fingerprint.takenAt,
        repositories: this.repositories,
      };
      this.changed = true;
    }
    return { archive: fromCache ?? packaged, reused: fromCache !== undefined };
  }

  async save(): Promise<void> {
    if (!this.changed && this.previous) return;
    const index: IndexFile = { format: FORMAT, charts: this.entries };
    await this.cache.write(INDEX, 'chart-index', FORMAT, `${JSON.stringify(index)}\n`);
  }
}
