/**
 * TEST FIXTURE (dev cluster): the real helm binary, as the Flux simulation
 * uses it — pull a chart from an OCI registry or an HTTP chart repository,
 * read its metadata, render it. Helm's home folders point into the
 * fixture's temp folder so nothing touches the user's own helm setup.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { list } from 'tar';

/** helm failed: `message` is helm's own error text (without the `Error: ` prefix). */
export class HelmError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HelmError';
  }
}

export interface ChartMetadata {
  name: string;
  version: string;
  appVersion?: string;
  description?: string;
  apiVersion?: string;
  type?: string;
}

export interface PullRequest {
  /** `oci://host/path/chart`, or the chart name with `repoUrl`. */
  readonly chart: string;
  readonly repoUrl?: string;
  /** A version or semver range; latest when omitted. */
  readonly version?: string;
  readonly plainHttp?: boolean;
}

export interface RenderRequest {
  readonly releaseName: string;
  readonly namespace: string;
  readonly chartPath: string;
  readonly values: unknown;
  readonly upgrade: boolean;
  readonly includeCrds: boolean;
  /** install/upgrade.disableHooks: hooks left out of the output. */
  readonly noHooks: boolean;
  readonly kubeVersion: string;
  readonly apiVersions: readonly string[];
}

export class Helm {
  private readonly env: NodeJS.ProcessEnv;

  constructor(
    private readonly binary: string,
    private readonly workDir: string,
  ) {
    const home = join(workDir, 'helm-home');
    mkdirSync(home, { recursive: true });
    this.env = {
      PATH: process.env.PATH,
      HOME: home,
      HELM_CACHE_HOME: join(home, 'cache'),
      HELM_CONFIG_HOME: join(home, 'config'),
      HELM_DATA_HOME: join(home, 'data'),
      HELM_REGISTRY_CONFIG: join(home, 'registry.json'),
      HELM_REPOSITORY_CONFIG: join(home, 'repositories.yaml'),
      HELM_REPOSITORY_CACHE: join(home, 'repository'),
      NO_PROXY: '127.0.0.1,localhost,::1',
    };
  }

  private run(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(this.binary, args, { env: this.env, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (error, stdout, stderr) => {
        if (error) {
          const text = (stderr || error.message).trim().split('\n').filter((l) => !l.startsWith('WARNING:') && !/^level=WARN/.test(l)).join('\n');
          reject(new HelmError(text.replace(/^Error: /, '')));
        } else resolve(stdout);
      });
    });
  }

  /** Downloads a chart archive into `destination`; returns its path. */
  async pull(request: PullRequest, destination: string): Promise<string> {
    mkdirSync(destination, { recursive: true });
    const into = mkdtempSync(join(destination, 'pull-'));
    const args = ['pull', request.chart, '--destination', into];
    if (request.repoUrl) args.push('--repo', request.repoUrl);
    if (request.version && request.version !== '*') args.push('--version', request.version);
    if (request.plainHttp) args.push('--plain-http');
    await this.run(args);
    const archive = readdirSync(into).find((f) => f.endsWith('.tgz'));
    if (!archive) throw new HelmError(`helm pull ${request.chart} wrote no chart archive`);
    return join(into, archive);
  }

  /** The chart's Chart.yaml, read from the archive in-process (no helm process per release). */
  async metadata(chartPath: string): Promise<ChartMetadata> {
    const cached = this.metadataCache.get(chartPath);
    if (cached) return cached;
    let text: string | undefined;
    await list({
      file: chartPath,
      filter: (path) => /^[^/]+\/Chart\.yaml$/.test(path),
      onReadEntry: (entry) => {
        const chunks: Buffer[] = [];
        entry.on('data', (chunk: Buffer) => chunks.push(chunk));
        entry.on('end', () => {
          text ??= Buffer.concat(chunks).toString('utf8');
        });
      },
    });
    if (text === undefined) throw new HelmError(`Chart.yaml file is missing in ${chartPath}`);
    const metadata = load(text) as ChartMetadata;
    metadata.version = String(metadata.version);
    this.metadataCache.set(chartPath, metadata);
    return metadata;
  }

  private readonly metadataCache = new Map<string, ChartMetadata>();

  /** Renders with `helm template`; returns the manifests (YAML stream). */
  async render(request: RenderRequest): Promise<string> {
    const valuesFile = join(mkdtempSync(join(this.workDir, 'values-')), 'values.json');
    writeFileSync(valuesFile, JSON.stringify(request.values ?? {}));
    const args = ['template', request.releaseName, request.chartPath, '--namespace', request.namespace, '-f', valuesFile, '--skip-tests', '--kube-version', request.kubeVersion];
    if (request.upgrade) args.push('--is-upgrade');
    if (request.includeCrds) args.push('--include-crds');
    if (request.noHooks) args.push('--no-hooks');
    if (request.apiVersions.length > 0) args.push('--api-versions', request.apiVersions.join(','));
    return this.run(args);
  }
}
