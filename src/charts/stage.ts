/**
 * A renderable copy of a chart for `helm template`: its files after
 * .helmignore, dependencies vendored as folders under `charts/<name>/`.
 *
 * The top chart's .helmignore is left out of the copy on purpose: its files
 * are already filtered, and if it stayed, Helm would apply the parent's rules
 * a second time to the vendored dependency folders — which `helm dependency
 * build` protects by packing them as .tgz — and could drop their files.
 * (Packaged archives keep .helmignore: Helm never evaluates it in an archive.)
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { isWithin, realpathLoose } from '../files/index.js';
import { ChartError } from './errors.js';
import { checkHelmLimits } from './helm-limits.js';
import { chartTree } from './layout.js';
import type { ChartSource } from './types.js';

function sourceDirs(chart: ChartSource, out: Set<string> = new Set()): Set<string> {
  if (chart.origin.kind === 'directory') out.add(chart.origin.dir);
  for (const dep of chart.dependencies) sourceDirs(dep.chart, out);
  return out;
}


/**
 * Writes the chart to `<targetDir>/<chart name>/` and returns that path.
 * Refuses to write inside any of the chart's source folders, or into a
 * non-empty folder.
 */
export async function stageChart(chart: ChartSource, targetDir: string): Promise<string> {
  // Helm renders a folder with files that come to 100 MiB, but would not install its archive.
  checkHelmLimits(chart);
  const out = resolve(targetDir, chart.name);
  const realOut = realpathLoose(out);
  for (const dir of sourceDirs(chart)) {
    const realDir = realpathLoose(dir);
    if (isWithin(realOut, realDir) || isWithin(realDir, realOut)) {
      throw new ChartError(`refusing to stage chart ${JSON.stringify(chart.name)} into ${out}: it overlaps the source folder ${dir}`);
    }
  }
  const existing = await readdir(out).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  if (existing.length > 0) throw new ChartError(`refusing to stage chart ${JSON.stringify(chart.name)}: ${out} is not empty`);

  const made = new Set<string>();
  for (const file of chartTree(chart, { omitTopHelmignore: true })) {
    const full = join(out, ...file.path.split('/'));
    const parent = dirname(full);
    if (!made.has(parent)) {
      await mkdir(parent, { recursive: true });
      made.add(parent);
    }
    await writeFile(full, file.data, { flag: 'wx' });
  }
  await mkdir(out, { recursive: true }); // a chart with no files still gets its folder
  return out;
}
