/**
 * Registry credentials from a Docker-style config file (`~/.docker/config.json`,
 * `$DOCKER_CONFIG/config.json`, or the file `--registry-config` names):
 * `auths.<registry>` with `auth` (base64 of `user:password`),
 * `username`/`password`, `identitytoken` (an OAuth2 refresh token) or
 * `registrytoken` (a bearer token sent as is); or a credential helper
 * (`credHelpers.<registry>`, else `credsStore`): `docker-credential-<name> get`
 * with the server on standard input, as docker runs it. Keys are matched the
 * way docker matches them: scheme and path ignored, Docker Hub under its
 * legacy `https://index.docker.io/v1/` key as well.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { FlotillaError } from '../diagnostics/index.js';
import { DOCKER_HUB } from './reference.js';
import { fileErrorText } from '../files/index.js';

export type RegistryCredential =
  | { readonly kind: 'basic'; readonly username: string; readonly password: string }
  | { readonly kind: 'identity-token'; readonly username?: string; readonly token: string }
  | { readonly kind: 'registry-token'; readonly token: string };

/** Looks up the credential for a registry (`host[:port]`, normalised as references are). */
export interface CredentialStore {
  credentialFor(registry: string): RegistryCredential | undefined;
}

/** A config file that cannot be used. */
export class RegistryConfigError extends FlotillaError {}

interface AuthEntry {
  auth?: unknown;
  username?: unknown;
  password?: unknown;
  identitytoken?: unknown;
  registrytoken?: unknown;
}

/** The key of an `auths` entry as a registry name: scheme, path and trailing slashes dropped. */
function registryOfKey(key: string): string {
  const bare = key
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/\/.*$/, '')
    .toLowerCase();
  return bare === 'index.docker.io' || bare === 'registry-1.docker.io' ? DOCKER_HUB : bare;
}

function credentialOf(file: string, key: string, entry: AuthEntry): RegistryCredential | undefined {
  const where = `${file}: auths[${JSON.stringify(key)}]`;
  const text = (field: keyof AuthEntry): string | undefined => {
    const value = entry[field];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw new RegistryConfigError(`${where}.${field} must be a string`);
    return value;
  };
  const registryToken = text('registrytoken');
  if (registryToken) return { kind: 'registry-token', token: registryToken };
  let username = text('username');
  let password = text('password');
  const auth = text('auth');
  if (auth) {
    const decoded = Buffer.from(auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new RegistryConfigError(`${where}.auth is not base64 of "username:password"`);
    username = decoded.slice(0, colon);
    password = decoded.slice(colon + 1);
  }
  const identityToken = text('identitytoken');
  if (identityToken) return { kind: 'identity-token', username, token: identityToken };
  if (username !== undefined && password !== undefined) return { kind: 'basic', username, password };
  if (username !== undefined || password !== undefined) throw new RegistryConfigError(`${where} has a username without a password (or the reverse)`);
  return undefined;
}

/** Docker's name for a registry when it asks a credential helper (Docker Hub keeps its legacy URL). */
function helperServer(registry: string): string {
  return registry === DOCKER_HUB ? 'https://index.docker.io/v1/' : registry;
}

/**
 * Runs `docker-credential-<helper> get` for a registry; undefined when the
 * helper has nothing for it. A missing default store (`credsStore` copied
 * from another machine) means anonymous access; a missing helper named for
 * this very registry is an error.
 */
function fromHelper(file: string, helper: string, registry: string, named: boolean): RegistryCredential | undefined {
  const program = `docker-credential-${helper}`;
  const run = spawnSync(program, ['get'], { input: helperServer(registry), encoding: 'utf8', timeout: 30_000 });
  if (run.error && !named && (run.error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  if (run.error) throw new RegistryConfigError(`${file}: credential helper ${program} for ${registry} cannot run (${fileErrorText(run.error)})`);
  if (run.status !== 0) {
    if (/credentials not found/i.test(`${run.stdout}${run.stderr}`)) return undefined;
    throw new RegistryConfigError(`${file}: credential helper ${program} failed for ${registry}: ${(run.stderr || run.stdout).trim().split('\n')[0]}`);
  }
  let answer: { Username?: unknown; Secret?: unknown };
  try {
    answer = JSON.parse(run.stdout) as typeof answer;
  } catch {
    throw new RegistryConfigError(`${file}: credential helper ${program} answered something that is not JSON`);
  }
  if (typeof answer.Secret !== 'string' || answer.Secret === '') return undefined;
  const username = typeof answer.Username === 'string' ? answer.Username : '';
  // Docker's convention: a username of <token> marks an identity (refresh) token.
  if (username === '<token>') return { kind: 'identity-token', token: answer.Secret };
  return { kind: 'basic', username, password: answer.Secret };
}

/** The credentials of a parsed config file (`auths`, `credHelpers`, `credsStore`). `file` names it in errors. */
export function credentialsFromConfig(text: string, file: string): CredentialStore {
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (error) {
    throw new RegistryConfigError(`${file}: not valid JSON: ${(error as Error).message}`);
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw new RegistryConfigError(`${file}: expected a JSON object`);
  const { auths = {}, credHelpers = {}, credsStore } = config as { auths?: unknown; credHelpers?: unknown; credsStore?: unknown };
  if (typeof auths !== 'object' || auths === null || Array.isArray(auths)) throw new RegistryConfigError(`${file}: "auths" must be an object`);
  if (typeof credHelpers !== 'object' || credHelpers === null || Array.isArray(credHelpers))
    throw new RegistryConfigError(`${file}: "credHelpers" must be an object`);
  if (credsStore !== undefined && (typeof credsStore !== 'string' || !/^[\w.-]+$/.test(credsStore)))
    throw new RegistryConfigError(`${file}: "credsStore" must be a helper name`);
  const byRegistry = new Map<string, RegistryCredential>();
  for (const [key, entry] of Object.entries(auths as Record<string, unknown>)) {
    if (typeof entry !== 'object' || entry === null) throw new RegistryConfigError(`${file}: auths[${JSON.stringify(key)}] must be an object`);
    const credential = credentialOf(file, key, entry as AuthEntry);
    const registry = registryOfKey(key);
    // An exact `host` key wins over a `https://host/...` one for the same registry.
    if (credential && (!byRegistry.has(registry) || key.toLowerCase() === registry)) byRegistry.set(registry, credential);
  }
  const helpers = new Map<string, string>();
  for (const [key, helper] of Object.entries(credHelpers as Record<string, unknown>)) {
    if (typeof helper !== 'string' || !/^[\w.-]+$/.test(helper))
      throw new RegistryConfigError(`${file}: credHelpers[${JSON.stringify(key)}] must be a helper name`);
    helpers.set(registryOfKey(key), helper);
  }
  const asked = new Map<string, RegistryCredential | undefined>();
  return {
    credentialFor(registry) {
      const name = registry.toLowerCase();
      const named = helpers.get(name);
      const helper = named ?? (byRegistry.has(name) ? undefined : (credsStore as string | undefined));
      if (helper === undefined) return byRegistry.get(name);
      if (!asked.has(name)) asked.set(name, fromHelper(file, helper, name, named !== undefined));
      return asked.get(name);
    },
  };
}

/** The default config file: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. */
function defaultRegistryConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.DOCKER_CONFIG ?? join(homedir(), '.docker'), 'config.json');
}

/**
 * Reads a config file. The file the user named must exist; the default one
 * may be missing (anonymous access).
 */
export function loadCredentials(file?: string): CredentialStore {
  const path = file ?? defaultRegistryConfigPath();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (file === undefined && code === 'ENOENT') return { credentialFor: () => undefined };
    throw new RegistryConfigError(`${path}: cannot read the registry config (${fileErrorText(error)})`);
  }
  return credentialsFromConfig(text, path);
}
