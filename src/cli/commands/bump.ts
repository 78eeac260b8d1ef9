import type { Command } from 'commander';
import { bumpVersions, type ChartBump } from '../../edit/index.js';
import type { CommandContext } from '../context.js';
import { outputOption, UsageError } from '../options.js';
import { showAndWrite } from './edit-output.js';

interface BumpOptions {
  appVersion?: true | string;
  chart: string[];
  allChanged?: boolean;
  against?: string;
  force?: boolean;
  dryRun?: boolean;
  output: string;
}

export function register(program: Command, { io }: CommandContext): void {
  program
    .command('bump')
    .description('raise the app version (fluxcd/metadata.yaml) and chart versions (Chart.yaml), keeping comments')
    .argument('<APP_DIR>', 'app source tree')
    .option('--app-version [VERSION]', 'set app_version; without VERSION the next revision (1.0-2 → 1.0-3)')
    .option('--chart <CHART[=VERSION]>', 'set a chart version; without =VERSION the next patch (repeatable)', (v: string, all: string[]) => [...all, v], [])
    .option('--all-changed', 'with --against: bump every chart whose content changed, as build --bump-changed decides')
    .option('--against <PREVIOUS>', 'previous app tarball or Helm repository index.yaml')
    .option('--force', 'allow a version that is not above the current one')
    .option('--dry-run', 'print the diff and write nothing')
    .addOption(outputOption())
    .action(async (appDir: string, opts: BumpOptions) => {
      if (opts.allChanged && !opts.against) throw new UsageError('--all-changed needs --against PREVIOUS (a tarball or index.yaml)');
      if (opts.against && !opts.allChanged) throw new UsageError('--against goes with --all-changed');
      const charts = opts.chart.map((arg): ChartBump => {
        const [chart, version] = arg.split('=', 2) as [string, string | undefined];
        if (!chart || version === '') throw new UsageError(`--chart takes CHART or CHART=VERSION, got "${arg}"`);
        return { chart, version };
      });
      const result = await bumpVersions({ appDir, appVersion: opts.appVersion, charts, allChangedAgainst: opts.against, force: opts.force });
      if (result.bumped.length === 0) io.err(`no chart changed since ${opts.against}`);
      const label = { app: '', chart: 'chart ', dependency: 'dependency of chart ' } as const;
      for (const b of result.bumped) io.err(`${label[b.kind]}${b.what}: ${b.from} → ${b.to} (${b.file})`);
      await showAndWrite(io, opts.output, result.changes, opts.dryRun, { bumped: result.bumped });
    });
}
