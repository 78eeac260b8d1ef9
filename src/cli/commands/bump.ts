import type { Command } from 'commander';
import { bumpVersions, type ChartBump } from '../../edit/index.js';
import { FlotillaError } from '../../diagnostics/index.js';
import { showAndWrite } from './edit-output.js';

interface BumpOptions {
  appVersion?: true | string;
  chart: string[];
  allChanged?: boolean;
  against?: string;
  force?: boolean;
  dryRun?: boolean;
}

export function register(program: Command): void {
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
    .action(async (appDir: string, opts: BumpOptions) => {
      if (opts.allChanged && !opts.against) throw new FlotillaError('--all-changed needs --against PREVIOUS (a tarball or index.yaml)', { exitCode: 2 });
      if (opts.against && !opts.allChanged) throw new FlotillaError('--against goes with --all-changed', { exitCode: 2 });
      const charts = opts.chart.map((arg): ChartBump => {
        const [chart, version] = arg.split('=', 2) as [string, string | undefined];
        if (!chart || version === '') throw new FlotillaError(`--chart takes CHART or CHART=VERSION, got "${arg}"`, { exitCode: 2 });
        return { chart, version };
      });
      const result = await bumpVersions({ appDir, appVersion: opts.appVersion, charts, allChangedAgainst: opts.against, force: opts.force });
      if (result.bumped.length === 0) {
        process.stderr.write(`no chart changed since ${opts.against}\n`);
        return;
      }
      const label = { app: '', chart: 'chart ', dependency: 'dependency of chart ' } as const;
      for (const b of result.bumped) process.stderr.write(`${label[b.kind]}${b.what}: ${b.from} → ${b.to} (${b.file})\n`);
      await showAndWrite(result.changes, opts.dryRun);
    });
}
