/**
 * TEST FIXTURE — `npm run dev-cluster -- --kubeconfig FILE`: runs the
 * flotilla dev cluster (fixture API server + Flux simulation + chart
 * registry) in the foreground until SIGINT/SIGTERM, then stops everything
 * and removes its temp folders.
 */
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { rmSync } from 'node:fs';
import { CONFIG_MAP, CONFIG_NAMESPACE, CONTEXT, startDevCluster } from './index.js';

const usage = `usage: npm run dev-cluster -- --kubeconfig FILE [--ready-delay MS] [--requeue-dependency MS] [--no-flux]

Runs the flotilla dev cluster, a TEST FIXTURE standing in for Kubernetes + Flux
(it is not Kubernetes), until Ctrl-C.

  --kubeconfig FILE   where to write the kubeconfig (written once the cluster is ready)
  --ready-delay MS    how long each HelmRelease takes to become Ready (default 0)
  --requeue-dependency MS
                      how often a HelmRelease waiting on a dependency checks it again
                      (helm-controller's --requeue-dependency; default 30000)
  --no-flux           no Flux CRDs and no Flux simulation (a cluster without Flux)
`;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        kubeconfig: { type: 'string' },
        'ready-delay': { type: 'string' },
        'requeue-dependency': { type: 'string' },
        'no-flux': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`dev-cluster: ${(error as Error).message}\n${usage}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  if (!values.kubeconfig) {
    process.stderr.write(`dev-cluster: --kubeconfig FILE is required\n${usage}`);
    return 2;
  }
  const delay = values['ready-delay'] === undefined ? 0 : Number(values['ready-delay']);
  if (!Number.isInteger(delay) || delay < 0) {
    process.stderr.write(`dev-cluster: --ready-delay must be a whole number of milliseconds, got "${values['ready-delay']}"\n`);
    return 2;
  }
  const requeue = values['requeue-dependency'] === undefined ? 30_000 : Number(values['requeue-dependency']);
  if (!Number.isInteger(requeue) || requeue <= 0) {
    process.stderr.write(`dev-cluster: --requeue-dependency must be a positive whole number of milliseconds, got "${values['requeue-dependency']}"\n`);
    return 2;
  }
  const kubeconfigPath = resolve(values.kubeconfig);
  const cluster = await startDevCluster({ kubeconfigPath, flux: !values['no-flux'], defaultReadyDelayMs: delay, requeueDependencyMs: requeue });
  const lines = [
    'flotilla dev cluster — a TEST FIXTURE standing in for Kubernetes + Flux (not a real cluster)',
    `  API server        ${cluster.server}   (context ${CONTEXT})`,
    `  kubeconfig        ${kubeconfigPath}`,
    `  Flux simulation   ${values['no-flux'] ? 'off (no Flux CRDs)' : `on (source-controller + helm-controller, charts rendered with the real helm; dependencies re-checked every ${requeue} ms)`}`,
    `  chart registry    ${cluster.registry ? `${cluster.chartRepository} (plain HTTP, recorded in ${CONFIG_NAMESPACE}/${CONFIG_MAP})` : 'none'}`,
    `  HTTP chart repo   ${cluster.httpRepo.url} serving ${cluster.httpRepo.dir}`,
    '',
    'Use it from another terminal:',
    `  export KUBECONFIG=${kubeconfigPath}`,
    '  kubectl get helmreleases -A -w',
    '  npm run flotilla -- upload out/*.tgz && npm run flotilla -- apply APP --wait',
    '',
    'Ctrl-C stops the API server, the simulation and the registry, and removes their temp folders.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  await new Promise<void>((resolveSignal) => {
    process.once('SIGINT', () => resolveSignal());
    process.once('SIGTERM', () => resolveSignal());
  });
  process.stdout.write('dev-cluster: stopping\n');
  await cluster.stop();
  rmSync(kubeconfigPath, { force: true });
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`dev-cluster: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
