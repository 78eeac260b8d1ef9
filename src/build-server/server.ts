/**
 * The server side: listen on the place's socket, run one command at a time
 * (a command may change the process's folder; builds of one app must not
 * interleave), stop when idle, when asked, when another server has taken
 * the socket's name, or when its own code is gone. Node's built-ins only; what a command does is the
 * caller's `run` (src/cli wires it to the CLI's own program).
 */
import { lstatSync, renameSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { receive, send, type Reply, type Request, type RunRequest, type ServerStatus, type WarmUpState } from './protocol.js';
import type { CommandOutput } from './client.js';
import type { ServerPlace } from './place.js';

export interface ServeOptions {
  readonly place: ServerPlace;
  /** Stops after this long without a command. */
  readonly idleMillis: number;
  /**
   * Runs one command, writing its output to `output`; resolves to its exit
   * code. `cancelled` aborts when its client is gone before the command
   * ended (Ctrl-C at the terminal): the command then writes nothing more.
   */
  run(request: RunRequest, output: CommandOutput, cancelled: AbortSignal): Promise<number>;
  /** The apps whose state is kept, for the status. */
  apps(): readonly string[];
  /** How many builds were prepared ahead of clients (and used), for the status. */
  preparedBuilds?(): ServerStatus['preparedBuilds'];
  /** Called once a command's client has its exit code: time no client waits for. */
  afterCommand?(): void;
  /** Run first, before any client's command (what the server prepares from); its failure is nobody's. */
  prepare?(): Promise<void>;
  /**
   * Run once no command has come for `afterIdleMillis`: work that readies
   * the server for what no client asked yet, such as warming its code up. A
   * command that comes meanwhile aborts `cut` (and waits for `run` to stop).
   * `run` resolves when it ran to its end; it rejects when it failed (its
   * failure is nobody's, and it is not tried again) or was cut short, and
   * then runs again at the next quiet spell, until one ends uncut.
   */
  readonly warmUp?: { readonly afterIdleMillis: number; run(cut: AbortSignal): Promise<void> };
  /** False once the server's own code is gone (flotilla rebuilt or reinstalled): no client will find it, so it stops. */
  installed?(): boolean;
}

/** How often a listening server checks the socket's name is still its own. */
const OWNERSHIP_CHECK_MILLIS = 2000;

/** Serves until stopped; resolves when the server has closed. */
export async function serve(options: ServeOptions): Promise<void> {
  const { place } = options;
  const startedAt = new Date();
  let commandsRun = 0;
  let lastActive = Date.now();
  let queue: Promise<unknown> = Promise.resolve();
  let stopping = false;
  /** Commands queued or running. */
  let pending = 0;
  /** The warm-up: waiting for a quiet spell (again, when a command cut it short), started, or ended (done or failed: not tried again). */
  let warmUp: WarmUpState = 'waiting';
  let warmUpTimer: NodeJS.Timeout | undefined;
  /** The warm-up under way, to cut short when a command comes. */
  let warmingUp: AbortController | undefined;
  /** (Re)starts the wait for the warm-up, which runs after a quiet spell. */
  const awaitQuiet = (): void => {
    const hook = options.warmUp;
    if (warmUp !== 'waiting' || stopping || !hook) return;
    clearTimeout(warmUpTimer);
    warmUpTimer = setTimeout(() => {
      if (warmUp !== 'waiting' || stopping) return;
      // A command under way calls awaitQuiet again when it ends.
      if (pending > 0) return;
      warmUp = 'started';
      queue = queue.then(async () => {
        const cut = new AbortController();
        warmingUp = cut;
        // Ended by itself it counts, even when a command came just after; cut short, it waits for the next quiet spell.
        warmUp = await hook.run(cut.signal).then(
          () => 'done' as const,
          () => (cut.signal.aborted ? ('waiting' as const) : ('failed' as const)),
        );
        warmingUp = undefined;
      });
    }, hook.afterIdleMillis);
  };

  const server = createServer((socket) => handle(socket));
  // Bound under a name of its own, then renamed into place in one step: a
  // client never meets a half-made socket, and of two servers started at
  // once the last renamed wins; the other sees the name is no longer its
  // own and stops.
  const temporary = `${place.socket}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(temporary, () => done());
  });
  renameSync(temporary, place.socket);
  if (options.prepare) queue = options.prepare().catch(() => undefined);
  void queue.then(awaitQuiet);
  const own = lstatSync(place.socket).ino;
  const ownsName = (): boolean => {
    try {
      return lstatSync(place.socket).ino === own;
    } catch {
      return false;
    }
  };

  const closed = new Promise<void>((done) => server.on('close', done));
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    clearInterval(watchdog);
    clearTimeout(warmUpTimer);
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    // Commands already queued still run; the socket goes at once.
    if (ownsName()) rmSync(place.socket, { force: true });
    void queue.finally(() => server.close());
  };
  const watchdog = setInterval(
    () => {
      if (!ownsName() || Date.now() - lastActive >= options.idleMillis || options.installed?.() === false) stop();
    },
    Math.min(OWNERSHIP_CHECK_MILLIS, options.idleMillis),
  );
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  const status = (): ServerStatus => ({
    pid: process.pid,
    socket: place.socket,
    startedAt: startedAt.toISOString(),
    commandsRun,
    apps: options.apps(),
    preparedBuilds: options.preparedBuilds?.() ?? { made: 0, used: 0 },
    idleSeconds: Math.round((Date.now() - lastActive) / 1000),
    warmedUp: warmUp === 'done',
    warmUp,
    stopsAfterIdleSeconds: Math.round(options.idleMillis / 1000),
    peakMemoryMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  });

  function handle(socket: Socket): void {
    socket.on('error', () => {});
    const reply = (message: Reply) => {
      if (!socket.destroyed) send(socket, message);
    };
    let asked = false;
    receive<Request>(socket, (request) => {
      if (asked) return; // one request a connection
      asked = true;
      if (request.kind === 'status') {
        reply({ kind: 'status', status: status() });
        socket.end();
      } else if (request.kind === 'stop') {
        reply({ kind: 'stopping' });
        socket.end();
        stop();
      } else if (request.kind === 'run' && !stopping && request.key === place.key) {
        // A client gone before its command ran or ended (Ctrl-C) cancels it.
        const cancel = new AbortController();
        socket.on('close', () => cancel.abort());
        warmingUp?.abort();
        pending++;
        queue = queue
          .then(() => runOne(request, reply, cancel.signal))
          .finally(() => {
            pending--;
            socket.end();
            awaitQuiet();
          });
      } else socket.destroy(); // stopping, or of another environment: the client builds by itself
    });
  }

  async function runOne(request: RunRequest, reply: (message: Reply) => void, cancelled: AbortSignal): Promise<void> {
    if (cancelled.aborted) return; // never started: not a command run
    lastActive = Date.now();
    try {
      const code = await options.run(
        request,
        {
          out: (text) => reply({ kind: 'out', text }),
          err: (text) => reply({ kind: 'err', text }),
        },
        cancelled,
      );
      reply({ kind: 'exit', code });
    } catch (error) {
      reply({ kind: 'err', text: `flotilla: the build server failed: ${(error as Error).message}\n` });
      reply({ kind: 'exit', code: 1 });
    } finally {
      commandsRun++;
      lastActive = Date.now();
      setImmediate(() => options.afterCommand?.());
    }
  }

  await closed;
}
