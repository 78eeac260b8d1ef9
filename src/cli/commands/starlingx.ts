import type { Command } from 'commander';
import { resolve } from 'node:path';
import { Session } from '../../session/index.js';
import { exportForPlatform, platformPasswordStore } from '../../starlingx/index.js';
import type { CommandContext } from '../context.js';
import { formatTable, printData } from '../output.js';
import { destinationOption, outputOption, UsageError } from '../options.js';
import { openSessionForCommand } from './app-option.js';

interface ExportOptions {
  deployment?: string;
  destination?: string;
  passwordStore?: string;
  output: string;
}

export function register(program: Command, { io }: CommandContext): void {
  const command = program
    .command('starlingx')
    .description("the StarlingX platform path: deploy an app with StarlingX's own `system application-*` commands (docs/starlingx.md)");
  command
    .command('export')
    .description(
      'for one deployment spec: the tarball to `system application-upload` (only the releases the spec enables deploy; every image in the static overrides, ' +
        "which the platform rewrites to its registry), each release's overrides and apply.sh (helm-override-update, then application-apply); refuses what apply refuses",
    )
    .argument('[APP_DIR]', 'app source tree (default: .)')
    .option('--deployment <FILE>', 'deployment spec to export (default: overrides/deployment.yaml)')
    .addOption(destinationOption('a new or empty folder for the tarball, apply.sh and the values files (made 0700)'))
    .option('--password-store <DIR>', 'where generated passwords are kept (default: one folder per app and deployment in the state folder; keep it)')
    .addOption(outputOption())
    .action(async (appDirArg: string | undefined, opts: ExportOptions) => {
      const appDir = appDirArg ?? '.';
      if (opts.destination === undefined) throw new UsageError('starlingx export needs -d DIR: a new or empty folder for what it writes');
      const opened = await openSessionForCommand(appDir, { deployment: opts.deployment });
      // The app's name decides the default store; the plugins that keep passwords there run in a session over the same app.
      const passwordStore = resolve(opts.passwordStore ?? platformPasswordStore(opened.app.metadata.appName, opts.deployment));
      const session = Session.forApp(opened.app, { plugins: { stateDir: passwordStore } });
      const exported = await exportForPlatform(session, { appDir, dir: opts.destination, passwordStore });
      printData(io, opts.output, 'PlatformExport', { ...exported }, () => {
        const left = exported.leftOut.length > 0 ? `; left out (shipped, not deployed): ${exported.leftOut.join(', ')}` : '';
        return [
          formatTable(
            ['RELEASE', 'NAMESPACE', 'VALUES FILE', 'IMAGES MOVED TO STATIC OVERRIDES'],
            exported.releases.map((r) => [r.release, r.namespace, r.file, r.movedImages.length === 0 ? '-' : r.movedImages.map((m) => m.path).join(',')]),
          ),
          `\n${exported.releases.length} releases deploy${left}`,
          `written: ${exported.tarball}, ${exported.script} and the values files (passwords in clear: keep the folder private, delete it once applied)`,
          `passwords kept in ${exported.passwordStore}: keep it; exporting again reuses them`,
          `next, on the controller: system application-upload ${exported.tarball.split('/').pop()}; then, once uploaded: sh apply.sh`,
        ];
      });
    });
}
