/** Printing helpers shared by the commands: errors, warnings, tables. */
import { FlotillaError, formatDiagnostic, type Diagnostic } from '../diagnostics/index.js';
import { fileErrorReason, type ExternalLink } from '../files/index.js';

/** An error from a file-system call, which names the path it failed on. */
function systemErrorLine(error: unknown): string | undefined {
  const reason = fileErrorReason(error);
  const { path, dest } = error as NodeJS.ErrnoException & { dest?: string };
  if (reason === undefined || typeof path !== 'string') return undefined;
  return `${path}${dest ? ` → ${dest}` : ''}: ${reason}`;
}

/**
 * The end of every failed command: one line on stderr and a deliberate exit
 * code: 1 when the input or the operation failed, 2 for usage, never a stack
 * trace unless `--debug` asks for it.
 */
export function reportAndExit(error: unknown): never {
  const debug = process.argv.includes('--debug');
  if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  if (error instanceof FlotillaError) {
    process.stderr.write(`flotilla: ${error.message}\n`);
    process.exit(error.exitCode);
  }
  const system = systemErrorLine(error);
  if (system) {
    process.stderr.write(`flotilla: ${system}\n`);
    process.exit(1);
  }
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0];
  process.stderr.write(`flotilla: unexpected error: ${message}${debug ? '' : ' (rerun with --debug for the stack trace)'}\n`);
  process.exit(1);
}

/** Says which links `--follow-external-symlinks` followed, so nobody ships a file of their machine unawares. */
export function printExternalLinks(links: readonly ExternalLink[], root: string): void {
  for (const { link, target } of links) process.stderr.write(`following symbolic link ${link} → ${target}, outside ${root} (--follow-external-symlinks)\n`);
}

export function printWarnings(diagnostics: readonly Diagnostic[]): void {
  for (const d of diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
}

/** A plain text table: columns padded to their widest cell. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
