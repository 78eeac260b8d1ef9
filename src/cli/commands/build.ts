import type { Command } from 'commander';
import { buildApp, parseTokenArguments, watchApp, type BuildOptions } from '../../build/index.js';
import type { CommandContext } from '../context.js';
import { formatTable, hintsFor, printData, printExternalLinks, printWarnings, type Output } from '../output.js';
import { collect, destinationOption, outputOption, requireWith, UsageError } from '../options.js';

interface BuildCommandOptions {
  destination: string;
  output: string;
  token: string[];
  against?: string;
  bumpChanged?: boolean;
  cache: boolean;
  typecheck: boolean;
  watch?: boolean;
  followExternalSymlinks?: boolean;
  strict?: boolean;
  offline?: boolean;
}

export function register(program: Command, { io, kept, prepareOnly, cancelled }: CommandContext): void {
  program
    .command('build')
    .description('package the app into a reproducible StarlingX-compatible <app_name>-<app_version>.tgz')
    .argument('[APP_DIR]', 'app source tree', '.')
    .addOption(destinationOption('folder to write the tarball to', '.'))
    .addOption(outputOption())
    .option('--token <NAME=VALUE>', 'value of a build-time token @NAME@ (repeatable; wins over fluxcd/build.yaml)', collect, [])
    .option('--against <PREVIOUS>', 'previous tarball or repository index.yaml: fail when a chart changed but kept its version')
    .option('--bump-changed', 'with --against: bump the patch version of changed charts in their Chart.yaml instead of failing')
    .option('--no-typecheck', 'do not type-check plugins/ (checked only when a plugin changed)')
    .option('--no-cache', 'package every chart again instead of reusing unchanged archives')
    .option('--strict', 'make values warnings errors: a kind clash between layers, a key the chart does not know (exit 1)')
    .option('--watch', 'build again whenever a file of the app changes (Ctrl-C stops)')
    .option('--no-server', 'build in this process, not on a build server (see `flotilla build-server`)')
    .option('--follow-external-symlinks', 'pack what symbolic links pointing outside the app point at (refused by default)')
    .option('--offline', 'fetch no chart dependency from a repository: use the dependency cache and the chartRepositories mapping only')
    .action(async (appDir: string, opts: BuildCommandOptions) => {
      requireWith(opts.bumpChanged === true, '--bump-changed', opts.against !== undefined, '--against');
      if (opts.watch && opts.output !== 'table') throw new UsageError(`--output ${opts.output} does nothing with --watch (each build prints one line)`);
      const options = {
        outDir: opts.destination,
        tokens: parseTokenArguments(opts.token),
        against: opts.against,
        bumpChanged: opts.bumpChanged,
        cacheDir: opts.cache ? undefined : false,
        ...(program.opts<{ debug?: boolean }>().debug ? { cacheNotes: (message: string) => io.err(`flotilla: debug: ${message}`) } : {}),
        typecheck: opts.typecheck,
        followExternalSymlinks: opts.followExternalSymlinks,
        strict: opts.strict,
        offline: opts.offline,
        cancelled,
      } as const;
      if (opts.watch) return watchForever(appDir, options, io);
      const result = await (kept ? kept.build(appDir, { ...options, prepareOnly }) : buildApp(appDir, options));
      if (prepareOnly) return;
      printWarnings([...result.app.warnings, ...result.app.metadata.platformWarnings, ...result.valuesWarnings], io);
      printExternalLinks(result.externalLinks, 'the app', io);
      for (const [chart, [from, to]] of result.bumped) io.err(`bumped ${chart} ${from} → ${to} (charts changed since ${opts.against})`);
      const earlier = result.sinceEarlier;
      if (earlier && earlier.unbumped.length > 0) {
        io.err(
          `warning: charts changed since ${earlier.file} (this app's earlier tarball in the output folder) without a new version: ` +
            `${earlier.unbumped.map((p) => `${p.chart} ${p.version}${p.changedFiles.length > 0 ? ` (${p.changedFiles.slice(0, 3).join(', ')}${p.changedFiles.length > 3 ? ', …' : ''})` : ''}`).join('; ')}; ` +
            `raise their version (flotilla bump APP_DIR --chart ${earlier.unbumped.map((p) => p.chart).join(' --chart ')}) or build with --against ${earlier.file} --bump-changed`,
        );
      }
      const data = {
        file: result.file,
        app: result.app.metadata.appName,
        version: result.app.metadata.appVersion,
        sha256: result.sha256,
        size: result.size,
        releases: result.app.releases.length,
        charts: result.charts.map(({ name, version, fileName, sha256, size, reused, releases }) => ({
          name,
          version,
          fileName,
          sha256,
          size,
          reused,
          releases,
        })),
        bumped: Object.fromEntries([...result.bumped].map(([chart, [from, to]]) => [chart, { from, to }])),
      };
      printData(io, opts.output, 'Build', data, () => {
        const reused = result.charts.filter((c) => c.reused).length;
        return [
          formatTable(
            ['CHART', 'VERSION', 'SIZE', 'SHA256', 'RELEASES'],
            result.charts.map((c) => [c.name, c.version, `${(c.size / 1024).toFixed(1)} KiB`, c.sha256.slice(0, 12), c.releases.join(',')]),
          ),
          `\n${result.file}\n  ${result.app.metadata.appName} ${result.app.metadata.appVersion}: ${result.charts.length} charts` +
            `${reused > 0 ? ` (${reused} unchanged, reused)` : ''}, ${result.app.releases.length} releases, ` +
            `${(result.size / 1024 / 1024).toFixed(2)} MiB\n  sha256 ${result.sha256}`,
        ];
      });
    });
}

async function watchForever(appDir: string, options: BuildOptions, io: Output): Promise<void> {
  const watch = watchApp(appDir, options, (build) => {
    const why =
      build.changed.length > 0
        ? ` after ${build.changed.slice(0, 3).join(', ')}${build.changed.length > 3 ? ` (+${build.changed.length - 3})` : ''} changed`
        : '';
    if (build.ok) {
      const reused = build.result.charts.filter((c) => c.reused).length;
      io.out(
        `built ${build.result.file} in ${build.millis.toFixed(0)} ms${why}: ${build.result.charts.length} charts (${reused} reused), sha256 ${build.result.sha256.slice(0, 12)}`,
      );
    } else io.out([`build failed in ${build.millis.toFixed(0)} ms${why}:`, build.error.message, ...hintsFor(build.error)].join('\n'));
  });
  io.out(`watching ${appDir}; Ctrl-C stops`);
  await new Promise<void>((done) => process.once('SIGINT', done));
  await watch.close();
}
