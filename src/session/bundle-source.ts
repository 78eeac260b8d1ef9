/**
 * A built tarball as an app source, read in memory: nothing is extracted.
 */
import { APP_FILES, type AppSource } from '../app/index.js';
import {
  APP_DIR,
  bundleFolder,
  bundleMetadata,
  bundlePath,
  chartArchivePath,
  MANIFESTS_DIR,
  readTarGzEntriesSync,
  type OpenedBundle,
} from '../tarball/index.js';
import { parseYamlValue } from '../yaml/index.js';
import { memorySource } from '../files/index.js';
import { FLUX_TREE, fluxTreePath, readHelmRelease } from '../flux/index.js';

/**
 * A built tarball as an app source: metadata.yaml is the app's
 * fluxcd/metadata.yaml, app/ holds the rest; a release's chart is the
 * archive its HelmRelease points at (`charts/<chart>-<version>.tgz`).
 */
export function bundleAppSource(bundle: OpenedBundle): AppSource {
  const appFiles = bundleFolder(bundle.files, APP_DIR);
  const metadata = bundleMetadata(bundle.files);
  if (metadata) appFiles.set(APP_FILES.metadata, metadata);
  const archives = chartArchivesByName(bundle);
  const opened = new Map<string, Map<string, Buffer>>();
  const chartFiles = (chart: string): Map<string, Buffer> | undefined => {
    const archive = archives.get(chart);
    if (!archive) return undefined;
    let files = opened.get(chart);
    if (!files) {
      // A Helm chart archive holds one top folder named after the chart.
      const entries = readTarGzEntriesSync(bundle.files.get(archive)!, { label: `${bundle.path}#${archive}`, budget: bundle.budget });
      files = new Map(entries.filter((e) => e.type === 'file').map((e) => [e.path.slice(e.path.indexOf('/') + 1), e.data]));
      opened.set(chart, files);
    }
    return files;
  };
  return {
    files: memorySource(appFiles, bundle.path),
    chartFile(release, file) {
      const data = chartFiles(release.chart)?.get(file);
      return data && { text: data.toString('utf8'), file: `${archives.get(release.chart)}#${release.chart}/${file}` };
    },
  };
}

/** Chart name → archive path, from the HelmReleases of fluxcd-manifests (only archives the tarball holds). */
function chartArchivesByName(bundle: OpenedBundle): Map<string, string> {
  const out = new Map<string, string>();
  const read = (rel: string) => {
    const path = bundlePath(MANIFESTS_DIR, rel);
    const data = bundle.files.get(path);
    return data && parseYamlValue(data.toString('utf8'), path);
  };
  const top = read(FLUX_TREE.kustomization) as { resources?: unknown } | undefined;
  const folders = Array.isArray(top?.resources) ? top.resources.filter((r): r is string => typeof r === 'string' && r !== FLUX_TREE.base) : [];
  for (const folder of folders) {
    const chart = readHelmRelease(read(fluxTreePath(folder, FLUX_TREE.helmRelease)))?.spec.chart?.spec;
    if (!chart?.version) continue;
    const archive = chartArchivePath(chart.chart, chart.version);
    if (bundle.files.has(archive)) out.set(chart.chart, archive);
  }
  return out;
}
