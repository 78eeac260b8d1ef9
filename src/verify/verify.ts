/**
 * `flotilla verify`: every check StarlingX's upload makes, and more, on a
 * built tarball. Each problem is one line; none means the tarball is sound.
 * The archive is read in memory with the safe reader; only fluxcd-manifests/
 * and chart archives are written, to a private temp folder, for kubectl and helm.
 */
import { join } from 'node:path';
import { APP_FILES, checkSchema, declaredFluxTarget, readMetadata, STARLINGX_HELM_REPOS, starlingxRepositoryOfUrl, type JsonSchema } from '../app/index.js';
import {
  APP_DIR,
  bundleFileName,
  bundleFolder,
  bundleMetadata,
  bundlePath,
  chartArchivePath,
  CHARTS_DIR,
  CHECKSUM_FILES,
  checkSignature,
  formatChecksumProblem,
  MANIFESTS_DIR,
  METADATA_FILE,
  openBundle,
  PLUGINS_DIR,
  SIGNATURE_FILE,
  TOP_LEVEL_ENTRIES,
  verifyChecksums,
  type OpenedBundle,
} from '../tarball/index.js';
import { MANIFEST_FILE, verifyPluginBundle } from '../plugins/index.js';
import { mapConcurrently } from '../concurrency/index.js';
import { withTempDir, writeFolder } from '../files/index.js';
import { FlotillaError, formatDiagnostic } from '../diagnostics/index.js';
import { parseYaml, parseYamlStream } from '../yaml/index.js';
import {
  FLUX_TREE,
  fluxTreePath,
  HELM_RELEASE_API,
  helmReleaseSchemas,
  helmRepositorySchema,
  overridesValuesFrom,
  readHelmRelease,
  SOURCE_API,
  DEFAULT_FLUX_TARGET,
  type FluxTarget,
  type HelmRelease,
} from '../flux/index.js';
import { helm, kubectl, ToolError } from '../tools/index.js';
import { Session } from '../session/index.js';
import { bundledCharts, bundledReleases, manifestPath, type BundledChart, type BundledRelease } from './bundle.js';
import { kustomizationReferenceProblems } from './kustomization.js';
import { bundleImages } from './images.js';
import { starlingxPlatformGaps } from './starlingx.js';

export interface VerifyReport {
  readonly path: string;
  readonly problems: readonly string[];
  readonly warnings: readonly string[];
  readonly ok: boolean;
  /**
   * Where the tarball's plugin code ran: `plugin-process` when verify computed
   * every release's values with it (only ever in the plugin process, under
   * Node's permission model: docs/security.md), `none` when the tarball has
   * no plugins, `not-run` when verify stopped before.
   */
  readonly pluginCode: 'plugin-process' | 'none' | 'not-run';
}

export interface VerifyOptions {
  /** PEM ed25519 public key: the tarball must carry a valid signature by its private key. */
  readonly publicKey?: string;
  /** `--strict`: values warnings (kind clashes, unknown keys) are problems. */
  readonly strict?: boolean;
}

const TOP_LEVEL = new Set(TOP_LEVEL_ENTRIES);
const FOLDERS: ReadonlySet<string> = new Set([CHARTS_DIR, MANIFESTS_DIR, PLUGINS_DIR, APP_DIR]);
const REQUIRED_FILES = [
  METADATA_FILE,
  manifestPath(FLUX_TREE.kustomization),
  manifestPath(fluxTreePath(FLUX_TREE.base, FLUX_TREE.kustomization)),
  `${PLUGINS_DIR}/${MANIFEST_FILE}`,
];

export async function verifyBundle(path: string, options: VerifyOptions = {}): Promise<VerifyReport> {
  const found: Findings = { problems: [], warnings: [] };
  const report = (pluginCode: VerifyReport['pluginCode'] = 'not-run'): VerifyReport => ({ path, ...found, ok: found.problems.length === 0, pluginCode });
  let bundle: OpenedBundle;
  try {
    bundle = await openBundle(path);
  } catch (error) {
    if (!(error instanceof FlotillaError)) throw error;
    found.problems.push(error.message);
    return report();
  }
  // Integrity, then authenticity: nothing else is read from bytes that are not the ones built and signed.
  found.problems.push(...trustProblems(bundle, options));
  if (found.problems.length > 0) return report();
  if (!options.publicKey && bundle.files.has(SIGNATURE_FILE)) found.warnings.push(`the tarball is signed; pass --key PUBLIC.pem to check the signature`);
  // Then the layout, folder entries included; an external tool sees the content only when it holds.
  found.problems.push(...layoutProblems(bundle), ...kustomizationReferenceProblems(bundle));
  checkMetadata(bundle, path, found);
  const charts = await checkCharts(bundle, found);
  const releases = checkReleases(bundle, charts, found);
  // No external tool runs on content already refused (a manifest that is an alias bomb, a chart that does not load).
  if (found.problems.length === 0) found.problems.push(...(await toolProblems(bundle, charts, releases, found.warnings)));
  checkImages(bundle, charts, found);
  found.warnings.push(...(await starlingxPlatformGaps(bundle)));
  // The app as shipped must assemble, and every release's values compute, as apply time will (plugins offline).
  return report(found.problems.length === 0 ? await checkAppAsShipped(bundle, options, found) : 'not-run');
}

/** What verify has found so far: problems fail it, warnings do not. */
interface Findings {
  readonly problems: string[];
  readonly warnings: string[];
}

/** The checksum files (both required) and, with a key, the signature. */
function trustProblems(bundle: OpenedBundle, options: VerifyOptions): string[] {
  return [...verifyChecksums(bundle.files, { required: ['sha256', 'md5'] }).map(formatChecksumProblem), ...signatureProblems(bundle, options.publicKey)];
}

/** metadata.yaml against its schema, and the file's name against the app name and version it gives. */
function checkMetadata(bundle: OpenedBundle, path: string, found: Findings): void {
  const metadataText = bundleMetadata(bundle.files)?.toString('utf8');
  let appId: { name: string; version: string } | undefined;
  if (metadataText !== undefined) {
    try {
      const result = readMetadata(parseYaml(metadataText, METADATA_FILE, { layer: 'metadata' }).root, METADATA_FILE);
      for (const d of result.diagnostics) (d.severity === 'error' ? found.problems : found.warnings).push(formatDiagnostic(d));
      if (result.metadata) appId = { name: result.metadata.appName, version: result.metadata.appVersion };
    } catch (error) {
      if (!(error instanceof FlotillaError)) throw error;
      found.problems.push(error.message);
    }
  }
  const fileName = path.split('/').pop() ?? path;
  const expectedName = appId && bundleFileName(appId.name, appId.version);
  if (expectedName && fileName !== expectedName && fileName !== expectedName.replace(/\.tgz$/, '.tar.gz')) {
    found.warnings.push(`file name ${fileName} does not match the metadata (${expectedName})`);
  }
}

/** The chart archives: each loads, at least one, each under the name its chart and version give. */
async function checkCharts(bundle: OpenedBundle, found: Findings): Promise<BundledChart[]> {
  const { charts, errors } = await bundledCharts(bundle);
  found.problems.push(...errors);
  if (charts.length === 0 && errors.length === 0) found.problems.push(`no chart archives under ${CHARTS_DIR}/`);
  for (const { file, archive } of charts) {
    const expected = chartArchivePath(archive.name, archive.version);
    if (file !== expected) found.problems.push(`${file}: holds chart ${archive.name} ${archive.version}; expected the name ${expected}`);
  }
  return charts;
}

/**
 * The release folders the top kustomization lists: every Flux object
 * shipped against flotilla's schema of the Flux API of the version the app
 * declares (its shipped release table's fluxVersion), so a field kubectl
 * apply would refuse fails here, at its line; each HelmRelease's chart shipped at its version.
 */
function checkReleases(bundle: OpenedBundle, charts: readonly BundledChart[], found: Findings): BundledRelease[] {
  let releases: BundledRelease[] = [];
  try {
    releases = bundledReleases(bundle);
  } catch (error) {
    if (!(error instanceof FlotillaError)) throw error;
    found.problems.push(error.message);
  }
  if (releases.length === 0) found.problems.push(`${manifestPath(FLUX_TREE.kustomization)} lists no release folders`);
  const helmReleaseSchema = helmReleaseSchemas(shippedFluxTarget(bundle)).object;
  found.problems.push(...schemaProblems(bundle, manifestPath(fluxTreePath(FLUX_TREE.base, FLUX_TREE.helmRepository)), helmRepositorySchema));
  for (const release of releases)
    found.problems.push(...schemaProblems(bundle, manifestPath(fluxTreePath(release.folder, FLUX_TREE.helmRelease)), helmReleaseSchema));
  for (const release of releases) {
    const where = manifestPath(fluxTreePath(release.folder, FLUX_TREE.helmRelease));
    if (!bundle.files.has(where)) {
      found.problems.push(`${where} is missing`);
      continue;
    }
    const shipped = charts.find((c) => c.archive.name === release.chart);
    if (!shipped) found.problems.push(`${where}: chart ${release.chart ?? '(none)'} is not shipped under ${CHARTS_DIR}/`);
    else if (shipped.archive.version !== release.version) {
      found.problems.push(`${where}: chart version ${release.version ?? '(none)'} differs from the shipped ${shipped.file} (${shipped.archive.version})`);
    }
  }
  return releases;
}

/** The charts reference container images, each well formed. */
function checkImages(bundle: OpenedBundle, charts: readonly BundledChart[], found: Findings): void {
  const images = bundleImages(bundle, charts);
  if (images.length === 0) found.problems.push('the charts reference no container images');
  for (const image of images)
    if (image.problem) found.problems.push(`${image.where}: image reference ${JSON.stringify(image.reference)} is malformed: ${image.problem}`);
}

/** The app assembled from the tarball and every release's values computed (plugins offline); returns where plugin code ran. */
async function checkAppAsShipped(bundle: OpenedBundle, options: VerifyOptions, found: Findings): Promise<VerifyReport['pluginCode']> {
  let pluginCode: VerifyReport['pluginCode'] = 'not-run';
  try {
    const session = await Session.fromBundle(bundle, { strict: options.strict === true });
    // Loading runs the plugins' top level: in the plugin process, like every call after.
    pluginCode = 'plugin-process';
    if ((await session.plugins()).plugins.length === 0) pluginCode = 'none';
    found.warnings.push(...(await session.checkAll()).map(formatDiagnostic));
  } catch (error) {
    if (!(error instanceof FlotillaError)) throw error;
    found.problems.push(error.message);
  }
  return pluginCode;
}

/** helm lint per chart and kubectl kustomize, in a private temp folder holding only charts/, fluxcd-manifests/ and plugins/. */
async function toolProblems(bundle: OpenedBundle, charts: readonly BundledChart[], releases: readonly BundledRelease[], warnings: string[]): Promise<string[]> {
  return withTempDir('verify', async (work) => {
    const problems: string[] = [];
    for (const dir of [CHARTS_DIR, MANIFESTS_DIR, PLUGINS_DIR] as const) await writeFolder(join(work, dir), bundleFolder(bundle.files, dir));
    if (bundle.files.has(`${PLUGINS_DIR}/${MANIFEST_FILE}`)) {
      // Checked as the loader checks it before running any plugin code; nothing is imported here.
      await verifyPluginBundle(join(work, PLUGINS_DIR)).catch((error: unknown) => {
        if (!(error instanceof FlotillaError)) throw error;
        problems.push(`${PLUGINS_DIR}: ${error.message.replace(join(work, PLUGINS_DIR), PLUGINS_DIR)}`);
      });
    }
    const lint = await mapConcurrently(charts, 3, async ({ file }) => {
      try {
        await helm(['lint', join(work, file)]);
        return undefined;
      } catch (error) {
        if (!(error instanceof ToolError)) throw error;
        const findings = `${error.stdout}\n${error.stderr}`
          .split('\n')
          .filter((l) => l.includes('[ERROR]'))
          .map((l) => l.trim());
        return `${file}: helm lint failed: ${findings.join('; ') || error.stderr.trim()}`;
      }
    });
    problems.push(...lint.filter((p): p is string => p !== undefined));
    if (bundle.files.has(manifestPath(FLUX_TREE.kustomization))) {
      const built = await checkKustomization(join(work, MANIFESTS_DIR), releases);
      problems.push(...built.problems);
      warnings.push(...built.notes);
    }
    return problems;
  });
}

function layoutProblems(bundle: OpenedBundle): string[] {
  const problems: string[] = [];
  const holds = `an application tarball holds ${[...TOP_LEVEL].join(', ')}`;
  for (const name of bundle.files.keys()) {
    const top = name.split('/')[0] as string;
    if (!TOP_LEVEL.has(top)) problems.push(`unexpected entry ${name} (${holds})`);
  }
  for (const dir of bundle.directories) {
    const top = dir.split('/')[0] as string;
    if (!TOP_LEVEL.has(top)) problems.push(`unexpected entry ${dir}/ (${holds})`);
    else if (!FOLDERS.has(top)) problems.push(`${dir}/ is a folder entry; ${top} must be a file`);
  }
  for (const required of REQUIRED_FILES) {
    if (!bundle.files.has(required)) problems.push(`missing ${required}`);
  }
  return problems;
}

/** The Flux version the bundle's shipped release table declares; the default when the bundle ships none (or an unreadable one, reported elsewhere). */
function shippedFluxTarget(bundle: OpenedBundle): FluxTarget {
  const table = bundle.files.get(bundlePath(APP_DIR, APP_FILES.releases))?.toString('utf8');
  if (table === undefined) return DEFAULT_FLUX_TARGET;
  try {
    return declaredFluxTarget(parseYaml(table, bundlePath(APP_DIR, APP_FILES.releases), { layer: 'releases' }).root);
  } catch (error) {
    if (!(error instanceof FlotillaError)) throw error;
    return DEFAULT_FLUX_TARGET;
  }
}

function schemaProblems(bundle: OpenedBundle, file: string, schema: JsonSchema): string[] {
  const source = bundle.files.get(file)?.toString('utf8');
  if (source === undefined) return [];
  try {
    return checkSchema(schema, parseYaml(source, file, { layer: 'manifest' }).root, file).map(formatDiagnostic);
  } catch (error) {
    if (!(error instanceof FlotillaError)) throw error;
    return [error.message];
  }
}

function signatureProblems(bundle: OpenedBundle, publicKey: string | undefined): string[] {
  if (publicKey === undefined) return [];
  const signature = bundle.files.get(SIGNATURE_FILE);
  const checksums = bundle.files.get(CHECKSUM_FILES.sha256);
  if (!signature) return [`${SIGNATURE_FILE} is missing: the tarball is not signed (flotilla sign BUNDLE --key PRIVATE.pem)`];
  if (!checksums) return [];
  return checkSignature(checksums, signature.toString('utf8'), publicKey)
    ? []
    : [`${SIGNATURE_FILE}: not a valid signature of ${CHECKSUM_FILES.sha256} by the given key`];
}

/** What kubectl kustomize printed, as far as these checks read it. */
interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: { url?: unknown };
}

/**
 * The kustomization must build, and yield the HelmRepository, one HelmRelease
 * per folder and two Secrets each; other objects (extra resources an app
 * ships) are noted.
 */
async function checkKustomization(dir: string, releases: readonly { folder: string; name: string }[]): Promise<{ problems: string[]; notes: string[] }> {
  let objects: KubeObject[];
  try {
    objects = parseYamlStream((await kubectl(['kustomize', dir])).stdout, 'kubectl kustomize output') as KubeObject[];
  } catch (error) {
    if (error instanceof ToolError) return { problems: [`${MANIFESTS_DIR} does not build with kubectl kustomize: ${error.stderr.trim()}`], notes: [] };
    throw error;
  }
  const problems: string[] = [];
  const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
  const repos = ofKind('HelmRepository');
  if (repos.length !== 1 || repos[0]?.apiVersion !== SOURCE_API)
    problems.push(`${MANIFESTS_DIR}: expected one ${SOURCE_API} HelmRepository, found ${repos.map((r) => r.apiVersion).join(', ') || 'none'}`);
  for (const repo of repos) {
    const named = typeof repo.spec?.url === 'string' ? starlingxRepositoryOfUrl(repo.spec.url) : undefined;
    if (named && !named.supported) {
      problems.push(
        `HelmRepository ${repo.metadata?.name}: url ${String(repo.spec?.url)} ends in "${named.segment}"; StarlingX's upload accepts only ${STARLINGX_HELM_REPOS.join(', ')}`,
      );
    }
  }
  const helmReleases = objects.map(readHelmRelease).filter((hr): hr is HelmRelease => hr !== undefined);
  for (const hr of helmReleases)
    if (hr.apiVersion !== HELM_RELEASE_API) problems.push(`HelmRelease ${hr.metadata.name}: apiVersion ${hr.apiVersion}, expected ${HELM_RELEASE_API}`);
  const expectedNames = releases.map((r) => r.name).sort();
  const gotNames = helmReleases.map((h) => h.metadata.name).sort();
  if (expectedNames.join() !== gotNames.join())
    problems.push(`${MANIFESTS_DIR} yields HelmReleases ${gotNames.join(', ')}; the release folders are ${expectedNames.join(', ')}`);
  const secrets = new Set(ofKind('Secret').map((s) => s.metadata?.name));
  for (const hr of helmReleases) {
    const source = hr.spec.chart?.spec.sourceRef.name;
    if (repos[0] && source !== repos[0].metadata?.name)
      problems.push(`HelmRelease ${hr.metadata.name}: sourceRef ${source} is not the HelmRepository ${repos[0].metadata?.name}`);
    const wanted = (hr.spec.valuesFrom ?? []).map((v) => v.name);
    if (wanted.length !== 2) problems.push(`HelmRelease ${hr.metadata.name}: expected valuesFrom static then system overrides, found ${wanted.length} entries`);
    for (const name of wanted) if (!secrets.has(name)) problems.push(`HelmRelease ${hr.metadata.name}: valuesFrom Secret ${name} is not generated`);
  }
  const overridesSecrets = new Set(helmReleases.flatMap((hr) => overridesValuesFrom(hr.metadata.name).map((v) => v.name)));
  const isOverrides = (o: KubeObject) => o.kind === 'Secret' && overridesSecrets.has(String(o.metadata?.name));
  const others = objects.filter((o) => !['HelmRepository', 'HelmRelease'].includes(String(o.kind)) && !isOverrides(o));
  const notes = others.map(
    (o) =>
      `${MANIFESTS_DIR} also yields ${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name} (an extra resource of the app)`,
  );
  const generatedSecrets = objects.filter(isOverrides).length;
  if (generatedSecrets !== helmReleases.length * 2)
    problems.push(`${MANIFESTS_DIR} yields ${generatedSecrets} overrides Secrets; expected 2 per HelmRelease (${helmReleases.length * 2})`);
  return { problems, notes };
}
