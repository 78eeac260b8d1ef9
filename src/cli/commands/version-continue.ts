/** `flotilla version continue APP --phase NAME`: the go for a held update phase (docs/versions.md). */
import type { Command } from 'commander';
import type { Output } from '../output.js';
import { clusterCommand, parseDuration, type ClusterFlags } from '../options.js';
import { connectFor } from './cluster-options.js';
import { printOutcome, withProgress } from './lifecycle.js';

export function registerContinue(version: Command, io: Output): void {
  clusterCommand(version, 'continue', 'release a held update phase: the update goes on from it, through the last phase')
    .argument('<APP>', 'app name')
    .requiredOption('--phase <PHASE>', 'the held phase (flotilla show APP names it)')
    .option('--timeout <DURATION>', "a bound on the whole wait (e.g. 2h); default: the critical path of the releases' own times")
    .action(async (app: string, flags: ClusterFlags & { output: string; phase: string; timeout?: string }) => {
      const timeoutMs = flags.timeout !== undefined ? parseDuration(flags.timeout, '--timeout') : undefined;
      const { continueApp } = await import('../../lifecycle/index.js');
      const client = await connectFor(flags);
      printOutcome(
        io,
        flags.output,
        await withProgress((events) => continueApp(client, app, flags.phase, { ...(timeoutMs !== undefined ? { timeoutMs } : {}), events })),
      );
    });
}
