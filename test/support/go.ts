/**
 * Go's archive/tar for tests: Debian's golang-go, installed with apt when
 * missing and the tests run as root (as test/support/registry.ts installs
 * docker-registry), builds tar-list.go once per test run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const GO = '/usr/bin/go';

function ensureGo(): string {
  if (existsSync(GO)) return GO;
  if (process.getuid?.() !== 0) throw new Error(`${GO} is missing: install Debian's golang-go package (apt-get install -y golang-go)`);
  execFileSync('apt-get', ['update'], { stdio: 'ignore' });
  execFileSync('apt-get', ['install', '-y', 'golang-go'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (!existsSync(GO)) throw new Error(`apt-get installed golang-go but ${GO} is still missing`);
  return GO;
}

let built: string | undefined;

/** Path of the tar-list binary (see tar-list.go), built on first use. */
export function goTarList(): string {
  if (built) return built;
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-go-'));
  const binary = join(dir, 'tar-list');
  execFileSync(ensureGo(), ['build', '-o', binary, join(import.meta.dirname, 'tar-list.go')], {
    env: { ...process.env, GOCACHE: join(tmpdir(), 'flotilla-go-cache'), GOPATH: join(dir, 'gopath'), GO111MODULE: 'off', GOFLAGS: '', CGO_ENABLED: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  built = binary;
  return binary;
}

/** Each regular file of each archive, as Go reads it: archive → path → sha256. */
export function readWithGo(archives: readonly string[]): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>(archives.map((a) => [a, new Map()]));
  const listing = execFileSync(goTarList(), [...archives], { encoding: 'utf8', maxBuffer: 64 << 20 });
  for (const line of listing.split('\n').filter(Boolean)) {
    const [archive, type, name, sha256] = line.split('\t') as [string, string, string, string];
    if (type === '0') out.get(archive)?.set(name, sha256);
  }
  return out;
}
