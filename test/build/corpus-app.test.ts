/**
 * One app holding every chart of ../shared/corpus/bitnami (Bitnami's public
 * chart repository: 117 charts, in the 139 folders that hold one or only a
 * README), one release per chart but the library
 * `common` (Helm installs no library chart), the charts' dependencies on
 * their repository resolved by the app's mapping of that repository to its
 * own `charts/` — the corpus charts themselves: `common`, `postgresql`,
 * `redis`, `mariadb`, `memcached` under four aliases in grafana-loki… —
 * built offline with an empty dependency cache.
 *
 * The oracle is the real `helm package` of each chart after what `helm
 * dependency build` would leave in its `charts/`: the archive of each
 * dependency, `<name>-<version>.tgz`, as `helm package` makes it. With no
 * network, those archives are made here from the corpus charts themselves,
 * dependencies first (a copy of each chart with its dependencies' archives
 * in its `charts/`, packaged level by level, one `helm package` call a
 * level): each archive is then at once the oracle for its chart and what a
 * chart depending on it vendors. Rewriting the charts to `file://` paths
 * instead would make `helm dependency build` rewrite their Chart.lock and
 * re-package each dependency once per chart depending on it.
 *
 * Then every chart archive must hold the same files as helm's (a dependency
 * compared by its files, folder or nested archive; Chart.yaml by its parsed
 * content; every other file byte for byte), GNU tar, Python, node-tar and
 * Go must read the app tarball alike, and `helm lint` and `helm template`
 * must accept every chart archive.
 */
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { load } from 'js-yaml';
import { buildApp } from '../../src/build/index.js';
import { bundleFromBytes, chartArchives, readTarGzEntriesSync } from '../../src/tarball/index.js';
import { mapConcurrently } from '../../src/concurrency/index.js';
import { isDns1123Label } from '../../src/names/index.js';
import { helm } from '../../src/tools/index.js';
import { tempDir } from '../support/app-fixture.js';
import { chartContent, chartDifferences } from '../support/archive-content.js';
import { CORPUS, corpusCharts, corpusRepositories, writeCorpusApp } from '../support/corpus-app.js';
import { buildGoLister, gnuTarListings, goListings, listing, nodeTarListing, pythonListings } from '../support/tar-readers/readers.js';

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

if (!CORPUS) console.log('corpus-app: ../shared/corpus is absent; the build of every corpus chart is skipped');

interface CorpusChart {
  readonly name: string;
  readonly version: string;
  readonly type?: string;
  /** Dependencies from a repository (not file://), by chart name. */
  readonly fromRepositories: readonly string[];
}

function readCorpus(corpus: string): Map<string, CorpusChart> {
  const repositories = new Set(corpusRepositories(corpus));
  const charts = new Map<string, CorpusChart>();
  for (const name of readdirSync(corpus).sort()) {
    let text: string;
    try {
      text = readFileSync(join(corpus, name, 'Chart.yaml'), 'utf8');
    } catch {
      continue;
    }
    const chart = load(text) as { version: string; type?: string; dependencies?: { name: string; repository?: string }[] };
    const fromRepositories = [...new Set((chart.dependencies ?? []).filter((d) => repositories.has(d.repository ?? '')).map((d) => d.name))];
    charts.set(name, { name, version: String(chart.version), type: chart.type, fromRepositories });
  }
  return charts;
}

/** Folders writable, so a copy of a read-only corpus chart can take its dependencies' archives. */
function writable(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) writable(join(dir, entry.name));
}

/** helm package of every corpus chart, its dependencies' archives in its charts/ (see the file's comment): archive by chart name. */
async function helmPackagedCorpus(corpus: string, charts: ReadonlyMap<string, CorpusChart>, work: string): Promise<Map<string, Buffer>> {
  const archives = new Map<string, Buffer>();
  const out = join(work, 'helm-out');
  mkdirSync(out, { recursive: true });
  let pending = [...charts.values()];
  while (pending.length > 0) {
    const ready = pending.filter((c) => c.fromRepositories.every((d) => archives.has(d)));
    expect(ready.length, `corpus charts whose dependencies cannot be packaged: ${pending.map((c) => c.name).join(', ')}`).toBeGreaterThan(0);
    const dirs = ready.map((chart) => {
      const dir = join(work, 'helm-src', chart.name);
      cpSync(join(corpus, chart.name), dir, { recursive: true });
      writable(dir);
      mkdirSync(join(dir, 'charts'), { recursive: true });
      for (const dep of chart.fromRepositories) writeFileSync(join(dir, 'charts', `${dep}-${charts.get(dep)!.version}.tgz`), archives.get(dep)!);
      return dir;
    });
    // One helm process a level, the level split in two for the two cores.
    const halves = [dirs.filter((_, i) => i % 2 === 0), dirs.filter((_, i) => i % 2 === 1)].filter((h) => h.length > 0);
    await Promise.all(halves.map((half) => helm(['package', ...half, '-d', out])));
    for (const chart of ready) archives.set(chart.name, readFileSync(join(out, `${chart.name}-${chart.version}.tgz`)));
    pending = pending.filter((c) => !archives.has(c.name));
  }
  return archives;
}

describe.skipIf(!CORPUS)('an app of every corpus chart, dependencies mapped to the corpus charts', () => {
  const corpus = CORPUS!;

  it('builds offline, each chart archive holding what helm package writes after helm dependency build, read alike by four tar readers, accepted by helm lint and helm template', async () => {
    const charts = readCorpus(corpus);
    const released = corpusCharts(corpus);
    expect(released.length).toBe([...charts.values()].filter((c) => c.type !== 'library').length);
    const app = tempDir('flotilla-corpus-');
    writeCorpusApp(corpus, app, released, 'mapped');
    const work = tempDir('flotilla-corpus-work-');
    const oracle = helmPackagedCorpus(corpus, charts, work);
    oracle.catch(() => undefined);
    const built = await buildApp(app, { outDir: join(work, 'out'), offline: true, dependencyCacheDir: join(work, 'empty-dependency-cache'), typecheck: false });
    expect(built.charts.map((c) => c.name).sort()).toEqual([...released].sort());
    // The release table: one release per chart, each in a namespace Kubernetes accepts.
    expect(built.app.releases.map((r) => r.chart).sort()).toEqual([...released].sort());
    expect(built.app.releases.filter((r) => !isDns1123Label(r.namespace))).toEqual([]);
    const tarball = readFileSync(built.file);
    const archives = chartArchives(bundleFromBytes(tarball, built.file).files);
    expect(archives.length).toBe(released.length);

    // Every chart archive: the files helm package writes.
    const helmArchives = await oracle;
    const differences: string[] = [];
    for (const [path, bytes] of archives) {
      const name = /^charts\/(.+)-[^-]+\.tgz$/.exec(path)?.[1] ?? path;
      const problems = chartDifferences(await chartContent(bytes), await chartContent(helmArchives.get(name)!));
      differences.push(...problems.map((p) => `${name}: ${p}`));
    }
    expect(differences).toEqual([]);

    // The app tarball: the same entries and contents for flotilla's reader, GNU tar, Python, node-tar and Go.
    const tar = join(work, 'app.tar');
    writeFileSync(tar, gunzipSync(tarball));
    const ours = listing(
      readTarGzEntriesSync(tarball, { label: built.file }).map((e) => ({
        name: e.path,
        type: e.type === 'file' ? 'file' : 'dir',
        sha256: e.type === 'file' ? sha256(e.data) : undefined,
      })),
    );
    const go = buildGoLister(work);
    if (go.skipped) console.log(`corpus-app: ${go.skipped}`);
    const readers = {
      'GNU tar': gnuTarListings([tar], work)[0]!,
      'Python tarfile': pythonListings([tar])[0]!,
      'node-tar': await nodeTarListing(readFileSync(tar)),
      ...(go.binary ? { 'Go archive/tar': goListings(go.binary, [tar])[0]! } : {}),
    };
    for (const [reader, theirs] of Object.entries(readers)) expect(theirs, reader).toEqual(ours);

    // helm lint (its chart paths shared by two processes, one a core) and helm template (two at a time) accept every chart archive.
    const files = archives.map(([path, bytes]) => {
      const file = join(work, 'archives', path);
      mkdirSync(join(work, 'archives', 'charts'), { recursive: true });
      writeFileSync(file, bytes);
      return file;
    });
    const halves = [files.filter((_, i) => i % 2 === 0), files.filter((_, i) => i % 2 === 1)];
    const linted = await Promise.all(halves.map((half) => helm(['lint', ...half])));
    expect(linted.map((l) => /(\d+) chart\(s\) linted, 0 chart\(s\) failed/.exec(l.stdout)?.[1])).toEqual(halves.map((h) => String(h.length)));
    const refused = (
      await mapConcurrently(files, 2, (file) =>
        helm(['template', 'corpus', file, '--namespace', 'apps']).then(
          ({ stdout }) => (/^kind: /m.test(stdout) ? undefined : `${file}: rendered no object`),
          (error: Error) => `${file}: ${error.message}`,
        ),
      )
    ).filter((problem) => problem !== undefined);
    expect(refused).toEqual([]);
  }, 900_000);
});
