/**
 * The flotilla command line as a function: argv in, exit code out. Each
 * command lives in ./commands/<name>.ts and only parses its options, calls
 * one module's public index and prints. main.ts runs it for this process; a
 * build server (src/build-server) runs it for a client's `flotilla build`.
 */
import { Command, CommanderError } from 'commander';
import { commands, type RegisterCommand } from './commands/index.js';
import type { CommandContext } from './context.js';
import { describeFailure } from './output.js';

export async function runCli(argv: readonly string[], context: CommandContext): Promise<number> {
  const { io } = context;
  // --debug is the command line's own, wherever it is written: given to it before the command (options are positional, below).
  const words = argv.slice(2).filter((word) => word !== '--debug');
  const debug = words.length < argv.length - 2;
  const named = words[0] !== undefined ? commands[words[0]] : undefined;
  // One module for the command being run; all of them for help or an unknown word.
  const program = await defineProgram(context, named ? [named] : Object.values(commands));
  try {
    await program.parseAsync([...argv.slice(0, 2), ...(debug ? ['--debug'] : []), ...words]);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    const { lines, exitCode } = describeFailure(error, debug);
    for (const line of lines) io.err(line);
    return exitCode;
  }
}

/** The command line with the commands of `modules` (default: every command) registered, writing through `context.io`. */
export async function defineProgram(context: CommandContext, modules: readonly (typeof commands)[string][] = Object.values(commands)): Promise<Command> {
  const { io } = context;
  const program = new Command('flotilla')
    .description('Build, ship and run StarlingX-style Kubernetes applications')
    .version('0.1.0')
    .option('--debug', 'print the stack trace of an unexpected error')
    // A command's options are its own, not its parent's: `overrides set … -o json` is set's -o, not overrides'.
    .enablePositionalOptions()
    // Usage errors: one line naming the word or flag, exit 2 (commander's own exit is 1); help and version exit 0.
    .configureOutput({
      writeOut: (text) => io.out(text.replace(/\n$/, '')),
      writeErr: (text) => io.err(text.replace(/\n$/, '')),
      outputError: (text, write) =>
        write(
          `flotilla: ${text
            .replace(/^error: /, '')
            .trim()
            .replace(/\s*\n\s*/g, ' ')} (see --help)\n`,
        ),
    })
    .exitOverride();
  const registered = new Set<RegisterCommand>();
  for (const load of modules) {
    const { register } = await load();
    if (registered.has(register)) continue;
    registered.add(register);
    register(program, { ...context, runCommandLine: runCli });
  }
  return program;
}
