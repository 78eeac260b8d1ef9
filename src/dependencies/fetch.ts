/**
 * What a chart repository holds of one chart, read over the network: an
 * OCI repository's tags and chart layers (through flotilla's OCI client),
 * an HTTP repository's index.yaml and the archives it lists (their sha256
 * checked against the index's digest). The only file of flotilla's build
 * that opens connections, loaded when a dependency must be fetched.
 */
import { createHash } from 'node:crypto';
import { ChartDependencyError, type RepositoryRequest } from '../charts/index.js';
import { parseYamlValue } from '../yaml/index.js';
import { chartVersionTag, MediaType, OciClient, OciReference, parseReference, type ImageManifest, type OciClientOptions } from '../oci/index.js';

/** What a repository holds of one chart: its versions (as written) and how to fetch one. */
export interface RepositoryListing {
  readonly versions: readonly string[];
  fetch(version: string): Promise<Buffer>;
}

export interface RepositoryNetwork {
  /** The chart's versions in `repository` (only `exact` asked of an OCI registry when the version is pinned). */
  listing(repository: string, request: RepositoryRequest, exact?: string): Promise<RepositoryListing>;
}

export interface NetworkOptions {
  /** For oci:// repositories: credentials, insecure registries, time limits. */
  readonly oci?: OciClientOptions;
  /** Time allowed for one HTTP request (index or archive); default 60 s. */
  readonly httpTimeoutMs?: number;
}

/** The largest index.yaml or chart archive read from an HTTP repository. */
const MAX_HTTP_BYTES = 64 * 1024 * 1024;

export function repositoryNetwork(options: NetworkOptions): RepositoryNetwork {
  let client: OciClient | undefined;
  const oci = (): OciClient => (client ??= new OciClient(options.oci));
  const indexes = new Map<string, Promise<unknown>>();

  const httpGet = async (url: string, what: string, request: RepositoryRequest): Promise<Buffer> => {
    const fail = (why: string): never => {
      throw new ChartDependencyError(request.chart, request.dependency.name, `cannot read ${what} ${url}: ${why}`, request.dependency.location);
    };
    let response: Response;
    try {
      response = await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(options.httpTimeoutMs ?? 60_000) });
    } catch (error) {
      return fail(((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message) || 'unreachable');
    }
    if (!response.ok) return fail(`HTTP ${response.status}`);
    const length = Number(response.headers.get('content-length') ?? 0);
    if (length > MAX_HTTP_BYTES) return fail(`${length} bytes, more than the ${MAX_HTTP_BYTES} read`);
    const bytes = Buffer.from(await response.arrayBuffer());
    if (bytes.length > MAX_HTTP_BYTES) return fail(`more than the ${MAX_HTTP_BYTES} bytes read`);
    return bytes;
  };

  const httpListing = async (repository: string, request: RepositoryRequest): Promise<RepositoryListing> => {
    const indexUrl = `${repository}/index.yaml`;
    let index = indexes.get(indexUrl);
    if (!index) {
      indexes.set(indexUrl, (index = httpGet(indexUrl, 'the repository index', request).then((bytes) => parseYamlValue(bytes.toString('utf8'), indexUrl))));
    }
    const entries = ((await index) as { entries?: Record<string, unknown> } | undefined)?.entries?.[request.dependency.name];
    const listed = (Array.isArray(entries) ? entries : []) as { version?: unknown; urls?: unknown; digest?: unknown }[];
    const byVersion = new Map(listed.filter((e) => typeof e?.version === 'string').map((e) => [e.version as string, e]));
    return {
      versions: [...byVersion.keys()],
      fetch: async (version) => {
        const entry = byVersion.get(version);
        const first = Array.isArray(entry?.urls) ? entry.urls.find((u): u is string => typeof u === 'string') : undefined;
        if (entry === undefined || first === undefined) {
          throw new ChartDependencyError(
            request.chart,
            request.dependency.name,
            `${indexUrl} lists no URL for ${request.dependency.name} ${version}`,
            request.dependency.location,
          );
        }
        // A relative URL is relative to the repository, as Helm reads it.
        const url = new URL(first, `${repository}/`).toString();
        const bytes = await httpGet(url, 'the chart archive', request);
        const digest = createHash('sha256').update(bytes).digest('hex');
        // Helm's index gives the archive's sha256 as hex; an index without one gets the archive as served.
        if (entry.digest !== undefined && entry.digest !== '' && String(entry.digest).replace(/^sha256:/, '') !== digest) {
          throw new ChartDependencyError(
            request.chart,
            request.dependency.name,
            `${url} has sha256 ${digest}, but ${indexUrl} says ${entry.digest}: refused`,
            request.dependency.location,
          );
        }
        return bytes;
      },
    };
  };

  const ociListing = async (repository: string, request: RepositoryRequest, exact?: string): Promise<RepositoryListing> => {
    const base = parseReference(repository);
    const repo = new OciReference(base.registry, `${base.repository}/${request.dependency.name}`);
    const versions = exact !== undefined ? [exact] : (await oci().listTags(repo)).map((tag) => tag.replaceAll('_', '+'));
    return {
      versions,
      fetch: async (version) => {
        const ref = new OciReference(base.registry, repo.repository, chartVersionTag(version));
        const { manifest } = await oci().getManifest(ref);
        const layer = 'layers' in manifest ? (manifest as ImageManifest).layers.find((l) => l.mediaType === MediaType.helmChart) : undefined;
        if (!layer)
          throw new ChartDependencyError(
            request.chart,
            request.dependency.name,
            `oci://${ref} is not a Helm chart (no ${MediaType.helmChart} layer)`,
            request.dependency.location,
          );
        return oci().getBlob(ref, layer);
      },
    };
  };

  return {
    listing: (repository, request, exact) => (repository.startsWith('oci://') ? ociListing(repository, request, exact) : httpListing(repository, request)),
  };
}
