/**
 * The server side: listen on the place's socket, run one command at a time
 * (a command may change the process's folder; builds of one app must not
 * interleave), stop when idle, when asked, when another server has taken
 * the socket's name, or when its own code is gone. Node's built-ins only; what a command does is the
 * caller's `run` (src/cli wires it to the CLI's own program).
 */
import { lstatSync, renameSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
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
  const server = new RunningServer(options);
  await server.listenInPlace();
  server.prepareThenAwaitQuiet();
  server.stopWhenIdleDisownedOrSignalled();
  await server.closed;
}

/** A listening server: the queue its commands run in one at a time, its warm-up, and what its status reports. */
class RunningServer {
  private readonly server: Server = createServer((socket) => this.handle(socket));
  readonly closed = new Promise<void>((done) => this.server.on('close', done));
  private readonly startedAt = new Date();
  private commandsRun = 0;
  private lastActive = Date.now();
  /** The preparation, the commands and the warm-up, run one at a time in this order. */
  private queue: Promise<unknown> = Promise.resolve();
  private stopping = false;
  /** Commands queued or running. */
  private pending = 0;
  /** The warm-up: waiting for a quiet spell (again, when a command cut it short), started, or ended (done or failed: not tried again). */
  private warmUp: WarmUpState = 'waiting';
  private warmUpTimer: NodeJS.Timeout | undefined;
  /** The warm-up under way, to cut short when a command comes. */
  private warmingUp: AbortController | undefined;
  /** The inode of the socket this server renamed into place: while the name has it, the name is this server's. */
  private ownSocket: number | undefined;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(private readonly options: ServeOptions) {}

  /**
   * Bound under a name of its own, then renamed into place in one step: a
   * client never meets a half-made socket, and of two servers started at
   * once the last renamed wins; the other sees the name is no longer its
   * own and stops.
   */
  async listenInPlace(): Promise<void> {
    const { socket } = this.options.place;
    const temporary = `${socket}.${process.pid}.tmp`;
    rmSync(temporary, { force: true });
    await new Promise<void>((done, fail) => {
      this.server.once('error', fail);
      this.server.listen(temporary, () => done());
    });
    renameSync(temporary, socket);
    this.ownSocket = lstatSync(socket).ino;
  }

  /** The preparation runs first (its failure is nobody's); then the wait for a quiet spell to warm up in begins. */
  prepareThenAwaitQuiet(): void {
    if (this.options.prepare) this.queue = this.options.prepare().catch(() => undefined);
    void this.queue.then(() => this.awaitQuiet());
  }

  /** Stops when idle, when another server took the socket's name, when its own code is gone, or on SIGTERM and SIGINT. */
  stopWhenIdleDisownedOrSignalled(): void {
    const { idleMillis } = this.options;
    this.watchdog = setInterval(
      () => {
        if (!this.ownsName() || Date.now() - this.lastActive >= idleMillis || this.options.installed?.() === false) this.stop();
      },
      Math.min(OWNERSHIP_CHECK_MILLIS, idleMillis),
    );
    process.on('SIGTERM', this.stop);
    process.on('SIGINT', this.stop);
  }

  private ownsName(): boolean {
    try {
      return lstatSync(this.options.place.socket).ino === this.ownSocket;
    } catch {
      return false;
    }
  }

  private readonly stop = (): void => {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.watchdog);
    clearTimeout(this.warmUpTimer);
    process.off('SIGTERM', this.stop);
    process.off('SIGINT', this.stop);
    // Commands already queued still run; the socket goes at once.
    if (this.ownsName()) rmSync(this.options.place.socket, { force: true });
    void this.queue.finally(() => this.server.close());
  };

  /** (Re)starts the wait for the warm-up, which runs after a quiet spell. */
  private awaitQuiet(): void {
    const hook = this.options.warmUp;
    if (this.warmUp !== 'waiting' || this.stopping || !hook) return;
    clearTimeout(this.warmUpTimer);
    this.warmUpTimer = setTimeout(() => {
      if (this.warmUp !== 'waiting' || this.stopping) return;
      // A command under way calls awaitQuiet again when it ends.
      if (this.pending > 0) return;
      this.warmUp = 'started';
      this.queue = this.queue.then(() => this.runWarmUp(hook));
    }, hook.afterIdleMillis);
  }

  /** Ended by itself the warm-up counts, even when a command came just after; cut short, it waits for the next quiet spell. */
  private async runWarmUp(hook: NonNullable<ServeOptions['warmUp']>): Promise<void> {
    const cut = new AbortController();
    this.warmingUp = cut;
    this.warmUp = await hook.run(cut.signal).then(
      () => 'done' as const,
      () => (cut.signal.aborted ? ('waiting' as const) : ('failed' as const)),
    );
    this.warmingUp = undefined;
  }

  private status(): ServerStatus {
    return {
      pid: process.pid,
      socket: this.options.place.socket,
      startedAt: this.startedAt.toISOString(),
      commandsRun: this.commandsRun,
      apps: this.options.apps(),
      preparedBuilds: this.options.preparedBuilds?.() ?? { made: 0, used: 0 },
      idleSeconds: Math.round((Date.now() - this.lastActive) / 1000),
      warmedUp: this.warmUp === 'done',
      warmUp: this.warmUp,
      stopsAfterIdleSeconds: Math.round(this.options.idleMillis / 1000),
      peakMemoryMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    };
  }

  /** One request a connection: the status, stop, or a command to run. */
  private handle(socket: Socket): void {
    socket.on('error', () => {});
    const reply = (message: Reply) => {
      if (!socket.destroyed) send(socket, message);
    };
    let asked = false;
    receive<Request>(socket, (request) => {
      if (asked) return;
      asked = true;
      if (request.kind === 'status') {
        reply({ kind: 'status', status: this.status() });
        socket.end();
      } else if (request.kind === 'stop') {
        reply({ kind: 'stopping' });
        socket.end();
        this.stop();
      } else if (request.kind === 'run' && !this.stopping && request.key === this.options.place.key) this.enqueue(request, socket, reply);
      else socket.destroy(); // stopping, or of another environment: the client builds by itself
    });
  }

  /** A command runs after those before it and cuts a warm-up short; its client gone before it ran or ended (Ctrl-C) cancels it. */
  private enqueue(request: RunRequest, socket: Socket, reply: (message: Reply) => void): void {
    const cancel = new AbortController();
    socket.on('close', () => cancel.abort());
    this.warmingUp?.abort();
    this.pending++;
    this.queue = this.queue
      .then(() => this.runOne(request, reply, cancel.signal))
      .finally(() => {
        this.pending--;
        socket.end();
        this.awaitQuiet();
      });
  }

  private async runOne(request: RunRequest, reply: (message: Reply) => void, cancelled: AbortSignal): Promise<void> {
    if (cancelled.aborted) return; // never started: not a command run
    this.lastActive = Date.now();
    try {
      const code = await this.options.run(
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
      this.commandsRun++;
      this.lastActive = Date.now();
      setImmediate(() => this.options.afterCommand?.());
    }
  }
}
