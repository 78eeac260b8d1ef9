/**
 * How every command writes: its data through `printData` (a table, or JSON or
 * YAML in the envelope docs/output.md documents), everything else on stderr;
 * errors, warnings, tables.
 */
import { FlotillaError, formatDiagnostic, maskUrlCredentials, type Diagnostic } from '../diagnostics/index.js';
// js-yaml's writer itself, not src/yaml's dumpYaml (the same text, held so by test/yaml/dump.test.ts):
// every command loads this module, and the YAML layer is loaded only by the commands that read YAML.
import { dump } from 'js-yaml';
import { systemFileError, type ExternalLink } from '../files/index.js';
import { startedWithoutExtraCaCerts } from './entry-shell.js';

/** Where a command writes its lines: the process's stdout and stderr, or a build server's client (src/build-server). */
export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export const consoleOutput: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** The version of the JSON and YAML shapes (docs/output.md): a field removed or changed in meaning makes v2. */
const OUTPUT_API_VERSION = 'flotilla/v1';

/** A command's data printed as JSON or YAML: the version and kind first, then the kind's fields. */
export interface PrintedData {
  readonly apiVersion: typeof OUTPUT_API_VERSION;
  readonly kind: string;
  readonly [field: string]: unknown;
}

/**
 * What a command prints on stdout, in the format `-o` asked for: for
 * `table`, the lines `table` returns (the command's own rendering); for
 * `json` and `yaml`, `data` under `apiVersion` and `kind` (a list goes
 * under `items`). Every command's data goes through here.
 */
export function printData(io: Output, format: string, kind: string, data: Readonly<Record<string, unknown>>, table: () => string | readonly string[]): void {
  if (format === 'json' || format === 'yaml') {
    if ('apiVersion' in data || 'kind' in data) throw new Error(`${kind}: a printed kind's fields cannot be named apiVersion or kind`);
    const printed: PrintedData = { apiVersion: OUTPUT_API_VERSION, kind, ...plainData(data) };
    io.out(format === 'json' ? JSON.stringify(printed, null, 2) : dump(printed, { noRefs: true }).replace(/\n$/, ''));
    return;
  }
  const lines = table();
  for (const line of typeof lines === 'string' ? [lines] : lines) io.out(line);
}

/** What JSON would keep of `data` (no undefined fields, dates as text), so JSON and YAML print the same fields. */
function plainData(data: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(data)) as Record<string, unknown>;
}

/**
 * What a failed command says and its deliberate exit code: 1 when the input
 * or the operation failed, 2 for usage; one line, never a stack trace
 * unless `--debug` asks for it.
 */
export function describeFailure(error: unknown, debug: boolean): { readonly lines: readonly string[]; readonly exitCode: number } {
  const { lines, exitCode } = failureLines(error, debug);
  // A kubeconfig's or a registry's `https://user:PW@host` is echoed by many errors (Node's own among them).
  return { lines: lines.map(maskUrlCredentials), exitCode };
}

function failureLines(error: unknown, debug: boolean): { readonly lines: readonly string[]; readonly exitCode: number } {
  const stack = debug && error instanceof Error && error.stack ? [error.stack] : [];
  const hint = hintsFor(error);
  if (error instanceof FlotillaError) return { lines: [...stack, `flotilla: ${error.message}`, ...hint], exitCode: error.exitCode };
  const system = systemFileError(error);
  if (system) return { lines: [...stack, `flotilla: ${system.message}`, ...hint], exitCode: system.exitCode };
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0];
  return { lines: [...stack, `flotilla: unexpected error: ${message}${debug ? '' : ' (rerun with --debug for the stack trace)'}`, ...hint], exitCode: 1 };
}

/** Lines said after a failure's own: what about this process may have caused it (see entry-shell.ts). */
export function hintsFor(error: unknown): string[] {
  return startedWithoutExtraCaCerts() && certificateUntrusted(error) ? [WITHOUT_EXTRA_CA_CERTS_HINT] : [];
}

const WITHOUT_EXTRA_CA_CERTS_HINT =
  'flotilla: a TLS certificate was not trusted, and this command started Node without the certificates NODE_EXTRA_CA_CERTS names (it opens none of its own but to fetch a chart dependency its cache lacks; docs/plugins.md): run it as node "$(command -v flotilla)" … to trust them';

/** OpenSSL's verdicts on a certificate chain no trusted authority vouches for, as Node names them. */
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
]);

/**
 * Whether an error, or one it was caused by (`cause`; the `causes` of a
 * DiagnosticsError, an aggregate's `errors`), is a TLS connection's untrusted certificate.
 */
function certificateUntrusted(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 8) return false;
  const { code, cause, causes, errors } = error as { code?: unknown; cause?: unknown; causes?: unknown; errors?: unknown };
  if (typeof code === 'string' && UNTRUSTED_CERTIFICATE.has(code)) return true;
  const inner = [cause, ...(Array.isArray(causes) ? causes : []), ...(Array.isArray(errors) ? errors : [])];
  return inner.some((e) => certificateUntrusted(e, depth + 1));
}

/** The end of a failed command run by this process: its lines on stderr, then its exit code. */
export function reportAndExit(error: unknown): never {
  const { lines, exitCode } = describeFailure(error, process.argv.includes('--debug'));
  for (const line of lines) process.stderr.write(`${line}\n`);
  process.exit(exitCode);
}

/**
 * `flotilla … | head`: once the reader has closed stdout, what is left to
 * print goes nowhere and the command finishes as it would, with its own exit
 * code — no EPIPE stack trace. Any other stdout error is reported like one of
 * the command's own.
 */
export function endQuietlyWhenStdoutCloses(stdout: NodeJS.WriteStream = process.stdout): void {
  stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') reportAndExit(error);
    stdout.write = ((...args: unknown[]) => {
      const callback = args.find((a) => typeof a === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof stdout.write;
  });
}

/** Says which links `--follow-external-symlinks` followed, so nobody ships a file of their machine unawares. */
export function printExternalLinks(links: readonly ExternalLink[], root: string, io: Output = consoleOutput): void {
  for (const { link, target } of links) io.err(`following symbolic link ${link} → ${target}, outside ${root} (--follow-external-symlinks)`);
}

export function printWarnings(diagnostics: readonly Diagnostic[], io: Output = consoleOutput): void {
  for (const d of diagnostics) io.err(formatDiagnostic(d));
}

/** A plain text table: columns padded to their widest cell. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
