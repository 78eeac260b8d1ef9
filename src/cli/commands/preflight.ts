import type { Command } from 'commander';
import { selectReleases } from '../../app/index.js';
import { formatDiagnostic, formatLocation, formatPath } from '../../diagnostics/index.js';
import { preflight } from '../../preflight/index.js';
import { appDirAndNames, integerAtLeast, outputOption } from '../options.js';
import { addSelectionOptions, addValuesOptions, commandLineSources, openSessionForCommand, type SelectionFlags, type ValuesFlags } from './app-option.js';
import type { CommandContext } from '../context.js';
import { printData, printWarnings } from '../output.js';

interface PreflightCommandOptions extends ValuesFlags, SelectionFlags {
  deployment?: string;
  jobs: number;
  output: string;
  offline?: boolean;
}

export function register(program: Command, { io }: CommandContext): void {
  const command = program
    .command('preflight')
    .description('render every enabled release (or those named or selected) with the real helm template, values in Flux order; exit 1 on any failure')
    .argument('[APP_DIR]', 'app source tree (default: .; a first word that is not a folder is a release)')
    .argument('[RELEASE...]', 'releases (or charts) to render; default: every release the spec enables')
    .option('--deployment <FILE>', 'deployment spec to use instead of overrides/deployment.yaml')
    .option('-j, --jobs <N>', 'helm processes at once', integerAtLeast(1), 3)
    .option('--offline', 'fetch no chart dependency from a repository: use the dependency cache and the chartRepositories mapping only')
    .addOption(outputOption());
  addSelectionOptions(addValuesOptions(command)).action(async (first: string | undefined, rest: string[], opts: PreflightCommandOptions) => {
    const { appDir, names } = appDirAndNames([...(first === undefined ? [] : [first]), ...rest]);
    const session = await openSessionForCommand(appDir, { deployment: opts.deployment, commandLine: await commandLineSources(opts), strict: opts.strict });
    const { app } = session;
    const releases = selectReleases(app.releases, app.enabled, names, opts.selector);
    const report = await preflight(session, { concurrency: opts.jobs, releases, kubeVersion: opts.kubeVersion, offline: opts.offline });
    printWarnings(
      report.checks.flatMap((c) => c.warnings),
      io,
    );
    const failed = report.checks.filter((c) => !c.ok).length;
    if (failed > 0) process.exitCode = 1;
    const items = report.checks.map((c) => ({
      release: c.release.name,
      ok: c.ok,
      objects: c.objects,
      ...(c.error ? { error: c.error } : {}),
      culprits: c.culprits.map((l) => ({ path: formatPath(l.path), value: l.value, layer: l.origin.layer, ...l.origin.location })),
      unset: c.unset,
      warnings: c.warnings.map(formatDiagnostic),
      millis: c.millis,
    }));
    printData(io, opts.output, 'PreflightReport', { app: app.metadata.appName, version: app.metadata.appVersion, items }, () => {
      const { main } = app.spec;
      const lines: string[] = [];
      lines.push(
        `preflight ${app.metadata.appName} ${app.metadata.appVersion}` +
          [main.release ? `release ${main.release}` : '', main.preset ? `preset ${main.preset}` : '', main.size ? `size ${main.size}` : '']
            .filter((s) => s !== '')
            .map((s, i) => (i === 0 ? `: ${s}` : `, ${s}`))
            .join('') +
          '; ' +
          `${releases.length} release(s) (${app.enabled.length} of ${app.releases.length} enabled by the spec)`,
      );
      const width = Math.max(0, ...report.checks.map((c) => c.release.name.length));
      for (const check of report.checks) {
        const name = check.release.name.padEnd(width);
        if (check.ok) {
          const kinds = [...new Set(check.objects.map((o) => o.kind))].sort().join(', ');
          lines.push(`  ok    ${name}  ${String(check.objects.length).padStart(3)} objects (${kinds})  ${(check.millis / 1000).toFixed(1)}s`);
          continue;
        }
        lines.push(`  FAIL  ${name}`);
        for (const line of (check.error ?? '').split('\n')) lines.push(`        ${line}`);
        if (check.culprits.length > 0) {
          lines.push('        values named by the error, and who set them:');
          for (const leaf of check.culprits) {
            lines.push(`          ${formatPath(leaf.path)} = ${JSON.stringify(leaf.value)}  ← ${leaf.origin.layer} (${formatLocation(leaf.origin.location)})`);
          }
        }
        for (const path of check.unset)
          lines.push(`        ${path} is set by no layer (not in the chart's values.yaml, nor any override): a typo, or a value to give`);
      }
      lines.push(failed === 0 ? `all ${report.checks.length} releases render` : `${failed} of ${report.checks.length} releases failed to render`);
      return lines;
    });
  });
}
