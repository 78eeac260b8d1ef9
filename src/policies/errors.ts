/** Typed errors of the policies module. */
import { FlotillaError, type SourceLocation } from '../diagnostics/index.js';

/** Base of every error the policies module raises. */
export class PolicyError extends FlotillaError {}

/**
 * A rule that oslo.policy cannot parse. oslo.policy itself logs such a rule
 * and then denies every request it protects; flotilla refuses it up front.
 * `index` is the 0-based position inside the rule text.
 */
export class PolicySyntaxError extends PolicyError {
  readonly detail: string;
  readonly index: number;

  constructor(detail: string, index: number, location?: SourceLocation) {
    super(detail, { location });
    this.detail = detail;
    this.index = index;
  }
}

/** A policy file (override file, set file, set.yaml) that cannot be read or has the wrong shape. */
export class PolicyFileError extends PolicyError {}

/** A policy set that does not exist or whose `set.yaml` is wrong. */
export class PolicySetError extends PolicyError {}

/** A question about an action, chart or section the policy does not define. Exit code 2 (usage). */
export class PolicyLookupError extends PolicyError {
  constructor(message: string, location?: SourceLocation) {
    super(message, { location, exitCode: 2 });
  }
}
