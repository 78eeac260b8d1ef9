/** Password generation and names, shared by the offline and cluster stores. */
import { randomInt } from 'node:crypto';
import { PluginError } from './errors.js';
import { DNS1123_LABEL_MAX, isLabelCharacters, KUBE_OBJECT_NAME_MAX } from '../names/index.js';

/** Letters and digits only: safe unquoted in YAML, URLs (database connection strings) and shell. */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const DEFAULT_PASSWORD_LENGTH = 32;

export function generatePassword(length = DEFAULT_PASSWORD_LENGTH): string {
  if (!Number.isInteger(length) || length < 16 || length > 256) throw new PluginError(`password length must be an integer from 16 to 256, got ${length}`);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** The Secret that keeps an app's password `name`. */
export const passwordSecretName = (appName: string, name: string): string => `${appName}-password-${name}`;

/**
 * Password names become Secret names ({@link passwordSecretName}): lower-case
 * letters, digits and dashes, short enough that with the longest app name
 * (a label, 63) the Secret's name stays within Kubernetes' 253.
 */
export const PASSWORD_NAME_MAX = KUBE_OBJECT_NAME_MAX - passwordSecretName('x'.repeat(DNS1123_LABEL_MAX), '').length;

export function checkPasswordName(name: string): void {
  if (!isLabelCharacters(name) || name.length > PASSWORD_NAME_MAX) {
    throw new PluginError(`password name "${name}" must be at most ${PASSWORD_NAME_MAX} lower-case letters, digits and dashes (it names a Secret)`);
  }
}
