import type { Command } from 'commander';
import { PLUGINS_DIR, PluginTypeError, scaffoldPlugin, typecheckPlugins } from '../../plugins/index.js';
import type { CommandContext } from '../context.js';
import { formatTable, printData } from '../output.js';
import { appDirAndNames, outputOption, UsageError } from '../options.js';
import { openSessionForCommand } from './app-option.js';

export function register(program: Command, { io }: CommandContext): void {
  const plugin = program.command('plugin').description('chart plugins, app lifecycle and kustomize operators of an app (plugins/)');

  plugin
    .command('new')
    .description('scaffold a typed chart plugin (next free NNN_ order) and its test, which pass as generated')
    .argument('[APP_DIR]', 'app source tree (default: .)')
    .argument('[CHART]', 'the chart the plugin serves')
    .option('--release <NAME>', 'serve only this release of the chart')
    .addOption(outputOption())
    .action(async (first: string | undefined, second: string | undefined, opts: { release?: string; output: string }) => {
      const { appDir, names } = appDirAndNames([first, second].filter((w): w is string => w !== undefined));
      const [chart] = names;
      if (chart === undefined || names.length > 1) throw new UsageError('plugin new: give [APP_DIR] CHART');
      const { app } = await openSessionForCommand(appDir);
      const result = await scaffoldPlugin(app, chart, { release: opts.release });
      printData(io, opts.output, 'PluginScaffold', { plugin: result.pluginFile, test: result.testFile, setup: result.setup }, () => [
        `created ${result.pluginFile}`,
        `created ${result.testFile}`,
        ...result.setup.map((file) => `wrote ${file} (the plugin test's set-up: npm install, then npm test)`),
      ]);
    });

  plugin
    .command('check')
    .description('type-check plugins/ with TypeScript (flotilla/plugin resolved to this flotilla); errors at file:line, exit 1 on any')
    .argument('[APP_DIR]', 'app source tree', '.')
    .addOption(outputOption())
    .action(async (appDir: string, opts: { output: string }) => {
      const result = await typecheckPlugins(appDir);
      if (result.problems.length > 0) process.exitCode = 1;
      if (result.problems.length > 0 && opts.output === 'table') throw new PluginTypeError(result.problems);
      printData(io, opts.output, 'PluginCheck', { ...result }, () =>
        result.checked ? `${PLUGINS_DIR}/ type-checks` : `no TypeScript files under ${PLUGINS_DIR}/`,
      );
    });

  plugin
    .command('list')
    .description('the plugins in the order their hooks run, and the releases each serves')
    .argument('[APP_DIR]', 'app source tree', '.')
    .option('--deployment <FILE>', 'deployment spec to use instead of overrides/deployment.yaml')
    .addOption(outputOption())
    .action(async (appDir: string, opts: { deployment?: string; output: string }) => {
      const session = await openSessionForCommand(appDir, opts.deployment);
      const { app } = session;
      const host = await session.plugins();
      const rows = host.plugins.map((p) => [
        String(p.order).padStart(3, '0'),
        p.name,
        p.kind,
        p.kind === 'chart' ? p.chart : '-',
        app.releases
          .filter((r) => host.pluginFor(r.name) === p)
          .map((r) => r.name)
          .join(',') || '-',
        p.file,
      ]);
      const items = host.plugins.map((p) => ({
        order: p.order,
        name: p.name,
        kind: p.kind,
        ...(p.kind === 'chart' ? { chart: p.chart } : {}),
        releases: app.releases.filter((r) => host.pluginFor(r.name) === p).map((r) => r.name),
        file: p.file,
      }));
      printData(io, opts.output, 'PluginList', { items }, () => formatTable(['ORDER', 'PLUGIN', 'KIND', 'CHART', 'RELEASES', 'FILE'], rows));
    });
}
