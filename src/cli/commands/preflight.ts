import type { Command } from 'commander';
import { formatLocation, formatPath } from '../../diagnostics/index.js';
import { preflight } from '../../preflight/index.js';
import { openSessionForCommand } from './app-option.js';

export function register(program: Command): void {
  program
    .command('preflight')
    .description('render every enabled release with the real helm template, values in Flux order; exit 1 on any failure')
    .argument('[APP_DIR]', 'app source tree', '.')
    .option('--deployment <FILE>', 'deployment spec to use instead of overrides/deployment.yaml')
    .option('-j, --jobs <N>', 'helm processes at once', '3')
    .action(async (appDir: string, opts: { deployment?: string; jobs: string }) => {
      const session = await openSessionForCommand(appDir, opts.deployment);
      const { app } = session;
      const { main } = app.spec;
      console.log(
        `preflight ${app.metadata.appName} ${app.metadata.appVersion}: release ${main.release}` +
          `${main.preset ? `, preset ${main.preset}` : ''}${main.size ? `, size ${main.size}` : ''}; ` +
          `${app.enabled.length} of ${app.releases.length} releases enabled`,
      );
      const report = await preflight(session, { concurrency: Math.max(1, Number(opts.jobs) || 1) });
      const width = Math.max(...report.checks.map((c) => c.release.name.length));
      for (const check of report.checks) {
        const name = check.release.name.padEnd(width);
        if (check.ok) {
          const kinds = [...new Set(check.objects.map((o) => o.kind))].sort().join(', ');
          console.log(`  ok    ${name}  ${String(check.objects.length).padStart(3)} objects (${kinds})  ${(check.millis / 1000).toFixed(1)}s`);
          continue;
        }
        console.log(`  FAIL  ${name}`);
        for (const line of (check.error ?? '').split('\n')) console.log(`        ${line}`);
        if (check.culprits.length > 0) {
          console.log('        values named by the error, and who set them:');
          for (const leaf of check.culprits) {
            console.log(`          ${formatPath(leaf.path)} = ${JSON.stringify(leaf.value)}  ← ${leaf.origin.layer} (${formatLocation(leaf.origin.location)})`);
          }
        }
      }
      const failed = report.checks.filter((c) => !c.ok).length;
      console.log(failed === 0 ? `all ${report.checks.length} releases render` : `${failed} of ${report.checks.length} releases failed to render`);
      if (failed > 0) process.exitCode = 1;
    });
}
