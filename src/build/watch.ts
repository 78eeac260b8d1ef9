/**
 * `flotilla build --watch`: build, then build again whenever a file of the
 * app changes. Changes are gathered for a moment (an editor saves several
 * files at once) and a change during a build starts one more build after it.
 * A failed build is reported and the watch goes on.
 */
import { resolve } from 'node:path';
import { FlotillaError } from '../diagnostics/index.js';
import { systemFileError } from '../files/index.js';
import { AppWatcher } from './app-watcher.js';
import { buildApp, type BuildOptions, type BuildResult } from './build.js';

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

export function watchApp(appDir: string, options: WatchOptions, onBuild: (build: WatchedBuild) => void): Watch {
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  const watcher = new AppWatcher(appDir, (changed) => {
    if (closed) return;
    pending.add(changed);
    clearTimeout(timer);
    timer = setTimeout(kick, options.settleMillis ?? 100);
  });
  watcher.ignoreOutputs([resolve(options.outDir ?? '.'), ...(typeof options.cacheDir === 'string' ? [options.cacheDir] : [])]);

  const run = async (changed: readonly string[]): Promise<void> => {
    const started = performance.now();
    try {
      const { memory } = watcher.memoryFor(options);
      const result = await buildApp(watcher.root, { ...options, watched: memory }).finally(() => watcher.saveWhenIdle(memory));
      watcher.watchChartsOf(result);
      onBuild({ ok: true, result, millis: performance.now() - started, changed });
    } catch (error) {
      const failure =
        error instanceof FlotillaError ? error : (systemFileError(error) ?? new FlotillaError(`build failed: ${(error as Error).message}`, { cause: error }));
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

  running = run([]).finally(() => {
    running = undefined;
    kick();
  });

  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      // The build under way ends first: its cache files are written as the watcher closes.
      await running;
      await watcher.close();
    },
  };
}
