/**
 * Runs the CLI bundle from a V8 code cache (see launch.ts, which loads this
 * module only when a command runs in this process): the bundle
 * (dist/cli/flotilla-<content hash>.cjs, CommonJS-shaped) runs as a
 * `vm.Script` with the bytecode a previous run of the same command left, so
 * Node neither parses the bundle nor compiles the functions that run again
 * (Node 20 has no compile cache for ES modules; `module.enableCompileCache`
 * came in 22.1).
 *
 * One cache file per bundle, Node version and command (the first successful
 * run of a command writes it, so each holds what that command runs), in
 * $FLOTILLA_CACHE_DIR, else $XDG_CACHE_HOME/flotilla, else ~/.cache/flotilla,
 * under code-cache/. V8 checks only that a file was made by the same V8,
 * under the same flags, for source of the same length: bytecode planted
 * there would run. So the folder is held to the private folder rule
 * (src/cache folder.ts: this user's, mode 0700) and each file is a cache
 * entry (src/cache seal.ts) whose content digest is checked under this
 * user's cache key before V8 sees it; anything else is ignored (a note
 * under --debug) and written again. Files are written whole (temp file,
 * then rename); a cache that cannot be read or written only costs the time
 * it would have saved. FLOTILLA_NO_CODE_CACHE=1 turns it off.
 *
 * Node's built-ins only, and flotilla's modules that import only them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
// The files, not the modules' index: this runs before flotilla loads, on Node's built-ins only.
import { cacheKey, folderProblem, openEntry, sealEntry } from '../cache/index.js';
import { userCacheDir } from '../files/index.js';

/**
 * The parameters of the function the bundle is (scripts/bundle-cli.mjs
 * writes it wrapped, so the launcher need not copy 3 MB of source to wrap
 * it). `import.meta.url` and `import()` are not available to a script: the
 * bundle reads them from here (the bundle script rewrites them). V8 cannot
 * run an `import()` from cached bytecode on Node 20, hence the function.
 */
export const BUNDLE_PARAMETERS = ['exports', 'require', 'module', '__filename', '__dirname', 'flotillaModuleUrl', 'flotillaImport'] as const;

type BundleFunction = (...args: unknown[]) => void;

const digest = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 16);

/**
 * `<bundle place>-<bundle content>-<Node, command>.bin`: a new build of
 * the same installation replaces its files; other installations keep theirs.
 */
function cacheFile(bundlePath: string, contentHash: string): { dir: string; place: string; file: string; inputs: string } {
  const dir = join(userCacheDir(), 'code-cache');
  const place = digest(bundlePath);
  // The command word, or help: a run of `build --help` runs little of what a build does.
  const args = process.argv.slice(2);
  const command = /^[a-z][a-z-]{0,30}$/.test(args[0] ?? '') ? args[0] : '';
  // V8 rejects a cache made under other flags by itself: a build server's (src/build-server start.ts) keeps its own.
  // (Flags only: not what `-e` evaluates nor what is loaded before the CLI.)
  const flags = process.execArgv.filter((arg) => /^--(?!input-type|eval|print|require|import|loader|experimental-loader)/.test(arg));
  const variant = digest(JSON.stringify([process.version, process.arch, command, args.includes('--help') || args.includes('-h'), flags]));
  return { dir, place, file: join(dir, `${place}-${contentHash}-${variant}.bin`), inputs: `${contentHash}-${variant}` };
}

const KIND = 'code-cache';

/** Says why a cache was not used, under --debug. */
function note(message: string): void {
  if (process.argv.includes('--debug')) process.stderr.write(`flotilla: debug: ${message}\n`);
}

/** The bytecode kept for this bundle and command, once its folder and digest check out. */
function readCache({ dir, file, inputs }: ReturnType<typeof cacheFile>): Buffer | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  const problem = folderProblem(dir, { private: true });
  const key = problem ?? cacheKey({ create: false });
  if (typeof key === 'string') {
    note(`code cache not used: ${key}`);
    return undefined;
  }
  const opened = openEntry(bytes, KIND, inputs, key);
  if ('content' in opened) return opened.content;
  note(`code cache ${file} ignored: ${opened.problem}; rebuilt`);
  return undefined;
}

/** Writes the bytecode this run compiled, and drops the files of this installation's earlier bundles. */
function writeCache(script: Script, { dir, place, file, inputs }: ReturnType<typeof cacheFile>, contentHash: string): void {
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  let tempExists = false;
  try {
    // Only this user may write what later runs as code.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const key = cacheKey();
    if (typeof key === 'string' || folderProblem(dir, { private: true })) return;
    // A new file of our own (no link followed), as every write of flotilla's (docs/security.md).
    const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    tempExists = true;
    try {
      writeFileSync(fd, sealEntry(KIND, inputs, script.createCachedData(), key));
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
    tempExists = false;
    for (const name of readdirSync(dir)) {
      if (name.startsWith(`${place}-`) && !name.startsWith(`${place}-${contentHash}-`)) rmSync(join(dir, name), { force: true });
    }
  } catch {
    // A cache folder that cannot be written: the next run compiles again.
    if (tempExists) rmSync(temp, { force: true });
  }
}

/** Runs the CLI bundle at `bundle`, whose content hashes to `contentHash`. */
export function runBundle(bundle: URL, contentHash: string): void {
  const path = fileURLToPath(bundle);
  // ASCII (scripts/bundle-cli.mjs makes it so): read as Latin-1, a third of the time UTF-8 takes.
  const source = readFileSync(path, 'latin1');
  const useCache = process.env.FLOTILLA_NO_CODE_CACHE !== '1';
  const cache = useCache ? cacheFile(path, contentHash) : undefined;
  const cachedData = cache ? readCache(cache) : undefined;
  const script = new Script(source, { filename: path, ...(cachedData ? { cachedData } : {}) });
  if (cache && (!cachedData || script.cachedDataRejected)) {
    // At exit, so the cache holds every function the command ran; only after a success, so a typo makes no file.
    process.once('exit', (code) => {
      if (code === 0) writeCache(script, cache, contentHash);
    });
  }
  const module = { exports: {} };
  // In the order of BUNDLE_PARAMETERS.
  const run = script.runInThisContext() as BundleFunction;
  run(module.exports, createRequire(bundle), module, path, dirname(path), bundle.href, (specifier: string) => import(specifier));
}
