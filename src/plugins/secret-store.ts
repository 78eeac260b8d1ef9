/**
 * The cluster password store: one Secret per password,
 * `<app>-password-<name>` in the app's namespace, key `password`. Create-if-
 * absent is atomic on the API server: when two writers race, the loser's
 * create fails with 409 and it reads the winner's value.
 */
import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import type { PasswordStore } from './context.js';
import { PluginError } from './errors.js';
import { checkPasswordName, generatePassword } from './passwords.js';

export const PASSWORD_KEY = 'password';

/** The HTTP status of a client-node ApiException (checked by shape: the class itself would load the whole client). */
function statusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export class SecretPasswordStore implements PasswordStore {
  constructor(
    private readonly core: CoreV1Api,
    private readonly namespace: string,
    private readonly appName: string,
  ) {}

  secretName(name: string): string {
    return `${this.appName}-password-${name}`;
  }

  async getOrGenerate(name: string, options: { readonly length?: number } = {}): Promise<string> {
    checkPasswordName(name);
    const secretName = this.secretName(name);
    const existing = await this.read(secretName);
    if (existing !== undefined) return existing;
    const value = generatePassword(options.length);
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: secretName,
        namespace: this.namespace,
        labels: { 'app.kubernetes.io/managed-by': 'flotilla', 'flotilla.starlingx.io/app': this.appName },
      },
      type: 'Opaque',
      data: { [PASSWORD_KEY]: Buffer.from(value, 'utf8').toString('base64') },
    };
    try {
      await this.core.createNamespacedSecret({ namespace: this.namespace, body });
      return value;
    } catch (error) {
      if (statusOf(error) !== 409) throw this.failure('create', secretName, error);
    }
    const winner = await this.read(secretName);
    if (winner === undefined) throw new PluginError(`Secret ${this.namespace}/${secretName} exists but holds no "${PASSWORD_KEY}"`);
    return winner;
  }

  private async read(secretName: string): Promise<string | undefined> {
    let secret: V1Secret;
    try {
      secret = await this.core.readNamespacedSecret({ name: secretName, namespace: this.namespace });
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw this.failure('read', secretName, error);
    }
    const data = secret.data?.[PASSWORD_KEY];
    if (data === undefined) throw new PluginError(`Secret ${this.namespace}/${secretName} exists but holds no "${PASSWORD_KEY}"`);
    return Buffer.from(data, 'base64').toString('utf8');
  }

  private failure(action: string, secretName: string, error: unknown): PluginError {
    const status = statusOf(error);
    // The API body can echo the Secret: never put it in the message.
    const why = status !== undefined ? `the API server answered HTTP ${status}` : error instanceof Error ? error.message : String(error);
    return new PluginError(`cannot ${action} Secret ${this.namespace}/${secretName}: ${why}`);
  }
}
