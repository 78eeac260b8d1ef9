/** `flotilla inspect`: what a tarball holds, read safely, nothing written. */
import { basename } from 'node:path';
import { bundleFolder, METADATA_FILE, openBundle, PLUGINS_DIR, type OpenedBundle } from '../tarball/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import { parseJson } from '../yaml/index.js';
import { FLUX_TREE } from '../flux/index.js';
import { MANIFEST_FILE } from '../plugins/index.js';
import { bundledCharts, bundledReleases, manifestPath, yamlOf } from './bundle.js';
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

/**
 * What a tarball holds. Anything that is not a readable application tarball
 * (no metadata naming the app, no kustomization, a chart or a file that does
 * not parse) is a {@link FlotillaError} naming the tarball and the file.
 */
export async function inspectBundle(path: string): Promise<InspectReport> {
  const bundle = await openBundle(path);
  try {
    return await describeBundle(bundle);
  } catch (error) {
    if (!(error instanceof FlotillaError)) throw error;
    throw new FlotillaError(`${basename(path)}: not a readable application tarball: ${error.message}`);
  }
}

async function describeBundle(bundle: OpenedBundle): Promise<InspectReport> {
  const metadata = yamlOf(bundle, METADATA_FILE) as { app_name?: unknown; app_version?: unknown } | null | undefined;
  if (!bundle.files.has(METADATA_FILE)) throw new FlotillaError(`${METADATA_FILE} is missing`);
  const app = metadata?.app_name;
  const version = metadata?.app_version;
  if (typeof app !== 'string' || (typeof version !== 'string' && typeof version !== 'number'))
    throw new FlotillaError(`${METADATA_FILE} does not name app_name and app_version`);
  const kustomization = manifestPath(FLUX_TREE.kustomization);
  if (!bundle.files.has(kustomization)) throw new FlotillaError(`${kustomization} is missing`);
  const { charts, errors } = await bundledCharts(bundle);
  if (errors.length > 0) throw new FlotillaError(`${errors[0]}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`);
  const manifestFile = `${PLUGINS_DIR}/${MANIFEST_FILE}`;
  const manifestText = bundleFolder(bundle.files, PLUGINS_DIR).get(MANIFEST_FILE)?.toString('utf8');
  const manifest = (manifestText === undefined ? {} : parseJson(manifestText, manifestFile)) as { plugins?: unknown } | null;
  const plugins = Array.isArray(manifest?.plugins) ? (manifest.plugins as { name?: string; chart?: string; file?: string }[]) : [];
  return {
    app,
    version: String(version),
    charts: charts.map(({ file, archive }) => ({
      file,
      name: archive.name,
      version: archive.version,
      appVersion: archive.metadata.appVersion,
      size: bundle.files.get(file)?.length ?? 0,
      files: archive.files.length,
    })),
    releases: bundledReleases(bundle),
    images: bundleImages(bundle, charts),
    plugins: plugins.map((p) => p?.name ?? p?.chart ?? p?.file ?? '?'),
  };
}
