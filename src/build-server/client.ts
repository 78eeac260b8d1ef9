/**
 * The client side: run a command on a build server when one is listening,
 * ask one for its status or to stop (start.ts starts one). Node's built-ins
 * only (see protocol.ts).
 */
import { readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { processAlive } from '../files/index.js';
import { receive, send, type Reply, type Request, type ServerStatus } from './protocol.js';

export interface CommandOutput {
  out(text: string): void;
  err(text: string): void;
}

/**
 * Sends `request` to the server at `socket` and hands each reply to
 * `onReply` (which may end the connection); resolves to whether a server
 * was there to take it.
 */
function exchange(socket: string, request: Request, onReply: (reply: Reply, end: () => void) => void): Promise<boolean> {
  return new Promise((done) => {
    const connection = connect(socket);
    connection.on('connect', () => send(connection, request));
    receive<Reply>(connection, (reply) => onReply(reply, () => connection.end()));
    connection.on('error', () => done(false));
    connection.on('close', () => done(true));
  });
}

/**
 * Runs `request` on the server at `socket` and returns its exit code, or
 * undefined when no server answered it whole: none listening, or it went
 * away before the command ended. The caller then runs the command itself
 * (every write of a build is atomic, so a build cut short leaves nothing
 * half-written to build over).
 */
export async function runOnServer(socket: string, request: Request, output: CommandOutput): Promise<number | undefined> {
  let exitCode: number | undefined;
  const answered = await exchange(socket, request, (reply, end) => {
    if (reply.kind === 'out') output.out(reply.text);
    else if (reply.kind === 'err') output.err(reply.text);
    else if (reply.kind === 'exit') {
      exitCode = reply.code;
      end();
    }
  });
  return answered ? exitCode : undefined;
}

/** The first reply of the server at `socket` to one request, or undefined when none listens there (or it said nothing). */
export async function askServer(socket: string, request: Request): Promise<Reply | undefined> {
  let first: Reply | undefined;
  await exchange(socket, request, (reply, end) => {
    first ??= reply;
    end();
  });
  return first;
}

/** The status of the server at `socket`, or undefined when none listens there. */
export async function serverStatus(socket: string): Promise<ServerStatus | undefined> {
  const reply = await askServer(socket, { kind: 'status' });
  return reply?.kind === 'status' ? reply.status : undefined;
}

/** Every listening server in `dir` (the servers folder); the socket a dead one left behind is removed. */
export async function listServers(dir: string): Promise<ServerStatus[]> {
  const servers: ServerStatus[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return servers;
  }
  for (const name of names.filter((n) => n.endsWith('.sock')).sort()) {
    const socket = join(dir, name);
    const status = await serverStatus(socket);
    if (status) servers.push(status);
    else rmSync(socket, { force: true });
  }
  return servers;
}

/**
 * Asks each server to stop and waits, up to `waitMillis`, until its
 * process has exited: a stopping server still finishes its builds and
 * writes its caches.
 */
export async function stopServers(servers: readonly ServerStatus[], waitMillis: number): Promise<void> {
  for (const server of servers) await askServer(server.socket, { kind: 'stop' });
  const deadline = Date.now() + waitMillis;
  for (const { pid } of servers) while (processAlive(pid) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 20));
}
