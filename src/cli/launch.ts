/**
 * The shipped CLI's entry: scripts/bundle-cli.mjs makes dist/cli/flotilla.cjs
 * of this file. A one-shot `flotilla build` is sent to a build server when
 * one serves it (src/build-server); any other command, or a build no server takes,
 * runs here from the CLI bundle and V8's code cache (code-cache.ts, loaded
 * only then).
 *
 * This module imports only Node's built-ins, and flotilla's modules that
 * import only them, few and cheap to load: a served build pays for nothing
 * else (no crypto, no vm, no child_process).
 */
import { pathToFileURL } from 'node:url';
import { userCacheDir } from '../files/index.js';
import { installationOf, runOnServer, serverPlace } from '../build-server/index.js';
import { markStartedWithoutExtraCaCerts, restoreDeferredVariables } from './entry-shell.js';

/** The folder this process runs in; undefined when it was removed since (Node cannot tell where it is then). */
function currentFolder(): string | undefined {
  try {
    return process.cwd();
  } catch {
    return undefined;
  }
}

/**
 * How this command may use a build server (docs/architecture.md, "Build
 * server"): a one-shot `flotilla build` is run by one if one listens for
 * this installation and environment (FLOTILLA_BUILD_SERVER=0 or --no-server:
 * never). After a build that ran here and succeeded, one is started when
 * FLOTILLA_BUILD_SERVER=1, or by default when the build ran at a terminal
 * outside CI: an author's inner loop, not a pipeline's one build.
 */
function buildServerUse(args: readonly string[]): { readonly use: boolean; readonly start: boolean } {
  const setting = process.env.FLOTILLA_BUILD_SERVER;
  const served = args[0] === 'build' && !args.some((a) => a === '--watch' || a === '--no-server' || a === '--help' || a === '-h');
  if (!served) return { use: false, start: false };
  if (setting !== undefined && setting !== '0' && setting !== '1') {
    process.stderr.write(`flotilla: FLOTILLA_BUILD_SERVER must be 0 (no build server) or 1 (start one), not "${setting}"\n`);
    process.exit(2);
  }
  if (setting === '0') return { use: false, start: false };
  return { use: true, start: setting === '1' || (setting === undefined && process.stdout.isTTY === true && !process.env.CI) };
}

/**
 * Runs the command: on a build server when one serves it (the client's
 * output and exit code are the server's), else here; see buildServerUse.
 */
export function launch(bundlePath: string, contentHash: string, launcher: string): void {
  // Before anything reads the environment: a build server's place is keyed by it, and children inherit it.
  if (restoreDeferredVariables(process.env)) markStartedWithoutExtraCaCerts();
  const bundle = pathToFileURL(bundlePath);
  const cwd = currentFolder();
  if (cwd === undefined) {
    process.stderr.write('flotilla: the current folder no longer exists (it was removed after this shell entered it); change to another folder\n');
    process.exit(1);
  }
  const command = { argv: process.argv.slice(2), cwd };
  const { use, start } = buildServerUse(command.argv);
  const place = use ? serverPlace(userCacheDir(), installationOf(bundle.href), { create: start }) : undefined;
  const runHere = () => {
    if (place && start) {
      // Once the command has ended well (a failed one exits at once): started in the background.
      process.once('beforeExit', (code) => {
        if (code !== 0) return;
        void import('../build-server/start.js').then(({ startServer }) => {
          const pid = startServer(place, launcher, command);
          // Said, as a background process should be, with how to do without it.
          if (pid !== undefined)
            process.stderr.write(
              `flotilla: started a build server (pid ${pid}) to make the next builds faster; \`flotilla build-server stop\` stops it, FLOTILLA_BUILD_SERVER=0 does without\n`,
            );
        });
      });
    } else {
      // Once nothing is left to do (no write, timer or child pending: Node emits 'beforeExit' only then),
      // exit without Node's teardown of the environment and the heap, which a one-shot command does not
      // need (~6 ms after a cold build). 'exit' listeners (the code cache) still run.
      process.once('beforeExit', (code) => process.exit(code));
    }
    void import('./code-cache.js').then(({ runBundle }) => runBundle(bundle, contentHash));
  };
  if (!place) return runHere();
  // `flotilla build | head`: what the reader no longer wants goes nowhere.
  process.stdout.on('error', () => {});
  void runOnServer(
    place.socket,
    { kind: 'run', key: place.key, ...command },
    { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) },
  ).then((code) => {
    if (code === undefined) runHere();
    else process.exitCode = code;
  });
}
