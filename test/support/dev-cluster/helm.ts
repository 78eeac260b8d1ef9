/**
 * TEST FIXTURE (dev cluster): the real helm binary, as the Flux simulation
 * uses it — pull a chart from an OCI registry or an HTTP chart repository,
 * read its metadata, render it. Helm's home folders point into the
 * fixture's temp folder so nothing touches the user's own helm setup.
 */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { list } from 'tar';
import { Worker } from 'node:worker_threads';

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

/** What a helm process printed; `error` when it failed to start or exited non-zero. */
interface ProcessResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly error?: string;
}

/** The worker's code (CommonJS): runs each process it is sent and posts back what it printed. */
const RUNNER = `
const { parentPort } = require('node:worker_threads');
const { execFile } = require('node:child_process');
parentPort.on('message', ({ id, file, args, options }) => {
  execFile(file, args, options, (error, stdout, stderr) => parentPort.postMessage({ id, stdout, stderr, error: error ? error.message : undefined }));
});
`;

/**
 * Starts processes from a worker thread. Starting one blocks the thread
 * that starts it until the child has exec'd (so that a missing binary fails
 * at once); on a loaded machine that is milliseconds per process, and a
 * burst of renders on the main thread would hold up the API server and the
 * simulation's timers meanwhile. The worker keeps the process alive only
 * while something runs.
 */
class ProcessRunner {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, (result: ProcessResult) => void>();

  run(file: string, args: readonly string[], options: { env: NodeJS.ProcessEnv; maxBuffer: number; timeout: number }): Promise<ProcessResult> {
    if (!this.worker) {
      const worker = new Worker(RUNNER, { eval: true });
      worker.on('message', (result: ProcessResult & { id: number }) => {
        this.pending.get(result.id)?.(result);
        this.pending.delete(result.id);
        if (this.pending.size === 0) worker.unref();
      });
      worker.on('error', (error) => {
        for (const done of this.pending.values()) done({ stdout: '', stderr: '', error: `helm runner failed: ${error.message}` });
        this.pending.clear();
        this.worker = undefined;
      });
      this.worker = worker;
    }
    const id = this.nextId++;
    this.worker.ref();
    this.worker.postMessage({ id, file, args, options });
    return new Promise((resolve) => this.pending.set(id, resolve));
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
    this.worker = undefined;
  }
}

export class Helm {
  private readonly env: NodeJS.ProcessEnv;
  private readonly runner = new ProcessRunner();

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
      // helm-controller renders in one long-lived process; a helm process per render spends a fifth of its
      // CPU collecting garbage it would free by exiting. So no collection below 256 MiB (a big chart still gets one).
      GOGC: 'off',
      GOMEMLIMIT: '256MiB',
    };
  }

  private async run(args: string[]): Promise<string> {
    const { stdout, stderr, error } = await this.runner.run(this.binary, args, { env: this.env, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
    if (error === undefined) return stdout;
    const text = (stderr || error)
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('WARNING:') && !/^level=WARN/.test(l))
      .join('\n');
    throw new HelmError(text.replace(/^Error: /, ''));
  }

  /** Stops the worker helm runs from. */
  close(): Promise<void> {
    return this.runner.close();
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
    const args = [
      'template',
      request.releaseName,
      request.chartPath,
      '--namespace',
      request.namespace,
      '-f',
      valuesFile,
      '--skip-tests',
      '--kube-version',
      request.kubeVersion,
    ];
    if (request.upgrade) args.push('--is-upgrade');
    if (request.includeCrds) args.push('--include-crds');
    if (request.noHooks) args.push('--no-hooks');
    if (request.apiVersions.length > 0) args.push('--api-versions', request.apiVersions.join(','));
    return this.run(args);
  }
}
