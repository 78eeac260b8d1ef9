import type { Command } from 'commander';

import { selectReleases, type App, type Release } from '../../app/index.js';
import { DiagnosticsError, formatLocation, formatPath } from '../../diagnostics/index.js';
import { dumpYaml, leaves } from '../../yaml/index.js';
import { exportSystemOverrides } from '../../starlingx/index.js';
import { explain, history } from '../../values/index.js';
import type { CommandContext } from '../context.js';
import { formatTable, printData, printWarnings } from '../output.js';
import { addValuesOptions, commandLineSources, openSessionForCommand, type ValuesFlags } from './app-option.js';
import { appDirAndNames, destinationOption, outputOption, requireWith, UsageError } from '../options.js';
import { editOverrides, parseAssignment, parseValuePath } from '../../edit/index.js';
import { showAndWrite } from './edit-output.js';

/** `overrides RELEASE`'s own format, its default: the system overrides as a values file. */
const VALUES_FORMAT = 'values';

/** A release named directly, or the one release of a chart. */
export function findRelease(app: App, name: string): Release {
  return selectReleases(app.releases, [], [name])[0] as Release;
}

interface OverridesOptions extends ValuesFlags {
  deployment?: string;
  explain?: boolean;
  all?: boolean;
  history?: boolean;
  destination?: string;
  stateDir?: string;
  output?: string;
  showSecrets?: boolean;
}

interface EditCommandOptions {
  output: string;
  file?: string;
  string?: boolean;
  new?: boolean;
  force?: boolean;
  dryRun?: boolean;
}

export function register(program: Command, { io }: CommandContext): void {
  const overrides = program
    .command('overrides')
    .description(
      'print the system overrides of one release (layers 2-9 merged); --explain says where each value comes from. ' +
        "Without RELEASE, --all -d DIR writes every enabled release's overrides for StarlingX's system helm-override-update, with a script (docs/starlingx.md)",
    )
    .argument('[APP_DIR]', 'app source tree (default: .)')
    .argument('[RELEASE]', 'release name, or chart name when one release uses it')
    .option('--deployment <FILE>', 'deployment spec to use instead of overrides/deployment.yaml')
    .option('--explain', 'print each value with the layer and file:line that set it')
    .option('--all', 'with RELEASE and --explain: every value Helm will see; without RELEASE: every enabled release (needs -d)')
    .option('--history', 'with --explain: every layer that set each value, not only the winner')
    .addOption(destinationOption('with --all and no RELEASE: a new or empty folder for one values file per release and helm-override-update.sh'))
    .option('--state-dir <DIR>', "offline store of generated passwords (default: the app's state folder)")
    .option('--show-secrets', 'print passwords, tokens, keys and values the chart schema marks secret instead of <secret>')
    .addOption(outputOption([VALUES_FORMAT]).default(undefined, `${VALUES_FORMAT} (a values file helm -f takes) for RELEASE; table with --explain or --all`));
  addValuesOptions(overrides).action(async (first: string | undefined, second: string | undefined, opts: OverridesOptions) => {
    const { appDir, names } = appDirAndNames([first, second].filter((w): w is string => w !== undefined));
    if (names.length > 1) throw new UsageError('overrides: give [APP_DIR] RELEASE (a release, or a chart one release uses)');
    const [name] = names;
    const plugins = opts.stateDir ? { stateDir: opts.stateDir } : {};
    const commandLine = await commandLineSources(opts);
    if (opts.output === VALUES_FORMAT && (name === undefined || opts.explain))
      throw new UsageError(`-o ${VALUES_FORMAT} is for the system overrides of one release, without --explain`);
    if (name === undefined) {
      if (!opts.all || opts.destination === undefined)
        throw new UsageError("give a release (RELEASE), or --all -d DIR to export every release's system overrides");
      if (opts.explain) throw new UsageError('--explain is for one release (RELEASE)');
      if (commandLine.length > 0) throw new UsageError('-f/--set/--set-string are for one release (RELEASE): the export is what StarlingX computes');
      const session = await openSessionForCommand(appDir, { deployment: opts.deployment, plugins });
      const exported = await exportSystemOverrides(session, { dir: opts.destination });
      printData(io, opts.output ?? 'table', 'OverridesExport', { ...exported }, () => [
        formatTable(
          ['RELEASE', 'CHART', 'NAMESPACE', 'FILE', 'TOP-LEVEL KEYS'],
          exported.releases.map((r) => [r.release, r.chart, r.namespace, r.file, r.keys.join(',') || '-']),
        ),
        `\n${exported.releases.length} files and ${exported.script} written (passwords in clear: keep the folder private)`,
      ]);
      return;
    }
    if (opts.destination !== undefined) throw new UsageError('-d/--destination is for --all without RELEASE');
    requireWith(opts.all === true, '--all', opts.explain === true, '--explain');
    requireWith(opts.history === true, '--history', opts.explain === true, '--explain');
    const session = await openSessionForCommand(appDir, { deployment: opts.deployment, commandLine, plugins, strict: opts.strict });
    const { app } = session;
    const release = findRelease(app, name);
    if (!app.enabled.some((r) => r.name === release.name)) {
      io.err(`warning: release "${release.name}" is not enabled by the spec (its service is not in features.services)`);
    }
    const values = await session.releaseValues(release);
    const found = session.valuesDiagnostics(values);
    printWarnings(found.filter((d) => d.severity === 'warning'));
    const refused = found.filter((d) => d.severity === 'error');
    if (refused.length > 0) throw new DiagnosticsError(`the values of ${release.name} are refused:`, refused);
    // Passwords plugins generated, and values under secret keys or schema paths, are printed only when asked.
    const redact = <T>(value: T, at?: readonly (string | number)[]): T => (opts.showSecrets ? value : session.redact(value, at));
    const systemOverrides = redact(values.systemOverrides);
    if (!opts.explain) {
      const rows = values.systemTree ? leaves(values.systemTree).map((l) => [formatPath(l.path), JSON.stringify(redact(l.value, l.path))]) : [];
      // The default: the values as a file Helm takes (-f), nothing around them.
      if ((opts.output ?? VALUES_FORMAT) === VALUES_FORMAT) return io.out(dumpYaml(systemOverrides).replace(/\n$/, ''));
      printData(
        io,
        opts.output ?? 'table',
        'SystemOverrides',
        { release: release.name, chart: release.chart, namespace: release.namespace, values: systemOverrides },
        () => formatTable(['PATH', 'VALUE'], rows),
      );
      return;
    }
    const rows = (opts.history ? history(values, { all: opts.all }) : explain(values, { all: opts.all }).map((l) => ({ ...l, overridden: false }))).map(
      (l) => ({
        ...l,
        value: redact(l.value, l.path),
      }),
    );
    const items = rows.map((l) => ({
      path: formatPath(l.path),
      value: l.value,
      layer: l.origin.layer,
      ...l.origin.location,
      ...(opts.history ? { overridden: l.overridden } : {}),
    }));
    printData(io, opts.output ?? 'table', 'ValueOrigins', { release: release.name, items }, () => {
      const table = rows.map((l) => [
        formatPath(l.path),
        truncate(JSON.stringify(l.value)),
        l.origin.layer,
        formatLocation(l.origin.location),
        ...(opts.history ? [l.overridden ? 'overridden' : 'wins'] : []),
      ]);
      const winners = rows.filter((l) => !l.overridden);
      const layers = new Set(winners.map((l) => l.origin.layer));
      return [
        formatTable(['PATH', 'VALUE', 'LAYER', 'SET AT', ...(opts.history ? ['STATUS'] : [])], table),
        `\n${winners.length} values from ${layers.size} layers: ${[...layers].join(', ')}${opts.history ? `; ${rows.length - winners.length} overridden` : ''}`,
      ];
    });
  });
  const editCommand = (name: 'set' | 'unset', description: string, operand: string) =>
    overrides
      .command(name)
      .description(description)
      .argument('<APP_DIR>', 'app source tree')
      .argument(`<CHART_OR_${operand}...>`, `chart (or release) name, then ${operand}…; with --file only ${operand}…`)
      .option('--file <FILE>', 'edit this file of the app instead of overrides/static/<chart>.yaml (a version catalog, the deployment spec, metadata, …)')
      .option('--force', 'allow a change of kind (map/list/scalar) and losing a build token')
      .option('--dry-run', 'print the diff and write nothing')
      .addOption(outputOption());
  editCommand('set', 'set values in static overrides (or --file), keeping every comment and all other bytes', 'PATH=VALUE')
    .option('--string', 'take every VALUE as a string instead of YAML')
    .option('--new', 'accept a path the chart values.yaml / schema does not know')
    .action(async (appDir: string, operands: string[], opts: EditCommandOptions) => {
      const { chart, rest } = splitOperands(operands, opts.file, 'PATH=VALUE');
      const change = await editOverrides({
        appDir,
        chart,
        file: opts.file,
        set: rest.map(parseAssignment),
        asString: opts.string,
        allowNew: opts.new,
        force: opts.force,
      });
      await showAndWrite(io, opts.output, [change], opts.dryRun);
    });
  editCommand('unset', 'remove keys or list items from static overrides (or --file), keeping every comment', 'PATH').action(
    async (appDir: string, operands: string[], opts: EditCommandOptions) => {
      const { chart, rest } = splitOperands(operands, opts.file, 'PATH');
      const change = await editOverrides({ appDir, chart, file: opts.file, unset: rest.map(parseValuePath), force: opts.force });
      await showAndWrite(io, opts.output, [change], opts.dryRun);
    },
  );
}

/** CHART then the edits, or only the edits when --file names the file. */
function splitOperands(operands: readonly string[], file: string | undefined, what: string): { chart?: string; rest: string[] } {
  const [first, ...others] = operands;
  const split = file === undefined ? { chart: first, rest: others } : { rest: [...operands] };
  if (split.rest.length === 0) throw new UsageError(`expected at least one ${what}${file === undefined ? ' after the chart' : ''}`);
  return split;
}

function truncate(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
