/**
 * Where a problem is and how to say it. Every module reports bad input with a
 * typed error carrying the file, line and column, and the path inside the
 * document, so a user can go straight to what needs fixing.
 */
import { relative, isAbsolute } from 'node:path';

/** A position in a source file; `line` and `column` are 1-based. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** A path inside a YAML/JSON document: map keys and list indexes. */
export type DocPath = readonly (string | number)[];

export function formatPath(path: DocPath): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}

/**
 * `scheme://user:PASSWORD@host` with the password replaced by `<secret>`,
 * wherever such a URL appears in a text: every error the CLI prints and
 * every text the redactor (src/plugins/redact.ts) cleans goes through it.
 */
export function maskUrlCredentials(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:'"]*:)([^\s/?#@'"]*)@/gi, (_all, head: string, password: string) =>
    password.length > 0 ? `${head}<secret>@` : `${head}@`,
  );
}

/** A size as messages give it: `1.2 MiB (1258291 bytes)`. */
export function formatBytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB (${bytes} bytes)`;
}

export function formatLocation(loc: SourceLocation | undefined): string {
  if (!loc) return '(unknown location)';
  const file = isAbsolute(loc.file) ? relative(process.cwd(), loc.file) || loc.file : loc.file;
  return loc.line > 0 ? `${file}:${loc.line}:${loc.column}` : file;
}

export type Severity = 'error' | 'warning';

export interface Diagnostic {
  readonly severity: Severity;
  readonly message: string;
  readonly location?: SourceLocation;
  /** Path inside the document the message is about. */
  readonly path?: DocPath;
}

export function formatDiagnostic(d: Diagnostic): string {
  const where = d.location ? `${formatLocation(d.location)}: ` : '';
  const at = d.path && d.path.length > 0 ? ` (at ${formatPath(d.path)})` : '';
  return `${where}${d.severity}: ${d.message}${at}`;
}

/** Base of every error flotilla raises on purpose. The CLI prints `message` and exits non-zero. */
export class FlotillaError extends Error {
  readonly location?: SourceLocation;
  readonly exitCode: number;

  constructor(message: string, options: { location?: SourceLocation; exitCode?: number; cause?: unknown } = {}) {
    super(options.location ? `${formatLocation(options.location)}: ${message}` : message, { cause: options.cause });
    this.name = new.target.name;
    this.location = options.location;
    this.exitCode = options.exitCode ?? 1;
  }
}

/** Several problems found in one pass (a schema check, a lint): all are reported at once. */
export class DiagnosticsError extends FlotillaError {
  readonly diagnostics: readonly Diagnostic[];
  /** The errors the diagnostics were made from; their stacks follow this one's (what --debug prints). */
  readonly causes: readonly Error[];

  constructor(summary: string, diagnostics: readonly Diagnostic[], causes: readonly Error[] = []) {
    super(`${summary}\n${diagnostics.map((d) => `  ${formatDiagnostic(d)}`).join('\n')}`);
    this.diagnostics = diagnostics;
    this.causes = causes;
    for (const cause of causes) this.stack = `${this.stack ?? this.message}\nCaused by: ${cause.stack ?? cause.message}`;
  }
}
