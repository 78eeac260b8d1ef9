/**
 * The application tarball's layout, StarlingX's plus flotilla's own parts,
 * named once here (docs/architecture.md, "Tarball layout"):
 *
 *   metadata.yaml                  the app's fluxcd/metadata.yaml
 *   charts/<name>-<version>.tgz    one Helm chart archive per chart
 *   fluxcd-manifests/              the kustomization Flux applies (src/flux writes its inside)
 *   plugins/                       the plugin bundle (src/plugins)
 *   app/                           source files apply time needs: fluxcd/releases.yaml, overrides/, policies/
 *   checksum.md5, checksum.sha256  every other file's digest
 *   checksum.sha256.sig            optional ed25519 signature of checksum.sha256
 */

export const METADATA_FILE = 'metadata.yaml';
export const CHARTS_DIR = 'charts';
export const MANIFESTS_DIR = 'fluxcd-manifests';
export const PLUGINS_DIR = 'plugins';
export const APP_DIR = 'app';

export type ChecksumAlgorithm = 'sha256' | 'md5';

export const CHECKSUM_FILES: Readonly<Record<ChecksumAlgorithm, string>> = {
  sha256: 'checksum.sha256',
  md5: 'checksum.md5',
};

export const SIGNATURE_FILE = 'checksum.sha256.sig';

/** What may sit at the top of a tarball. */
export const TOP_LEVEL_ENTRIES: readonly string[] = [
  METADATA_FILE,
  CHARTS_DIR,
  MANIFESTS_DIR,
  PLUGINS_DIR,
  APP_DIR,
  CHECKSUM_FILES.md5,
  CHECKSUM_FILES.sha256,
  SIGNATURE_FILE,
];

/** The checksum files and the signature: the files the checksum lists never cover. */
export function isChecksumFile(path: string): boolean {
  return path === CHECKSUM_FILES.md5 || path === CHECKSUM_FILES.sha256 || path === SIGNATURE_FILE;
}

/** `<dir>/<rel>`: a file of one of the tarball's folders. */
export function bundlePath(dir: typeof CHARTS_DIR | typeof MANIFESTS_DIR | typeof PLUGINS_DIR | typeof APP_DIR, rel: string): string {
  return `${dir}/${rel}`;
}

/** Where a chart's archive sits: `charts/<name>-<version>.tgz`. */
export function chartArchivePath(name: string, version: string): string {
  return bundlePath(CHARTS_DIR, `${name}-${version}.tgz`);
}

/** Whether `path` is a chart archive directly under charts/. */
export function isChartArchivePath(path: string): boolean {
  return path.startsWith(`${CHARTS_DIR}/`) && path.endsWith('.tgz') && !path.slice(CHARTS_DIR.length + 1).includes('/');
}

/** The tarball's file name for an app version. */
export function bundleFileName(appName: string, appVersion: string): string {
  return `${appName}-${appVersion}.tgz`;
}

/** File names a tarball may have: `.tgz` (what build writes) or `.tar.gz`. */
export function isBundleFileName(path: string): boolean {
  return /\.(tgz|tar\.gz)$/.test(path);
}
