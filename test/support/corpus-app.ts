/**
 * An app made of real charts: those of `../shared/corpus/bitnami` (Bitnami's
 * public chart repository at one commit), each with its dependencies vendored
 * as folders in its `charts/`, as `helm dependency build` leaves them
 * unpacked. Every dependency of a corpus chart is itself a corpus chart
 * (`common`, `postgresql`, `redis`…), vendored with its own dependencies, so
 * a library chart sits at several depths. Tests that need the corpus skip
 * when it is absent ({@link CORPUS} undefined).
 */
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { dump, load } from 'js-yaml';

const corpusRoot = resolve(import.meta.dirname, '..', '..', '..', 'shared', 'corpus', 'bitnami');

/** The corpus folder, or undefined when this checkout has none beside it. */
export const CORPUS: string | undefined = existsSync(join(corpusRoot, 'common', 'Chart.yaml')) ? corpusRoot : undefined;

interface ChartFile {
  readonly name: string;
  readonly type?: string;
  readonly dependencies?: readonly { readonly name: string; readonly repository?: string }[];
}

function chartFile(corpus: string, chart: string): ChartFile {
  return load(readFileSync(join(corpus, chart, 'Chart.yaml'), 'utf8')) as ChartFile;
}

/** The corpus's application charts (not libraries), by name, sorted. */
export function corpusCharts(corpus: string): string[] {
  return readdirSync(corpus)
    .filter((name) => existsSync(join(corpus, name, 'Chart.yaml')))
    .filter((name) => chartFile(corpus, name).type !== 'library')
    .sort();
}

/** The names of a corpus chart's dependencies from a repository (those from `file://` the chart carries itself). */
export function corpusDependencies(corpus: string, chart: string): string[] {
  return (chartFile(corpus, chart).dependencies ?? [])
    .filter((dependency) => !dependency.repository?.startsWith('file://'))
    .map((dependency) => dependency.name);
}

/** Copies a corpus chart's folder (read-only there) as a user's writable checkout, without Chart.lock (its digests name the repository's archives) unless asked. */
function copyChart(source: string, target: string, keepLock = false): void {
  cpSync(source, target, { recursive: true, filter: (path) => keepLock || !path.endsWith('/Chart.lock') });
  // Folders writable (the files stay read-only): the copy can be added to and removed.
  const writable = (path: string): void => {
    chmodSync(path, 0o755);
    for (const entry of readdirSync(path, { withFileTypes: true })) if (entry.isDirectory()) writable(join(path, entry.name));
  };
  writable(target);
}

/** Copies corpus chart `chart` to `target`, its dependencies vendored below it, recursively. */
export function vendorCorpusChart(corpus: string, chart: string, target: string): void {
  copyChart(join(corpus, chart), target);
  for (const dependency of corpusDependencies(corpus, chart)) {
    if (!existsSync(join(corpus, dependency, 'Chart.yaml'))) throw new Error(`corpus chart ${chart} depends on ${dependency}, which the corpus lacks`);
    vendorCorpusChart(corpus, dependency, join(target, 'charts', dependency));
  }
}

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

/**
 * How an app holds its charts' dependencies: `vendored`, a copy in each
 * chart's `charts/` (as `helm dependency build` leaves them, unpacked);
 * `shared`, one chart in the app's `charts/` that every chart depending on it
 * names through `file://../<name>` (as a library chart of the app is);
 * `mapped`, every corpus chart as it is (Chart.lock kept) in the app's
 * `charts/`, and the repositories the charts name mapped to that folder
 * (`chartRepositories`), so each dependency is the corpus chart of its name.
 */
export type CorpusDependencies = 'vendored' | 'shared' | 'mapped';

/** The repositories (not file://) the corpus's charts take dependencies from. */
export function corpusRepositories(corpus: string): string[] {
  const all = readdirSync(corpus)
    .filter((name) => existsSync(join(corpus, name, 'Chart.yaml')))
    .flatMap((name) => (chartFile(corpus, name).dependencies ?? []).map((dependency) => dependency.repository ?? ''));
  return [...new Set(all.filter((repository) => repository !== '' && !repository.startsWith('file://')))].sort();
}

/** Copies corpus chart `chart` to `target`, its dependencies named as `file://../<name>` beside it, each copied once. */
function shareCorpusChart(corpus: string, chart: string, charts: string): void {
  const target = join(charts, chart);
  if (existsSync(target)) return;
  copyChart(join(corpus, chart), target);
  const names = corpusDependencies(corpus, chart);
  if (names.length === 0) return;
  const file = load(readFileSync(join(target, 'Chart.yaml'), 'utf8')) as { dependencies: { name: string; repository?: string }[] };
  for (const dependency of file.dependencies) if (names.includes(dependency.name)) dependency.repository = `file://../${dependency.name}`;
  rmSync(join(target, 'Chart.yaml'));
  writeFileSync(join(target, 'Chart.yaml'), dump(file));
  for (const name of names) shareCorpusChart(corpus, name, charts);
}

/**
 * Writes an app into `root` holding `charts` (corpus chart names), their
 * dependencies held as `dependencies` says, one release per chart. Returns
 * the released charts' names.
 */
export function writeCorpusApp(
  corpus: string,
  root: string,
  charts: readonly string[] = corpusCharts(corpus),
  dependencies: CorpusDependencies = 'vendored',
): string[] {
  const releases: string[] = [];
  if (dependencies === 'mapped') {
    for (const name of readdirSync(corpus).filter((n) => existsSync(join(corpus, n, 'Chart.yaml'))))
      copyChart(join(corpus, name), join(root, 'charts', name), true);
  }
  charts.forEach((chart, c) => {
    if (dependencies === 'vendored') vendorCorpusChart(corpus, chart, join(root, 'charts', chart));
    else if (dependencies === 'shared') shareCorpusChart(corpus, chart, join(root, 'charts'));
    write(root, `overrides/static/${chart}.yaml`, `# static overrides of ${chart}\ncommonLabels:\n  app.example/owner: platform\n`);
    releases.push(`  - name: ${chart}\n    chart: ${chart}\n    service: s${c}\n    group: apps\n`);
  });
  write(root, 'fluxcd/metadata.yaml', 'app_name: corpus\napp_version: 1.0-0\nsupported_k8s_version:\n  minimum: v1.29.0\n');
  const mapping =
    dependencies === 'mapped'
      ? `chartRepositories:\n${corpusRepositories(corpus)
          .map((url) => `  ${url}: charts\n`)
          .join('')}`
      : '';
  write(root, 'fluxcd/releases.yaml', `${mapping}defaults:\n  namespace: apps\n  timeout: 30m\nreleases:\n${releases.join('')}`);
  write(root, 'overrides/deployment.yaml', `main:\n  release: "2025.1"\nfeatures:\n  services: [${charts.map((_, c) => `s${c}`).join(', ')}]\n`);
  write(root, 'overrides/versions/2025.1.yaml', 'release: "2025.1"\nimages: {}\n');
  return [...charts];
}
