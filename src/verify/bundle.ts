/**
 * What an opened tarball holds, parsed: its chart archives and its releases.
 * Shared by verify and inspect.
 */
import { bundlePath, chartArchives, MANIFESTS_DIR, type OpenedBundle } from '../tarball/index.js';
import { readChartArchive, type ChartArchive } from '../charts/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import { parseYamlValue } from '../yaml/index.js';
import { FLUX_TREE, fluxTreePath, readHelmRelease, type HelmReleaseSpec } from '../flux/index.js';

/** A YAML file of the tarball as plain data; undefined when there is no such file; bad YAML is a {@link FlotillaError} naming the file and line. */
export function yamlOf(bundle: OpenedBundle, name: string): unknown {
  const data = bundle.files.get(name);
  return data === undefined ? undefined : parseYamlValue(data.toString('utf8'), name);
}

/** A file of fluxcd-manifests/ by its path inside it. */
export function manifestPath(rel: string): string {
  return bundlePath(MANIFESTS_DIR, rel);
}

export interface BundledChart {
  readonly file: string;
  readonly archive: ChartArchive;
}

export async function bundledCharts(bundle: OpenedBundle): Promise<{ charts: BundledChart[]; errors: string[] }> {
  const charts: BundledChart[] = [];
  const errors: string[] = [];
  for (const [name, bytes] of chartArchives(bundle.files)) {
    try {
      charts.push({ file: name, archive: await readChartArchive(bytes, { label: name, budget: bundle.budget }) });
    } catch (error) {
      if (!(error instanceof FlotillaError)) throw error;
      errors.push(`${name}: ${error.message}`);
    }
  }
  return { charts, errors };
}

export interface BundledRelease {
  /** Release folder under fluxcd-manifests/. */
  readonly folder: string;
  readonly name: string;
  readonly namespace?: string;
  readonly releaseName?: string;
  readonly chart?: string;
  readonly version?: string;
  readonly dependsOn: readonly string[];
  readonly valuesFrom: NonNullable<HelmReleaseSpec['valuesFrom']>;
  readonly sourceRef?: { readonly kind: string; readonly name: string };
}

/** Releases in the order of the top kustomization's resources. */
export function bundledReleases(bundle: OpenedBundle): BundledRelease[] {
  const top = yamlOf(bundle, manifestPath(FLUX_TREE.kustomization)) as { resources?: unknown[] } | undefined;
  const folders = (top?.resources ?? []).map(String).filter((r) => r !== FLUX_TREE.base);
  return folders.map((folder) => {
    const doc = readHelmRelease(yamlOf(bundle, manifestPath(fluxTreePath(folder, FLUX_TREE.helmRelease))));
    const kust = (yamlOf(bundle, manifestPath(fluxTreePath(folder, FLUX_TREE.kustomization))) ?? {}) as { namespace?: string };
    const chart = doc?.spec.chart?.spec;
    return {
      folder,
      name: doc?.metadata.name || folder,
      namespace: kust.namespace ?? doc?.metadata.namespace,
      releaseName: doc?.spec.releaseName,
      chart: chart?.chart,
      version: chart?.version,
      dependsOn: (doc?.spec.dependsOn ?? []).map((d) => d.name),
      valuesFrom: doc?.spec.valuesFrom ?? [],
      sourceRef: chart && { kind: chart.sourceRef.kind, name: chart.sourceRef.name },
    };
  });
}
