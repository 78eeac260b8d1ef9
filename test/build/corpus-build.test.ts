/**
 * Builds of apps made of real charts (../shared/corpus): the corpus's charts
 * that depend on its library chart `common` alone, with `common` vendored
 * into each chart's `charts/`, and with one `common` in the app's `charts/`
 * that every chart names through `file://../common`. The second is the shape
 * that once crashed the archive writer (`common` has files larger than the
 * deflate window, which a fast path since removed did not expect). Each
 * chart archive is read
 * by node-tar and compared with what `helm package` writes: for a sample of
 * the vendored charts, the chart itself; for the shared library, `common`
 * packaged alone (as `helm dependency build` would vendor it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { readTarGzSafely } from '../../src/tarball/index.js';
import { helm } from '../../src/tools/index.js';
import { tempDir } from '../support/app-fixture.js';
import { expectSameChart, filesOfArchive } from '../support/archive-content.js';
import { CORPUS, corpusCharts, corpusDependencies, writeCorpusApp, type CorpusDependencies } from '../support/corpus-app.js';

if (!CORPUS) console.log('corpus-build: ../shared/corpus is absent; the builds of real charts are skipped');

/** Chart.yaml's content but where its dependencies come from (`file://../common` or the corpus's repository). */
const withoutRepositories = (parsed: unknown): unknown => {
  const chart = parsed as { dependencies?: { repository?: string }[] };
  return { ...chart, dependencies: chart.dependencies?.map(({ repository: _, ...rest }) => rest) };
};

/** `helm package` of a chart folder, read back. */
async function helmPackage(chart: string, out: string): Promise<Map<string, Buffer>> {
  const { stdout } = await helm(['package', chart, '-d', out]);
  return filesOfArchive(readFileSync(/Successfully packaged chart and saved it to: (.+)/.exec(stdout)![1]!.trim()));
}

/** The files of `files` below `folder/`, named from there. */
const below = (files: ReadonlyMap<string, Buffer>, folder: string, inside = true): Map<string, Buffer> =>
  new Map([...files].filter(([path]) => path.startsWith(`${folder}/`) === inside).map(([path, data]) => [inside ? path.slice(folder.length + 1) : path, data]));

describe.skipIf(!CORPUS)('a build of real charts with a library chart', () => {
  const corpus = CORPUS!;

  it('gives each chart archive the chart with its library, vendored in each chart or shared by the app, as helm package does', async () => {
    const all = corpusCharts(corpus).filter((chart) => corpusDependencies(corpus, chart).join() === 'common');
    expect(all.length).toBeGreaterThan(60);
    // The app sharing `common` holds all of them; the one vendoring it in each chart (~1 MB a copy) every other one.
    const charts = all.filter((_, i) => i % 2 === 0);
    const archives = new Map<CorpusDependencies, Map<string, Map<string, Buffer>>>();
    const apps = new Map<CorpusDependencies, string>();
    for (const dependencies of ['shared', 'vendored'] as const) {
      const app = tempDir('flotilla-corpus-');
      writeCorpusApp(corpus, app, dependencies === 'shared' ? all : charts, dependencies);
      apps.set(dependencies, app);
      const members = await readTarGzSafely((await buildApp(app, { outDir: tempDir() })).file);
      const byChart = new Map<string, Map<string, Buffer>>();
      for (const chart of charts) {
        const version = /^version: *(\S+)/m.exec(readFileSync(join(app, 'charts', chart, 'Chart.yaml'), 'utf8'))![1];
        const archive = members.get(`charts/${chart}-${version}.tgz`);
        expect(archive, chart).toBeDefined();
        byChart.set(chart, await filesOfArchive(archive!));
      }
      archives.set(dependencies, byChart);
    }
    const helmOut = tempDir();
    // The vendored app, one chart in eight (a Go process each): the chart as helm package writes it.
    for (const chart of charts.filter((_, i) => i % 8 === 0)) {
      expectSameChart(
        `${chart} (helm package)`,
        archives.get('vendored')!.get(chart)!,
        await helmPackage(join(apps.get('vendored')!, 'charts', chart), helmOut),
      );
    }
    // The shared app, every chart: its own files as in the vendored app, and `common` as helm packages it alone.
    const common = below(await helmPackage(join(apps.get('shared')!, 'charts', 'common'), helmOut), 'common');
    for (const chart of charts) {
      const [shared, vendored] = [archives.get('shared')!.get(chart)!, archives.get('vendored')!.get(chart)!];
      const library = `${chart}/charts/common`;
      expectSameChart(chart, below(shared, library, false), below(vendored, library, false), withoutRepositories);
      expectSameChart(`${chart}'s common`, below(shared, library), common);
    }
  }, 600_000);
});
