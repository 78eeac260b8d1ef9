/**
 * Dependencies on chart repositories resolved as `helm dependency build`
 * resolves them (helm pkg/downloader), for the chart loader
 * (RepositoryResolver): the version Chart.lock pins, else the highest
 * version the repository holds within the declared range — an OCI
 * repository's tags (`_` read as `+`), an HTTP repository's index.yaml —
 * fetched once, through flotilla's OCI client or from the index's URL, and
 * kept in the user's cache by digest (cache.ts). A repository the app maps
 * to one of its folders (`chartRepositories` in fluxcd/releases.yaml) is
 * served from that folder's chart of the dependency's name instead, without
 * the network. Offline, only the cache and the mapping serve.
 */
import { join } from 'node:path';
import {
  ChartDependencyError,
  compareVersions,
  parseConstraint,
  parseVersion,
  type RepositoryChart,
  type RepositoryRequest,
  type RepositoryResolver,
  type SemVer,
} from '../charts/index.js';
import { DependencyCache, defaultDependencyCacheDir } from './cache.js';
import type { NetworkOptions, RepositoryNetwork } from './fetch.js';

export interface RepositoryResolverOptions extends NetworkOptions {
  /** Repository URL → absolute folder whose sub-folder `<chart name>` serves that repository's chart (the app's mapping). */
  readonly mapping?: ReadonlyMap<string, string>;
  /** Fetch nothing: serve from the mapping and the cache only. */
  readonly offline?: boolean;
  /** The dependency cache; default `<user cache>/chart-dependencies`. */
  readonly cacheDir?: string;
}

/** A chart repository URL as flotilla compares them: without trailing slashes. */
function repositoryKey(url: string): string {
  return url.replace(/\/+$/, '');
}

export function repositoryResolver(options: RepositoryResolverOptions = {}): RepositoryResolver {
  const mapping = new Map([...(options.mapping ?? [])].map(([url, dir]) => [repositoryKey(url), dir]));
  const cache = new DependencyCache(options.cacheDir ?? defaultDependencyCacheDir());
  let network: Promise<RepositoryNetwork> | undefined;
  // Loaded only when a dependency must be fetched: the commands that build start without the TLS certificates
  // NODE_EXTRA_CA_CERTS names, and only this module opens connections (docs/architecture.md, "How the shipped CLI starts").
  const fetcher = (): Promise<RepositoryNetwork> => (network ??= import('./fetch.js').then(({ repositoryNetwork }) => repositoryNetwork(options)));
  /** One resolution per repository, chart and version asked (many charts share a library). */
  const resolving = new Map<string, Promise<RepositoryChart>>();

  const resolve = async (request: RepositoryRequest, repository: string): Promise<RepositoryChart> => {
    const dep = request.dependency;
    const wanted = request.locked ?? dep.version ?? '';
    const exact = request.locked ?? (dep.version !== undefined && parseVersion(dep.version) ? dep.version : undefined);
    const label = (version: string) => `${repository}/${dep.name}-${version}.tgz`;
    const fromCache = async (version: string, digest: string | undefined): Promise<RepositoryChart | undefined> => {
      const bytes = digest === undefined ? undefined : await cache.archive(digest);
      return bytes === undefined ? undefined : { kind: 'archive', bytes, label: label(version), digest: digest! };
    };
    const cached = await cache.versions(repository, dep.name);
    // A pinned version held by the cache needs no network, offline or not.
    if (exact !== undefined) {
      const hit = await fromCache(exact, cached.get(exact));
      if (hit) return hit;
    }
    if (options.offline) {
      const version = exact ?? highestWithin(request, [...cached.keys()]);
      const hit = version === undefined ? undefined : await fromCache(version, cached.get(version));
      if (hit) return hit;
      throw new ChartDependencyError(
        request.chart,
        dep.name,
        `${dep.name} ${wanted || '(any version)'} from ${dep.repository} is not in the dependency cache (${cache.dir}), and --offline fetches nothing: build once online, or map the repository to a chart folder of the app (chartRepositories in fluxcd/releases.yaml)`,
        dep.location,
      );
    }
    const listing = await (await fetcher()).listing(repository, request, exact);
    const version = exact ?? highestWithin(request, listing.versions);
    if (version === undefined) {
      throw new ChartDependencyError(
        request.chart,
        dep.name,
        `${dep.repository} holds no version of ${dep.name} within ${JSON.stringify(wanted || '*')}`,
        dep.location,
      );
    }
    if (exact === undefined) {
      const hit = await fromCache(version, cached.get(version));
      if (hit) return hit;
    }
    if (!repository.startsWith('oci://') && !listing.versions.includes(version)) {
      throw new ChartDependencyError(request.chart, dep.name, `${dep.repository} does not list ${dep.name} ${version}`, dep.location);
    }
    const bytes = await listing.fetch(version);
    const digest = await cache.store(repository, dep.name, version, bytes);
    return { kind: 'archive', bytes, label: label(version), digest };
  };

  return {
    async resolve(request: RepositoryRequest): Promise<RepositoryChart> {
      const dep = request.dependency;
      const repository = repositoryKey(dep.repository ?? '');
      const mapped = mapping.get(repository);
      if (mapped !== undefined) return { kind: 'directory', dir: join(mapped, dep.name) };
      if (!/^(oci|https?):\/\//.test(repository)) {
        throw new ChartDependencyError(
          request.chart,
          dep.name,
          `repository ${JSON.stringify(dep.repository)} is neither oci://, http(s):// nor file://, and the app maps it to no chart folder (named repositories of a Helm configuration are not read)`,
          dep.location,
        );
      }
      const key = JSON.stringify([repository, dep.name, request.locked ?? dep.version ?? '']);
      let pending = resolving.get(key);
      if (!pending) resolving.set(key, (pending = resolve(request, repository)));
      return pending;
    },
  };
}

/** The highest of `versions` within the dependency's range (Helm: the first of the sorted list that satisfies it); an empty range takes any release. */
function highestWithin({ chart, dependency: dep }: RepositoryRequest, versions: readonly string[]): string | undefined {
  const constraint = parseConstraint(dep.version === undefined || dep.version.trim() === '' ? '*' : dep.version);
  if (!constraint) throw new ChartDependencyError(chart, dep.name, `version ${JSON.stringify(dep.version)} is not a valid version constraint`, dep.location);
  let best: { text: string; version: SemVer } | undefined;
  for (const text of versions) {
    const version = parseVersion(text);
    if (!version || !constraint.satisfiedBy(version)) continue;
    if (!best || compareVersions(version, best.version) > 0) best = { text, version };
  }
  return best?.text;
}
