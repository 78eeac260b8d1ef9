/**
 * The options every command spells the same way, as helm and kubectl do:
 * `-o/--output FORMAT` for what a command prints (docs/output.md),
 * `-d/--destination DIR` for a folder it writes into, the app folder as the
 * positional APP_DIR (default `.`), numeric flags and durations checked,
 * flags that do nothing refused; the cluster flags. The one `UsageError`.
 */
import { existsSync, statSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { FlotillaError } from '../diagnostics/index.js';
import { fluxDurationMs } from '../names/index.js';

/** A mistake in how a command was called: exit 2. */
export class UsageError extends FlotillaError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * `-o, --output FORMAT`: table (the command's own rendering), json or yaml
 * (docs/output.md); an unknown format is a usage error worded alike by every
 * command (commander's choices, exit 2). `extra` formats come after the three.
 */
export function outputOption(extra: readonly string[] = []): Option {
  const formats = [...OUTPUT_FORMATS, ...extra];
  return new Option('-o, --output <FORMAT>', `output format: ${formats.join(', ')}`).choices(formats).default('table');
}

/** `-d, --destination DIR`: the folder a command writes into. */
export function destinationOption(description: string, defaultDir?: string): Option {
  const option = new Option('-d, --destination <DIR>', description);
  return defaultDir === undefined ? option : option.default(defaultDir);
}

/** Parser of a numeric flag: a whole number of at least `min`. */
export function integerAtLeast(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min)
      throw new InvalidArgumentError(`expected a whole number of at least ${min}, got "${value}"`);
    return n;
  };
}

/** Refuses a flag given where it does nothing: `--all` without `--explain`. */
export function requireWith(given: boolean, flag: string, needed: boolean, neededFlag: string): void {
  if (given && !needed) throw new UsageError(`${flag} does nothing without ${neededFlag}`);
}

/** A flag's repeated values collected in order. */
export function collect(value: string, previous: readonly string[] = []): string[] {
  return [...previous, value];
}

/**
 * Splits `[APP_DIR] NAME…`: the first word is the app folder when it is an
 * existing folder (release and chart names never contain a slash, and `.`
 * names the current folder), otherwise the app is `.`.
 */
export function appDirAndNames(words: readonly string[]): { appDir: string; names: string[] } {
  const [first, ...rest] = words;
  if (first !== undefined && (first.includes('/') || first === '.' || (existsSync(first) && statSync(first).isDirectory())))
    return { appDir: first, names: rest };
  return { appDir: '.', names: [...words] };
}

/** The flags of a command that talks to a cluster. */
export interface ClusterFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** A cluster command: `--kubeconfig`, `--context`, and `-o/--output` (each prints data). */
export function clusterCommand(program: Command, name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .option('--kubeconfig <FILE>', 'kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
    .option('--context <NAME>', 'kubeconfig context (default: its current context)')
    .addOption(outputOption());
}

/** Parses a Flux-style duration (`30m`, `1h30m`, `90s`) into milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const ms = fluxDurationMs(text);
  if (ms === undefined) throw new UsageError(`${flag} ${text}: expected a duration such as 30m, 1h or 90s`);
  return ms;
}
