/**
 * The client side: run a command on a build server when one is listening,
 * ask one for its status or to stop (start.ts starts one). Node's built-ins
 * only (see protocol.ts).
 */
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { receive, send, type Reply, type Request } from './protocol.js';

export interface CommandOutput {
  out(text: string): void;
  err(text: string): void;
}

/**
 * Runs `request` on the server at `socket` and returns its exit code, or
 * undefined when no server answered it whole: none listening, or it went
 * away before the command ended. The caller then runs the command itself
 * (every write of a build is atomic, so a build cut short leaves nothing
 * half-written to build over).
 */
export function runOnServer(socket: string, request: Request, output: CommandOutput): Promise<number | undefined> {
  return new Promise((done) => {
    let exitCode: number | undefined;
    const connection = connect(socket);
    connection.on('connect', () => send(connection, request));
    receive<Reply>(connection, (reply) => {
      if (reply.kind === 'out') output.out(reply.text);
      else if (reply.kind === 'err') output.err(reply.text);
      else if (reply.kind === 'exit') {
        exitCode = reply.code;
        connection.end();
      }
    });
    connection.on('error', () => done(undefined));
    connection.on('close', () => done(exitCode));
  });
}

/** Every reply of the server at `socket` to one request, or undefined when none listens there. */
export function askServer(socket: string, request: Request): Promise<Reply[] | undefined> {
  return new Promise((done) => {
    const replies: Reply[] = [];
    const connection = connect(socket);
    connection.on('connect', () => send(connection, request));
    receive<Reply>(connection, (reply) => {
      replies.push(reply);
      connection.end();
    });
    connection.on('error', () => done(undefined));
    connection.on('close', () => done(replies));
  });
}

/** The sockets of every server of this user (listening or left behind by one that died). */
export function serverSockets(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith('.sock'))
      .sort()
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}
