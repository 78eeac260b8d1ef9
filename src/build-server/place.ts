/**
 * Where a build server listens. One server serves one installation of
 * flotilla (its bundle's place and content), one user, one environment:
 * a client is served only by a server that would build exactly as the
 * client itself would. The server's key says so: the bundle, Node, the
 * umask and every environment variable but those a shell or npm sets per
 * call. The socket is named by a short hash of the key, and the server
 * compares the key a client sends with its own, so a hash collision costs
 * a build in the client's own process, never a build in another's
 * environment; another terminal with another environment gets a server of
 * its own. (No node:crypto here: the CLI's launcher loads this module on
 * every build, and crypto alone takes milliseconds to load.)
 *
 * The folder is the user's own (mode 0700, owned by them): a socket there
 * runs builds as that user, so a folder anyone else could write to is not
 * used, and no server is either.
 */
import { basename, join } from 'node:path';
// The file, not the module's index: the launcher loads this before flotilla, and the rule needs only node:fs.
import { folderProblem } from '../cache/index.js';
import { fileURLToPath } from 'node:url';

/** Below the user's cache folder (src/files user-cache.ts). */
export const SERVERS_FOLDER = 'build-servers';

/** Set per invocation by shells, terminals and npm, or whether to use a server at all; none of them changes what a build does. */
const PER_CALL_VARIABLES = /^(PWD|OLDPWD|SHLVL|_|COLUMNS|LINES|TERM_SESSION_ID|WINDOWID|INIT_CWD|npm_.*|FLOTILLA_BUILD_SERVER)$/;

/** sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included. */
const MAX_SOCKET_PATH = 103;

export interface ServerPlace {
  /** Everything a served build depends on besides its arguments (see the module comment). */
  readonly key: string;
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

/** 64 bits of FNV-1a (two 32-bit lanes): a name for the key, not a proof of it. */
function shortHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (const byte of Buffer.from(text, 'utf8')) {
    a = Math.imul(a ^ byte, 0x01000193) >>> 0;
    b = Math.imul(b ^ byte, 0x01000193) >>> 0;
  }
  return `${a.toString(16).padStart(8, '0')}${b.toString(16).padStart(8, '0')}`;
}

function environmentKey(env: NodeJS.ProcessEnv): string {
  const kept = Object.entries(env)
    .filter(([name, value]) => value !== undefined && !PER_CALL_VARIABLES.test(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(kept);
}

/** The folder of servers' sockets under `cacheDir`, made if missing; undefined when it is not the user's alone (the cache folder rule, src/cache). */
export function serversFolder(cacheDir: string, create: boolean): string | undefined {
  const dir = join(cacheDir, SERVERS_FOLDER);
  return folderProblem(dir, { create, private: true }) === undefined ? dir : undefined;
}

/**
 * The place of the server for this installation and environment, or
 * undefined when there can be none (the folder is not the user's alone, or
 * the path is too long for a socket).
 */
export function serverPlace(cacheDir: string, installation: Installation, options: { create: boolean; env?: NodeJS.ProcessEnv }): ServerPlace | undefined {
  const dir = serversFolder(cacheDir, options.create);
  if (dir === undefined) return undefined;
  const key = JSON.stringify([
    installation.bundle,
    installation.contentHash,
    process.execPath,
    process.version,
    process.umask(),
    environmentKey(options.env ?? process.env),
  ]);
  const name = shortHash(key);
  const socket = join(dir, `${name}.sock`);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) return undefined;
  return { key, dir, socket, log: join(dir, `${name}.log`) };
}
