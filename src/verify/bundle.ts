/**
 * Opening a built application tarball: read safely into memory (no file is
 * written), then parse what is in it. Shared by verify and inspect.
 */
import { basename } from 'node:path';
import { load } from 'js-yaml';
import { readTarGzSafely } from '../bundle/index.js';
import { readChartArchive, type ChartArchive } from '../charts/index.js';
import { FlotillaError } from '../diagnostics/index.js';

export interface OpenedBundle {
  readonly path: string;
  readonly files: ReadonlyMap<string, Buffer>;
}

export async function openBundle(path: string): Promise<OpenedBundle> {
  if (!/\.(tgz|tar\.gz)$/.test(path)) throw new FlotillaError(`${basename(path)}: an application tarball must end in .tgz or .tar.gz`);
  return { path, files: await readTarGzSafely(path, { label: basename(path) }) };
}

export function text(bundle: OpenedBundle, name: string): string | undefined {
  return bundle.files.get(name)?.toString('utf8');
}

export function yamlOf(bundle: OpenedBundle, name: string): unknown {
  const t = text(bundle, name);
  return t === undefined ? undefined : load(t);
}

export interface BundledChart {
  readonly file: string;
  readonly archive: ChartArchive;
}

export async function bundledCharts(bundle: OpenedBundle): Promise<{ charts: BundledChart[]; errors: string[] }> {
  const charts: BundledChart[] = [];
  const errors: string[] = [];
  for (const [name, bytes] of bundle.files) {
    if (!/^charts\/[^/]+\.tgz$/.test(name)) continue;
    try {
      charts.push({ file: name, archive: await readChartArchive(bytes, { label: name }) });
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
  readonly valuesFrom: readonly { kind?: string; name?: string; valuesKey?: string }[];
  readonly sourceRef?: { kind?: string; name?: string };
}

interface HelmReleaseDoc {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: {
    releaseName?: string;
    chart?: { spec?: { chart?: string; version?: string | number; sourceRef?: { kind?: string; name?: string } } };
    dependsOn?: { name?: string }[];
    valuesFrom?: { kind?: string; name?: string; valuesKey?: string }[];
  };
}

/** Releases in the order of the top kustomization's resources. */
export function bundledReleases(bundle: OpenedBundle): BundledRelease[] {
  const top = yamlOf(bundle, 'fluxcd-manifests/kustomization.yaml') as { resources?: unknown[] } | undefined;
  const folders = (top?.resources ?? []).map(String).filter((r) => r !== 'base');
  return folders.map((folder) => {
    const doc = (yamlOf(bundle, `fluxcd-manifests/${folder}/helmrelease.yaml`) ?? {}) as HelmReleaseDoc;
    const kust = (yamlOf(bundle, `fluxcd-manifests/${folder}/kustomization.yaml`) ?? {}) as { namespace?: string };
    const chart = doc.spec?.chart?.spec;
    return {
      folder,
      name: doc.metadata?.name ?? folder,
      namespace: kust.namespace ?? doc.metadata?.namespace,
      releaseName: doc.spec?.releaseName,
      chart: chart?.chart,
      version: chart?.version === undefined ? undefined : String(chart.version),
      dependsOn: (doc.spec?.dependsOn ?? []).map((d) => String(d.name)),
      valuesFrom: doc.spec?.valuesFrom ?? [],
      sourceRef: chart?.sourceRef,
    };
  });
}
