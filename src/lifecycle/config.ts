/**
 * flotilla's settings kept in the cluster: the ConfigMap `flotilla-config`
 * in the system namespace. `chartRepository` is where uploads deliver charts
 * (remembered from the first `--chart-repo`, or set by whoever installed the
 * cluster), `chartRepositoryPlainHttp: "true"` for a registry without TLS,
 * `chartRepositoryDir` the folder a Helm HTTP repository's web server serves,
 * `signingKey` a PEM ed25519 public key: when set, upload refuses a tarball
 * without a valid signature by its private key.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { AlreadyExists, Conflict, kubeCall, kubeRead, MANAGED_BY, type KubeClient } from '../kube/index.js';
import { LifecycleError } from './errors.js';
import { SYSTEM_NAMESPACE, type ChartRepository } from './record.js';

const CONFIG_MAP = 'flotilla-config';

export interface ClusterConfig {
  readonly chartRepository?: ChartRepository;
  readonly signingKey?: string;
}

export class ChartRepositoryError extends LifecycleError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

/** `oci://host/path` → type oci; `http(s)://…` → a Helm HTTP repository (published into `dir`). */
export function parseChartRepository(url: string, options: { readonly plainHttp?: boolean; readonly dir?: string } = {}): ChartRepository {
  const match = /^(oci|https?):\/\/[^/\s]+(\/\S*)?$/.exec(url);
  if (!match) throw new ChartRepositoryError(`--chart-repo ${url}: expected oci://HOST/PATH or http(s)://HOST/PATH`);
  const trimmed = url.replace(/\/+$/, '');
  if (match[1] === 'oci') return { url: trimmed, type: 'oci', ...(options.plainHttp ? { plainHttp: true } : {}) };
  return { url: trimmed, type: 'default', ...(options.dir ? { dir: options.dir } : {}) };
}

export async function readClusterConfig(client: Pick<KubeClient, 'core'>): Promise<ClusterConfig> {
  const map = await kubeRead({ verb: 'read', kind: 'ConfigMap', namespace: SYSTEM_NAMESPACE, name: CONFIG_MAP }, () =>
    client.core.readNamespacedConfigMap({ name: CONFIG_MAP, namespace: SYSTEM_NAMESPACE }),
  );
  const data = map?.data ?? {};
  return {
    ...(data.chartRepository
      ? {
          chartRepository: parseChartRepository(data.chartRepository, {
            plainHttp: data.chartRepositoryPlainHttp === 'true',
            ...(data.chartRepositoryDir ? { dir: data.chartRepositoryDir } : {}),
          }),
        }
      : {}),
    ...(data.signingKey ? { signingKey: data.signingKey } : {}),
  };
}

/** Remembers the chart repository, so later commands need no `--chart-repo`. */
export async function rememberChartRepository(client: Pick<KubeClient, 'core'>, repository: ChartRepository): Promise<void> {
  const call = { kind: 'ConfigMap', namespace: SYSTEM_NAMESPACE, name: CONFIG_MAP };
  const fields = {
    chartRepository: repository.url,
    chartRepositoryPlainHttp: repository.plainHttp ? 'true' : 'false',
    chartRepositoryDir: repository.dir ?? '',
  };
  for (let attempt = 0; attempt < 5; attempt++) {
    const map = await kubeRead({ ...call, verb: 'read' }, () => client.core.readNamespacedConfigMap({ name: CONFIG_MAP, namespace: SYSTEM_NAMESPACE }));
    try {
      if (map) {
        const body: V1ConfigMap = { ...map, data: { ...map.data, ...fields } };
        await kubeCall({ ...call, verb: 'update' }, () => client.core.replaceNamespacedConfigMap({ name: CONFIG_MAP, namespace: SYSTEM_NAMESPACE, body }));
      } else {
        const body: V1ConfigMap = {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: CONFIG_MAP, namespace: SYSTEM_NAMESPACE, labels: { ...MANAGED_BY } },
          data: fields,
        };
        await kubeCall({ ...call, verb: 'create' }, () => client.core.createNamespacedConfigMap({ namespace: SYSTEM_NAMESPACE, body }));
      }
      return;
    } catch (error) {
      // Someone wrote in between: read again.
      if (!(error instanceof Conflict || error instanceof AlreadyExists)) throw error;
    }
  }
}
