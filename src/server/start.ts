/**
 * Starting a build server in the background. Apart from client.ts so that
 * the CLI's launcher loads child_process only when it starts one.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { ServerPlace } from './place.js';

/**
 * Starts a server in the background: `node <launcher> build-server run`,
 * in its own session, with this process's environment, its output in the
 * place's log. It outlives this process and stops by itself when idle.
 */
export function startServer(place: ServerPlace, launcher: string): void {
  let log: number | undefined;
  try {
    log = openSync(place.log, 'w', 0o600);
    const child = spawn(process.execPath, [launcher, 'build-server', 'run'], { detached: true, stdio: ['ignore', log, log], cwd: place.dir, env: process.env });
    child.on('error', () => {});
    child.unref();
  } catch {
    // No server: the next build runs in its own process, as this one did.
  } finally {
    if (log !== undefined) closeSync(log);
  }
}
