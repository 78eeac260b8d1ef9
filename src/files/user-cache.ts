/**
 * flotilla's folder of per-user caches (the CLI's code cache, the build
 * servers' sockets): $FLOTILLA_CACHE_DIR, else $XDG_CACHE_HOME/flotilla,
 * else ~/.cache/flotilla. Node's built-ins only: the CLI's launcher reads it
 * before flotilla itself is loaded.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.FLOTILLA_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'flotilla');
}
