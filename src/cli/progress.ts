/**
 * The progress of an operation on a cluster, on stderr: on a terminal one
 * line redrawn (a bar), otherwise plain lines. Beside the Output of
 * src/cli/output.ts, this is the one other place a command's words reach
 * the process's streams (a redrawn line needs the terminal itself).
 */
import type { LifecycleEvent } from '../lifecycle/index.js';

function seconds(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/**
 * Progress on stderr: on a terminal one line redrawn (bar, ready/total, the
 * release waited on, elapsed); otherwise one line per step and per release.
 */
export function progressPrinter(
  stream: NodeJS.WriteStream = process.stderr,
  debug = process.argv.includes('--debug'),
): { events: (event: LifecycleEvent) => void; done(): void } {
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
        case 'debug':
          if (debug) line(`flotilla: debug: ${event.message}`);
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
