/**
 * One error type for every archive that is refused or cannot be read, in the
 * spirit of StarlingX's "Application-upload rejected: <reason>": the message
 * names the archive, the entry (when there is one) and the reason.
 */
import { FlotillaError } from '../diagnostics/index.js';

/** Why an archive was refused. */
export type ArchiveProblem =
  // unsafe content
  | 'absolute-path'
  | 'parent-segment'
  | 'symlink'
  | 'hardlink'
  | 'device'
  | 'fifo'
  | 'unsupported-entry'
  | 'duplicate'
  | 'path-conflict'
  | 'too-large'
  | 'too-many-entries'
  // readers could extract different files from it
  | 'ambiguous'
  | 'trailing-data'
  // malformed container
  | 'not-gzip'
  | 'bad-gzip'
  | 'truncated'
  | 'bad-header'
  | 'bad-path';

const MALFORMED: ReadonlySet<ArchiveProblem> = new Set(['not-gzip', 'bad-gzip', 'truncated', 'bad-header']);

export class UnsafeArchiveError extends FlotillaError {
  /** What went wrong, for callers that react to a class of problem. */
  readonly problem: ArchiveProblem;
  /** The offending entry's name as stored in the archive, when one is to blame. */
  readonly entry?: string;
  /** Where the archive came from (a path or a caller-given label). */
  readonly source: string;

  constructor(source: string, problem: ArchiveProblem, reason: string, entry?: string) {
    const what = entry === undefined ? '' : `entry ${JSON.stringify(entry)}: `;
    super(`archive rejected (${source}): ${what}${reason}`);
    this.problem = problem;
    this.entry = entry;
    this.source = source;
  }

  /** True when the file is not a well-formed tar.gz at all (as opposed to well-formed but hostile). */
  get malformed(): boolean {
    return MALFORMED.has(this.problem);
  }
}
