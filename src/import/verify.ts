/**
 * The import's last step before anything lands in APP_DIR: load the staged
 * tree with flotilla's own loader, generate fluxcd-manifests/ with the flux
 * generator, and compare every HelmRelease, kustomization and the
 * HelmRepository with the originals field for field (chart version stamped
 * where the original has the build placeholder, the Flux and kustomize
 * defaults the import warned about filled in); load every chart back and
 * compare what Helm would package. Any difference stops the import.
 */
import { join } from 'node:path';
import { APP_FILES, loadApp, type App } from '../app/index.js';
import { loadChart } from '../charts/index.js';
import { DiagnosticsError, FlotillaError, formatPath, type Diagnostic, type DocPath } from '../diagnostics/index.js';
import { dumpYaml, parseYaml, toPlain, type PlainValue } from '../yaml/index.js';
import { FLUX_TREE, fluxManifestTree, helmReleaseManifest, KUSTOMIZE_API } from '../flux/index.js';
import { Session } from '../session/index.js';
import { chartFingerprint } from './charts.js';
import { ImportVerificationError } from './errors.js';
import type { ImportedChart, ImportedRelease, StxManifests } from './types.js';

function isMap(v: unknown): v is Record<string, PlainValue> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The first place two plain values differ, or undefined when they are equal. */
function firstDifference(a: unknown, b: unknown, path: DocPath = []): { path: DocPath; left: unknown; right: unknown } | undefined {
  if (isMap(a) && isMap(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(a[key], b[key], [...path, key]);
      if (d) return d;
    }
    return undefined;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], [...path, i]);
      if (d) return d;
    }
    return undefined;
  }
  return a === b ? undefined : { path, left: a, right: b };
}

/** The original HelmRelease as the build should reproduce it: the placeholder (or version) replaced by the shipped chart's. */
function expectedHelmRelease(release: ImportedRelease, chartVersion: string): Record<string, unknown> {
  const expected = structuredClone(release.expected);
  const chart = ((expected.spec as Record<string, unknown>).chart as Record<string, unknown>).spec as Record<string, unknown>;
  chart.version = chartVersion;
  return expected;
}

/** A generated manifest as a reader of the YAML file would see it. */
function asWritten(manifest: unknown): PlainValue {
  const root = parseYaml(dumpYaml(manifest), 'generated', { layer: 'generated' }).root;
  return root ? toPlain(root) : null;
}

/**
 * Resolves to the warnings about the one file the import copies as written,
 * fluxcd/metadata.yaml, as every command will print them (unknown keys,
 * disabled_charts naming no chart); the import's own findings say the rest.
 * Every release's values are checked as the build checks them:
 * an error refuses the import here, before anything is written; their
 * warnings (kind clashes, keys a chart does not know) are the source's, copied
 * as it is, and `build` and `preflight` print them.
 */
export async function verifyImport(
  stagingDir: string,
  releases: readonly ImportedRelease[],
  charts: ReadonlyMap<string, ImportedChart>,
  manifests: StxManifests,
  expectEnabled: ReadonlySet<string>,
): Promise<Diagnostic[]> {
  const repository = manifests.repository.name;
  let app: App;
  try {
    app = await loadApp(stagingDir);
  } catch (error) {
    if (error instanceof DiagnosticsError) throw new ImportVerificationError(error.diagnostics);
    if (error instanceof FlotillaError) throw new ImportVerificationError([{ severity: 'error', message: error.message }]);
    throw error;
  }
  const problems: Diagnostic[] = [];
  for (const release of releases) {
    const loaded = app.graph.byName.get(release.name);
    const chart = charts.get(release.chart);
    if (!loaded || !chart) {
      problems.push({ severity: 'error', message: `release ${release.name} is missing from the imported release table` });
      continue;
    }
    const generated = asWritten(helmReleaseManifest(loaded, { chartVersion: chart.version, repository, repositoryNamespace: manifests.namespace }));
    const diff = firstDifference(generated, expectedHelmRelease(release, chart.version));
    if (diff) {
      problems.push({
        severity: 'error',
        message: `HelmRelease ${release.name} would differ at ${formatPath(diff.path)}: generated ${JSON.stringify(diff.left)}, original ${JSON.stringify(diff.right)}`,
        location: { file: release.source.helmRelease.file, line: 1, column: 1 },
      });
    }
  }
  problems.push(...kustomizationDifferences(app, releases, charts, manifests));
  const enabled = new Set(app.enabled.map((r) => r.name));
  for (const name of expectEnabled) {
    if (!enabled.has(name)) problems.push({ severity: 'error', message: `release ${name} is not enabled by the imported deployment spec` });
  }
  for (const chart of charts.values()) {
    let back;
    try {
      back = await loadChart(join(stagingDir, 'charts', chart.name));
    } catch (error) {
      if (!(error instanceof FlotillaError)) throw error;
      problems.push({ severity: 'error', message: `chart ${chart.name} (${chart.from}) cannot be loaded back: ${error.message}` });
      continue;
    }
    const want = chartFingerprint(chart.chart);
    const got = chartFingerprint(back);
    const missing = [...want.keys()].filter((p) => !got.has(p));
    const extra = [...got.keys()].filter((p) => !want.has(p));
    const changed = [...want.keys()].filter((p) => got.has(p) && got.get(p) !== want.get(p));
    if (back.version !== chart.version || missing.length + extra.length + changed.length > 0) {
      const what = [
        back.version !== chart.version ? `version ${back.version} instead of ${chart.version}` : '',
        missing.length ? `missing ${missing.slice(0, 3).join(', ')}` : '',
        extra.length ? `extra ${extra.slice(0, 3).join(', ')}` : '',
        changed.length ? `changed ${changed.slice(0, 3).join(', ')}` : '',
      ].filter(Boolean);
      problems.push({ severity: 'error', message: `chart ${chart.name} (${chart.from}) would package differently: ${what.join('; ')}` });
    }
  }
  try {
    await Session.forApp(app).checkAll();
  } catch (error) {
    if (error instanceof DiagnosticsError) problems.push(...error.diagnostics);
    else if (error instanceof FlotillaError) problems.push({ severity: 'error', message: error.message });
    else throw error;
  }
  if (problems.length > 0) throw new ImportVerificationError(problems);
  return app.warnings.filter((w) => w.location?.file === APP_FILES.metadata);
}

/** The kustomizations and the HelmRepository the build would write, compared with the originals. */
function kustomizationDifferences(
  app: App,
  releases: readonly ImportedRelease[],
  charts: ReadonlyMap<string, ImportedChart>,
  manifests: StxManifests,
): Diagnostic[] {
  const repo = manifests.repository;
  const tree = fluxManifestTree({
    releases: app.graph.waves.flat(),
    chartVersions: new Map([...charts.values()].map((c) => [c.name, c.version])),
    repository: {
      name: repo.name,
      url: repo.url,
      interval: repo.interval ?? '1m',
      namespace: manifests.namespace,
      spec: repo.spec,
      labels: repo.labels,
      annotations: repo.annotations,
    },
    staticOverrides: new Map(),
    namespace: manifests.namespace,
    kustomization: manifests.kustomization,
    baseKustomization: manifests.baseKustomization,
  });
  const namespaceOf = new Map(releases.map((r) => [r.name, r.namespace]));
  const oneNamespace = releases.every((r) => r.namespace === manifests.namespace);
  const problems: Diagnostic[] = [];
  for (const [path, original] of manifests.originals) {
    const generatedText = tree.get(path);
    if (generatedText === undefined) continue; // a release folder the import did not take (an error already said why)
    const want = structuredClone(original) as Record<string, unknown>;
    // What the import warned about and the build writes explicitly (same result once kustomize has run).
    if (path !== 'base/helmrepository.yaml') {
      want.apiVersion ??= KUSTOMIZE_API;
      want.kind ??= 'Kustomization';
    }
    const folder = path.split('/')[0] as string;
    if (path === 'kustomization.yaml') {
      if (oneNamespace) want.namespace = manifests.namespace;
      else delete want.namespace;
      // Resources in apply order (the import warned when the original's order differs; kustomize output order only).
      want.resources = ['base', ...app.graph.waves.flat().map((r) => r.name)];
    } else if (path === 'base/kustomization.yaml') {
      if (oneNamespace) delete want.namespace;
      else want.namespace = manifests.namespace;
      want.resources = ['helmrepository.yaml'];
    } else if (path === 'base/helmrepository.yaml') {
      want.apiVersion = 'source.toolkit.fluxcd.io/v1';
      const metadata = (want.metadata ??= {}) as Record<string, unknown>;
      metadata.namespace = manifests.namespace;
      const spec = (want.spec ??= {}) as Record<string, unknown>;
      spec.interval ??= '1m';
      delete want.status;
    } else if (namespaceOf.has(folder)) {
      want.namespace = namespaceOf.get(folder);
      // The HelmRelease first, written as helmrelease.yaml; extra resources after it, as written.
      const extra = releases.find((r) => r.name === folder)?.kustomization.resources;
      want.resources = [FLUX_TREE.helmRelease, ...(Array.isArray(extra) ? extra : [])];
    }
    const generatedRoot = parseYaml(generatedText, path, { layer: 'generated' }).root;
    const diff = firstDifference(generatedRoot ? toPlain(generatedRoot) : null, asWritten(want));
    if (diff) {
      problems.push({
        severity: 'error',
        message: `${path} would differ at ${formatPath(diff.path)}: generated ${JSON.stringify(diff.left)}, original ${JSON.stringify(diff.right)}`,
        location: { file: `${manifests.dir}/${path}`, line: 1, column: 1 },
      });
    }
  }
  return problems;
}
