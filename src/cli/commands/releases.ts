import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { formatTable, printData } from '../output.js';
import { outputOption } from '../options.js';
import { openSessionForCommand } from './app-option.js';

export function register(program: Command, { io }: CommandContext): void {
  program
    .command('releases')
    .description('show the release table in apply waves (releases of one wave can be installed in parallel)')
    .argument('[APP_DIR]', 'app source tree', '.')
    .option('--deployment <FILE>', 'deployment spec to use instead of overrides/deployment.yaml')
    .addOption(outputOption())
    .action(async (appDir: string, opts: { deployment?: string; output: string }) => {
      const { app } = await openSessionForCommand(appDir, opts.deployment);
      const enabled = new Set(app.enabled.map((r) => r.name));
      const items = app.graph.waves.flatMap((wave, i) =>
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
      printData(io, opts.output, 'ReleaseList', { items }, () => {
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
        return [
          formatTable(['WAVE', 'RELEASE', 'CHART', 'SERVICE', 'GROUP', 'NAMESPACE', 'HELM RELEASE', 'DEPENDS ON', 'ENABLED'], rows),
          `\n${app.releases.length} releases in ${app.graph.waves.length} waves; ${app.enabled.length} enabled by the spec${app.target.release ? ` (release ${app.target.release})` : ''}`,
        ];
      });
    });
}
