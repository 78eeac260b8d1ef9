/**
 * Typed errors of the charts module. Each names the file it is about and,
 * for YAML content, the line and column.
 */
import { FlotillaError, type SourceLocation } from '../diagnostics/index.js';

/** Base of every chart problem. */
export class ChartError extends FlotillaError {}

/** Chart.yaml (or a v1 chart's requirements.yaml) is missing, is not YAML, or breaks Helm's rules. */
export class ChartFileError extends ChartError {
  constructor(message: string, location: SourceLocation) {
    super(message, { location });
  }
}

/** A `.helmignore` line Helm would refuse (`**`, a malformed glob). */
export class HelmignoreError extends ChartError {
  constructor(message: string, location: SourceLocation) {
    super(message, { location });
  }
}

/** A dependency that cannot be resolved, vendored or trusted. */
export class ChartDependencyError extends ChartError {
  /** The chart declaring (or containing) the dependency. */
  readonly chart: string;
  readonly dependency: string;

  constructor(chart: string, dependency: string, message: string, location?: SourceLocation) {
    super(`chart ${JSON.stringify(chart)}: dependency ${JSON.stringify(dependency)}: ${message}`, { location });
    this.chart = chart;
    this.dependency = dependency;
  }
}

/** A chart archive that is a valid tar.gz but not a valid Helm chart archive. */
export class ChartArchiveError extends ChartError {}
