/**
 * Other readers of tar archives, for the differential test: GNU tar (which
 * extracts into a folder), Python's tarfile, node-tar and Go's archive/tar
 * (Helm's and Flux's reader). Each one's view of an archive is reduced to one
 * comparable listing: regular files with the sha256 of their contents, and
 * folders (given or implied by a file's path).
 *
 * GNU tar and python3 are on every machine this project runs on. Go is
 * Debian's golang-go (about 10 s to install): the global test setup installs
 * it with apt when missing and the tests run as root, as CI's fresh machine
 * does; elsewhere the Go reader is skipped and says why. Go's standard
 * library is all the lister needs: nothing is downloaded to build it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Parser, type ReadEntry } from 'tar';

/** One reader's view of an archive, or why it failed to read it. */
export interface Listing {
  readonly ok: boolean;
  readonly error?: string;
  /** `file <path> <sha256>` and `dir <path>` lines, sorted; files may repeat (a reader that sees a duplicate). */
  readonly lines: readonly string[];
}

interface RawEntry {
  readonly name: string;
  readonly type: string;
  readonly sha256?: string;
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** `./a//b/` → `a/b`: the name a file ends up at, whatever the spelling. */
function normalise(name: string): string {
  return name
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
}

export function listing(entries: readonly RawEntry[]): Listing {
  const files: string[] = [];
  const dirs = new Set<string>();
  const others: string[] = [];
  for (const entry of entries) {
    const path = normalise(entry.name);
    if (entry.type === 'file') files.push(`file ${path} ${entry.sha256}`);
    else if (entry.type === 'dir') {
      if (path !== '') dirs.add(path);
    } else others.push(`${entry.type} ${path}`);
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  return { ok: true, lines: [...files, ...[...dirs].map((d) => `dir ${d}`), ...others].sort() };
}

/**
 * GNU tar extracts each archive into its own folder (one tar process per
 * archive, two loops side by side); the folders are then walked.
 */
export function gnuTarListings(archives: readonly string[], work: string): Listing[] {
  const out = join(work, 'gnu-tar');
  mkdirSync(out, { recursive: true });
  // --one-top-level creates the folder itself: no mkdir process per archive.
  const loop =
    'while read -r i archive; do tar -xf "$archive" --one-top-level="$OUT/$i" --no-same-owner --no-same-permissions -m 2>"$OUT/$i.err"; echo $? > "$OUT/$i.rc"; done';
  const lines = archives.map((archive, i) => `${i} ${archive}`);
  const halves = [lines.filter((_, i) => i % 2 === 0), lines.filter((_, i) => i % 2 === 1)];
  const script = halves.map((_, n) => `${loop} < "$OUT/list${n}" &`).join('\n') + '\nwait\n';
  halves.forEach((half, n) => writeFileSync(join(out, `list${n}`), half.join('\n') + '\n'));
  execFileSync('bash', ['-c', script], { env: { ...process.env, OUT: out, LC_ALL: 'C.UTF-8' }, maxBuffer: 1 << 26 });
  return archives.map((_, i) => {
    const rc = readFileSync(join(out, `${i}.rc`), 'utf8').trim();
    if (rc !== '0') return { ok: false, error: `exit ${rc}: ${readFileSync(join(out, `${i}.err`), 'utf8').trim()}`, lines: [] };
    const root = join(out, String(i));
    if (!existsSync(root)) return listing([]); // an archive of nothing but its end marker
    const entries: RawEntry[] = [];
    for (const dirent of readdirSync(root, { withFileTypes: true, recursive: true })) {
      const full = join(dirent.parentPath, dirent.name);
      const name = full.slice(root.length + 1);
      // A name that is not UTF-8 comes back mangled and cannot be opened again: it differs from any reader's name anyway.
      const contents = (): string => (existsSync(full) ? sha256(readFileSync(full)) : 'name-not-utf-8');
      if (dirent.isFile()) entries.push({ name, type: 'file', sha256: contents() });
      else if (dirent.isDirectory()) entries.push({ name, type: 'dir' });
      else entries.push({ name, type: 'other:fs' });
    }
    return listing(entries);
  });
}

interface JsonResult {
  readonly ok: boolean;
  readonly error?: string;
  readonly entries: RawEntry[];
}

function jsonLines(stdout: string, count: number, reader: string): Listing[] {
  const results = stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as JsonResult);
  if (results.length !== count) throw new Error(`${reader} listed ${results.length} archives of ${count}`);
  return results.map((r) => (r.ok ? listing(r.entries) : { ok: false, error: r.error, lines: [] }));
}

export function pythonListings(archives: readonly string[]): Listing[] {
  const stdout = execFileSync('python3', [join(import.meta.dirname, 'list.py')], { input: archives.join('\n'), encoding: 'utf8', maxBuffer: 1 << 28 });
  return jsonLines(stdout, archives.length, 'python3 tarfile');
}

const hasGo = (): boolean => spawnSync('go', ['version']).status === 0;

/**
 * Installs Debian's golang-go when Go is missing and the tests run as root
 * (CI's fresh machine). Called once from the global setup, before any test
 * file runs, so it never races another apt-get for the package lock;
 * failing is not fatal: the Go comparison then skips and says why.
 */
export function ensureGo(): void {
  if (hasGo() || process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=120', 'install', '-y', 'golang-go'], { stdio: 'ignore', env });
  install();
  if (hasGo()) return;
  spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=120', 'update'], { stdio: 'ignore', env });
  install();
}

/** The Go lister, built once into `work`; undefined (with the reason) when Go is not available. */
export function buildGoLister(work: string): { binary?: string; skipped?: string } {
  if (!hasGo()) return { skipped: 'Go is not installed (Debian: apt-get install golang-go); the archive/tar comparison is skipped' };
  const binary = join(work, 'go-tar-list');
  // Standard library only: no module download, no network.
  const env = { ...process.env, GO111MODULE: 'off', GOFLAGS: '', GOPROXY: 'off', GOCACHE: join(work, 'go-cache'), GOPATH: join(work, 'go-path') };
  const built = spawnSync('go', ['build', '-o', binary, join(import.meta.dirname, 'list.go')], { env, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`go build of the archive/tar lister failed: ${built.stderr}`);
  return { binary };
}

export function goListings(binary: string, archives: readonly string[]): Listing[] {
  const stdout = execFileSync(binary, [], { input: archives.join('\n'), encoding: 'utf8', maxBuffer: 1 << 28 });
  return jsonLines(stdout, archives.length, 'Go archive/tar');
}

const NODE_TAR_TYPES: Readonly<Record<string, string>> = { File: 'file', OldFile: 'file', Directory: 'dir' };

/** node-tar's streaming Parser in strict mode: every warning is a failure. */
export function nodeTarListing(tar: Buffer): Promise<Listing> {
  return new Promise((resolve) => {
    const entries: RawEntry[] = [];
    let error: string | undefined;
    const parser = new Parser({
      strict: true,
      onReadEntry: (entry: ReadEntry) => {
        const chunks: Buffer[] = [];
        entry.on('data', (chunk: Buffer) => chunks.push(chunk));
        entry.on('end', () =>
          entries.push({ name: entry.path, type: NODE_TAR_TYPES[entry.type] ?? `other:${entry.type}`, sha256: sha256(Buffer.concat(chunks)) }),
        );
      },
    });
    parser.on('warn', (code: string, message: string) => (error ??= `${code}: ${message}`));
    parser.on('error', (e: Error) => (error ??= e.message));
    parser.on('close', () => resolve(error === undefined ? listing(entries) : { ok: false, error, lines: [] }));
    parser.end(tar);
  });
}
