/**
 * The sizes Helm's chart loader refuses, checked before flotilla writes an
 * archive or a renderable copy that Helm would refuse to load. Helm (3 and
 * 4) loads no chart file larger than 5 MiB: `helm package` refuses such a
 * chart folder, and every reader of an archive (helm install, Flux's
 * helm-controller, StarlingX's app framework, helm show) refuses the
 * archive. An archive whose files come to 100 MiB or more is refused by
 * those readers too, though `helm package` writes it. The real `helm` holds
 * these numbers to Helm's (test/charts/helm-limits.test.ts).
 */
import { formatBytes } from '../diagnostics/index.js';
import { ChartError } from './errors.js';
import { chartFilePath } from './layout.js';
import type { ChartSource } from './types.js';

const MIB = 1024 * 1024;

export const HELM_LOADER_LIMITS = {
  /** The largest file Helm loads (a file of exactly this size loads). */
  fileBytes: 5 * MIB,
  /** All of an archive's files together must stay below this. */
  chartBytes: 100 * MIB,
} as const;

/** A chart Helm's loader would refuse for its size: one file, or all its files together. */
export class ChartSizeError extends ChartError {
  constructor(
    message: string,
    /** The file at fault, or the chart's Chart.yaml when it is all files together. */
    readonly file: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(message);
  }
}

interface ChartSize {
  /** Every file's bytes, its dependencies' (as vendored into its archive) included. */
  readonly total: number;
  readonly largest?: { readonly file: string; readonly bytes: number };
}

/** Sizes per chart source: a library vendored into many charts is added up once. */
const sizes = new WeakMap<ChartSource, ChartSize>();

function chartSize(chart: ChartSource): ChartSize {
  const known = sizes.get(chart);
  if (known) return known;
  let total = 0;
  let largest: ChartSize['largest'];
  for (const file of chart.files) {
    total += file.data.length;
    if (file.data.length > (largest?.bytes ?? -1)) largest = { file: chartFilePath(chart, file.path), bytes: file.data.length };
  }
  for (const { chart: dependency } of chart.dependencies) {
    const size = chartSize(dependency);
    total += size.total;
    if (size.largest && size.largest.bytes > (largest?.bytes ?? -1)) largest = size.largest;
  }
  const size = { total, largest };
  sizes.set(chart, size);
  return size;
}

/** Refuses a chart whose archive Helm would not load (see {@link HELM_LOADER_LIMITS}). */
export function checkHelmLimits(chart: ChartSource): void {
  const { total, largest } = chartSize(chart);
  const { fileBytes, chartBytes } = HELM_LOADER_LIMITS;
  if (largest && largest.bytes > fileBytes) {
    throw new ChartSizeError(
      `${largest.file}: ${formatBytes(largest.bytes)}; Helm loads no chart file larger than ${formatBytes(fileBytes)}, so it would refuse chart ${JSON.stringify(chart.name)}: keep the file out of the chart (.helmignore) or split it`,
      largest.file,
      largest.bytes,
      fileBytes,
    );
  }
  if (total >= chartBytes) {
    throw new ChartSizeError(
      `${chart.chartFile}: chart ${JSON.stringify(chart.name)}'s files come to ${formatBytes(total)}, dependencies included; Helm loads no chart archive whose files come to ${formatBytes(chartBytes)} or more`,
      chart.chartFile,
      total,
      chartBytes,
    );
  }
}
