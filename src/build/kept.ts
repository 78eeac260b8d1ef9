/**
 * Builds that keep what they learn for the next build of the same app in
 * this process: the build server's (src/build-server) answer to a one-shot
 * `flotilla build`. Each app gets an AppWatcher; before each build the
 * watcher catches up with every change made so far, so a build started
 * after an edit always sees it. The most recently built apps are kept, up
 * to a limit; the others are dropped with their watchers.
 *
 * When a change to a kept app is heard, the app's last build is made again
 * at once, in memory only (`prepareOnly`: nothing is written to its output
 * folder): by the time the author asks for the build, the changed files are
 * parsed and checked and the new tarball's pieces made, so the build asked
 * for mostly writes. Builds and preparations of all apps run one at a time.
 */
import { mkdir } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { writeFileAtomic } from '../files/index.js';
import { AppWatcher } from './app-watcher.js';
import type { WrittenArchive } from '../tarball/index.js';
import { buildApp, savePieceTable, type BuildOptions, type BuildResult } from './build.js';

/** Apps kept at most: each holds folder watchers and its last tarball in memory. */
const DEFAULT_APPS_KEPT = 8;

/** How long after a change a preparation starts: an editor's save is a few events at once. */
const PREPARE_AFTER_MILLIS = 10;

interface KeptApp {
  readonly watcher: AppWatcher;
  /** The app's last build, its paths made absolute: what a change prepares. */
  last?: BuildOptions;
  prepareTimer?: NodeJS.Timeout;
  /** The last preparation: its build, and the watcher's generation it read the app at. */
  prepared?: { readonly options: string; readonly generation: number; readonly result: BuildResult; readonly tarball: WrittenArchive };
}

export class KeptBuilds {
  /** By app folder, least recently built first. */
  private readonly byFolder = new Map<string, KeptApp>();
  /** The build or preparation under way: the next waits for it. */
  private queue: Promise<unknown> = Promise.resolve();
  private prepared = 0;
  private preparedUsed = 0;

  constructor(private readonly limit = DEFAULT_APPS_KEPT) {}

  /** Builds as `buildApp` does, with what earlier builds (and preparations) of the same app kept. */
  async build(appDir: string, options: BuildOptions): Promise<BuildResult> {
    // Without a cache, every chart is packaged again: nothing kept would be used.
    if (options.cacheDir === false) return buildApp(appDir, options);
    const root = resolve(appDir);
    const app = this.keep(root);
    clearTimeout(app.prepareTimer);
    // What a change prepares again: the last build that only reads the app (--bump-changed writes to it).
    // Not its cancellation: that was its client's, not the next preparation's.
    app.last = options.bumpChanged ? undefined : absolute({ ...options, prepareOnly: false, cancelled: undefined });
    return this.oneAtATime(async () => {
      await app.watcher.caughtUp();
      const generation = app.watcher.generation;
      const same = sameBuild(options);
      // A build into a removed output folder is made afresh, not answered from a preparation.
      const { memory, fresh } = app.watcher.memoryFor(options);
      const prepared = fresh ? undefined : app.prepared;
      app.prepared = undefined;
      // Nothing changed since this very build was prepared: what it made is the answer, written now.
      if (!options.prepareOnly && prepared && same !== undefined && prepared.options === same && prepared.generation === generation && generation >= 0) {
        const file = join(options.outDir ?? '.', basename(prepared.result.file));
        options.cancelled?.throwIfAborted();
        await mkdir(dirname(file), { recursive: true });
        await writeFileAtomic(file, prepared.tarball.bytes);
        const written = { ...prepared.tarball, file };
        memory.lastTarball = written;
        const unsaved = memory.unsavedCaches;
        memory.unsavedCaches = () => Promise.all([unsaved?.(), savePieceTable(options, written)]);
        app.watcher.saveWhenIdle(memory);
        this.preparedUsed++;
        return { ...prepared.result, file };
      }
      try {
        const result = await buildApp(appDir, { ...options, watched: memory });
        // Only once a build wrote there: a build refuses an output folder inside what it reads, and one such as
        // overrides/ ignored from then on would hide every later edit of it.
        app.watcher.ignoreOutputs([options.outDir ?? '.', ...(typeof options.cacheDir === 'string' ? [options.cacheDir] : [])]);
        app.watcher.watchChartsOf(result);
        if (options.prepareOnly && same !== undefined && memory.lastTarball) app.prepared = { options: same, generation, result, tarball: memory.lastTarball };
        return result;
      } finally {
        app.watcher.saveWhenIdle(memory);
      }
    });
  }

  /** The apps kept, most recently built first. */
  apps(): string[] {
    return [...this.byFolder.keys()].reverse();
  }

  /** Builds made in memory after a change, ahead of a client's build; and how many of them were the answer to one. */
  get preparations(): { readonly made: number; readonly used: number } {
    return { made: this.prepared, used: this.preparedUsed };
  }

  /**
   * Writes every app's unwritten cache files now, after the build or
   * preparation under way: resolves once nothing more will be written
   * until the next build (before a caller removes an output folder, say).
   */
  async saveNow(): Promise<void> {
    await this.queue;
    await Promise.all([...this.byFolder.values()].map((app) => app.watcher.saveNow()));
  }

  /** Stops watching every app; resolves once their unwritten cache files are written. */
  async close(): Promise<void> {
    const closing = [...this.byFolder.values()].map((app) => {
      clearTimeout(app.prepareTimer);
      return app.watcher.close();
    });
    this.byFolder.clear();
    await Promise.all(closing);
  }

  private keep(root: string): KeptApp {
    let app = this.byFolder.get(root);
    if (app) this.byFolder.delete(root);
    else app = { watcher: new AppWatcher(root, () => this.changed(root)) };
    this.byFolder.set(root, app);
    for (const [dir, old] of this.byFolder) {
      if (this.byFolder.size <= this.limit) break;
      clearTimeout(old.prepareTimer);
      void old.watcher.close();
      this.byFolder.delete(dir);
    }
    return app;
  }

  private changed(root: string): void {
    const app = this.byFolder.get(root);
    const last = app?.last;
    if (!app || !last) return;
    clearTimeout(app.prepareTimer);
    app.prepareTimer = setTimeout(() => {
      this.prepared++;
      // A broken edit fails here unseen; the build asked for reports it.
      this.build(root, { ...last, prepareOnly: true }).catch(() => undefined);
    }, PREPARE_AFTER_MILLIS);
  }

  private oneAtATime<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/**
 * What makes two builds of one app the same build (paths absolute), or
 * undefined for one whose result depends on more than the app: a previous
 * release to compare with (`against`) is a file outside the app.
 */
function sameBuild(options: BuildOptions): string | undefined {
  if (options.against !== undefined || options.bumpChanged) return undefined;
  const { outDir, cacheDir, tokens, typecheck, followExternalSymlinks } = absolute(options);
  return JSON.stringify([outDir, cacheDir ?? null, [...(tokens ?? [])], typecheck !== false, followExternalSymlinks === true]);
}

/** The options with their paths absolute: a preparation runs whatever the process's folder is then. */
function absolute(options: BuildOptions): BuildOptions {
  const abs = (path: string | undefined) => (path === undefined || isAbsolute(path) ? path : resolve(path));
  return {
    ...options,
    outDir: abs(options.outDir ?? '.'),
    ...(typeof options.cacheDir === 'string' ? { cacheDir: abs(options.cacheDir) } : {}),
    against: abs(options.against),
  };
}
