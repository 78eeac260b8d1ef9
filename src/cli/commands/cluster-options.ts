/**
 * What every cluster command shares besides its flags (src/cli/options.ts):
 * the connection. (Their progress display is src/cli/progress.ts.)
 */
import type { KubeClient } from '../../kube/index.js';
import type { ClusterFlags } from '../options.js';

export async function connectFor(flags: ClusterFlags): Promise<KubeClient> {
  const { connect } = await import('../../kube/index.js');
  return connect({ ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}), ...(flags.context ? { context: flags.context } : {}) });
}
