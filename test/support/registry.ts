/**
 * A real OCI registry for tests: Debian's `docker-registry` (distribution
 * 2.8) serving a temp folder on a free loopback port. Installed with apt when
 * missing and the tests run as root (CI's fresh machine); otherwise the error
 * says how to install it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestRegistry {
  /** `127.0.0.1:PORT`, as `oci://` references and `--plain-http` tools want it. */
  readonly host: string;
  /** `http://127.0.0.1:PORT`, for the distribution API. */
  readonly url: string;
  /** Where the registry keeps its blobs (removed by `stop`). */
  readonly storage: string;
  stop(): Promise<void>;
}

export interface RegistryOptions {
  /**
   * Extra top-level sections of the registry's configuration (for example
   * `auth: {token: {...}}` or `auth: {htpasswd: {...}}`), as YAML text.
   */
  readonly extraConfig?: string;
}

const BINARY = '/usr/bin/docker-registry';

/** Makes sure Debian's docker-registry is installed; installs it as root. */
export function ensureRegistryBinary(): string {
  if (existsSync(BINARY)) return BINARY;
  if (process.getuid?.() !== 0) {
    throw new Error(`${BINARY} is missing: install Debian's docker-registry package (apt-get install -y docker-registry)`);
  }
  execFileSync('apt-get', ['update'], { stdio: 'ignore' });
  execFileSync('apt-get', ['install', '-y', 'docker-registry'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (!existsSync(BINARY)) throw new Error(`apt-get installed docker-registry but ${BINARY} is still missing`);
  return BINARY;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilServing(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`docker-registry exited with ${child.exitCode}: ${log()}`);
    try {
      const response = await fetch(`${url}/v2/`);
      // 200 when open, 401 when the configuration asks for authentication: serving either way.
      if (response.status === 200 || response.status === 401) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`docker-registry did not answer on ${url} within 15 s: ${log()}`);
}

export async function startRegistry(options: RegistryOptions = {}): Promise<TestRegistry> {
  const binary = ensureRegistryBinary();
  const storage = mkdtempSync(join(tmpdir(), 'flotilla-registry-'));
  const port = await freePort();
  const config = join(storage, 'config.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log: {level: error, accesslog: {disabled: true}}',
      `storage: {filesystem: {rootdirectory: ${JSON.stringify(join(storage, 'data'))}}, delete: {enabled: true}}`,
      `http: {addr: "127.0.0.1:${port}"}`,
      options.extraConfig ?? '',
    ].join('\n'),
  );
  const child = spawn(binary, ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const host = `127.0.0.1:${port}`;
  const url = `http://${host}`;
  try {
    await waitUntilServing(url, child, () => stderr);
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(storage, { recursive: true, force: true });
    throw error;
  }
  return {
    host,
    url,
    storage,
    async stop() {
      // Ctrl-C in a terminal may have ended the registry already (a signal leaves exitCode null).
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(storage, { recursive: true, force: true });
    },
  };
}
