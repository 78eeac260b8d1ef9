/**
 * Where a build server listens. One server serves one installation of
 * flotilla (its bundle's place and content), one user, one environment:
 * a client finds only a server that would build exactly as the client
 * itself would. So the socket's name digests the bundle, Node, the umask
 * and every environment variable but those a shell or npm sets per call;
 * another terminal with another environment gets a server of its own.
 *
 * The folder is the user's own (mode 0700, owned by them): a socket there
 * runs builds as that user, so a folder anyone else could write to is not
 * used, and no server is either.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Below the user's cache folder (src/files user-cache.ts). */
export const SERVERS_FOLDER = 'build-servers';

/** Set per invocation by shells, terminals and npm, or whether to use a server at all; none of them changes what a build does. */
const PER_CALL_VARIABLES = /^(PWD|OLDPWD|SHLVL|_|COLUMNS|LINES|TERM_SESSION_ID|WINDOWID|INIT_CWD|npm_.*|FLOTILLA_BUILD_SERVER)$/;

/** sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included. */
const MAX_SOCKET_PATH = 103;

export interface ServerPlace {
  readonly dir: string;
  readonly socket: string;
  /** The server's own output (its start-up failures), for `build-server status`. */
  readonly log: string;
}

/** The installation a server serves: the bundle's path and content. */
export interface Installation {
  readonly bundle: string;
  readonly contentHash: string;
}

/** The installation whose CLI bundle (or compiled module, when run unbundled) is at `moduleUrl`. */
export function installationOf(moduleUrl: string): Installation {
  const bundle = fileURLToPath(moduleUrl);
  return { bundle, contentHash: /^flotilla-([0-9a-f]+)\.cjs$/.exec(basename(bundle))?.[1] ?? '' };
}

const digest = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 24);

function environmentKey(env: NodeJS.ProcessEnv): string {
  const kept = Object.entries(env)
    .filter(([name, value]) => value !== undefined && !PER_CALL_VARIABLES.test(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(kept);
}

/** The folder of servers' sockets under `cacheDir`, made if missing; undefined when it is not the user's alone. */
export function serversFolder(cacheDir: string, create: boolean): string | undefined {
  const dir = join(cacheDir, SERVERS_FOLDER);
  try {
    if (create) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const info = lstatSync(dir);
    const ownUser = process.getuid === undefined || info.uid === process.getuid();
    return info.isDirectory() && ownUser && (info.mode & 0o077) === 0 ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The place of the server for this installation and environment, or
 * undefined when there can be none (the folder is not the user's alone, or
 * the path is too long for a socket).
 */
export function serverPlace(cacheDir: string, installation: Installation, options: { create: boolean; env?: NodeJS.ProcessEnv }): ServerPlace | undefined {
  const dir = serversFolder(cacheDir, options.create);
  if (dir === undefined) return undefined;
  const key = digest(
    JSON.stringify([installation.bundle, installation.contentHash, process.execPath, process.version, process.umask(), environmentKey(options.env ?? process.env)]),
  );
  const socket = join(dir, `${key}.sock`);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) return undefined;
  return { dir, socket, log: join(dir, `${key}.log`) };
}
