/** `flotilla version continue APP --phase NAME`: the go for a held update phase (docs/versions.md). */
import type { Command } from 'commander';
import { clusterCommand, connectFor, parseDuration, type ClusterFlags } from './cluster-options.js';
import { printOutcome, withProgress } from './lifecycle.js';

export function registerContinue(version: Command): void {
  clusterCommand(version, 'continue', 'release a held update phase: the update goes on from it, through the last phase')
    .argument('<APP>', 'app name')
    .requiredOption('--phase <PHASE>', 'the held phase (flotilla show APP names it)')
    .option('--timeout <DURATION>', "a bound on the whole wait (e.g. 2h); default: the critical path of the releases' own times")
    .action(async (app: string, flags: ClusterFlags & { phase: string; timeout?: string }) => {
      const timeoutMs = flags.timeout !== undefined ? parseDuration(flags.timeout, '--timeout') : undefined;
      const { continueApp } = await import('../../lifecycle/index.js');
      const client = await connectFor(flags);
      printOutcome(await withProgress((events) => continueApp(client, app, flags.phase, { ...(timeoutMs !== undefined ? { timeoutMs } : {}), events })));
    });
}
