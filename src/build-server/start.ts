/**
 * Starting a build server in the background. Apart from client.ts so that
 * the CLI's launcher loads child_process only when it starts one.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { ServerPlace } from './place.js';
import type { RunRequest } from './protocol.js';

/** The command that started a server (its arguments and folder): the server prepares for the next ones like it. */
export type PrepareFrom = Pick<RunRequest, 'argv' | 'cwd'>;

/**
 * A server collects its garbage between builds, not during them: a young
 * generation that holds a whole build's garbage, and `gc` exposed for the
 * collection it runs once a client has its answer (build-server run).
 */
const SERVER_NODE_FLAGS = ['--expose-gc', '--max-semi-space-size=64'];

/**
 * Starts a server in the background and returns its pid: `node <flags> <launcher> build-server run`,
 * in its own session, with this process's environment, its output in the
 * place's log. It outlives this process and stops by itself when idle.
 */
export function startServer(place: ServerPlace, launcher: string, prepareFrom?: PrepareFrom): number | undefined {
  let log: number | undefined;
  try {
    log = openSync(place.log, 'w', 0o600);
    const prepare = prepareFrom ? ['--prepare', JSON.stringify(prepareFrom)] : [];
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, launcher, 'build-server', 'run', ...prepare], {
      detached: true,
      stdio: ['ignore', log, log],
      cwd: place.dir,
      env: process.env,
    });
    child.on('error', () => {});
    child.unref();
    return child.pid;
  } catch {
    // No server: the next build runs in its own process, as this one did.
    return undefined;
  } finally {
    if (log !== undefined) closeSync(log);
  }
}
