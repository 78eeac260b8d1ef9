import type { Command } from 'commander';
import { scaffoldPlugin } from '../../plugins/index.js';
import { formatTable } from '../output.js';
import { openSessionForCommand } from './app-option.js';

export function register(program: Command): void {
  const plugin = program.command('plugin').description('chart plugins, app lifecycle and kustomize operators of an app (plugins/)');

  plugin
    .command('new')
    .description('scaffold a typed chart plugin (next free NNN_ order) and its test, which pass as generated')
    .argument('<CHART>', 'the chart the plugin serves')
    .option('--app <DIR>', 'app source tree', '.')
    .option('--release <NAME>', 'serve only this release of the chart')
    .action(async (chart: string, opts: { app: string; release?: string }) => {
      const { app } = await openSessionForCommand(opts.app);
      const result = await scaffoldPlugin(app, chart, { release: opts.release });
      console.log(`created ${result.pluginFile}\ncreated ${result.testFile}`);
    });

  plugin
    .command('list')
    .description('the plugins in the order their hooks run, and the releases each serves')
    .option('--app <DIR>', 'app source tree', '.')
    .option('--deployment <FILE>', 'deployment spec to use instead of overrides/deployment.yaml')
    .action(async (opts: { app: string; deployment?: string }) => {
      const session = await openSessionForCommand(opts.app, opts.deployment);
      const { app } = session;
      const host = await session.plugins();
      const rows = host.plugins.map((p) => [
        String(p.order).padStart(3, '0'),
        p.name,
        p.kind,
        p.kind === 'chart' ? p.chart : '-',
        app.releases.filter((r) => host.pluginFor(r.name) === p).map((r) => r.name).join(',') || '-',
        p.file,
      ]);
      console.log(formatTable(['ORDER', 'PLUGIN', 'KIND', 'CHART', 'RELEASES', 'FILE'], rows));
    });
}
