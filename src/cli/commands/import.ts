import type { Command } from 'commander';
import { formatLocation } from '../../diagnostics/index.js';
import { importStarlingxApp } from '../../import/index.js';
import type { CommandContext } from '../context.js';
import { formatTable, printData, printExternalLinks, printWarnings } from '../output.js';
import { collect, destinationOption, outputOption } from '../options.js';

interface ImportCommandOptions {
  destination: string;
  output: string;
  charts: string[];
  force?: boolean;
  release: string;
  followExternalSymlinks?: boolean;
}

export function register(program: Command, { io }: CommandContext): void {
  program
    .command('import')
    .description('convert a StarlingX FluxCD application (folder or .tgz) into a flotilla app source tree')
    .argument('<STX_APP>', 'StarlingX application: a folder with metadata.yaml, fluxcd-manifests/ and charts/, or its .tgz')
    .addOption(destinationOption('folder to write the flotilla app into (must be empty or absent)').makeOptionMandatory())
    .addOption(outputOption())
    .option('--charts <DIR>', 'folder of chart sources and/or <chart>-<version>.tgz archives (repeatable; default: STX_APP/charts)', collect, [])
    .option('--force', 'import into a non-empty APP_DIR, replacing its fluxcd/, charts/ and overrides/ folders')
    .option('--release <NAME>', 'catalog release the imported images are filed under (overrides/versions/<NAME>.yaml)', 'imported')
    .option('--follow-external-symlinks', 'read what symbolic links pointing outside STX_APP or a --charts folder point at (refused by default)')
    .action(async (source: string, opts: ImportCommandOptions) => {
      const report = await importStarlingxApp(source, opts.destination, {
        charts: opts.charts,
        force: opts.force,
        catalogRelease: opts.release,
        followExternalSymlinks: opts.followExternalSymlinks,
      });
      printWarnings(report.warnings, io);
      printExternalLinks(report.externalLinks, 'the source', io);
      const data = {
        target: report.target,
        app: report.app,
        releases: report.releases,
        charts: report.charts,
        libraries: report.libraries,
        files: report.files,
        replaced: report.replaced,
        images: report.images,
      };
      printData(io, opts.output, 'ImportReport', data, () => {
        const charts = new Map(report.charts.map((c) => [c.name, c]));
        const { harvested, skipped } = report.images;
        return [
          formatTable(
            ['RELEASE', 'CHART', 'VERSION', 'FROM', 'ENABLED'],
            report.releases.map((r) => [r.name, r.chart, r.chartVersion, charts.get(r.chart)?.from ?? '-', r.enabled ? 'yes' : 'no']),
          ),
          `\n${report.target}\n  ${report.app.name} ${report.app.version}: ${report.releases.length} releases, ${report.charts.length} charts` +
            `${report.libraries.length > 0 ? ` (+ ${report.libraries.join(', ')} as a shared library)` : ''}, ${report.files.length} files` +
            `${report.replaced.length > 0 ? `; replaced ${report.replaced.map((f) => `${f}/`).join(', ')}` : ''}` +
            `\n  images: ${harvested.length} harvested into overrides/versions/, ${skipped.length} left in the static overrides only`,
          ...skipped.map((s) => `    ${s.chart} ${s.path}: ${s.reason} (${formatLocation(s.location)})`),
        ];
      });
    });
}
