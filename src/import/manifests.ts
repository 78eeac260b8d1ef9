/**
 * Reading a StarlingX fluxcd-manifests tree:
 *   kustomization.yaml            namespace; resources: base, then one folder per release
 *   base/kustomization.yaml       resources: the HelmRepository file
 *   <release>/kustomization.yaml  namespace, resources: [helmrelease.yaml], secretGenerator for
 *                                 <release>-static-overrides and <release>-system-overrides,
 *                                 generatorOptions.disableNameSuffixHash: true
 *   <release>/helmrelease.yaml, <release>-static-overrides.yaml, <release>-system-overrides.yaml
 * Everything flotilla's generator would not write back the same way is an
 * error at its file and line; harmless differences are warnings.
 */
import { basename } from 'node:path';
import type { SourceLocation } from '../diagnostics/index.js';
import { getNode, toPlain, type MapNode, type ValueNode } from '../yaml/index.js';
import { MANIFESTS_DIR } from '../tarball/index.js';
import { checkSchema } from '../app/index.js';
import {
  FLUX_TREE,
  fluxTreePath,
  HELM_RELEASE_API,
  helmRepositorySchema,
  KUSTOMIZE_API,
  overridesSecretName,
  overridesValuesKey,
  SOURCE_API,
} from '../flux/index.js';
import type { Problems } from './errors.js';
import type { FileSource } from '../files/index.js';
import type { SourceYaml, StxHelmRepository, StxManifests, StxReleaseFolder } from './types.js';
import { asMap, asString, folderName, locationOf, parseSourceYaml, readSourceYaml, shown } from './yaml-read.js';
import { isDns1123Label, isHelmReleaseName } from '../names/index.js';

const fileStart = (file: string): SourceLocation => ({ file, line: 1, column: 1 });

/**
 * Checks apiVersion/kind of a kustomization and returns its other fields
 * beyond `generated` (commonLabels, labels, patches …): flotilla carries them
 * into the generated kustomization as written.
 */
function kustomizationExtras(map: MapNode, generated: readonly string[], problems: Problems): Record<string, unknown> {
  const apiVersion = map.entries.get('apiVersion');
  if (apiVersion && asString(apiVersion) !== KUSTOMIZE_API) {
    problems.error(`apiVersion ${shown(apiVersion)} is not ${KUSTOMIZE_API}`, locationOf(apiVersion), ['apiVersion']);
  }
  const kind = map.entries.get('kind');
  if (kind && asString(kind) !== 'Kustomization') problems.error(`kind ${shown(kind)} is not Kustomization`, locationOf(kind), ['kind']);
  const extras: Record<string, unknown> = {};
  for (const [key, node] of map.entries) {
    if (key === 'apiVersion' || key === 'kind' || generated.includes(key)) continue;
    extras[key] = toPlain(node);
  }
  return extras;
}

/** Where each original sits, by the path flotilla generates it at. */
type Originals = Map<string, Record<string, unknown>>;

function stringList(node: ValueNode | undefined, problems: Problems, what: string, path: string): { value: string; at: SourceLocation }[] | undefined {
  if (node?.kind !== 'seq') {
    if (node) problems.error(`${what} must be a list of names, not ${shown(node)}`, locationOf(node), [path]);
    return undefined;
  }
  const out: { value: string; at: SourceLocation }[] = [];
  node.items.forEach((item, i) => {
    const value = asString(item);
    if (value === undefined) problems.error(`${what}[${i}] must be a string, not ${shown(item)}`, locationOf(item), [path, i]);
    else out.push({ value, at: locationOf(item) });
  });
  return out;
}

export function readManifests(source: FileSource, problems: Problems, dir = MANIFESTS_DIR): StxManifests | undefined {
  if (source.kindOf(dir) !== 'directory') {
    problems.error(`no ${dir}/ folder: a StarlingX FluxCD application keeps its manifests there`, { file: dir, line: 0, column: 0 });
    return undefined;
  }
  const top = readSourceYaml(source, fluxTreePath(dir, FLUX_TREE.kustomization), problems);
  if (!top) return undefined;
  const topMap = asMap(top.root);
  if (!topMap) {
    problems.error('expected a kustomization (a map with namespace and resources)', fileStart(top.file));
    return undefined;
  }
  const kustomization = kustomizationExtras(topMap, ['namespace', 'resources'], problems);
  const originals: Originals = new Map([[FLUX_TREE.kustomization, toPlain(topMap) as Record<string, unknown>]]);
  const namespaceNode = topMap.entries.get('namespace');
  const declared = declaredNamespace(namespaceNode, problems);
  const listed = listedFolders(source, dir, top.file, topMap, problems);
  if (!listed) return undefined;
  const base = listed.baseAt ? readBase(source, fluxTreePath(dir, FLUX_TREE.base), declared, problems, originals) : undefined;
  const releases: StxReleaseFolder[] = [];
  for (const folder of listed.folders) {
    const release = readReleaseFolder(source, dir, folder.name, folder.at, problems, originals);
    if (release) releases.push(release);
  }
  const repository = base?.repository;
  const namespace = appNamespace(namespaceNode, declared, releases, repository, top.file, problems);
  if (!base || !repository || namespace === undefined) return undefined;
  const placed = releases.map((r) => placedRelease(r, namespaceNode, namespace, problems));
  return {
    dir,
    namespace,
    repository,
    kustomization,
    baseKustomization: base.kustomization,
    releases: placed,
    listed: listed.folders.map((f) => f.name),
    originals,
    extraFiles: extraFiles(source, dir, placed, originals),
  };
}

/** The top kustomization's namespace, when it is a namespace name (an error when it is set to anything else). */
function declaredNamespace(namespaceNode: ValueNode | undefined, problems: Problems): string | undefined {
  const namespace = asString(namespaceNode);
  if (namespaceNode && (namespace === undefined || !isDns1123Label(namespace))) {
    problems.error(`namespace ${shown(namespaceNode)} is not a namespace name`, locationOf(namespaceNode), ['namespace']);
    return undefined;
  }
  return namespace;
}

/**
 * The top kustomization's resources: base (where it is listed) and the
 * release folders, each a folder of `dir` listed once; a release folder
 * left out is warned about. Undefined when there is no resources list.
 */
function listedFolders(
  source: FileSource,
  dir: string,
  topFile: string,
  topMap: MapNode,
  problems: Problems,
): { readonly baseAt: SourceLocation | undefined; readonly folders: readonly { name: string; at: SourceLocation }[] } | undefined {
  const resources = stringList(topMap.entries.get('resources'), problems, 'resources', 'resources');
  if (!resources) {
    if (!topMap.entries.get('resources')) problems.error('has no resources: expected base and one folder per release', fileStart(topFile));
    return undefined;
  }
  const seen = new Set<string>();
  const folders: { name: string; at: SourceLocation }[] = [];
  let baseAt: SourceLocation | undefined;
  for (const { value, at } of resources) {
    const name = folderName(value);
    if (name === undefined || source.kindOf(`${dir}/${name}`) !== 'directory') {
      problems.error(`resource ${JSON.stringify(value)} is not a folder of ${dir}/: only base and release folders can be imported`, at);
      continue;
    }
    if (seen.has(name)) {
      problems.error(`resource ${JSON.stringify(value)} is listed twice`, at);
      continue;
    }
    seen.add(name);
    if (name === FLUX_TREE.base) {
      if (folders.length > 0) problems.warn('base is not listed first; flotilla lists it first (kustomize output order only)', at);
      baseAt = at;
      continue;
    }
    if (!isHelmReleaseName(name)) {
      problems.error(`release folder ${JSON.stringify(name)} is not a valid release name (a DNS-1123 label of at most 53 characters)`, at);
      continue;
    }
    folders.push({ name, at });
  }
  for (const entry of source.list(dir)) {
    if (entry.kind !== 'directory' || seen.has(entry.name) || source.kindOf(fluxTreePath(fluxTreePath(dir, entry.name), FLUX_TREE.helmRelease)) !== 'file')
      continue;
    problems.warn(`release folder ${entry.name}/ is not listed in resources: not imported (StarlingX does not deploy it either)`, fileStart(topFile));
  }
  if (!baseAt) problems.error('resources do not list base (the folder with the HelmRepository)', locationOf(topMap.entries.get('resources') as ValueNode));
  if (folders.length === 0 && resources.length > 0)
    problems.error('resources list no release folder', locationOf(topMap.entries.get('resources') as ValueNode));
  return { baseAt, folders };
}

/** The app's namespace: the top kustomization's; without one, the release folders' when they agree, else the HelmRepository's. */
function appNamespace(
  namespaceNode: ValueNode | undefined,
  declared: string | undefined,
  releases: readonly StxReleaseFolder[],
  repository: StxHelmRepository | undefined,
  topFile: string,
  problems: Problems,
): string | undefined {
  if (declared !== undefined || namespaceNode) return declared;
  const spaces = [...new Set(releases.map((r) => r.namespace).filter((n): n is string => n !== undefined))];
  if (spaces.length === 1 && releases.every((r) => r.namespace !== undefined)) {
    problems.warn(`has no namespace; flotilla writes the release folders' namespace "${spaces[0]}" there`, fileStart(topFile));
    return spaces[0];
  }
  // Each release keeps its own namespace; the app's (the repository's) is where base/ goes.
  if (repository?.namespace !== undefined) return repository.namespace;
  problems.error('has no namespace, the release folders do not agree on one, and the HelmRepository names none: set namespace', fileStart(topFile));
  return undefined;
}

/** kustomize moves every resource below a top kustomization with a namespace into it: that is where the release runs. */
function placedRelease(release: StxReleaseFolder, namespaceNode: ValueNode | undefined, namespace: string, problems: Problems): StxReleaseFolder {
  if (namespaceNode === undefined || release.namespace === undefined || release.namespace === namespace) return release;
  problems.warn(
    `release folder ${release.folder} sets namespace "${release.namespace}", but the top kustomization moves every resource into "${namespace}"; imported in "${namespace}", where it is deployed`,
    release.listedAt,
  );
  return { ...release, namespace };
}

/** Files the generator does not write (extra resources, patch files …), shipped as they are. */
function extraFiles(source: FileSource, dir: string, releases: readonly StxReleaseFolder[], originals: Originals): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  otherFiles(source, dir, '', [FLUX_TREE.kustomization], files);
  const baseResources = (originals.get(fluxTreePath(FLUX_TREE.base, FLUX_TREE.kustomization))?.resources ?? []) as unknown[];
  otherFiles(source, dir, FLUX_TREE.base, [FLUX_TREE.kustomization, ...baseResources.map((r) => folderName(String(r)) ?? '')], files);
  for (const r of releases) {
    const generated = [FLUX_TREE.kustomization, basename(r.helmRelease.file), overridesValuesKey(r.folder, 'static'), overridesValuesKey(r.folder, 'system')];
    otherFiles(source, dir, r.folder, generated, files);
  }
  return files;
}

function readBase(
  source: FileSource,
  base: string,
  namespace: string | undefined,
  problems: Problems,
  originals: Originals,
): { repository: StxHelmRepository; kustomization: Record<string, unknown> } | undefined {
  const kust = readSourceYaml(source, fluxTreePath(base, FLUX_TREE.kustomization), problems);
  if (!kust) return undefined;
  const map = asMap(kust.root);
  if (!map) {
    problems.error('expected a kustomization listing the HelmRepository file', fileStart(kust.file));
    return undefined;
  }
  const kustomization = kustomizationExtras(map, ['resources', 'namespace'], problems);
  originals.set(fluxTreePath(FLUX_TREE.base, FLUX_TREE.kustomization), toPlain(map) as Record<string, unknown>);
  const nsNode = map.entries.get('namespace');
  if (nsNode && namespace !== undefined && asString(nsNode) !== namespace) {
    problems.warn(`namespace ${shown(nsNode)} is overridden by the top kustomization's; not imported`, locationOf(nsNode), ['namespace']);
  }
  const files = stringList(map.entries.get('resources'), problems, 'resources', 'resources') ?? [];
  const repos: StxHelmRepository[] = [];
  for (const { value, at } of files) {
    const name = folderName(value);
    const rel = name === undefined ? undefined : `${base}/${name}`;
    if (rel === undefined || source.kindOf(rel) !== 'file') {
      problems.error(`resource ${JSON.stringify(value)} is not a file of base/`, at);
      continue;
    }
    const doc = readSourceYaml(source, rel, problems);
    if (!doc) continue;
    let repo = readHelmRepository(doc, problems);
    if (doc.root) originals.set(fluxTreePath(FLUX_TREE.base, FLUX_TREE.helmRepository), toPlain(doc.root) as Record<string, unknown>);
    if (repo && namespace === undefined && repo.namespace === undefined && asString(nsNode) !== undefined) repo = { ...repo, namespace: asString(nsNode) };
    if (repo?.namespace !== undefined && namespace !== undefined && repo.namespace !== namespace) {
      problems.warn(`metadata.namespace "${repo.namespace}" is overridden by the top kustomization's; not imported`, repo.location, ['metadata', 'namespace']);
    }
    if (repo && repo.interval === undefined) problems.warn('spec.interval is not set; flotilla build writes 1m', repo.location, ['spec', 'interval']);
    if (repo) repos.push(repo);
  }
  if (repos.length === 0) {
    if (!problems.failed) problems.error('base/ holds no HelmRepository', fileStart(kust.file));
    return undefined;
  }
  if (repos.length > 1) {
    problems.error(
      `base/ holds ${repos.length} HelmRepositories (${repos.map((r) => r.name).join(', ')}); flotilla points every release at one`,
      repos[1]!.location,
    );
    return undefined;
  }
  return { repository: repos[0]!, kustomization };
}

function readHelmRepository(doc: SourceYaml, problems: Problems): StxHelmRepository | undefined {
  const map = asMap(doc.root);
  const kind = asString(getNode(map, ['kind']));
  if (!map || kind !== 'HelmRepository') {
    problems.error(`expected a HelmRepository, found ${kind ? `a ${kind}` : 'something else'}: base/ may only hold the chart repository`, fileStart(doc.file));
    return undefined;
  }
  const apiVersion = getNode(map, ['apiVersion']);
  const before = problems.errors.length;
  const v1beta2 = asString(apiVersion) === 'source.toolkit.fluxcd.io/v1beta2';
  if (v1beta2)
    problems.warn(`apiVersion ${asString(apiVersion)} is written as ${SOURCE_API} (same fields)`, locationOf(apiVersion as ValueNode), ['apiVersion']);
  const status = map.entries.get('status');
  if (status) problems.warn('status is not imported (the cluster writes it)', locationOf(status), ['status']);
  // The object as Flux defines it; a v1beta2 apiVersion (same fields) and the status are not its concern here.
  const tolerated = (key: unknown) => key === 'status' || (v1beta2 && key === 'apiVersion');
  problems.add(checkSchema(helmRepositorySchema, map, doc.file).filter((d) => !tolerated(d.path?.[0])));
  const metadata = asMap(getNode(map, ['metadata']));
  for (const [key, node] of metadata?.entries ?? []) {
    if (!['name', 'namespace', 'labels', 'annotations'].includes(key)) {
      problems.error(`metadata.${key} cannot be imported (flotilla writes the repository's name, namespace, labels and annotations)`, locationOf(node), [
        'metadata',
        key,
      ]);
    }
  }
  if (problems.errors.length > before) return undefined;
  const plain = toPlain(map) as {
    metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: Record<string, unknown>;
  };
  const { url, interval, ...spec } = plain.spec;
  const meta = plain.metadata;
  return {
    name: meta.name,
    url: String(url),
    ...(typeof interval === 'string' ? { interval } : {}),
    ...(meta.namespace ? { namespace: meta.namespace } : {}),
    spec,
    ...(meta.labels ? { labels: meta.labels } : {}),
    ...(meta.annotations ? { annotations: meta.annotations } : {}),
    location: fileStart(doc.file),
  };
}

/** One release folder: its kustomization, its HelmRelease and its two overrides files, each checked for the shape flotilla writes. */
function readReleaseFolder(
  source: FileSource,
  dir: string,
  folder: string,
  listedAt: SourceLocation,
  problems: Problems,
  originals: Originals,
): StxReleaseFolder | undefined {
  const base = `${dir}/${folder}`;
  const before = problems.errors.length;
  const kust = readSourceYaml(source, fluxTreePath(base, FLUX_TREE.kustomization), problems);
  if (!kust) return undefined;
  const map = asMap(kust.root);
  if (!map) {
    problems.error('expected a kustomization', fileStart(kust.file));
    return undefined;
  }
  const kustomization = kustomizationExtras(map, ['namespace', 'resources', 'secretGenerator', 'generatorOptions'], problems);
  originals.set(fluxTreePath(folder, FLUX_TREE.kustomization), toPlain(map) as Record<string, unknown>);

  const nsNode = map.entries.get('namespace');
  const namespace = asString(nsNode);
  if (nsNode && (namespace === undefined || !isDns1123Label(namespace)))
    problems.error(`namespace ${shown(nsNode)} is not a namespace name`, locationOf(nsNode), ['namespace']);

  const { helmReleaseFile, extraResources } = findHelmReleaseFile(source, base, folder, map, kust.file, problems);
  if (extraResources.length > 0) kustomization.resources = extraResources;
  const generated = checkSecretGenerator(folder, map, kust.file, problems);
  checkGeneratorOptions(map, kust.file, problems);
  const helmRelease = helmReleaseFile ? readFolderHelmRelease(source, helmReleaseFile, problems) : undefined;
  const overrides = readOverridesFiles(source, base, folder, generated, kust.file, problems);

  if (problems.errors.length > before || !helmRelease || !overrides) return undefined;
  return {
    folder,
    listedAt,
    ...(namespace ? { namespace } : {}),
    kustomization,
    helmRelease,
    staticOverrides: overrides,
  };
}

/**
 * resources: the HelmRelease file (helmrelease.yaml, else the first), then
 * other files of the folder, carried as extra resources (the file ships in
 * fluxcd/manifests/<release>/). A folder or a remote resource cannot be carried.
 */
function findHelmReleaseFile(
  source: FileSource,
  base: string,
  folder: string,
  map: MapNode,
  kustFile: string,
  problems: Problems,
): { helmReleaseFile?: string; extraResources: string[] } {
  const resources = stringList(map.entries.get('resources'), problems, 'resources', 'resources');
  let helmReleaseFile: string | undefined;
  const extraResources: string[] = [];
  if (resources && resources.length > 0) {
    const first = resources.find((r) => folderName(r.value) === FLUX_TREE.helmRelease) ?? resources[0]!;
    for (const extra of resources.filter((r) => r !== first)) {
      const name = folderName(extra.value);
      if (name === undefined || source.kindOf(`${base}/${name}`) !== 'file') {
        problems.error(
          `resource ${JSON.stringify(extra.value)} cannot be imported: flotilla ships the files of a release folder, not folders or remote resources`,
          extra.at,
        );
      } else extraResources.push(extra.value);
    }
    const name = folderName(first.value);
    if (name === undefined || source.kindOf(`${base}/${name}`) !== 'file') {
      problems.error(`resource ${JSON.stringify(first.value)} is not a file of ${folder}/`, first.at);
    } else {
      helmReleaseFile = `${base}/${name}`;
      if (name !== FLUX_TREE.helmRelease) problems.warn(`the HelmRelease file ${name} is written as ${FLUX_TREE.helmRelease}`, first.at);
    }
  } else if (!resources) {
    problems.error(
      'resources must list the HelmRelease file (helmrelease.yaml)',
      map.entries.get('resources') ? locationOf(map.entries.get('resources')!) : fileStart(kustFile),
    );
  } else {
    problems.error('resources is empty: expected helmrelease.yaml', locationOf(map.entries.get('resources')!));
  }
  return { ...(helmReleaseFile ? { helmReleaseFile } : {}), extraResources };
}

/**
 * The files of a folder of the tree the generator does not write (extra
 * resources, patch files a kustomization names …), by their path inside
 * fluxcd-manifests/: the app ships them as they are (fluxcd/manifests/).
 */
function otherFiles(source: FileSource, dir: string, folder: string, generated: readonly string[], extraFiles: Map<string, Buffer>): void {
  const at = folder === '' ? dir : `${dir}/${folder}`;
  for (const entry of source.list(at)) {
    if (entry.kind !== 'file' || generated.includes(entry.name)) continue;
    const data = source.read(`${at}/${entry.name}`);
    if (data !== undefined) extraFiles.set(folder === '' ? entry.name : `${folder}/${entry.name}`, data);
  }
}

/** secretGenerator: exactly the two overrides Secrets, named after the release. Returns the entries found, by Secret name. */
function checkSecretGenerator(folder: string, map: MapNode, kustFile: string, problems: Problems): Map<string, ValueNode> {
  const staticName = overridesSecretName(folder, 'static');
  const systemName = overridesSecretName(folder, 'system');
  const keyOf = (name: string) => overridesValuesKey(folder, name === staticName ? 'static' : 'system');
  const generator = map.entries.get('secretGenerator');
  const found = new Map<string, ValueNode>();
  if (generator?.kind !== 'seq') {
    problems.error(`secretGenerator must list the Secrets ${staticName} and ${systemName}`, generator ? locationOf(generator) : fileStart(kustFile), [
      'secretGenerator',
    ]);
  } else {
    generator.items.forEach((item, i) => {
      const entry = asMap(item);
      const name = asString(getNode(entry, ['name']));
      if (!entry || !name) {
        problems.error(`secretGenerator[${i}] has no name`, locationOf(item), ['secretGenerator', i]);
        return;
      }
      if (name !== staticName && name !== systemName) {
        problems.error(
          `Secret ${JSON.stringify(name)} cannot be imported: flotilla generates exactly ${staticName} and ${systemName} (the overrides Secrets are named after the release)`,
          locationOf(item),
          ['secretGenerator', i],
        );
        return;
      }
      if (found.has(name)) {
        problems.error(`Secret ${name} is generated twice`, locationOf(item), ['secretGenerator', i]);
        return;
      }
      found.set(name, item);
      for (const [key, node] of entry.entries) {
        if (key === 'name') continue;
        if (key === 'files') {
          const files = toPlain(node);
          if (!Array.isArray(files) || files.length !== 1 || files[0] !== keyOf(name)) {
            problems.error(`files of Secret ${name} must be [${keyOf(name)}] (the valuesKey flotilla writes), not ${shown(node)}`, locationOf(node), [
              'secretGenerator',
              i,
              'files',
            ]);
          }
          continue;
        }
        problems.error(`secretGenerator "${key}" cannot be imported: flotilla generates each overrides Secret from its file only`, locationOf(node), [
          'secretGenerator',
          i,
          key,
        ]);
      }
      if (!entry.entries.has('files')) problems.error(`Secret ${name} has no files (expected [${keyOf(name)}])`, locationOf(item), ['secretGenerator', i]);
    });
    for (const name of [staticName, systemName]) {
      if (!found.has(name)) problems.error(`secretGenerator does not generate ${name}`, locationOf(generator), ['secretGenerator']);
    }
  }
  return found;
}

function checkGeneratorOptions(map: MapNode, kustFile: string, problems: Problems): void {
  const options = map.entries.get('generatorOptions');
  const optionsMap = asMap(options);
  const noHash = getNode(optionsMap, ['disableNameSuffixHash']);
  if (!noHash || noHash.kind !== 'scalar' || noHash.value !== true) {
    problems.error(
      'generatorOptions.disableNameSuffixHash must be true: with a hash suffix the Secrets would not match the names in valuesFrom (flotilla always disables it)',
      noHash ? locationOf(noHash) : options ? locationOf(options) : fileStart(kustFile),
      ['generatorOptions', 'disableNameSuffixHash'],
    );
  }
  for (const [key, node] of optionsMap?.entries ?? []) {
    if (key !== 'disableNameSuffixHash') problems.error(`generatorOptions.${key} cannot be imported`, locationOf(node), ['generatorOptions', key]);
  }
}

/** The HelmRelease itself: one document, kind HelmRelease, apiVersion v2. */
function readFolderHelmRelease(source: FileSource, helmReleaseFile: string, problems: Problems): StxReleaseFolder['helmRelease'] | undefined {
  const doc = readSourceYaml(source, helmReleaseFile, problems);
  if (!doc) return undefined;
  const hr = asMap(doc.root);
  if (!hr) {
    problems.error('expected a HelmRelease', fileStart(doc.file));
    return undefined;
  }
  const kind = getNode(hr, ['kind']);
  const apiVersion = getNode(hr, ['apiVersion']);
  if (asString(kind) !== 'HelmRelease') {
    problems.error(`kind ${shown(kind)} cannot be imported: a release folder may hold only its HelmRelease`, kind ? locationOf(kind) : fileStart(doc.file), [
      'kind',
    ]);
    return undefined;
  }
  if (asString(apiVersion) !== HELM_RELEASE_API) {
    problems.error(
      `apiVersion ${shown(apiVersion)} cannot be imported: flotilla writes ${HELM_RELEASE_API} (migrate the HelmRelease first; field meanings changed between versions)`,
      apiVersion ? locationOf(apiVersion) : fileStart(doc.file),
      ['apiVersion'],
    );
    return undefined;
  }
  return { ...doc, root: hr };
}

/** The overrides files: the static ones are imported, the packaged system ones only looked at (flotilla computes them). */
function readOverridesFiles(
  source: FileSource,
  base: string,
  folder: string,
  generated: ReadonlyMap<string, ValueNode>,
  kustFile: string,
  problems: Problems,
): StxReleaseFolder['staticOverrides'] | undefined {
  const staticName = overridesSecretName(folder, 'static');
  const systemName = overridesSecretName(folder, 'system');
  const staticRel = `${base}/${overridesValuesKey(folder, 'static')}`;
  const staticData = source.read(staticRel);
  let staticRoot: ValueNode | undefined;
  if (staticData === undefined) {
    problems.error(
      `${overridesValuesKey(folder, 'static')} is missing`,
      generated.get(staticName) ? locationOf(generated.get(staticName)!) : fileStart(kustFile),
    );
  } else {
    // Read as flotilla will read overrides/static/<chart>.yaml (no list-edit tags: Helm gets the file as written).
    staticRoot = parseSourceYaml(staticData.toString('utf8'), staticRel, problems, 'static')?.root;
    if (staticRoot && staticRoot.kind !== 'map') problems.error(`static overrides must be a map of values, not ${shown(staticRoot)}`, locationOf(staticRoot));
  }
  const systemRel = `${base}/${overridesValuesKey(folder, 'system')}`;
  const systemData = source.read(systemRel);
  if (systemData === undefined) {
    problems.warn(
      `${overridesValuesKey(folder, 'system')} is missing; flotilla writes it (empty in the package, filled at apply time)`,
      generated.get(systemName) ? locationOf(generated.get(systemName)!) : fileStart(kustFile),
    );
  } else {
    const system = parseSourceYaml(systemData.toString('utf8'), systemRel, problems);
    if (system?.root !== undefined) {
      problems.warn(
        'the packaged system overrides are not imported: flotilla computes them at apply time (layers 2–8); move values meant to ship into the static overrides',
        fileStart(systemRel),
      );
    }
  }

  return staticData === undefined ? undefined : { file: staticRel, data: staticData, root: staticRoot };
}
