/**
 * How the `flotilla` command starts Node (docs/architecture.md, "How the
 * shipped CLI starts"). The entry, dist/cli/flotilla.cjs, is at once a POSIX
 * shell script and a CommonJS module: run as a program (npm links the
 * `flotilla` command to it), /bin/sh reads its first lines and starts Node on
 * the same file; Node reads each of those lines as a string expression and a
 * comment. `node dist/cli/flotilla.cjs` skips the shell: the same CLI,
 * without the two choices below, both made before Node starts because no
 * code of flotilla's runs soon enough to make them later.
 *
 * - `--v8-pool-size=1`: one V8 helper thread, not Node's four. A one-shot
 *   command needs a core for its main thread more than V8 needs several for
 *   its background work (compiling hot functions, marking the heap): on two
 *   cores the four took the main thread's core often enough to make a cold
 *   build of the bench's library app ~10% slower. A fixed number, because
 *   Node's own choice by core count (0) counts a container's host cores, not
 *   its CPU quota. Left out when NODE_OPTIONS names a pool size.
 * - For a command that opens no TLS connection of its own
 *   (COMMANDS_WITHOUT_TLS), NODE_EXTRA_CA_CERTS is moved aside: Node 20 reads
 *   the certificates it names at every start, needed or not (~40 ms for a
 *   system bundle of 144). The launcher puts it back first thing
 *   (restoreDeferredVariables), so child processes, a build server and
 *   anything the command reports see the environment the user set. Plugin
 *   code, run offline by some of these commands, could still open one and
 *   would then trust Node's own CAs only: a failure a certificate check
 *   caused says so, and how to run the command with them
 *   (src/cli/output.ts).
 *
 * Node's built-ins only (the launcher imports this module).
 */

/** Where the entry's shell keeps NODE_EXTRA_CA_CERTS while Node starts. */
export const DEFERRED_CA_VARIABLE = 'FLOTILLA_DEFERRED_NODE_EXTRA_CA_CERTS';

/**
 * Set on the global object by the launcher when Node started without the
 * certificates: the CLI bundle, run apart from the launcher's own modules
 * (src/cli/code-cache.ts), reads it there.
 */
const STARTED_WITHOUT_EXTRA_CA_CERTS = Symbol.for('flotilla.startedWithoutExtraCaCerts');

/** What sh runs, written as lines Node reads as `":"` and a comment. */
const shellLine = (command: string) => `":" //; ${command}`;

/**
 * The entry's first lines (the `#!` line included), for the commands that
 * open no TLS connection; scripts/bundle-cli.mjs writes them above the launcher.
 */
export function entryShellLines(commandsWithoutTls: readonly string[]): string[] {
  const odd = commandsWithoutTls.find((command) => !/^[a-z][a-z-]*$/.test(command));
  if (odd !== undefined) throw new Error(`"${odd}" is not a command word the entry's shell can match`);
  return [
    '#!/bin/sh',
    // (A value left in the environment by someone else is no certificate file of the user's.)
    shellLine(
      `unset ${DEFERRED_CA_VARIABLE}; case "$1" in ${commandsWithoutTls.join('|')}) if [ -n "\${NODE_EXTRA_CA_CERTS+set}" ]; then ${DEFERRED_CA_VARIABLE}=$NODE_EXTRA_CA_CERTS; export ${DEFERRED_CA_VARIABLE}; unset NODE_EXTRA_CA_CERTS; fi;; esac`,
    ),
    // Node reads `--v8_pool_size` as well.
    shellLine('case "$NODE_OPTIONS" in *--v8[-_]pool[-_]size*) exec node "$0" "$@";; esac'),
    shellLine('exec node --v8-pool-size=1 "$0" "$@"'),
  ];
}

/**
 * Gives back NODE_EXTRA_CA_CERTS as the user set it, once Node has started
 * without it (see above); whether Node started without certificates it
 * names (an empty value names none). Should both be set (the entry never
 * does that), NODE_EXTRA_CA_CERTS is kept.
 */
export function restoreDeferredVariables(env: NodeJS.ProcessEnv): boolean {
  const deferred = env[DEFERRED_CA_VARIABLE];
  if (deferred === undefined) return false;
  delete env[DEFERRED_CA_VARIABLE];
  if (env.NODE_EXTRA_CA_CERTS !== undefined) return false;
  env.NODE_EXTRA_CA_CERTS = deferred;
  return deferred !== '';
}

/** Records, for the CLI bundle, that this process started without the certificates NODE_EXTRA_CA_CERTS names. */
export function markStartedWithoutExtraCaCerts(): void {
  (globalThis as Record<symbol, unknown>)[STARTED_WITHOUT_EXTRA_CA_CERTS] = true;
}

/** Whether this process started without the certificates NODE_EXTRA_CA_CERTS names (see above). */
export function startedWithoutExtraCaCerts(): boolean {
  return (globalThis as Record<symbol, unknown>)[STARTED_WITHOUT_EXTRA_CA_CERTS] === true;
}
