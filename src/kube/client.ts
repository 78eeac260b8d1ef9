/**
 * The one way flotilla reaches a cluster: a kubeconfig chosen like kubectl
 * chooses it (`--kubeconfig`, else $KUBECONFIG — a list of files merged — ,
 * else ~/.kube/config), one of its contexts (`--context`, else the current
 * one), and the API clients built from it. The Kubernetes client library is
 * loaded here, on first use, so commands that never talk to a cluster do not
 * pay for it.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CoordinationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';
import { FlotillaError } from '../diagnostics/index.js';

/** How the user named the cluster: the CLI's `--kubeconfig` and `--context`. */
export interface KubeTarget {
  readonly kubeconfig?: string;
  readonly context?: string;
}

export interface KubeClient {
  readonly config: KubeConfig;
  /** The context in use and where its kubeconfig came from, for messages. */
  readonly context: string;
  readonly source: string;
  readonly core: CoreV1Api;
  readonly coordination: CoordinationV1Api;
  /** Discovery of API groups (custom resources). */
  readonly custom: CustomObjectsApi;
  /** Any kind by apiVersion/kind (custom resources included). */
  readonly objects: KubernetesObjectApi;
}

/** No usable kubeconfig, or no such context in it. */
export class KubeConfigError extends FlotillaError {}

type ClientModule = typeof import('@kubernetes/client-node');
let clientModule: Promise<ClientModule> | undefined;

/**
 * The library bundled into one module by the build
 * (scripts/bundle-kubernetes-client.mjs), next to the CLI: loading the
 * package's ~950 modules one by one took half a second of every cluster
 * command's start-up. Run from the sources, there is none: the package loads.
 */
const BUNDLED_CLIENT = new URL('../cli/kubernetes-client.mjs', import.meta.url);

/** The Kubernetes client library, loaded once. */
export function loadClientModule(): Promise<ClientModule> {
  clientModule ??= existsSync(fileURLToPath(BUNDLED_CLIENT)) ? (import(BUNDLED_CLIENT.href) as Promise<ClientModule>) : import('@kubernetes/client-node');
  return clientModule;
}

function kubeconfigFiles(target: KubeTarget): { files: string[]; source: string } {
  if (target.kubeconfig) return { files: [target.kubeconfig], source: target.kubeconfig };
  const fromEnv = (process.env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== '');
  if (fromEnv.length > 0) return { files: fromEnv, source: `$KUBECONFIG (${fromEnv.join(delimiter)})` };
  const home = join(homedir(), '.kube', 'config');
  return { files: [home], source: home };
}

export async function connect(target: KubeTarget = {}): Promise<KubeClient> {
  const k8s = await loadClientModule();
  const { files, source } = kubeconfigFiles(target);
  const config = new k8s.KubeConfig();
  for (const [index, file] of files.entries()) {
    if (!existsSync(file)) {
      throw new KubeConfigError(
        target.kubeconfig || process.env.KUBECONFIG
          ? `kubeconfig ${file}: no such file`
          : `no kubeconfig: pass --kubeconfig FILE or set KUBECONFIG (${file} does not exist)`,
        { exitCode: target.kubeconfig ? 2 : 1 },
      );
    }
    try {
      if (index === 0) config.loadFromFile(file);
      else {
        const more = new k8s.KubeConfig();
        more.loadFromFile(file);
        config.mergeConfig(more);
      }
    } catch (error) {
      throw new KubeConfigError(`kubeconfig ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
  if (target.context !== undefined) {
    if (!config.getContextObject(target.context)) {
      const known = config.getContexts().map((c) => c.name);
      throw new KubeConfigError(`no context "${target.context}" in ${source}; it has: ${known.join(', ') || 'none'}`, { exitCode: 2 });
    }
    config.setCurrentContext(target.context);
  }
  const context = config.getCurrentContext();
  const cluster = config.getCurrentCluster();
  if (!context || !cluster) throw new KubeConfigError(`${source} names no current context with a cluster; pass --context`);
  // kubectl talks to an http:// server as written; the client library refuses unless TLS checks are off, which
  // changes nothing without TLS. So say so for plain-HTTP clusters only.
  if (cluster.server.startsWith('http://') && !cluster.skipTLSVerify) {
    config.clusters = config.clusters.map((c) => (c.name === cluster.name ? { ...c, skipTLSVerify: true } : c));
  }
  return {
    config,
    context,
    source,
    core: config.makeApiClient(k8s.CoreV1Api),
    coordination: config.makeApiClient(k8s.CoordinationV1Api),
    custom: config.makeApiClient(k8s.CustomObjectsApi),
    objects: k8s.KubernetesObjectApi.makeApiClient(config),
  };
}
