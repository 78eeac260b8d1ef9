/**
 * Registries that demand authentication, for tests: the real docker-registry
 * configured with
 * - `auth: htpasswd` (Basic; the password hashed with bcrypt as the registry requires), or
 * - `auth: token` (Bearer): a small token service on loopback, written here,
 *   that checks Basic credentials and issues RS256 JWTs signed by a
 *   self-signed certificate the registry trusts (its `rootcertbundle`), the
 *   certificate carried in the token's `x5c` header as distribution expects.
 */
import { execFileSync } from 'node:child_process';
import { createPrivateKey, createSign, randomUUID, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { startRegistry, type TestRegistry } from './registry.js';

export interface TestUser {
  readonly username: string;
  readonly password: string;
}

export interface TokenRegistry extends TestRegistry {
  /** `http://127.0.0.1:PORT/token` */
  readonly realm: string;
  /** Every token request the service answered (for asserting the flow). */
  readonly tokenRequests: { scope: string[]; user?: string }[];
}

/** docker-registry with `auth: htpasswd`: every request needs one of `users`. */
export async function startBasicAuthRegistry(users: readonly TestUser[]): Promise<TestRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-htpasswd-'));
  const file = join(dir, 'htpasswd');
  writeFileSync(file, users.map((u) => `${u.username}:${bcrypt.hashSync(u.password, 5)}`).join('\n') + '\n');
  const registry = await startRegistry({ extraConfig: `auth: {htpasswd: {realm: flotilla-test, path: ${JSON.stringify(file)}}}` });
  return {
    ...registry,
    async stop() {
      await registry.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

async function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

/**
 * docker-registry with `auth: token`. Users get every action they ask for;
 * anonymous requests get `pull` only when `anonymousPull` is set.
 * `advertisedRealm` makes the registry name another token URL than the
 * service's (to test what a client refuses to send where).
 */
export async function startTokenRegistry(
  users: readonly TestUser[],
  options: { anonymousPull?: boolean; advertisedRealm?: string } = {},
): Promise<TokenRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-token-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=flotilla-test-token-issuer'],
    { stdio: 'ignore' },
  );
  const key = createPrivateKey(readFileSync(keyFile));
  const certDer = new X509Certificate(readFileSync(certFile)).raw;
  const issuer = 'flotilla-test-issuer';
  const service = 'flotilla-test-registry';
  const tokenRequests: { scope: string[]; user?: string }[] = [];

  const sign = (claims: Record<string, unknown>): string => {
    const header = base64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', x5c: [certDer.toString('base64')] }));
    const payload = base64url(JSON.stringify(claims));
    const signature = createSign('RSA-SHA256').update(`${header}.${payload}`).sign(key);
    return `${header}.${payload}.${base64url(signature)}`;
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const authorization = request.headers.authorization ?? '';
    let user: string | undefined;
    if (authorization.startsWith('Basic ')) {
      const [name, ...rest] = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':');
      const found = users.find((u) => u.username === name && u.password === rest.join(':'));
      if (!found) {
        response.writeHead(401, { 'content-type': 'application/json' }).end('{"details":"bad credentials"}');
        return;
      }
      user = found.username;
    }
    const scopes = url.searchParams.getAll('scope');
    tokenRequests.push({ scope: scopes, user });
    const access = scopes.flatMap((scope) => {
      const [type, name, actions] = scope.split(':');
      if (type !== 'repository' || !name || !actions) return [];
      const granted = actions.split(',').filter((a) => user !== undefined || (options.anonymousPull && a === 'pull'));
      return [{ type, name, actions: granted }];
    });
    if (user === undefined && !options.anonymousPull) {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"details":"credentials required"}');
      return;
    }
    const now = Math.floor(Date.now() / 1000);
    const token = sign({ iss: issuer, sub: user ?? '', aud: service, exp: now + 300, nbf: now - 10, iat: now, jti: randomUUID(), access });
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token, expires_in: 300, issued_at: new Date().toISOString() }));
  });
  const port = await listen(server);
  const realm = `http://127.0.0.1:${port}/token`;
  let registry: TestRegistry;
  try {
    registry = await startRegistry({
      extraConfig: `auth: {token: {realm: ${JSON.stringify(options.advertisedRealm ?? realm)}, service: ${service}, issuer: ${issuer}, rootcertbundle: ${JSON.stringify(certFile)}}}`,
    });
  } catch (error) {
    server.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    ...registry,
    realm,
    tokenRequests,
    async stop() {
      await registry.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Docker config file granting `user` on `registryHost`, as `docker login` writes it. */
export function writeDockerConfig(dir: string, registryHost: string, user: TestUser): string {
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ auths: { [registryHost]: { auth: Buffer.from(`${user.username}:${user.password}`).toString('base64') } } }));
  return file;
}
