/**
 * Packaged charts kept between builds. An archive is reused when its chart's
 * source folders (the chart and its file:// dependencies) show the same
 * stat data as when it was packaged — the way make and git decide a file is
 * unchanged, without reading it. Files modified within a second of the index
 * being written are not trusted (git's "racily clean" rule): such a chart is
 * loaded and its content digest compared instead, which is always correct.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../files/index.js';
import { chartContentDigest, packageChart, type ChartSource } from '../charts/index.js';

/** Bumped whenever the packager's output for the same content changes, so old entries are not reused. */
const FORMAT = 'flotilla-chart-cache/3';
const RACY_MS = 1000;

interface IndexEntry {
  readonly name: string;
  readonly version: string;
  readonly contentDigest: string;
  readonly sha256: string;
  readonly sourceDirs: readonly string[];
  readonly fingerprint: string;
  /** When the fingerprint was taken (ms): files changed within RACY_MS before it are not trusted. */
  readonly takenAt: number;
}

/** A chart archive ready to ship. */
export interface ShippedArchive {
  readonly name: string;
  readonly version: string;
  readonly fileName: string;
  readonly bytes: Buffer;
  readonly sha256: string;
}

function isIndexEntry(value: unknown): value is IndexEntry {
  const e = value as Partial<IndexEntry> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    ['name', 'version', 'contentDigest', 'sha256', 'fingerprint'].every((k) => typeof e[k as keyof IndexEntry] === 'string') &&
    // Parts of a file name inside the cache folder: nothing that could climb out of it.
    [e.name, e.version, e.contentDigest].every((part) => /^[A-Za-z0-9._+-]+$/.test(part as string) && part !== '..') &&
    typeof e.takenAt === 'number' &&
    Array.isArray(e.sourceDirs) &&
    e.sourceDirs.every((d) => typeof d === 'string')
  );
}

interface IndexFile {
  readonly format: string;
  readonly charts: Record<string, IndexEntry>;
}

/** Folders whose files make up a chart: its own, and those of file:// dependencies (recursively). */
function sourceDirs(chart: ChartSource): string[] {
  const dirs = chart.origin.kind === 'directory' ? [chart.origin.dir] : [];
  for (const dep of chart.dependencies) if (dep.source === 'file') dirs.push(...sourceDirs(dep.chart));
  return [...new Set(dirs)];
}

interface DirPrint {
  readonly digest: string;
  readonly newest: number;
}

/** sha256 of every file's path, size, mtime and inode below `dir`, and the newest mtime or ctime seen. */
function fingerprintDir(dir: string): DirPrint | undefined {
  const hash = createHash('sha256');
  let newest = 0;
  const walk = (abs: string, rel: string): void => {
    for (const name of readdirSync(abs).sort()) {
      const path = join(abs, name);
      const info = statSync(path, { throwIfNoEntry: false });
      if (!info) continue;
      newest = Math.max(newest, info.mtimeMs, info.ctimeMs);
      if (info.isDirectory()) walk(path, `${rel}${name}/`);
      else hash.update(`${rel}${name}\0${info.size}\0${info.mtimeMs}\0${info.ino}\n`);
    }
  };
  try {
    walk(dir, '');
  } catch {
    return undefined;
  }
  return { digest: hash.digest('hex'), newest };
}

export interface CachedChart {
  readonly archive: ShippedArchive;
  /** Taken from the cache rather than packaged by this build. */
  readonly reused: boolean;
}

export class ChartCache {
  private readonly entries: Record<string, IndexEntry>;
  private changed = false;
  /** Folder fingerprints of this build: a library shared by many charts is walked once. */
  private readonly prints = new Map<string, DirPrint | undefined>();

  private fingerprint(dirs: readonly string[]): DirPrint | undefined {
    const hash = createHash('sha256');
    let newest = 0;
    for (const dir of dirs) {
      if (!this.prints.has(dir)) this.prints.set(dir, fingerprintDir(dir));
      const print = this.prints.get(dir);
      if (!print) return undefined;
      hash.update(`${dir}\0${print.digest}\n`);
      newest = Math.max(newest, print.newest);
    }
    return { digest: hash.digest('hex'), newest };
  }

  private constructor(
    private readonly dir: string,
    private readonly previous: IndexFile | undefined,
  ) {
    this.entries = { ...(previous?.charts ?? {}) };
  }

  /** A torn, foreign or hand-edited index is ignored (and rewritten by this build), never a reason to fail. */
  static async open(dir: string): Promise<ChartCache> {
    const index = await readFile(join(dir, 'index.json'), 'utf8').then(
      (text) => {
        try {
          return JSON.parse(text) as Partial<IndexFile> | null;
        } catch {
          return undefined;
        }
      },
      () => undefined,
    );
    if (index?.format !== FORMAT || typeof index.charts !== 'object' || index.charts === null) return new ChartCache(dir, undefined);
    const charts = Object.fromEntries(Object.entries(index.charts).filter(([, entry]) => isIndexEntry(entry)));
    return new ChartCache(dir, { format: FORMAT, charts });
  }

  private archivePath(entry: { name: string; version: string; contentDigest: string }): string {
    return join(this.dir, `${entry.name}-${entry.version}-${entry.contentDigest}.tgz`);
  }

  /** The archive of the chart in `chartDir` when nothing below its source folders changed since it was packaged. */
  async unchanged(chartDir: string): Promise<ShippedArchive | undefined> {
    const entry = this.entries[chartDir];
    if (!entry) return undefined;
    const now = this.fingerprint(entry.sourceDirs);
    if (!now || now.digest !== entry.fingerprint || now.newest >= entry.takenAt - RACY_MS) return undefined;
    return this.read(entry);
  }

  private async read(entry: IndexEntry): Promise<ShippedArchive | undefined> {
    const path = this.archivePath(entry);
    const bytes = existsSync(path) ? readFileSync(path) : undefined;
    if (!bytes || createHash('sha256').update(bytes).digest('hex') !== entry.sha256) return undefined;
    return { name: entry.name, version: entry.version, fileName: `${entry.name}-${entry.version}.tgz`, bytes, sha256: entry.sha256 };
  }

  /** The loaded chart's archive: from the cache when its content was packaged before, else packaged now and kept. */
  async packaged(chartDir: string, chart: ChartSource): Promise<CachedChart> {
    const contentDigest = chartContentDigest(chart);
    const known = Object.values(this.entries).find((e) => e.name === chart.name && e.version === chart.version && e.contentDigest === contentDigest);
    const fromCache = known && (await this.read(known));
    const packaged = fromCache ?? (await packageChart(chart));
    if (!fromCache) {
      await mkdir(this.dir, { recursive: true });
      await writeFileAtomic(this.archivePath({ ...packaged, contentDigest }), packaged.bytes);
    }
    const dirs = sourceDirs(chart);
    const takenAt = Date.now();
    const print = this.fingerprint(dirs);
    if (print) {
      this.entries[chartDir] = { name: packaged.name, version: packaged.version, contentDigest, sha256: packaged.sha256, sourceDirs: dirs, fingerprint: print.digest, takenAt };
      this.changed = true;
    }
    return { archive: fromCache ?? packaged, reused: fromCache !== undefined };
  }

  async save(): Promise<void> {
    if (!this.changed && this.previous) return;
    await mkdir(this.dir, { recursive: true });
    const index: IndexFile = { format: FORMAT, charts: this.entries };
    await writeFileAtomic(join(this.dir, 'index.json'), `${JSON.stringify(index)}\n`);
  }
}
