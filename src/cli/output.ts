/** Printing helpers shared by the commands: errors, warnings, tables. */
import { FlotillaError, formatDiagnostic, type Diagnostic } from '../diagnostics/index.js';
import type { ExternalLink } from '../files/index.js';

export function reportAndExit(error: unknown): never {
  if (error instanceof FlotillaError) {
    process.stderr.write(`flotilla: ${error.message}\n`);
    process.exit(error.exitCode);
  }
  process.stderr.write(`flotilla: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(70);
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
