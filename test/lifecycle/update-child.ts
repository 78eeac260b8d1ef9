/**
 * An update run in a child process, for the interrupted-update test: a
 * short lock (2 s) and every event on stdout as a JSON line, so the test
 * can kill it with SIGKILL at a chosen point. Usage: update-child.ts KUBECONFIG BUNDLE
 */
import { connect, kubeCluster } from '../../src/kube/index.js';
import { updateApp } from '../../src/lifecycle/index.js';

const [kubeconfig, bundle] = process.argv.slice(2) as [string, string];
const cluster = kubeCluster(await connect({ kubeconfig }));
await updateApp(cluster, bundle, { leaseSeconds: 2, holder: 'crashing-update', events: (event) => process.stdout.write(`${JSON.stringify(event)}\n`) });
