/** `flotilla inspect`: what a tarball holds, read safely, nothing written. */
import { bundleFolder, METADATA_FILE, openBundle, PLUGINS_DIR } from '../bundle/index.js';
import { MANIFEST_FILE } from '../plugins/index.js';
import { bundledCharts, bundledReleases, yamlOf } from './bundle.js';
import { bundleImages, type ImageReference } from './images.js';
import type { BundledRelease } from './bundle.js';

export interface InspectedChart {
  readonly file: string;
  readonly name: string;
  readonly version: string;
  readonly appVersion?: string;
  readonly size: number;
  readonly files: number;
}

export interface InspectReport {
  readonly app: string;
  readonly version: string;
  readonly charts: readonly InspectedChart[];
  readonly releases: readonly BundledRelease[];
  readonly images: readonly ImageReference[];
  readonly plugins: readonly string[];
}

export async function inspectBundle(path: string): Promise<InspectReport> {
  const bundle = await openBundle(path);
  const metadata = (yamlOf(bundle, METADATA_FILE) ?? {}) as { app_name?: string; app_version?: string };
  const { charts } = await bundledCharts(bundle);
  const images = bundleImages(bundle, charts);
  const manifest = (JSON.parse(bundleFolder(bundle.files, PLUGINS_DIR).get(MANIFEST_FILE)?.toString('utf8') ?? '{}') as { plugins?: { name?: string; chart?: string; file?: string }[] }).plugins ?? [];
  return {
    app: String(metadata.app_name ?? '?'),
    version: String(metadata.app_version ?? '?'),
    charts: charts.map(({ file, archive }) => ({
      file,
      name: archive.name,
      version: archive.version,
      appVersion: archive.metadata.appVersion,
      size: bundle.files.get(file)?.length ?? 0,
      files: archive.files.length,
    })),
    releases: bundledReleases(bundle),
    images,
    plugins: manifest.map((p) => p.name ?? p.chart ?? p.file ?? '?'),
  };
}
