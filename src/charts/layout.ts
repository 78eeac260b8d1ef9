/**
 * The file tree of a chart with its dependencies vendored, as staged on disk
 * and as packed in an archive: the chart's own files, then each dependency
 * unpacked under `charts/<chart name>/`, recursively.
 */
import { compareBytewise } from '../tarball/index.js';
import type { ChartFile, ChartSource } from './types.js';

/** Files Helm writes first, in this order (helm chartutil.Save); the rest follow sorted. */
const HEAD_FILES = ['Chart.yaml', 'values.yaml', 'values.schema.json'];

export interface TreeOptions {
  /** Replaces the top chart's Chart.yaml bytes (a rewritten version). */
  readonly chartYaml?: Buffer;
  /** Leaves out the top chart's own .helmignore (see stageChart for why). */
  readonly omitTopHelmignore?: boolean;
}

function headRank(path: string): number {
  const i = HEAD_FILES.indexOf(path);
  return i === -1 ? HEAD_FILES.length : i;
}

/** The chart's own files in archive order: head files first, then the rest byte-wise. */
function orderedOwnFiles(files: readonly ChartFile[]): ChartFile[] {
  return [...files].sort((a, b) => headRank(a.path) - headRank(b.path) || compareBytewise(a.path, b.path));
}

/** The chart's own files as `chartTree` lays them out (its dependencies' files follow them). */
function ownTree(chart: ChartSource, options: TreeOptions = {}): ChartFile[] {
  const out: ChartFile[] = [];
  for (const file of orderedOwnFiles(chart.files)) {
    if (options.omitTopHelmignore && file.path === '.helmignore') continue;
    out.push(file.path === 'Chart.yaml' && options.chartYaml ? { path: file.path, data: options.chartYaml } : file);
  }
  return out;
}

/** The folder a dependency is vendored in, relative to the chart root. */
export const dependencyFolder = (name: string): string => `charts/${name}`;

/** Where a chart's own file lies, for messages: beside its Chart.yaml. */
export const chartFilePath = (chart: ChartSource, path: string): string => chart.chartFile.replace(/Chart\.yaml$/, path);

/** Every file of `chart` with its dependencies under `charts/<name>/`, paths relative to the chart root. */
export function chartTree(chart: ChartSource, options: TreeOptions = {}): ChartFile[] {
  const out = ownTree(chart, options);
  for (const dep of chart.dependencies) {
    for (const file of chartTree(dep.chart)) out.push({ path: `${dependencyFolder(dep.name)}/${file.path}`, data: file.data });
  }
  return out;
}
