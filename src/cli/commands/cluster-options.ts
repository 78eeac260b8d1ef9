/**
 * What every cluster command shares besides its flags (src/cli/options.ts):
 * the connection. (Their progress display is src/cli/progress.ts.)
 */
import type { Cluster } from '../../lifecycle/index.js';
import type { ClusterFlags } from '../options.js';

/** The cluster the flags name, as the lifecycle asks for it (src/kube implements it over the Kubernetes API). */
export async function connectFor(flags: ClusterFlags): Promise<Cluster> {
  const { connect, kubeCluster } = await import('../../kube/index.js');
  return kubeCluster(await connect({ ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}), ...(flags.context ? { context: flags.context } : {}) }));
}
