/**
 * Typed errors of `flotilla import`. An import either lands whole or not at
 * all: every problem with the source is collected first and reported in one
 * ImportRejectedError, before anything is written.
 */
import { DiagnosticsError, FlotillaError, formatLocation, type Diagnostic, type SourceLocation } from '../diagnostics/index.js';

/** The StarlingX app uses something the flotilla layout cannot represent faithfully; every such problem is listed. */
export class ImportRejectedError extends DiagnosticsError {
  constructor(source: string, diagnostics: readonly Diagnostic[]) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    const warnings = diagnostics.filter((d) => d.severity !== 'error');
    super(`cannot import ${source}: ${errors.length} problem${errors.length === 1 ? '' : 's'} (nothing was written):`, [...errors, ...warnings]);
  }
}

/** APP_DIR cannot receive the import: not empty (without --force), not a folder, or overlapping the source. */
export class ImportTargetError extends FlotillaError {}

/**
 * The imported tree, loaded back, does not reproduce the original HelmReleases
 * or charts (the importer's last check: a case the checks before it missed,
 * such as an archive holding a file Helm ignores in a chart folder). The tree
 * is not put in place.
 */
export class ImportVerificationError extends DiagnosticsError {
  constructor(diagnostics: readonly Diagnostic[]) {
    super('the imported app would not reproduce the source, so nothing was written:', diagnostics);
  }
}

/** Collects errors and warnings while reading; errors never stop the pass, so all are reported together. */
export class Problems {
  readonly items: Diagnostic[] = [];

  error(message: string, location?: SourceLocation, path?: readonly (string | number)[]): void {
    this.items.push({ severity: 'error', message, ...(location ? { location } : {}), ...(path ? { path } : {}) });
  }

  warn(message: string, location?: SourceLocation, path?: readonly (string | number)[]): void {
    this.items.push({ severity: 'warning', message, ...(location ? { location } : {}), ...(path ? { path } : {}) });
  }

  add(diagnostics: readonly Diagnostic[]): void {
    this.items.push(...diagnostics);
  }

  /** Records a FlotillaError raised by another module (a chart or YAML problem) as an error at its location. */
  fromError(error: unknown, context?: string): void {
    if (!(error instanceof FlotillaError)) throw error;
    if (error instanceof DiagnosticsError) {
      for (const d of error.diagnostics) this.items.push(context ? { ...d, message: `${context}: ${d.message}` } : d);
      return;
    }
    const prefix = error.location ? `${formatLocation(error.location)}: ` : '';
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    this.error(context ? `${context}: ${message}` : message, error.location);
  }

  get errors(): Diagnostic[] {
    return this.items.filter((d) => d.severity === 'error');
  }

  get warnings(): Diagnostic[] {
    return this.items.filter((d) => d.severity === 'warning');
  }

  get failed(): boolean {
    return this.items.some((d) => d.severity === 'error');
  }
}
