import { Option, type Command } from 'commander';
import { INIT_TARGETS, initApp, type InitTarget } from '../../init/index.js';
import type { CommandContext } from '../context.js';
import { formatTable, printData } from '../output.js';
import { collect, outputOption } from '../options.js';

interface InitCommandOptions {
  name?: string;
  chart: string[];
  namespace?: string;
  target: InitTarget;
  output: string;
}

export function register(program: Command, { io }: CommandContext): void {
  program
    .command('init')
    .description('create the smallest app that builds, previews and applies: metadata, a release per chart, a deployment spec (docs/first-app.md)')
    .argument('[DIR]', 'the app folder, new or holding its charts in charts/ (default: .)')
    .option('--name <NAME>', "the app's name (default: the folder's)")
    .option(
      '--chart <PATH>',
      'a chart folder or packaged chart (.tgz) to put in charts/, one release each (repeatable; default: the charts in DIR/charts/)',
      collect,
      [],
    )
    .option('--namespace <NS>', 'namespace of the releases (default: the app name)')
    .addOption(new Option('--target <TARGET>', 'where the app is deployed: plain Flux, StarlingX, or both').choices([...INIT_TARGETS]).default('both'))
    .addOption(outputOption())
    .action(async (dir: string | undefined, opts: InitCommandOptions) => {
      const result = await initApp(dir ?? '.', { name: opts.name, charts: opts.chart, namespace: opts.namespace, target: opts.target });
      printData(io, opts.output, 'InitResult', { ...result }, () => [
        formatTable(
          ['RELEASE', 'CHART', 'NAMESPACE'],
          result.releases.map((r) => [r.name, r.chart, r.namespace]),
        ),
        `\napp ${result.name} written in ${result.dir}: ${result.files.join(', ')}`,
        'next: flotilla preflight, flotilla build (docs/first-app.md)',
      ]);
    });
}
