/**
 * What a `flotilla` process and a build server say to each other over the
 * server's socket: one JSON object a line, each way. A client sends one
 * request; the server answers with the command's output as it is written
 * and ends with its exit code. Client and server always come from the same
 * bundle (the socket's name holds its content hash, see place.ts), so the
 * format needs no version of its own.
 *
 * Node's built-ins only: the CLI's launcher imports this before flotilla
 * itself is loaded (docs/architecture.md, "Build server").
 */
import type { Socket } from 'node:net';

/** Run a command as `flotilla <argv…>` would in the folder `cwd`, if the server's key is `key` (see place.ts). */
export interface RunRequest {
  readonly kind: 'run';
  readonly key: string;
  readonly argv: readonly string[];
  readonly cwd: string;
}

export type Request = RunRequest | { readonly kind: 'status' } | { readonly kind: 'stop' };

export type WarmUpState = 'waiting' | 'started' | 'done' | 'failed';

export interface ServerStatus {
  readonly pid: number;
  readonly socket: string;
  /** ISO 8601. */
  readonly startedAt: string;
  readonly commandsRun: number;
  /** Builds made in memory after a change, ahead of a client's build; and how many were the answer to one. */
  readonly preparedBuilds: { readonly made: number; readonly used: number };
  /** The apps whose state the server keeps, most recently built first. */
  readonly apps: readonly string[];
  readonly idleSeconds: number;
  /** Whether its warm-up (run when quiet; again after a command cut it short) has run and succeeded (never, for a server without one). */
  readonly warmedUp: boolean;
  /** Where the warm-up is: waiting for a quiet spell, started, or ended (done, or failed and not tried again). */
  readonly warmUp: WarmUpState;
  /** Seconds without a command after which it stops by itself. */
  readonly stopsAfterIdleSeconds: number;
  /** The server process's peak memory (max RSS) so far, in MiB. */
  readonly peakMemoryMiB: number;
}

export type Reply =
  | { readonly kind: 'out' | 'err'; readonly text: string }
  | { readonly kind: 'exit'; readonly code: number }
  | { readonly kind: 'status'; readonly status: ServerStatus }
  | { readonly kind: 'stopping' };

export function send(socket: Socket, message: Request | Reply): void {
  socket.write(`${JSON.stringify(message)}\n`);
}

/** Calls `onMessage` with each whole line of `socket` parsed; a line that is not JSON ends the connection. */
export function receive<T>(socket: Socket, onMessage: (message: T) => void): void {
  let buffered = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      let message: T;
      try {
        message = JSON.parse(line) as T;
      } catch {
        socket.destroy();
        return;
      }
      onMessage(message);
    }
  });
}
