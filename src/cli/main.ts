#!/usr/bin/env node
/** The flotilla command line, run by this process (program.ts is the CLI itself). */
import { processContext } from './context.js';
import { endQuietlyWhenStdoutCloses, reportAndExit } from './output.js';
import { runCli } from './program.js';

endQuietlyWhenStdoutCloses();
runCli(process.argv, processContext).then((code) => {
  // A failure ends at once, as it would have without commands still holding the event loop.
  if (code !== 0) process.exit(code);
}, reportAndExit);
