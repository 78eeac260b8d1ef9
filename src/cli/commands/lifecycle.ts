/**
 * The cluster lifecycle commands: upload, apply, remove, delete, abort,
 * list, show. Each parses its flags, calls src/lifecycle and prints.
 */
import type { Command } from 'commander';
import { FlotillaError, formatPath } from '../../diagnostics/index.js';
import { fromPlain, leaves, parseYaml, toPlain } from '../../yaml/index.js';
import type { AppRecord, AppView, DiffReport, HistoryEntry, LifecycleEvent } from '../../lifecycle/index.js';
import type { JsonValue } from '../../plugins/index.js';
import type { CommandContext } from '../context.js';
import { formatTable, printData, type Output } from '../output.js';
import { clusterCommand, collect, parseDuration, UsageError, type ClusterFlags } from '../options.js';
import { connectFor } from './cluster-options.js';
import { progressPrinter } from '../progress.js';
import { FileAccessError, fileErrorText, readInputFile } from '../../files/index.js';

/** Every cluster command's flags: the cluster's, and -o. */
type Flags = ClusterFlags & { readonly output: string };

interface ChartRepoFlags {
  readonly chartRepo?: string;
  readonly chartRepoDir?: string;
  readonly plainHttp?: boolean;
  readonly registryConfig?: string;
}

/** Runs an operation with its progress on stderr, the display cleared however it ends. */
export async function withProgress<T>(run: (events: (event: LifecycleEvent) => void) => Promise<T>): Promise<T> {
  const progress = progressPrinter();
  try {
    return await run(progress.events);
  } finally {
    progress.done();
  }
}

/** What upload, apply, update, remove and version continue print: the app's state once they end (and the phase it is held before, if any). */
export function printOutcome(io: Output, format: string, record: AppRecord, detail = ''): void {
  const held = record.versions?.held ?? null;
  printData(
    io,
    format,
    'AppState',
    { name: record.name, version: record.bundle.version, state: record.state, held, chartRepository: record.bundle.repository.url },
    () =>
      `${record.name} ${record.bundle.version}: ${record.state}${detail}${held ? ` (held before update phase ${held}: flotilla version continue ${record.name} --phase ${held})` : ''}`,
  );
}

/** `--hold PHASE`, repeatable: update phases to stop before (docs/versions.md). */
const HOLD_OPTION = [
  '--hold <PHASE>',
  'stop a staged update before this update phase until `flotilla version continue APP --phase PHASE` (repeatable; kept in the cluster)',
] as const;

function historyRows(history: readonly HistoryEntry[]): string[][] {
  return history.map((h) => [h.started.replace(/\.\d+Z$/, 'Z'), h.operation, h.version, h.result ?? 'running', h.reason?.split('\n')[0] ?? '']);
}

function showTable(view: AppView): string {
  const progress = view.progress
    ? `${view.progress.percent}% (${view.progress.ready}/${view.progress.total} ready${view.progress.current ? `, waiting for ${view.progress.current}` : ''})`
    : '-';
  const head = [
    `name:      ${view.name}`,
    `version:   ${view.version}${view.previousVersion ? ` (updating from ${view.previousVersion})` : ''}`,
    `state:     ${view.state}`,
    `progress:  ${progress}`,
    `charts:    ${view.chartRepository}`,
    ...(view.mode ? [`mode:      ${view.mode}`] : []),
    ...(view.phase ? [`phase:     ${view.phase}${view.held ? ` (held: flotilla version continue ${view.name} --phase ${view.held})` : ''}`] : []),
    ...view.flux.map((line, i) => `${i === 0 ? 'flux:      ' : '           '}${line}`),
  ].join('\n');
  const releases = formatTable(
    ['RELEASE', 'NAMESPACE', 'READY', 'STATE', 'REASON', 'MESSAGE'],
    view.releases.map((r) => [
      r.name,
      r.namespace,
      r.ready === null ? '-' : String(r.ready),
      r.suspended ? 'suspended' : r.state,
      r.reason ?? '',
      (r.attempt ?? r.message ?? '').split('\n')[0] ?? '',
    ]),
  );
  const history = formatTable(['STARTED', 'OPERATION', 'VERSION', 'RESULT', 'REASON'], historyRows(view.history));
  return `${head}\n\n${releases}\n\n${history}`;
}

export function register(program: Command, { io }: CommandContext): void {
  registerOverride(program, io);
  registerDiff(program, io);
  clusterCommand(program, 'upload', 'verify an application tarball, deliver its charts to the chart repository and record the app as uploaded')
    .argument('<BUNDLE>', 'application tarball (.tgz), or oci://HOST/REPO/APP:TAG as flotilla push stored it')
    .option('--chart-repo <URL>', 'oci://HOST/PATH (a registry) or http(s)://HOST/PATH (a Helm repository); remembered in the cluster')
    .option('--chart-repo-dir <DIR>', 'for an http(s) chart repository: the folder its web server serves')
    .option('--plain-http', 'the registry speaks plain HTTP, not HTTPS')
    .option('--registry-config <FILE>', 'Docker-style credentials for the registry (default ~/.docker/config.json)')
    .action(async (bundle: string, flags: Flags & ChartRepoFlags) => {
      const { parseChartRepository, uploadApp } = await import('../../lifecycle/index.js');
      const chartRepository = flags.chartRepo
        ? parseChartRepository(flags.chartRepo, { ...(flags.plainHttp ? { plainHttp: true } : {}), ...(flags.chartRepoDir ? { dir: flags.chartRepoDir } : {}) })
        : undefined;
      const client = await connectFor(flags);
      const record = await withProgress((events) =>
        uploadApp(client, bundle, {
          events,
          ...(chartRepository ? { chartRepository } : {}),
          ...(flags.registryConfig ? { registryConfig: flags.registryConfig } : {}),
        }),
      );
      printOutcome(io, flags.output, record, ` (charts in ${record.bundle.repository.url})`);
    });

  clusterCommand(program, 'apply', 'apply an uploaded app: hooks, overrides, one server-side apply, then watch every HelmRelease until Ready')
    .argument('<APP>', 'app name')
    .option('--mode <MODE>', "apply mode of the app's kustomize operator", 'normal')
    .option('--wait', 'wait until every release is Ready (the default)')
    .option('--no-wait', 'return after the server-side apply; the app stays applying until an apply that waits')
    .option(
      '--timeout <DURATION>',
      "a bound on the whole wait (e.g. 2h); default: the critical path of the releases' own times (each its Helm timeout per attempt plus Flux's overheads)",
    )
    .option(...HOLD_OPTION, collect)
    .action(async (app: string, flags: Flags & { mode: string; wait: boolean; timeout?: string; hold?: string[] }) => {
      const timeoutMs = flags.timeout !== undefined ? parseDuration(flags.timeout, '--timeout') : undefined;
      const { applyApp } = await import('../../lifecycle/index.js');
      const client = await connectFor(flags);
      printOutcome(
        io,
        flags.output,
        await withProgress((events) =>
          applyApp(client, app, {
            mode: flags.mode,
            wait: flags.wait,
            ...(timeoutMs !== undefined ? { timeoutMs } : {}),
            ...(flags.hold ? { hold: flags.hold } : {}),
            events,
          }),
        ),
      );
    });

  clusterCommand(program, 'update', 'update an applied app to the version in BUNDLE; on failure recover to the version it had')
    .argument('<BUNDLE>', 'application tarball (.tgz) of the new version, or oci://HOST/REPO/APP:TAG')
    .option('--timeout <DURATION>', "a bound on each wait for the releases (e.g. 2h); default: the critical path of the releases' own times")
    .option('--registry-config <FILE>', 'Docker-style credentials for the registry (default ~/.docker/config.json)')
    .option('--drop-user-overrides', 'update to a version that does not keep user overrides (maintain_user_overrides: false), dropping them')
    .option(...HOLD_OPTION, collect)
    .action(async (bundle: string, flags: Flags & { timeout?: string; registryConfig?: string; dropUserOverrides?: boolean; hold?: string[] }) => {
      const timeoutMs = flags.timeout !== undefined ? parseDuration(flags.timeout, '--timeout') : undefined;
      const { updateApp } = await import('../../lifecycle/index.js');
      const client = await connectFor(flags);
      printOutcome(
        io,
        flags.output,
        await withProgress((events) =>
          updateApp(client, bundle, {
            ...(timeoutMs !== undefined ? { timeoutMs } : {}),
            events,
            dropUserOverrides: flags.dropUserOverrides === true,
            ...(flags.registryConfig ? { registryConfig: flags.registryConfig } : {}),
            ...(flags.hold ? { hold: flags.hold } : {}),
          }),
        ),
      );
    });

  clusterCommand(program, 'remove', 'remove an applied app: pre-remove hooks, HelmReleases deleted in reverse dependency order, post-remove hooks')
    .argument('<APP>', 'app name')
    .option('--timeout <DURATION>', 'how long to wait for each release to be gone', '30m')
    .option('--force', 'resume suspended HelmReleases so Flux uninstalls them (without it, remove refuses while one is suspended)')
    .action(async (app: string, flags: Flags & { timeout: string; force?: boolean }) => {
      const timeoutMs = parseDuration(flags.timeout, '--timeout');
      const { removeApp } = await import('../../lifecycle/index.js');
      const client = await connectFor(flags);
      printOutcome(io, flags.output, await withProgress((events) => removeApp(client, app, { timeoutMs, events, force: flags.force === true })));
    });

  clusterCommand(
    program,
    'delete',
    'forget an uploaded (not applied) app: its record and stored bundle; its passwords, plugin records and namespaces stay unless --purge',
  )
    .argument('<APP>', 'app name')
    .option('--purge', "also delete the app's password Secrets, plugin records and the namespaces flotilla created for it")
    .action(async (app: string, flags: Flags & { purge?: boolean }) => {
      const { deleteApp } = await import('../../lifecycle/index.js');
      const outcome = await deleteApp(await connectFor(flags), app, { purge: flags.purge === true });
      printData(io, flags.output, 'AppDeleted', { name: app, kept: outcome.kept, purged: outcome.purged }, () => [
        `${app}: deleted`,
        ...(outcome.kept.length > 0 ? [`kept (a new upload and apply reuses them; --purge deletes them): ${outcome.kept.join(', ')}`] : []),
        ...(outcome.purged.length > 0 ? [`purged: ${outcome.purged.join(', ')}`] : []),
      ]);
    });

  clusterCommand(program, 'abort', 'stop the operation running on an app (or close one a crashed run left running)')
    .argument('<APP>', 'app name')
    .action(async (app: string, flags: Flags) => {
      const { abortApp } = await import('../../lifecycle/index.js');
      const outcome = await abortApp(await connectFor(flags), app);
      const { kind: outcomeKind, ...fields } = outcome;
      printData(io, flags.output, 'AbortOutcome', { name: app, outcome: outcomeKind, ...fields }, () =>
        outcome.kind === 'requested'
          ? `${app}: asked ${outcome.holder}${outcome.operation ? ` (${outcome.operation})` : ''} to stop`
          : `${app}: ${outcome.from} → ${outcome.to} (the run that left it ${outcome.from} is gone)`,
      );
    });

  clusterCommand(program, 'list', 'the apps in the cluster: version, state, progress').action(async (flags: Flags) => {
    const { listApps } = await import('../../lifecycle/index.js');
    const apps = await listApps(await connectFor(flags));
    printData(io, flags.output, 'AppList', { items: apps }, () =>
      formatTable(
        ['NAME', 'VERSION', 'STATE', 'PROGRESS'],
        apps.map((a) => [a.name, a.version, a.state, a.progress ? `${a.progress.percent}%` : '-']),
      ),
    );
  });

  clusterCommand(program, 'show', "one app: state, version, progress, each release's Ready condition, the operation history")
    .argument('<APP>', 'app name')
    .action(async (app: string, flags: Flags) => {
      const { showApp } = await import('../../lifecycle/index.js');
      const view = await showApp(await connectFor(flags), app);
      printData(io, flags.output, 'AppView', { ...view }, () => showTable(view));
    });
}

/** Each -f FILE as a values map; a file that is not YAML or not a map is named with its line. */
async function readValuesFiles(files: readonly string[]): Promise<{ [key: string]: never }[]> {
  const out: { [key: string]: never }[] = [];
  for (const file of files) {
    const text = await readInputFile(file).then(
      (bytes) => bytes.toString('utf8'),
      (error: unknown) => {
        throw new UsageError(`-f ${file}: cannot read (${error instanceof FileAccessError ? error.reason : fileErrorText(error)})`);
      },
    );
    const root = parseYaml(text, file, { layer: 'user' }).root;
    const value = root ? toPlain(root) : {};
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`-f ${file}: expected a map of values at the top`);
    out.push(value as { [key: string]: never });
  }
  return out;
}

function formatValue(value: unknown): string {
  return value === undefined ? '' : JSON.stringify(value);
}

function registerDiff(program: Command, io: Output): void {
  clusterCommand(
    program,
    'diff',
    'what an apply (or an update to BUNDLE) would change: per release, values and rendered objects (-o table: a unified diff); exit 0 no change, 1 changes, 2 error',
  )
    .argument('<APP>', 'app name')
    .argument('[BUNDLE]', 'application tarball of another version')
    .option('--show-secrets', 'print passwords, tokens, keys and Secret data instead of <secret>')
    .action(async (app: string, bundle: string | undefined, flags: Flags & { showSecrets?: boolean }) => {
      const { diffApp } = await import('../../lifecycle/index.js');
      let report;
      try {
        report = await diffApp(await connectFor(flags), app, { ...(bundle ? { bundle } : {}), showSecrets: flags.showSecrets === true });
      } catch (error) {
        // Like kubectl diff: 1 means "changes", so a failure exits above it.
        throw error instanceof FlotillaError && error.exitCode === 1 ? new FlotillaError(error.message, { exitCode: 2 }) : error;
      }
      printData(io, flags.output, 'AppDiff', { ...report }, () => diffText(report));
      process.exitCode = report.changed ? 1 : 0;
    });
}

/** The diff as text: per changed release its values (+ added, - removed, ~ changed), then each object's unified diff. */
function diffText(report: DiffReport): string[] {
  const lines: string[] = [];
  if (report.from !== report.to) lines.push(`${report.app}: ${report.from} → ${report.to}`);
  for (const release of report.releases.filter((r) => r.change !== 'unchanged')) {
    lines.push(`release ${release.namespace}/${release.name}: ${release.change}`);
    for (const v of release.values) {
      const sign = v.before === undefined ? '+' : v.after === undefined ? '-' : '~';
      lines.push(`  ${sign} ${v.path}: ${sign === '~' ? `${formatValue(v.before)} → ${formatValue(v.after)}` : formatValue(v.after ?? v.before)}`);
    }
    for (const o of release.objects)
      lines.push(
        ...o.diff
          .replace(/\n$/, '')
          .split('\n')
          .map((l) => (l ? `  ${l}` : l)),
      );
  }
  if (!report.changed) lines.push(`${report.app}: no changes`);
  return lines;
}

/** User overrides as rows of PATH and VALUE (JSON-encoded), the table of `override set` and `override show`. */
function valuesTable(values: { [key: string]: JsonValue }): string {
  const tree = fromPlain(values, { layer: 'user overrides', location: { file: 'the app record', line: 0, column: 0 } });
  const rows = leaves(tree).map((l) => [formatPath(l.path), JSON.stringify(l.value)]);
  return rows.length === 0 ? '(no user overrides)' : formatTable(['PATH', 'VALUE'], rows);
}

function registerOverride(program: Command, io: Output): void {
  const override = program
    .command('override')
    .description('user overrides (values layer 8) of one release (or chart) of an app, kept in the cluster per chart; applied by the next apply');
  clusterCommand(override, 'set', 'set the user overrides of RELEASE (a release name, or its chart name)')
    .argument('<APP>', 'app name')
    .argument('<RELEASE>', 'release name, or chart name (user overrides are kept per chart)')
    .option('-f, --values <FILE...>', 'values files, later wins')
    .option('--set <PATH=VALUE...>', 'one value (a.b[0].c=VALUE; true/false/null/integers typed), after the files')
    .option('--reuse-values', 'merge into the user overrides kept')
    .option('--reset-values', 'replace the user overrides kept (the default)')
    .option('--no-check', 'store without checking keys against the chart or rendering it with helm template')
    .option('--strict', 'a key the chart does not know is an error, not a warning')
    .option('--show-secrets', 'print passwords, tokens, keys and values the chart schema marks secret instead of <secret>')
    .action(
      async (
        app: string,
        name: string,
        flags: Flags & {
          values?: string[];
          set?: string[];
          reuseValues?: boolean;
          resetValues?: boolean;
          check: boolean;
          strict?: boolean;
          showSecrets?: boolean;
        },
      ) => {
        const { setOverrides } = await import('../../lifecycle/index.js');
        if (flags.reuseValues && flags.resetValues) throw new UsageError('--reuse-values and --reset-values exclude each other');
        const files = await readValuesFiles(flags.values ?? []);
        const client = await connectFor(flags);
        const { chart, shown, warnings } = await setOverrides(
          client,
          app,
          name,
          { files, sets: flags.set ?? [], mode: flags.reuseValues ? 'reuse' : 'reset' },
          { check: flags.check, strict: flags.strict === true, showSecrets: flags.showSecrets === true },
        );
        for (const warning of warnings) io.err(`warning: ${warning}`);
        printData(io, flags.output, 'UserOverrides', { app, chart, values: shown }, () => valuesTable(shown));
      },
    );
  clusterCommand(override, 'show', 'the user overrides of RELEASE (a release name, or its chart name)')
    .argument('<APP>', 'app name')
    .argument('<RELEASE>', 'release name, or chart name')
    .option('--show-secrets', 'print passwords, tokens, keys and values the chart schema marks secret instead of <secret>')
    .action(async (app: string, name: string, flags: Flags & { showSecrets?: boolean }) => {
      const { showOverrides } = await import('../../lifecycle/index.js');
      const { chart, values: shown } = await showOverrides(await connectFor(flags), app, name, { showSecrets: flags.showSecrets === true });
      printData(io, flags.output, 'UserOverrides', { app, chart, values: shown }, () => valuesTable(shown));
    });
  clusterCommand(override, 'delete', 'drop the user overrides of RELEASE (a release name, or its chart name)')
    .argument('<APP>', 'app name')
    .argument('<RELEASE>', 'release name, or chart name')
    .action(async (app: string, name: string, flags: Flags) => {
      const { deleteOverrides } = await import('../../lifecycle/index.js');
      const { chart, deleted } = await deleteOverrides(await connectFor(flags), app, name);
      printData(io, flags.output, 'UserOverridesDeleted', { app, chart, deleted }, () =>
        deleted ? `${app} ${chart}: user overrides deleted` : `${app} ${chart}: had no user overrides`,
      );
    });
}
