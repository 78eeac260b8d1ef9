#!/usr/bin/env node
/**
 * The flotilla command line. Each command lives in ./commands/<name>.ts and
 * only parses its options, calls one module's public index and prints.
 */
import { Command } from 'commander';
import { reportAndExit } from './output.js';
import { commands } from './commands/index.js';

const program = new Command('flotilla')
  .description('Build, ship and run StarlingX-style Kubernetes applications')
  .version('0.1.0')
  .showHelpAfterError();

for (const register of commands) register(program);

program.parseAsync(process.argv).catch(reportAndExit);
