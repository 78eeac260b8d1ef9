/**
 * Chart delivery: the bundle's chart archives pushed to an OCI registry as
 * Helm OCI artifacts, or published into a Helm HTTP repository folder that a
 * web server serves at the repository's URL. Both leave a version already
 * there with the same archive alone and refuse one with other content.
 */
import { publishToFolder } from '../charts/index.js';
import { OciClient, pushCharts } from '../oci/index.js';
import { LifecycleError } from './errors.js';
import type { ChartRepository } from './record.js';

export interface ChartToDeliver {
  readonly label: string;
  readonly bytes: Buffer;
}

export interface DeliveryOptions {
  /** Docker-style credentials file for the registry. */
  readonly registryConfig?: string;
}

export async function deliverCharts(repository: ChartRepository, charts: readonly ChartToDeliver[], options: DeliveryOptions = {}): Promise<void> {
  if (repository.type === 'oci') {
    const host = new URL(repository.url.replace(/^oci:/, 'http:')).host;
    const client = new OciClient({
      ...(options.registryConfig ? { registryConfig: options.registryConfig } : {}),
      ...(repository.plainHttp ? { insecureRegistries: [host] } : {}),
    });
    await pushCharts(client, repository.url, charts);
    return;
  }
  if (!repository.dir)
    throw new LifecycleError(`the chart repository ${repository.url} is a Helm HTTP repository: give the folder its web server serves (--chart-repo-dir DIR)`, {
      exitCode: 2,
    });
  await publishToFolder(repository.dir, charts, { urlPrefix: repository.url });
}
