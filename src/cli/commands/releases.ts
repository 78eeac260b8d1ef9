import type { Command } from 'commander';
import { formatTable } from '../output.js';
import { outputOption, printData } from '../options.js';
import { openSessionForCommand } from './app-option.js';

export function register(program: Command): void {
  program
    .command('releases')
    .description('show the release table in apply waves (releases of one wave can be installed in parallel)')
    .argument('[APP_DIR]', 'app source tree', '.')
    .option('--deployment <FILE>', 'deployment spec to use instead of overrides/deployment.yaml')
    .addOption(outputOption())
    .action(async (appDir: string, opts: { deployment?: string; output: string }) => {
      const { app } = await openSessionForCommand(appDir, opts.deployment);
      const enabled = new Set(app.enabled.map((r) => r.name));
      const data = app.graph.waves.flatMap((wave, i) =>
        wave.map((r) => ({
          wave: i + 1,
          name: r.name,
          chart: r.chart,
          ...(r.service ? { service: r.service } : {}),
          ...(r.group ? { group: r.group } : {}),
          namespace: r.namespace,
          releaseName: r.releaseName,
          dependsOn: r.dependsOn,
          enabled: enabled.has(r.name),
        })),
      );
      if (opts.output !== 'table') return printData(opts.output, data, () => undefined);
      const rows = app.graph.waves.flatMap((wave, i) =>
        wave.map((r) => [
          String(i + 1),
          r.name,
          r.chart,
          r.service ?? '-',
          r.group ?? '-',
          r.namespace,
          r.releaseName,
          // External dependencies (another app's HelmReleases) show their namespace: Flux waits for them, flotilla does not.
          r.dependencies.map((d) => (d.external ? `${d.namespace}/${d.name} (external)` : d.name)).join(',') || '-',
          enabled.has(r.name) ? 'yes' : 'no',
        ]),
      );
      console.log(formatTable(['WAVE', 'RELEASE', 'CHART', 'SERVICE', 'GROUP', 'NAMESPACE', 'HELM RELEASE', 'DEPENDS ON', 'ENABLED'], rows));
      console.log(`\n${app.releases.length} releases in ${app.graph.waves.length} waves; ${app.enabled.length} enabled by the spec (release ${app.target.release})`);
    });
}
