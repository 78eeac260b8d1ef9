/**
 * flotilla's settings kept in the cluster: the ConfigMap `flotilla-config`
 * in the system namespace. `chartRepository` is where uploads deliver charts
 * (remembered from the first `--chart-repo`, or set by whoever installed the
 * cluster), `chartRepositoryPlainHttp: "true"` for a registry without TLS,
 * `chartRepositoryDir` the folder a Helm HTTP repository's web server serves,
 * `signingKey` a PEM ed25519 public key: when set, upload refuses a tarball
 * without a valid signature by its private key.
 */
import type { SettingsStore } from './cluster.js';
import { LifecycleError } from './errors.js';
import type { ChartRepository } from './record.js';

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

export async function readClusterConfig(settings: SettingsStore): Promise<ClusterConfig> {
  const data = await settings.read();
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
export function rememberChartRepository(settings: SettingsStore, repository: ChartRepository): Promise<void> {
  return settings.merge({
    chartRepository: repository.url,
    chartRepositoryPlainHttp: repository.plainHttp ? 'true' : 'false',
    chartRepositoryDir: repository.dir ?? '',
  });
}
