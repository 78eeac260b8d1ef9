import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { signBundleFile } from '../../tarball/index.js';
import { inspectBundle, verifyBundle } from '../../verify/index.js';
import type { CommandContext } from '../context.js';
import { formatTable, printData } from '../output.js';
import { outputOption } from '../options.js';

/** Where a tarball's plugin code ran, said by verify and inspect (docs/security.md, "Plugin code"). */
const PLUGIN_CODE = {
  'plugin-process':
    "plugins: ran in the plugin process (no file writes, no reads but the bundle, no network, processes or threads) to compute every release's values",
  none: 'plugins: none',
  'not-run': 'plugins: not run (verify stopped before computing values)',
} as const;

export function register(program: Command, { io }: CommandContext): void {
  program
    .command('verify')
    .description('check an application tarball: checksums, layout, metadata, charts (helm lint), releases, kustomization, images; exit 1 on any problem')
    .argument('<BUNDLE>', 'application tarball (.tgz)')
    .option('--key <PUBLIC.pem>', 'ed25519 public key: refuse an unsigned or wrongly signed tarball')
    .option('--strict', 'make values warnings problems: a kind clash between layers, a key the chart does not know')
    .addOption(outputOption())
    .action(async (bundle: string, opts: { key?: string; strict?: boolean; output: string }) => {
      const report = await verifyBundle(bundle, { ...(opts.key ? { publicKey: await readFile(opts.key, 'utf8') } : {}), strict: opts.strict === true });
      for (const w of report.warnings) io.err(`warning: ${w}`);
      if (!report.ok) process.exitCode = 1;
      printData(io, opts.output, 'VerifyReport', { ...report }, () => [
        ...report.problems.map((p) => `verify: ${p}`),
        PLUGIN_CODE[report.pluginCode],
        report.ok ? `${bundle}: verified` : `${bundle}: ${report.problems.length} problem(s)`,
      ]);
    });

  program
    .command('sign')
    .description('sign an application tarball: an ed25519 signature of checksum.sha256, stored in it as checksum.sha256.sig')
    .argument('<BUNDLE>', 'application tarball (.tgz), rewritten in place')
    .requiredOption('--key <PRIVATE.pem>', 'ed25519 private key (openssl genpkey -algorithm ed25519 -out key.pem)')
    .addOption(outputOption())
    .action(async (bundle: string, opts: { key: string; output: string }) => {
      const signed = await signBundleFile(bundle, await readFile(opts.key, 'utf8'));
      printData(io, opts.output, 'Signature', { file: signed.file, sha256: signed.sha256 }, () => `${signed.file}: signed\n  sha256 ${signed.sha256}`);
    });

  program
    .command('inspect')
    .description('show what an application tarball holds: app, charts, releases with dependsOn, images')
    .argument('<BUNDLE>', 'application tarball (.tgz)')
    .addOption(outputOption())
    .action(async (bundle: string, opts: { output: string }) => {
      const report = await inspectBundle(bundle);
      printData(io, opts.output, 'BundleInspection', { ...report }, () => {
        const unique = new Map<string, string[]>();
        for (const image of report.images) unique.set(image.reference, [...(unique.get(image.reference) ?? []), image.where]);
        return [
          `${report.app} ${report.version}\n`,
          formatTable(
            ['CHART', 'VERSION', 'APP VERSION', 'FILES', 'SIZE'],
            report.charts.map((c) => [c.name, c.version, c.appVersion ?? '-', String(c.files), `${(c.size / 1024).toFixed(1)} KiB`]),
          ),
          '',
          formatTable(
            ['RELEASE', 'NAMESPACE', 'HELM RELEASE', 'CHART', 'DEPENDS ON'],
            report.releases.map((r) => [
              r.name,
              r.namespace ?? '-',
              r.releaseName ?? '-',
              `${r.chart ?? '?'}@${r.version ?? '?'}`,
              r.dependsOn.join(',') || '-',
            ]),
          ),
          '',
          formatTable(
            ['IMAGE', 'REFERENCED BY'],
            [...unique]
              .sort((a, b) => a[0].localeCompare(b[0]))
              .map(([ref, where]) => [ref, where.length > 1 ? `${where[0]} (+${where.length - 1})` : (where[0] ?? '')]),
          ),
          ...(report.plugins.length > 0 ? [`\nplugins: ${report.plugins.join(', ')} (listed from the plugin manifest; none of their code was run)`] : []),
        ];
      });
    });
}
