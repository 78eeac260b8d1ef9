/**
 * An apply run in a child process, for the crash test: a short lock (2 s)
 * and every event on stdout as a JSON line, so the test can kill it with
 * SIGKILL at a chosen point. Usage: apply-child.ts KUBECONFIG APP
 */
import { connect, kubeCluster } from '../../src/kube/index.js';
import { applyApp } from '../../src/lifecycle/index.js';

const [kubeconfig, app] = process.argv.slice(2) as [string, string];
const cluster = kubeCluster(await connect({ kubeconfig }));
await applyApp(cluster, app, { leaseSeconds: 2, holder: 'crashing-run', events: (event) => process.stdout.write(`${JSON.stringify(event)}\n`) });
