/**
 * Where an app's source files come from, kept apart from what is made of
 * them (load.ts assembles the App): any FileSource with the app's files, and
 * a way to the files of each release's chart. A source tree on disk is one;
 * a built tarball read in memory is another (src/session bundleAppSource).
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, posix, relative, resolve, sep } from 'node:path';
import { directorySource, type FileSource, type ReadMemory } from '../files/index.js';

/** A chart file as a source gives it: its text, and how to name it in messages. */
export interface ChartFile {
  readonly text: string;
  readonly file: string;
}

export interface AppSource {
  /** The app's files, by path relative to the app root (fluxcd/, overrides/, policies/ …). */
  readonly files: FileSource;
  /** A file of the chart a release uses (Chart.yaml, values.yaml), or undefined when the chart or file is not there. */
  chartFile(release: { readonly chart: string; readonly chartPath: string }, file: string): ChartFile | undefined;
}

/**
 * An app source tree on disk; a release's chart is its `chartPath` folder.
 * Each chart file is read once: loading, checking and computing values all
 * see the same text (several releases share a chart, and each step asks).
 * With `memory`, what was read below the app's folder is kept for the next
 * build too (see ReadMemory).
 */
export function directoryAppSource(root: string, memory?: ReadMemory): AppSource {
  const files = directorySource(root, memory);
  const read = new Map<string, ChartFile | undefined>();
  return {
    files,
    chartFile(release, file) {
      // A chart may live outside the app (a release's `path`), so this is not always a read of `files`.
      const abs = resolve(files.path, release.chartPath, file);
      if (!read.has(abs)) {
        const rel = relative(files.path, abs);
        let text: string | undefined;
        if (!rel.startsWith('..') && !isAbsolute(rel)) text = files.read(rel.split(sep).join('/'))?.toString('utf8');
        else {
          try {
            text = readFileSync(abs, 'utf8');
          } catch {
            text = undefined;
          }
        }
        read.set(abs, text === undefined ? undefined : { text, file: posix.join(release.chartPath, file) });
      }
      return read.get(abs);
    },
  };
}
