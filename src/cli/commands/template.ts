import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { selectReleases } from '../../app/index.js';
import { FlotillaError } from '../../diagnostics/index.js';
import { makeFolder, writeFileAtomic } from '../../files/index.js';
import { preflight, splitBySource } from '../../preflight/index.js';
import { appDirAndNames, integerAtLeast } from '../options.js';
import type { CommandContext } from '../context.js';
import { printWarnings } from '../output.js';
import { addSelectionOptions, addValuesOptions, commandLineSources, openSessionForCommand, type SelectionFlags, type ValuesFlags } from './app-option.js';

interface TemplateCommandOptions extends ValuesFlags, SelectionFlags {
  deployment?: string;
  outputDir?: string;
  jobs: number;
  offline?: boolean;
}

export function register(program: Command, { io }: CommandContext): void {
  const command = program
    .command('template')
    .description('the Kubernetes objects of each enabled release rendered with its final values (what helm-controller applies), like helm template')
    .argument('[APP_DIR]', 'app source tree (default: .; a first word that is not a folder is a release)')
    .argument('[RELEASE...]', 'releases (or charts) to render; default: every release the spec enables')
    .option('--deployment <FILE>', 'deployment spec to use instead of overrides/deployment.yaml')
    .option('--output-dir <DIR>', "write each release's files to DIR/<release>/<chart>/templates/… (helm template --output-dir) instead of stdout")
    .option('-j, --jobs <N>', 'helm processes at once', integerAtLeast(1), 3)
    .option('--offline', 'fetch no chart dependency from a repository: use the dependency cache and the chartRepositories mapping only');
  addSelectionOptions(addValuesOptions(command)).action(async (first: string | undefined, rest: string[], opts: TemplateCommandOptions) => {
    const { appDir, names } = appDirAndNames([...(first === undefined ? [] : [first]), ...rest]);
    const session = await openSessionForCommand(appDir, { deployment: opts.deployment, commandLine: await commandLineSources(opts), strict: opts.strict });
    const { app } = session;
    const releases = selectReleases(app.releases, app.enabled, names, opts.selector);
    const enabled = new Set(app.enabled.map((r) => r.name));
    for (const r of releases) if (!enabled.has(r.name)) io.err(`warning: release "${r.name}" is not enabled by the spec; rendered because it was named`);
    const report = await preflight(session, { concurrency: opts.jobs, releases, kubeVersion: opts.kubeVersion, offline: opts.offline });
    printWarnings(
      report.checks.flatMap((c) => c.warnings),
      io,
    );
    const failed = report.checks.filter((c) => !c.ok);
    if (failed.length > 0) {
      throw new FlotillaError(
        `${failed.length} release(s) failed to render:\n${failed.map((c) => `  ${c.release.name}: ${(c.error ?? '').split('\n').join('\n    ')}`).join('\n')}`,
      );
    }
    for (const check of report.checks) {
      const manifest = check.manifest ?? '';
      if (opts.outputDir === undefined) {
        if (manifest !== '') io.out(manifest.replace(/\n$/, ''));
        continue;
      }
      for (const [source, text] of splitBySource(manifest)) {
        const file = join(opts.outputDir, check.release.name, source);
        await makeFolder(dirname(file));
        await writeFileAtomic(file, text);
        io.err(`wrote ${file}`);
      }
    }
  });
}
