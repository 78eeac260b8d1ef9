/** Opening the app the way every command does: one session, the app's warnings printed on stderr; the values options of preflight, template and overrides. */
import { FileAccessError, readInputFile } from '../../files/index.js';
import type { Command } from 'commander';
import type { PluginHostOptions } from '../../plugins/index.js';
import { Session } from '../../session/index.js';
import { commandLineValues, type CommandLineValues } from '../../values/index.js';
import { printWarnings } from '../output.js';
import { collect, UsageError } from '../options.js';

export interface SessionCommandOptions {
  readonly deployment?: string;
  readonly commandLine?: readonly CommandLineValues[];
  readonly plugins?: Partial<PluginHostOptions>;
  /** `--strict`: values warnings are errors. */
  readonly strict?: boolean;
}

/** `options` as an object, or (as the lifecycle commands call it) the deployment file, with `plugins` after it. */
export async function openSessionForCommand(
  appDir: string | undefined,
  options: SessionCommandOptions | string = {},
  plugins?: Partial<PluginHostOptions>,
): Promise<Session> {
  const {
    deployment,
    commandLine,
    plugins: pluginOptions,
    strict,
  } = typeof options === 'string'
    ? { deployment: options, commandLine: undefined, plugins, strict: false }
    : { ...options, plugins: plugins ?? options.plugins };
  const session = await Session.fromDirectory(appDir ?? '.', {
    deployment,
    strict,
    ...(commandLine ? { commandLine } : {}),
    ...(pluginOptions ? { plugins: pluginOptions } : {}),
  });
  printWarnings(session.app.warnings);
  return session;
}

export interface ValuesFlags {
  readonly values: string[];
  readonly set: string[];
  readonly setString: string[];
  readonly strict?: boolean;
}

/** `-f/--values FILE`, `--set PATH=VALUE`, `--set-string PATH=VALUE`: Helm's flags, the top values layer. */
export function addValuesOptions(command: Command): Command {
  return command
    .option('-f, --values <FILE>', 'values file above every layer of the app (repeatable; later files win)', collect, [])
    .option('--set <PATH=VALUE>', 'a value above every layer, typed as helm --set types it (repeatable, or comma-separated)', collect, [])
    .option('--set-string <PATH=VALUE>', 'like --set, the value always a string (repeatable)', collect, [])
    .option('--strict', 'make values warnings errors: a kind clash between layers, a key the chart does not know (exit 1)');
}

/** The command-line values in Helm's order: values files, then --set, then --set-string. */
export async function commandLineSources(flags: ValuesFlags): Promise<CommandLineValues[]> {
  const files = await Promise.all(
    flags.values.map(async (file) => {
      const text = await readInputFile(file).catch((error: unknown) => {
        throw error instanceof FileAccessError ? new UsageError(`-f ${error.message}`) : error;
      });
      return { kind: 'file' as const, file, text: text.toString('utf8') };
    }),
  );
  const sources = [
    ...files,
    ...flags.set.map((expression) => ({ kind: 'set' as const, expression })),
    ...flags.setString.map((expression) => ({ kind: 'set-string' as const, expression })),
  ];
  commandLineValues(sources); // a malformed --set is a usage error now, not a failure of each release later
  return sources;
}

export interface SelectionFlags {
  readonly selector?: string;
  readonly kubeVersion?: string;
}

/** `-l/--selector KEY=VALUE` (release fields group, service, chart, namespace, name, or labels) and `--kube-version`. */
export function addSelectionOptions(command: Command): Command {
  return command
    .option('-l, --selector <KEY=VALUE>', 'only releases matching every KEY=VALUE (group, service, chart, namespace, name or a release label; != negates)')
    .option(
      '--kube-version <VERSION>',
      "Kubernetes version to render for, checked against each chart's kubeVersion (default: metadata supported_k8s_version.minimum)",
    );
}
