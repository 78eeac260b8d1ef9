/**
 * What a long-lived process knows of an app's folders between builds (chart
 * fingerprints, symbolic-link checks: see WatchMemory), kept true by
 * watching them: a change below a folder drops what was known of it. Used
 * by `build --watch` and by the build server (src/build-server), which also needs
 * to know that every change made before a build began has been seen: see
 * `caughtUp`.
 */
import { existsSync, lstatSync, readdirSync, rmSync, watch, writeFileSync, type Dirent, type FSWatcher } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { emptyReadMemory, removeLeftBehind } from '../files/index.js';
import { cacheFolderGone, memoryKey, type BuildOptions, type BuildResult, type WatchMemory } from './build.js';

/** Folders never worth a rebuild: the build's own output, version control, dependencies. */
const IGNORED_TOP = new Set(['.git', 'node_modules', '.flotilla-cache', '.cache']);

/** The marker `caughtUp` writes in the app's folder; never part of a build (it is gone before one starts). */
const MARKER_PREFIX = '.flotilla-watch-marker-';
/** A marker's name: its process's id, then a count. */
const STALE_MARKER = new RegExp(`^${MARKER_PREFIX.replace('.', '\\.')}(\\d+)-\\d+$`);

/** How long `caughtUp` waits for its marker to be seen before it drops everything known instead. */
const MARKER_WAIT_MILLIS = 2000;

let markers = 0;

/** How often the app's folder is looked for once it is gone (moved away, or removed and made again). */
const ROOT_POLL_MILLIS = 250;

/** How long without a build before a memory's cache files are written (WatchMemory.unsavedCaches). */
const SAVE_WHEN_IDLE_MILLIS = 300;

/** Ways of building one app (output folders) whose memory is kept: a build into yet another folder starts afresh. */
const MEMORIES_KEPT = 4;

export class AppWatcher {
  readonly root: string;
  /** Each watched folder's watcher and the inode it watches (a folder replaced under the same name is another). */
  private readonly watchers = new Map<string, { readonly watcher: FSWatcher; readonly ino: number }>();
  /** One memory per way of building (cache folder, link option): each holds what that build kept. */
  private readonly memories = new Map<string, WatchMemory>();
  private readonly outputs = new Set<string>();
  private readonly markersAwaited = new Map<string, () => void>();
  private readonly saveTimers = new Map<WatchMemory, NodeJS.Timeout>();
  /** Cache writes started and not yet settled: `close` waits for them. */
  private readonly saving = new Set<Promise<unknown>>();
  private closed = false;
  /** A watcher failed: changes may go unseen, so nothing known is trusted any more. */
  private broken = false;
  /** A symbolic link was seen in the app: a file's bytes may change under another name, so none are kept. */
  private linked = false;
  private changes = 0;
  /** Set while the app's folder is gone: looks for it until it is back (see rootGone). */
  private rootPoll?: NodeJS.Timeout;

  /** `onChange` hears every change that may change the build, by path relative to the app. */
  constructor(
    appDir: string,
    private readonly onChange: (changed: string) => void = () => {},
  ) {
    this.root = resolve(appDir);
    this.watchTree(this.root);
    // Markers left in the app's folder by a process killed while it waited for one (see caughtUp).
    removeLeftBehind(this.root, STALE_MARKER, 'file');
  }

  /**
   * The memory of builds made with `options` (their output and cache
   * folder): empty at first, before every build once a watcher has failed,
   * and when the cache folder was removed since (`fresh`: nothing kept of it
   * is used, so the next build writes every cache file again).
   */
  memoryFor(options: BuildOptions): { readonly memory: WatchMemory; readonly fresh: boolean } {
    if (this.broken) this.forgetAll();
    const key = memoryKey(options);
    let memory = this.memories.get(key);
    this.memories.delete(key);
    const fresh = cacheFolderGone(options);
    if (memory && fresh) {
      clearTimeout(this.saveTimers.get(memory));
      this.saveTimers.delete(memory);
      memory = undefined;
    }
    // The most recently used last; each holds its last tarball, so only a few are kept.
    this.memories.set(key, (memory ??= { folderFingerprints: new Map(), linkChecks: new Map(), changesHeard: () => this.generation }));
    for (const old of this.memories.keys()) if (this.memories.size > MEMORIES_KEPT) this.memories.delete(old);
    memory.files = this.linked ? undefined : (memory.files ?? emptyReadMemory());
    return { memory, fresh };
  }

  /**
   * Counts the changes heard (and anything that makes what is known
   * untrustworthy): equal before and after a build (once caught up), the
   * app was as the build read it.
   */
  get generation(): number {
    return this.broken ? -1 : this.changes;
  }

  /** Folders the builds write (their output, their cache): changes there are the builds' own. */
  ignoreOutputs(dirs: readonly string[]): void {
    for (const dir of dirs) this.outputs.add(resolve(dir));
  }

  /** Charts kept outside the app (a release's `path`) are watched too. */
  watchChartsOf(result: BuildResult): void {
    for (const release of result.app.releases) {
      const dir = result.app.path(release.chartPath);
      if (!dir.startsWith(`${this.root}${sep}`)) this.watchTree(dir);
    }
  }

  /**
   * Resolves once every change made before the call has been heard. File
   * events come late and in order, so a marker file written in the app's
   * folder and then heard means all earlier events were heard too (the way
   * watchman's cookies work). When no marker can be written or heard,
   * everything known is dropped instead: the next build reads all again.
   */
  async caughtUp(): Promise<void> {
    this.rootBack();
    const name = `${MARKER_PREFIX}${process.pid}-${++markers}`;
    const marker = join(this.root, name);
    const heard = new Promise<boolean>((done) => {
      const timer = setTimeout(() => done(false), MARKER_WAIT_MILLIS);
      this.markersAwaited.set(name, () => {
        clearTimeout(timer);
        done(true);
      });
    });
    try {
      writeFileSync(marker, '', { flag: 'wx', mode: 0o600 });
    } catch {
      this.markersAwaited.delete(name);
      this.forgetAll();
      return;
    }
    const ok = await heard;
    this.markersAwaited.delete(name);
    rmSync(marker, { force: true });
    if (!ok) this.forgetAll();
  }

  /** Writes `memory`'s cache files once no build has used it for a moment (at once when the watcher is closed). */
  saveWhenIdle(memory: WatchMemory): void {
    clearTimeout(this.saveTimers.get(memory));
    if (this.closed) return this.save(memory);
    this.saveTimers.set(
      memory,
      setTimeout(() => this.save(memory), SAVE_WHEN_IDLE_MILLIS),
    );
  }

  private save(memory: WatchMemory): void {
    this.saveTimers.delete(memory);
    const save = memory.unsavedCaches;
    memory.unsavedCaches = undefined;
    if (!save) return;
    // A cache that cannot be written costs the next process time, nothing else.
    const saving = save().catch(() => undefined);
    this.saving.add(saving);
    void saving.finally(() => this.saving.delete(saving));
  }

  /** Writes the cache files still unwritten now, not when idle: resolves once every write under way is done. */
  async saveNow(): Promise<void> {
    for (const [memory, timer] of this.saveTimers) {
      clearTimeout(timer);
      this.save(memory);
    }
    await Promise.all(this.saving);
  }

  /** Stops watching and writes the cache files still unwritten: resolves once they are written. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.rootPoll);
    for (const { watcher } of this.watchers.values()) watcher.close();
    this.watchers.clear();
    await this.saveNow();
  }

  /**
   * Watches `top` and every folder below it, one watcher a folder, set up
   * before this returns: a change made once it has returned is heard.
   * (Node's own `recursive` watch on Linux sets up the folders below
   * asynchronously, and a change made meanwhile goes unheard.) A folder made
   * later is watched when its parent reports it.
   */
  private watchTree(top: string): void {
    if (this.closed || this.watchers.has(top) || (top !== this.root && this.ignored(top))) return;
    let watcher: FSWatcher;
    let ino: number;
    try {
      watcher = watch(top, (_event, name) => this.heard(top, name));
      ino = lstatSync(top).ino;
    } catch {
      return; // gone already: its parent's event says so
    }
    watcher.on('error', () => {
      if (this.watchers.get(top)?.watcher !== watcher) return watcher.close(); // an old folder's, already replaced
      this.unwatchTree(top);
      // Gone with its folder, or broken: either way nothing known below it holds.
      if (existsSync(top)) this.broken = true;
      this.forget(top);
      if (top === this.root) this.rootGone();
    });
    this.watchers.set(top, { watcher, ino });
    let entries: Dirent[];
    try {
      entries = readdirSync(top, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.isDirectory()) this.watchTree(join(top, entry.name));
      else if (entry.isSymbolicLink()) this.linked = true;
    }
  }

  private heard(dir: string, name: string | Buffer | null): void {
    if (this.closed) return;
    const watched = this.watchers.get(dir);
    // The folder itself went (a watcher names its own folder then): what was below it is unwatched.
    if (watched?.ino !== lstatSync(dir, { throwIfNoEntry: false })?.ino) {
      this.unwatchTree(dir);
      this.forget(dir);
      if (dir === this.root) this.rootGone();
      this.onChange(relative(this.root, dir) || '.');
      return;
    }
    if (name === null) {
      this.forgetAll(); // something changed in `dir`, we are not told what
      this.onChange(relative(this.root, dir) || '.');
      return;
    }
    const abs = join(dir, name.toString());
    if (dir === this.root && name.toString().startsWith(MARKER_PREFIX)) {
      this.markersAwaited.get(name.toString())?.();
      return;
    }
    if (this.ignored(abs)) return;
    // Every folder of the app is watched: a path that was not is a file, with nothing known or watched below it.
    const wasFolder = this.watchers.has(abs);
    const info = lstatSync(abs, { throwIfNoEntry: false });
    this.forget(abs, wasFolder || info?.isDirectory() === true);
    // A folder made, moved, removed or replaced here (its inode may be the
    // old one's, reused): watched again from scratch as it is now.
    if (wasFolder) this.unwatchTree(abs);
    if (info?.isDirectory()) this.watchTree(abs);
    else if (info?.isSymbolicLink()) this.linked = true;
    this.onChange(relative(this.root, abs) || '.');
  }

  /**
   * The app's folder went (moved away, removed, or replaced by another):
   * nothing watches its parent, so it is looked for until it is back, then
   * watched as it is now and reported changed.
   */
  private rootGone(): void {
    if (this.closed || this.rootPoll) return;
    this.rootPoll = setInterval(() => {
      if (this.rootBack()) this.onChange('.');
    }, ROOT_POLL_MILLIS);
  }

  /** Watches the app's folder again if it was gone and is back; true then. */
  private rootBack(): boolean {
    if (this.closed || this.watchers.has(this.root) || !lstatSync(this.root, { throwIfNoEntry: false })?.isDirectory()) return false;
    clearInterval(this.rootPoll);
    this.rootPoll = undefined;
    this.forgetAll();
    this.watchTree(this.root);
    return true;
  }

  private unwatchTree(top: string): void {
    for (const [dir, { watcher }] of this.watchers) {
      if (dir === top || dir.startsWith(`${top}${sep}`)) {
        watcher.close();
        this.watchers.delete(dir);
      }
    }
  }

  private ignored(abs: string): boolean {
    for (const output of this.outputs) {
      if (output === this.root || this.root.startsWith(`${output}${sep}`)) {
        // The app is in the output folder (`build -d .` in the app): only the tarballs written there are the build's own.
        if (dirname(abs) === output && (abs.endsWith('.tgz') || abs.endsWith('.partial'))) return true;
      } else if (abs === output || abs.startsWith(`${output}${sep}`)) return true;
    }
    return IGNORED_TOP.has(relative(this.root, abs).split(sep)[0] ?? '');
  }

  /**
   * Drops what is known of `abs` and of the folders above it, and with
   * `below` (a folder), of every path below it. A file's change thus costs
   * the depth of its path, not the number of paths known: a checkout that
   * touches thousands of files stays cheap.
   */
  private forget(abs: string, below = true): void {
    this.changes++;
    for (const memory of this.memories.values()) {
      for (const known of knownOf(memory)) {
        for (let at = abs, up = dirname(abs); ; at = up, up = dirname(up)) {
          known.delete(at);
          if (up === at) break;
        }
        if (below) for (const path of known.keys()) if (path.startsWith(`${abs}${sep}`)) known.delete(path);
      }
    }
  }

  private forgetAll(): void {
    this.changes++;
    for (const memory of this.memories.values()) for (const known of knownOf(memory)) known.clear();
  }
}

/** What a memory knows by path: all of it is dropped for a path that changes. */
function knownOf(memory: WatchMemory): Map<string, unknown>[] {
  const files = memory.files ? [memory.files.contents, memory.files.listings, memory.files.kinds] : [];
  return [memory.folderFingerprints, memory.linkChecks, ...files];
}
