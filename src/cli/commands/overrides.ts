import type { Command } from 'commander';

import type { App, Release } from '../../app/index.js';
import { FlotillaError, formatLocation, formatPath } from '../../diagnostics/index.js';
import { dumpYaml } from '../../document/index.js';
import { explain } from '../../values/index.js';
import { formatTable } from '../output.js';
import { openSessionForCommand } from './app-option.js';

/** A release named directly, or the one release of a chart. */
export function findRelease(app: App, name: string): Release {
  const byName = app.graph.byName.get(name);
  if (byName) return byName;
  const ofChart = app.releases.filter((r) => r.chart === name);
  if (ofChart.length === 1) return ofChart[0] as Release;
  if (ofChart.length > 1) throw new FlotillaError(`chart "${name}" is used by several releases (${ofChart.map((r) => r.name).join(', ')}); name the release`);
  throw new FlotillaError(`no release or chart "${name}"; releases: ${app.releases.map((r) => r.name).join(', ')}`);
}

interface OverridesOptions {
  app: string;
  deployment?: string;
  explain?: boolean;
  all?: boolean;
  output: 'yaml' | 'json';
}

export function register(program: Command): void {
  program
    .command('overrides')
    .description('print the system overrides of one release (layers 2-8 merged); --explain says where each value comes from')
    .argument('<CHART>', 'release name, or chart name when one release uses it')
    .option('--app <DIR>', 'app source tree', '.')
    .option('--deployment <FILE>', 'deployment spec to use instead of overrides/deployment.yaml')
    .option('--explain', 'print each value with the layer and file:line that set it')
    .option('--all', 'with --explain: every value Helm will see, chart defaults and static overrides included')
    .option('--output <FORMAT>', 'yaml or json', 'yaml')
    .action(async (name: string, opts: OverridesOptions) => {
      if (opts.output !== 'yaml' && opts.output !== 'json') throw new FlotillaError(`--output must be yaml or json, got "${opts.output}"`);
      const session = await openSessionForCommand(opts.app, opts.deployment);
      const { app } = session;
      const release = findRelease(app, name);
      if (!app.enabled.some((r) => r.name === release.name)) {
        process.stderr.write(`warning: release "${release.name}" is not enabled by the spec (its service is not in features.services)\n`);
      }
      const values = await session.releaseValues(release);
      // Passwords plugins generated are never printed.
      const systemOverrides = session.redact(values.systemOverrides);
      if (!opts.explain) {
        process.stdout.write(opts.output === 'json' ? `${JSON.stringify(systemOverrides, null, 2)}\n` : dumpYaml(systemOverrides));
        return;
      }
      const rows = explain(values, { all: opts.all }).map((l) => ({ ...l, value: session.redact(l.value) }));
      if (opts.output === 'json') {
        const out = rows.map((l) => ({ path: formatPath(l.path), value: l.value, layer: l.origin.layer, ...l.origin.location }));
        process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
        return;
      }
      const table = rows.map((l) => [formatPath(l.path), truncate(JSON.stringify(l.value)), l.origin.layer, formatLocation(l.origin.location)]);
      console.log(formatTable(['PATH', 'VALUE', 'LAYER', 'SET AT'], table));
      const layers = new Set(rows.map((l) => l.origin.layer));
      console.log(`\n${rows.length} values from ${layers.size} layers: ${[...layers].join(', ')}`);
    });
}

function truncate(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
