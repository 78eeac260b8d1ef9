#!/usr/bin/env node
/**
 * The flotilla command line. Each command lives in ./commands/<name>.ts and
 * only parses its options, calls one module's public index and prints.
 */
import { Command, CommanderError } from 'commander';
import { reportAndExit } from './output.js';
import { commands, type RegisterCommand } from './commands/index.js';

async function main(argv: readonly string[]): Promise<void> {
  const program = new Command('flotilla')
    .description('Build, ship and run StarlingX-style Kubernetes applications')
    .version('0.1.0')
    .option('--debug', 'print the stack trace of an unexpected error')
    // Usage errors: one line naming the word or flag, exit 2 (commander's own exit is 1); help and version exit 0.
    .configureOutput({ outputError: (text, write) => write(`flotilla: ${text.replace(/^error: /, '').trim().replace(/\s*\n\s*/g, ' ')} (see --help)\n`) })
    .exitOverride((error: CommanderError) => {
      process.exit(error.exitCode === 0 ? 0 : 2);
    });
  const named = argv[2] !== undefined ? commands[argv[2]] : undefined;
  // One module for the command being run; all of them for help or an unknown word.
  const modules = named ? [named] : Object.values(commands);
  const registered = new Set<RegisterCommand>();
  for (const load of modules) {
    const { register } = await load();
    if (registered.has(register)) continue;
    registered.add(register);
    register(program);
  }
  await program.parseAsync([...argv]);
}

main(process.argv).catch(reportAndExit);
