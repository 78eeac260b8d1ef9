/**
 * Builds that keep what they learn for the next build of the same app in
 * this process: the build server's (src/server) answer to a one-shot
 * `flotilla build`. Each app gets an AppWatcher; before each build the
 * watcher catches up with every change made so far, so a build started
 * after an edit always sees it. The most recently built apps are kept, up
 * to a limit; the others are dropped with their watchers.
 */
import { resolve } from 'node:path';
import { AppWatcher } from './app-watcher.js';
import { buildApp, memoryKey, type BuildOptions, type BuildResult } from './build.js';

/** Apps kept at most: each holds folder watchers and its last tarball in memory. */
const DEFAULT_APPS_KEPT = 8;

export class KeptBuilds {
  /** By app folder, least recently built first. */
  private readonly watchers = new Map<string, AppWatcher>();

  constructor(private readonly limit = DEFAULT_APPS_KEPT) {}

  /** Builds as `buildApp` does, with what earlier builds of the same app kept. */
  async build(appDir: string, options: BuildOptions): Promise<BuildResult> {
    // Without a cache, every chart is packaged again: nothing kept would be used.
    if (options.cacheDir === false) return buildApp(appDir, options);
    const root = resolve(appDir);
    let watcher = this.watchers.get(root);
    if (watcher) this.watchers.delete(root);
    else watcher = new AppWatcher(root);
    this.watchers.set(root, watcher);
    for (const [dir, old] of this.watchers) {
      if (this.watchers.size <= this.limit) break;
      old.close();
      this.watchers.delete(dir);
    }
    watcher.ignoreOutputs([options.outDir ?? '.', ...(typeof options.cacheDir === 'string' ? [options.cacheDir] : [])]);
    await watcher.caughtUp();
    const result = await buildApp(appDir, { ...options, watched: watcher.memory(memoryKey(options)) });
    watcher.watchChartsOf(result);
    return result;
  }

  /** The apps kept, most recently built first. */
  apps(): string[] {
    return [...this.watchers.keys()].reverse();
  }

  close(): void {
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }
}
