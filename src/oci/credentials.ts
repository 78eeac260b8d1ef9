/**
 * Registry credentials from a Docker-style config file (`~/.docker/config.json`,
 * `$DOCKER_CONFIG/config.json`, or the file `--registry-config` names):
 * `auths.<registry>` with `auth` (base64 of `user:password`),
 * `username`/`password`, `identitytoken` (an OAuth2 refresh token) or
 * `registrytoken` (a bearer token sent as is). Keys are matched the way
 * docker matches them: scheme and path ignored, Docker Hub under its legacy
 * `https://index.docker.io/v1/` key as well.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { FlotillaError } from '../diagnostics/index.js';
import { DOCKER_HUB } from './reference.js';

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
  const bare = key.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '').toLowerCase();
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

/** The credentials of a parsed config file's `auths`. `file` names it in errors. */
export function credentialsFromConfig(text: string, file: string): CredentialStore {
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (error) {
    throw new RegistryConfigError(`${file}: not valid JSON: ${(error as Error).message}`);
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw new RegistryConfigError(`${file}: expected a JSON object`);
  const auths = (config as { auths?: unknown }).auths ?? {};
  if (typeof auths !== 'object' || auths === null || Array.isArray(auths)) throw new RegistryConfigError(`${file}: "auths" must be an object`);
  const byRegistry = new Map<string, RegistryCredential>();
  for (const [key, entry] of Object.entries(auths as Record<string, unknown>)) {
    if (typeof entry !== 'object' || entry === null) throw new RegistryConfigError(`${file}: auths[${JSON.stringify(key)}] must be an object`);
    const credential = credentialOf(file, key, entry as AuthEntry);
    const registry = registryOfKey(key);
    // An exact `host` key wins over a `https://host/...` one for the same registry.
    if (credential && (!byRegistry.has(registry) || key.toLowerCase() === registry)) byRegistry.set(registry, credential);
  }
  return { credentialFor: (registry) => byRegistry.get(registry.toLowerCase()) };
}

/** The default config file: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. */
export function defaultRegistryConfigPath(env: NodeJS.ProcessEnv = process.env): string {
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
    throw new RegistryConfigError(`${path}: cannot read the registry config (${code ?? (error as Error).message})`);
  }
  return credentialsFromConfig(text, path);
}
