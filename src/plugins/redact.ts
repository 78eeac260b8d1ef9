/**
 * The one owner of what is never printed unless asked (`--show-secrets`):
 *
 * - every value a plugin's password store gave out (the host remembers
 *   them), also inside longer strings (a database URL);
 * - every value under a key that names a secret (`password`, `*_password`,
 *   `rootPassword`, `secret`, `token`, `key`, …), whoever set it: a default,
 *   a plugin, or the user with `override set`;
 * - every value at a path a chart's values.schema.json marks secret
 *   (`format: password`, `writeOnly: true`), whatever its key: the rules
 *   are added per chart (`markSecretPaths`), and since a printed value does
 *   not always say which chart it belongs to, a path one chart marks is
 *   redacted in every release: printing less is the safe side;
 * - the password of credentials written into a URL (`https://user:PW@host`),
 *   in every message the CLI prints (`maskUrlCredentials` of src/diagnostics,
 *   which its error printer calls too).
 */

import { maskUrlCredentials } from '../diagnostics/index.js';

export const REDACTED = '<secret>';

/** One step of a path to a value: a key of a map or an index of a list. */
export type SecretPathSegment = string | number;

/** `password`, `secret`, `token`, `key`, and keys ending in one of them after a separator (`db_password`, `api-token`, `tls.key`). */
const SEPARATED_SECRET = /(?:^|[_.-])(?:password|passwd|secret|token|key)$/i;
/** camelCase keys ending in one of them (`rootPassword`, `clientSecret`, `authToken`); not `Key` (`valuesKey` names a field). */
const CAMEL_SECRET = /[a-z0-9](?:Password|Passwd|Secret|Token)$/;

/** Whether a map key names a secret (its value, and everything under it, is redacted). */
export function isSecretKey(key: SecretPathSegment): boolean {
  return typeof key === 'string' && (SEPARATED_SECRET.test(key) || CAMEL_SECRET.test(key));
}

/** Whether the value at a path of a release's values is secret (a chart schema's rule). */
export type SecretPathRule = (path: readonly SecretPathSegment[]) => boolean;

export class SecretRegistry {
  private readonly values = new Set<string>();
  private readonly pathRules: SecretPathRule[] = [];

  /** With `show`, nothing is redacted (`--show-secrets`). */
  constructor(private readonly show = false) {}

  add(value: string): void {
    if (value.length > 0) this.values.add(value);
  }

  /** Values at the paths `rule` names are redacted (paths from the root of a release's values; `at` of `redact` says where a value sits). */
  markSecretPaths(rule: SecretPathRule): void {
    this.pathRules.push(rule);
  }

  get size(): number {
    return this.values.size;
  }

  /** The text with every known secret replaced, also inside longer strings (a database URL), and URL credentials masked. */
  redactText(text: string): string {
    if (this.show) return text;
    let out = maskUrlCredentials(text);
    for (const secret of this.values) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }

  /**
   * A copy of a JSON-like value with secrets replaced: every known secret in
   * every string, and every scalar under a key that names a secret. `at` is
   * where the value sits (the path of a leaf printed on its own), so a leaf
   * `db.password` is redacted although its own value has no key.
   */
  redact<T>(value: T, at: readonly SecretPathSegment[] = []): T {
    if (this.show) return value;
    const secretPath = (path: readonly SecretPathSegment[]) => this.pathRules.some((rule) => rule(path));
    const walk = (v: unknown, path: SecretPathSegment[], secret: boolean): unknown => {
      secret ||= secretPath(path);
      if (Array.isArray(v)) return v.map((x, i) => walk(x, [...path, i], secret));
      if (v !== null && typeof v === 'object')
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, [...path, k], secret || isSecretKey(k))]));
      if (secret && v !== null && v !== undefined && v !== '') return REDACTED;
      return typeof v === 'string' ? this.redactText(v) : v;
    };
    return walk(value, [...at], at.some(isSecretKey)) as T;
  }
}
