/** What a command gets besides its arguments: where to write, and in a build server what earlier builds kept. */
import type { KeptBuilds } from '../build/index.js';
import { consoleOutput, type Output } from './output.js';

export interface CommandContext {
  readonly io: Output;
  /** Set when the command runs in a build server (src/build-server): builds keep what they learn for the next one. */
  readonly kept?: KeptBuilds;
  /** A build server preparing for a client's next builds: `build` makes its tarball in memory only and prints nothing. */
  readonly prepareOnly?: boolean;
  /** Aborts when the command is cancelled: a build server's client gone (Ctrl-C) before its build ended. */
  readonly cancelled?: AbortSignal;
}

/** What the command line itself is (program.ts), for `build-server run` to run its clients' commands. */
export type RunCommandLine = (argv: readonly string[], context: CommandContext) => Promise<number>;

/** The context each command's `register` gets: the caller's, and the command line itself. */
export interface RegisterContext extends CommandContext {
  readonly runCommandLine: RunCommandLine;
}

export const processContext: CommandContext = { io: consoleOutput };
