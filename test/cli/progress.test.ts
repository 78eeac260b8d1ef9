/**
 * The progress printer (src/cli/progress.ts) off a terminal: one line per
 * step, warning and ready release; notes for --debug only under --debug.
 */
import { describe, expect, it } from 'vitest';
import { progressPrinter } from '../../src/cli/progress.js';

function capture(): { stream: NodeJS.WriteStream; text: () => string } {
  let written = '';
  const stream = { isTTY: false, write: (chunk: string) => ((written += chunk), true) } as unknown as NodeJS.WriteStream;
  return { stream, text: () => written };
}

describe('the progress printer', () => {
  it('prints steps, warnings and ready releases a line each, and debug notes only under --debug', () => {
    for (const debug of [false, true]) {
      const out = capture();
      const printer = progressPrinter(out.stream, debug);
      printer.events({ type: 'step', message: 'computing the overrides of 2 release(s)' });
      printer.events({ type: 'debug', message: 'cache entry x ignored: its seal does not match; rebuilt' });
      printer.events({ type: 'warning', message: 'upgrading glance: attempt 2 of 4' });
      printer.events({ type: 'release-ready', release: 'glance', elapsedMs: 61_000 });
      printer.done();
      expect(out.text()).toBe(
        [
          'computing the overrides of 2 release(s)',
          ...(debug ? ['flotilla: debug: cache entry x ignored: its seal does not match; rebuilt'] : []),
          'warning: upgrading glance: attempt 2 of 4',
          'release glance ready (1m01s)',
          '',
        ].join('\n'),
      );
    }
  });
});
