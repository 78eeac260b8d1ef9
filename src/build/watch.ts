/**
 * `flotilla build --watch`: build, then build again whenever a file of the
 * app changes. Changes are gathered for a moment (an editor saves several
 * files at once) and a change during a build starts one more build after it.
 * A failed build is reported and the watch goes on.
 */
import { watch, type FSWatcher } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { FlotillaError } from '../diagnostics/index.js';
import { buildApp, type BuildOptions, type BuildResult, type WatchMemory } from './build.js';

export type WatchedBuild =
  | { readonly ok: true; readonly result: BuildResult; readonly millis: number; readonly changed: readonly string[] }
  | { readonly ok: false; readonly error: FlotillaError; readonly millis: number; readonly changed: readonly string[] };

export interface Watch {
  /** Stops watching; resolves once a build under way has finished. */
  close(): Promise<void>;
}

export interface WatchOptions extends BuildOptions {
  /** How long to gather changes before building (ms). */
  readonly settleMillis?: number;
}

/** Folders never worth a rebuild: the build's own output, version control, dependencies. */
const IGNORED_TOP = new Set(['.git', 'node_modules', '.flotilla-cache', '.cache']);

export function watchApp(appDir: string, options: WatchOptions, onBuild: (build: WatchedBuild) => void): Watch {
  const root = resolve(appDir);
  const outputs = [resolve(options.outDir ?? '.'), ...(typeof options.cacheDir === 'string' ? [resolve(options.cacheDir)] : [])];
  const watchers = new Map<string, FSWatcher>();
  // What is known of a folder (chart fingerprints, links) stays valid until a change below it is seen.
  const watched: WatchMemory = { folderPrints: new Map(), linkChecks: new Map() };
  const memos = [watched.folderPrints, watched.linkChecks];
  const forgetPrints = (abs: string): void => {
    for (const memo of memos) {
      for (const dir of memo.keys()) {
        if (abs === dir || abs.startsWith(`${dir}${sep}`) || dir.startsWith(`${abs}${sep}`)) memo.delete(dir);
      }
    }
  };
  const forgetAll = (): void => {
    for (const memo of memos) memo.clear();
  };
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;

  const ignored = (abs: string): boolean => {
    if (outputs.some((o) => abs === o || abs.startsWith(`${o}${sep}`))) return true;
    const top = relative(root, abs).split(sep)[0] ?? '';
    return IGNORED_TOP.has(top);
  };

  const watchDir = (dir: string): void => {
    if (watchers.has(dir)) return;
    const watcher = watch(dir, { recursive: true }, (_event, name) => {
      if (closed) return;
      if (name === null) {
        forgetAll(); // something changed, we are not told where
        return;
      }
      const abs = join(dir, name.toString());
      if (ignored(abs)) return;
      forgetPrints(abs);
      pending.add(relative(root, abs) || '.');
      clearTimeout(timer);
      timer = setTimeout(kick, options.settleMillis ?? 100);
    });
    watcher.on('error', () => {
      watchers.delete(dir);
      forgetAll(); // changes may go unseen from now on
    });
    watchers.set(dir, watcher);
  };

  const run = async (changed: readonly string[]): Promise<void> => {
    const started = performance.now();
    try {
      const result = await buildApp(root, { ...options, watched });
      // Charts kept outside the app (a release's `path`) are watched too.
      for (const release of result.app.releases) {
        const dir = result.app.path(release.chartPath);
        if (!dir.startsWith(`${root}${sep}`)) watchDir(dir);
      }
      onBuild({ ok: true, result, millis: performance.now() - started, changed });
    } catch (error) {
      const failure = error instanceof FlotillaError ? error : new FlotillaError(`build failed: ${(error as Error).message}`, { cause: error });
      onBuild({ ok: false, error: failure, millis: performance.now() - started, changed });
    }
  };

  function kick(): void {
    if (closed || running || pending.size === 0) return;
    const changed = [...pending].sort();
    pending = new Set();
    running = run(changed).finally(() => {
      running = undefined;
      kick();
    });
  }

  watchDir(root);
  running = run([]).finally(() => {
    running = undefined;
    kick();
  });

  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      await running;
    },
  };
}
