import { Option, type Command } from 'commander';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { KeptBuilds } from '../../build/index.js';
import { FlotillaError } from '../../diagnostics/index.js';
import { userCacheDir } from '../../files/index.js';
import {
  installationOf,
  listServers,
  serve,
  serverPlace,
  SERVERS_FOLDER,
  serversFolder,
  serverStatus,
  stopServers,
  type PrepareFrom,
  type ServerStatus,
} from '../../build-server/index.js';
import type { CommandContext, RegisterContext } from '../context.js';
import { formatTable, printData } from '../output.js';
import { integerAtLeast, outputOption, UsageError } from '../options.js';

/** How long `stop` waits for a server to exit. */
const STOP_WAIT_MILLIS = 30_000;

/** The quiet spell after which a server warms up (again after a command cut it short): longer than the pause between a build and the next one a script fires, shorter than an author's. */
const WARM_UP_AFTER_IDLE_MILLIS = 500;

/** The command a build server runs for its clients: nothing else (see docs/architecture.md, "Build server"). */
const SERVED_COMMAND = 'build';

export function register(program: Command, { io, runCommandLine }: RegisterContext): void {
  const command = program
    .command('build-server')
    .description('the background process that keeps one-shot `flotilla build` runs warm (started by `build` at a terminal, or FLOTILLA_BUILD_SERVER=1)');
  command
    .command('run')
    .description('serve builds for this installation and environment in the foreground, until idle or stopped')
    .option('--idle-timeout <SECONDS>', 'stop after this long without a build', integerAtLeast(1), 1800)
    .addOption(new Option('--prepare <COMMAND>', 'the build that started the server ({"argv","cwd"} as JSON): done in memory first').hideHelp())
    .action(async (opts: { idleTimeout: number; prepare?: string }) => {
      const prepareFrom = opts.prepare === undefined ? undefined : parsePrepareFrom(opts.prepare);
      const folder = join(userCacheDir(), SERVERS_FOLDER);
      if (!serversFolder(userCacheDir(), true))
        throw new FlotillaError(`no build server: ${folder} must be a folder of this user's alone (mode 0700), so nobody else can run builds as them`);
      const installation = installationOf(import.meta.url);
      const place = serverPlace(userCacheDir(), installation, { create: true });
      if (!place)
        throw new FlotillaError(
          `no build server: a socket in ${folder} would have a path longer than a socket's path may be; set FLOTILLA_CACHE_DIR to a shorter folder`,
        );
      const other = await serverStatus(place.socket);
      if (other) throw new FlotillaError(`a build server already runs for this installation and environment (pid ${other.pid})`);
      const kept = new KeptBuilds();
      /** The build `from` started the server with (and `extra` arguments), made in memory only, its output unheard; rejects unless it succeeds. */
      const inMemory = async (from: PrepareFrom, extra: readonly string[], cancelled?: AbortSignal): Promise<void> => {
        const code = await runAsClient(
          { argv: [...from.argv, ...extra], cwd: from.cwd },
          { io: { out: () => {}, err: () => {} }, kept, prepareOnly: true, cancelled },
        );
        if (code !== 0) throw new Error(`the build in memory exited ${code}`);
      };
      io.err(`build server ${process.pid} listening on ${place.socket}`);
      await serve({
        place,
        idleMillis: opts.idleTimeout * 1000,
        apps: () => kept.apps(),
        preparedBuilds: () => kept.preparations,
        installed: () => existsSync(installation.bundle),
        // The build that started the server, again in memory only: the next one starts from what it learnt.
        prepare: prepareFrom && (() => inMemory(prepareFrom, [])),
        // Once quiet, that build again from nothing (no cache, in memory, nothing written): what only a build from
        // nothing runs is then warm too, for the first build of an app the server has never seen. A client's command
        // cuts it short (the build stops at its next chart).
        warmUp: prepareFrom && { afterIdleMillis: WARM_UP_AFTER_IDLE_MILLIS, run: (cut) => inMemory(prepareFrom, ['--no-cache', '--no-typecheck'], cut) },
        // With --expose-gc (as a started server has): the young generation emptied between builds, not during one.
        afterCommand: () => (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc?.({ type: 'minor' }),
        run: async (request, output, cancelled) =>
          runAsClient(request, { io: { out: (line) => output.out(`${line}\n`), err: (line) => output.err(`${line}\n`) }, kept, cancelled }),
      });
      await kept.close();
      io.err(`build server ${process.pid} stopped`);
    });

  /** A client's command, as the client would run it: its folder, its arguments; `build` only, never --watch. */
  async function runAsClient(request: PrepareFrom, context: CommandContext): Promise<number> {
    if (request.argv[0] !== SERVED_COMMAND || request.argv.includes('--watch')) {
      context.io.err(`flotilla: a build server runs \`flotilla build\` only, without --watch`);
      return 2;
    }
    process.chdir(request.cwd);
    return runCommandLine([process.argv[0] ?? 'node', process.argv[1] ?? 'flotilla', ...request.argv], context);
  }
  command
    .command('status')
    .description("this user's build servers: what each keeps, how long it has been idle")
    .addOption(outputOption())
    .action(async (opts: { output: string }) => {
      const servers = await everyServer();
      printData(io, opts.output, 'BuildServerList', { items: servers }, () =>
        servers.length === 0
          ? 'no build server runs'
          : formatTable(
              ['PID', 'STARTED', 'BUILDS', 'PREPARED', 'IDLE', 'STOPS AFTER IDLE', 'PEAK MEMORY', 'APPS'],
              servers.map((s) => [
                String(s.pid),
                s.startedAt,
                String(s.commandsRun),
                `${s.preparedBuilds.made} (${s.preparedBuilds.used} used)`,
                `${s.idleSeconds}s`,
                `${s.stopsAfterIdleSeconds}s`,
                `${s.peakMemoryMiB} MiB`,
                s.apps.join(',') || '-',
              ]),
            ),
      );
    });
  command
    .command('stop')
    .description("stop this user's build servers (the builds they are running finish first); returns once they have exited")
    .addOption(outputOption())
    .action(async (opts: { output: string }) => {
      const servers = await everyServer();
      await stopServers(servers, STOP_WAIT_MILLIS);
      printData(io, opts.output, 'BuildServersStopped', { stopped: servers.map((s) => s.pid) }, () =>
        servers.length === 0 ? 'no build server runs' : `stopped ${servers.length} build server${servers.length === 1 ? '' : 's'}`,
      );
    });
}

function parsePrepareFrom(json: string): PrepareFrom {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    value = undefined;
  }
  const { argv, cwd } = (value ?? {}) as Partial<PrepareFrom>;
  if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string') || typeof cwd !== 'string')
    throw new UsageError('--prepare takes {"argv": [strings], "cwd": "folder"} as JSON');
  return { argv, cwd };
}

/** Every listening server of this user. */
async function everyServer(): Promise<ServerStatus[]> {
  const dir = serversFolder(userCacheDir(), false);
  return dir ? listServers(dir) : [];
}
