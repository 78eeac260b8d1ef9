/**
 * What every cluster command shares: `--kubeconfig`, `--context`,
 * `-o/--output`, and the progress display
 * (a bar on a terminal, plain lines otherwise).
 */
import type { Command } from 'commander';
import { FlotillaError } from '../../diagnostics/index.js';
import { fluxDurationMs } from '../../names/index.js';
import type { KubeClient } from '../../kube/index.js';
import type { LifecycleEvent } from '../../lifecycle/index.js';

export interface ClusterFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly output?: string;
}

export class UsageError extends FlotillaError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

/** A cluster command with the shared flags (usage errors exit 2 as for every command: src/cli/main.ts). */
export function clusterCommand(program: Command, name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .option('--kubeconfig <FILE>', 'kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
    .option('--context <NAME>', 'kubeconfig context (default: its current context)');
}

/** `-o/--output` for commands whose output is data. */
export function withOutput(command: Command, formats: readonly string[] = ['table', 'json', 'yaml']): Command {
  return command.option('-o, --output <FORMAT>', formats.join(', '), formats[0]);
}

export function outputFormat(flags: ClusterFlags, formats: readonly string[] = ['table', 'json', 'yaml']): string {
  const format = flags.output ?? formats[0] ?? 'table';
  if (!formats.includes(format)) throw new UsageError(`--output must be one of ${formats.join(', ')}, not "${format}"`);
  return format;
}

export async function connectFor(flags: ClusterFlags): Promise<KubeClient> {
  const { connect } = await import('../../kube/index.js');
  return connect({ ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}), ...(flags.context ? { context: flags.context } : {}) });
}

/** Parses a Flux-style duration (`30m`, `1h30m`, `90s`) into milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const ms = fluxDurationMs(text);
  if (ms === undefined) throw new UsageError(`${flag} ${text}: expected a duration such as 30m, 1h or 90s`);
  return ms;
}

function seconds(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/**
 * Progress on stderr: on a terminal one line redrawn (bar, ready/total, the
 * release waited on, elapsed); otherwise one line per step and per release.
 */
export function progressPrinter(stream: NodeJS.WriteStream = process.stderr): { events: (event: LifecycleEvent) => void; done(): void } {
  const tty = stream.isTTY === true;
  let barShown = false;
  const clearBar = () => {
    if (barShown) stream.write('\r\x1b[K');
    barShown = false;
  };
  const line = (text: string) => {
    clearBar();
    stream.write(`${text}\n`);
  };
  return {
    events(event) {
      switch (event.type) {
        case 'step':
          line(event.message);
          break;
        case 'warning':
          line(`warning: ${event.message}`);
          break;
        case 'plugin-log':
          if (event.entry.level !== 'debug') line(`${event.entry.level === 'warn' ? 'warning: ' : ''}plugin ${event.entry.plugin}: ${event.entry.message}`);
          break;
        case 'release-ready':
          if (!tty) line(`release ${event.release} ready (${seconds(event.elapsedMs)})`);
          break;
        case 'progress': {
          const { ready, total, percent, current } = event.progress;
          if (tty) {
            const width = 24;
            const filled = Math.round((percent / 100) * width);
            stream.write(`\r\x1b[K[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${ready}/${total} ready${current ? `, waiting for ${current}` : ''} (${seconds(event.elapsedMs)})`);
            barShown = true;
          } else if (current === undefined && ready === total) line(`all ${total} release(s) ready (${seconds(event.elapsedMs)}); overall completion ${percent}%`);
          break;
        }
      }
    },
    done: clearBar,
  };
}

export async function printData(format: string, data: unknown, table: () => string): Promise<void> {
  if (format === 'json') console.log(JSON.stringify(data, null, 2));
  else if (format === 'yaml') process.stdout.write((await import('../../document/index.js')).dumpYaml(data));
  else console.log(table());
}
