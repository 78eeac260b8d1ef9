/**
 * The options every command spells the same way, as helm and kubectl do:
 * `-o/--output FORMAT` for what a command prints, `-d/--destination DIR` for
 * a folder it writes into, the app folder as the positional APP_DIR
 * (default `.`), numeric flags checked, flags that do nothing refused.
 */
import { existsSync, statSync } from 'node:fs';
import { InvalidArgumentError, Option } from 'commander';
import { FlotillaError } from '../diagnostics/index.js';
import { dumpYaml } from '../document/index.js';
import { consoleOutput, type Output } from './output.js';

/** A mistake in how a command was called: exit 2. */
export class UsageError extends FlotillaError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `-o, --output FORMAT`: unknown formats are usage errors (commander's choices). */
export function outputOption(formats: readonly string[] = OUTPUT_FORMATS, defaultFormat: string | undefined = formats[0]): Option {
  const option = new Option('-o, --output <FORMAT>', `output format: ${formats.join(', ')}`).choices(formats);
  return defaultFormat === undefined ? option : option.default(defaultFormat);
}

/** `-d, --destination DIR`: the folder a command writes into. */
export function destinationOption(description: string, defaultDir?: string): Option {
  const option = new Option('-d, --destination <DIR>', description);
  return defaultDir === undefined ? option : option.default(defaultDir);
}

/** Data on stdout as JSON or YAML; for `table`, the command's own rendering. */
export function printData(format: string, data: unknown, table: () => void, io: Output = consoleOutput): void {
  if (format === 'json') io.out(JSON.stringify(data, null, 2));
  else if (format === 'yaml') io.out(dumpYaml(data).replace(/\n$/, ''));
  else table();
}

/** Parser of a numeric flag: a whole number of at least `min`. */
export function integerAtLeast(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected a whole number of at least ${min}, got "${value}"`);
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
  if (first !== undefined && (first.includes('/') || first === '.' || (existsSync(first) && statSync(first).isDirectory()))) return { appDir: first, names: rest };
  return { appDir: '.', names: [...words] };
}
