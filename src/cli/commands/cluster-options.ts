/**
 * What every cluster command shares besides its flags (src/cli/options.ts):
 * the connection, and the progress display (a bar on a terminal, plain lines
 * otherwise) on stderr.
 */
import type { Cluster, LifecycleEvent } from '../../lifecycle/index.js';
import type { ClusterFlags } from '../options.js';

/** The cluster the flags name, as the lifecycle asks for it (src/kube implements it over the Kubernetes API). */
export async function connectFor(flags: ClusterFlags): Promise<Cluster> {
  const { connect, kubeCluster } = await import('../../kube/index.js');
  return kubeCluster(await connect({ ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}), ...(flags.context ? { context: flags.context } : {}) }));
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
            stream.write(
              `\r\x1b[K[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${ready}/${total} ready${current ? `, waiting for ${current}` : ''} (${seconds(event.elapsedMs)})`,
            );
            barShown = true;
          } else if (current === undefined && ready === total)
            line(`all ${total} release(s) ready (${seconds(event.elapsedMs)}); overall completion ${percent}%`);
          break;
        }
      }
    },
    done: clearBar,
  };
}
