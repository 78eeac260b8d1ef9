import type { Command } from 'commander';

import type { App, Release } from '../../app/index.js';
import { FlotillaError, formatLocation, formatPath } from '../../diagnostics/index.js';
import { dumpYaml } from '../../document/index.js';
import { exportSystemOverrides } from '../../starlingx/index.js';
import { explain } from '../../values/index.js';
import { formatTable } from '../output.js';
import { openSessionForCommand } from './app-option.js';
import { editOverrides, parseAssignment, parseValuePath } from '../../edit/index.js';
import { showAndWrite } from './edit-output.js';

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
  dir?: string;
  stateDir?: string;
  output: 'yaml' | 'json';
}

/** Usage mistakes exit 2. */
class OverridesUsageError extends FlotillaError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

interface EditCommandOptions {
  file?: string;
  string?: boolean;
  new?: boolean;
  force?: boolean;
  dryRun?: boolean;
}

export function register(program: Command): void {
  const overrides = program
    .command('overrides')
    .description(
      'print the system overrides of one release (layers 2-8 merged); --explain says where each value comes from. ' +
        'Without CHART, --all -d DIR writes every enabled release\'s overrides for StarlingX\'s system helm-override-update, with a script (docs/starlingx.md)',
    )
    .argument('[CHART]', 'release name, or chart name when one release uses it')
    .option('--app <DIR>', 'app source tree', '.')
    .option('--deployment <FILE>', 'deployment spec to use instead of overrides/deployment.yaml')
    .option('--explain', 'print each value with the layer and file:line that set it')
    .option('--all', 'with CHART and --explain: every value Helm will see; without CHART: every enabled release (needs -d)')
    .option('-d, --dir <DIR>', 'with --all: a new or empty folder for one values file per release and helm-override-update.sh')
    .option('--state-dir <DIR>', 'offline store of generated passwords (default: the app\'s state folder)')
    .option('--output <FORMAT>', 'yaml or json', 'yaml')
    .action(async (name: string | undefined, opts: OverridesOptions) => {
      if (opts.output !== 'yaml' && opts.output !== 'json') throw new OverridesUsageError(`--output must be yaml or json, got "${opts.output}"`);
      const plugins = opts.stateDir ? { stateDir: opts.stateDir } : {};
      if (name === undefined) {
        if (!opts.all || opts.dir === undefined) throw new OverridesUsageError('give a release (CHART), or --all -d DIR to export every release\'s system overrides');
        if (opts.explain) throw new OverridesUsageError('--explain is for one release (CHART)');
        const session = await openSessionForCommand(opts.app, opts.deployment, plugins);
        const exported = await exportSystemOverrides(session, { dir: opts.dir });
        console.log(formatTable(['RELEASE', 'CHART', 'NAMESPACE', 'FILE', 'TOP-LEVEL KEYS'], exported.releases.map((r) => [r.release, r.chart, r.namespace, r.file, r.keys.join(',') || '-'])));
        console.log(`\n${exported.releases.length} files and ${exported.script} written (passwords in clear: keep the folder private)`);
        return;
      }
      if (opts.dir !== undefined) throw new OverridesUsageError('-d/--dir is for --all without CHART');
      const session = await openSessionForCommand(opts.app, opts.deployment, plugins);
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
  const editCommand = (name: 'set' | 'unset', description: string, operand: string) =>
    overrides
      .command(name)
      .description(description)
      .argument('<APP_DIR>', 'app source tree')
      .argument(`<CHART_OR_${operand}...>`, `chart (or release) name, then ${operand}…; with --file only ${operand}…`)
      .option('--file <FILE>', 'edit this file of the app instead of overrides/static/<chart>.yaml (a version catalog, the deployment spec, metadata, …)')
      .option('--force', 'allow a change of kind (map/list/scalar) and losing a build token')
      .option('--dry-run', 'print the diff and write nothing');
  editCommand('set', 'set values in static overrides (or --file), keeping every comment and all other bytes', 'PATH=VALUE')
    .option('--string', 'take every VALUE as a string instead of YAML')
    .option('--new', 'accept a path the chart values.yaml / schema does not know')
    .action(async (appDir: string, operands: string[], opts: EditCommandOptions) => {
      const { chart, rest } = splitOperands(operands, opts.file, 'PATH=VALUE');
      const change = await editOverrides({ appDir, chart, file: opts.file, set: rest.map(parseAssignment), asString: opts.string, allowNew: opts.new, force: opts.force });
      await showAndWrite([change], opts.dryRun);
    });
  editCommand('unset', 'remove keys or list items from static overrides (or --file), keeping every comment', 'PATH').action(
    async (appDir: string, operands: string[], opts: EditCommandOptions) => {
      const { chart, rest } = splitOperands(operands, opts.file, 'PATH');
      const change = await editOverrides({ appDir, chart, file: opts.file, unset: rest.map(parseValuePath), force: opts.force });
      await showAndWrite([change], opts.dryRun);
    },
  );
}

/** CHART then the edits, or only the edits when --file names the file. */
function splitOperands(operands: readonly string[], file: string | undefined, what: string): { chart?: string; rest: string[] } {
  const [first, ...others] = operands;
  const split = file === undefined ? { chart: first, rest: others } : { rest: [...operands] };
  if (split.rest.length === 0) throw new FlotillaError(`expected at least one ${what}${file === undefined ? ' after the chart' : ''}`, { exitCode: 2 });
  return split;
}

function truncate(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
