/**
 * What plugins get of the cluster in cluster mode, behind the narrow
 * interfaces of the plugin API: passwords (one Secret each), records (keys
 * of one ConfigMap, each value JSON) and label-selected objects to list or
 * delete. Plugins never see the Kubernetes client.
 */
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import {
  checkPasswordName,
  generatePassword,
  passwordSecretName,
  type ClusterObjects,
  type PasswordStore,
  type RecordStore,
  type ClusterStores,
  type JsonValue,
  type ObjectSelector,
} from '../plugins/index.js';
import type { KubeClient } from './client.js';
import { AlreadyExists, Conflict, KubeApiError } from './errors.js';
import { kubeCall, kubeRead } from './retry.js';

const PASSWORD_KEY = 'password';
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'flotilla' } as const;
export const APP_LABEL = 'flotilla.starlingx.io/app';

/** Data that is not what flotilla wrote there (a Secret without its key, a record that is not JSON). */
export class KubeDataError extends KubeApiError {
  constructor(kind: string, namespace: string, name: string, message: string) {
    super({ verb: 'read', kind, namespace, name }, 200, undefined, message);
  }
}

/**
 * One Secret per password, `<app>-password-<name>` in the app's namespace,
 * key `password`. Create-if-absent is atomic on the API server: when two
 * writers race, the loser's create fails with AlreadyExists and it reads the
 * winner's value.
 */
export class SecretPasswordStore implements PasswordStore {
  constructor(
    private readonly client: Pick<KubeClient, 'core'>,
    private readonly namespace: string,
    private readonly appName: string,
  ) {}

  secretName(name: string): string {
    return passwordSecretName(this.appName, name);
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
      metadata: { name: secretName, namespace: this.namespace, labels: { ...MANAGED_BY, [APP_LABEL]: this.appName } },
      type: 'Opaque',
      data: { [PASSWORD_KEY]: Buffer.from(value, 'utf8').toString('base64') },
    };
    try {
      await kubeCall({ verb: 'create', kind: 'Secret', namespace: this.namespace, name: secretName }, () =>
        this.client.core.createNamespacedSecret({ namespace: this.namespace, body }),
      );
      return value;
    } catch (error) {
      if (!(error instanceof AlreadyExists)) throw error;
    }
    const winner = await this.read(secretName);
    if (winner === undefined) throw new KubeDataError('Secret', this.namespace, secretName, `exists but holds no "${PASSWORD_KEY}"`);
    return winner;
  }

  /** The password kept in `secretName`, if there is one. */
  async read(secretName: string): Promise<string | undefined> {
    const call = { verb: 'read', kind: 'Secret', namespace: this.namespace, name: secretName };
    const secret = await kubeRead(call, () => this.client.core.readNamespacedSecret({ name: secretName, namespace: this.namespace }));
    if (secret === undefined) return undefined;
    const data = secret.data?.[PASSWORD_KEY];
    if (data === undefined) throw new KubeDataError('Secret', this.namespace, secretName, `exists but holds no "${PASSWORD_KEY}"`);
    return Buffer.from(data, 'base64').toString('utf8');
  }
}

/** Records as keys of the ConfigMap `<app>-records` in the app's namespace, each value JSON; writes retry on a stale resourceVersion. */
export class ConfigMapRecordStore implements RecordStore {
  readonly name: string;
  constructor(
    private readonly client: Pick<KubeClient, 'core'>,
    private readonly namespace: string,
    appName: string,
  ) {
    this.name = recordsConfigMapName(appName);
  }

  async get(key: string): Promise<JsonValue | undefined> {
    const raw = (await this.read())?.data?.[key];
    if (raw === undefined) return undefined;
    try {
      return JSON.parse(raw) as JsonValue;
    } catch {
      throw new KubeDataError('ConfigMap', this.namespace, this.name, `key ${key} is not JSON`);
    }
  }

  set(key: string, value: JsonValue): Promise<void> {
    return this.change((data) => {
      data[key] = JSON.stringify(value);
      return true;
    });
  }

  delete(key: string): Promise<void> {
    return this.change((data) => {
      if (!(key in data)) return false;
      delete data[key];
      return true;
    });
  }

  private read(): Promise<V1ConfigMap | undefined> {
    return kubeRead({ verb: 'read', kind: 'ConfigMap', namespace: this.namespace, name: this.name }, () =>
      this.client.core.readNamespacedConfigMap({ name: this.name, namespace: this.namespace }),
    );
  }

  private change(edit: (data: Record<string, string>) => boolean): Promise<void> {
    return changeConfigMap(this.client, this.namespace, this.name, edit);
  }
}

/**
 * Edits a ConfigMap's data (`edit` returns false to leave it): read, edit,
 * write through the resourceVersion read (created when missing); a writer in
 * between is a Conflict or AlreadyExists, and the change is made again on
 * what it wrote.
 */
export async function changeConfigMap(
  client: Pick<KubeClient, 'core'>,
  namespace: string,
  name: string,
  edit: (data: Record<string, string>) => boolean,
): Promise<void> {
  const call = { kind: 'ConfigMap', namespace, name };
  for (let attempt = 0; ; attempt++) {
    const current = await kubeRead({ ...call, verb: 'read' }, () => client.core.readNamespacedConfigMap({ name, namespace }));
    const data = { ...current?.data };
    if (!edit(data)) return;
    try {
      if (current) {
        const body: V1ConfigMap = { ...current, data };
        await kubeCall({ ...call, verb: 'update' }, () => client.core.replaceNamespacedConfigMap({ name, namespace, body }));
      } else {
        const body: V1ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { ...MANAGED_BY } }, data };
        await kubeCall({ ...call, verb: 'create' }, () => client.core.createNamespacedConfigMap({ namespace, body }));
      }
      return;
    } catch (error) {
      if (!(error instanceof Conflict || error instanceof AlreadyExists) || attempt >= 5) throw error;
    }
  }
}

export function recordsConfigMapName(appName: string): string {
  return `${appName}-records`;
}

/** Label-selected objects of any kind, for plugins' clean-up hooks. */
class KubeClusterObjects implements ClusterObjects {
  constructor(
    private readonly client: Pick<KubeClient, 'objects'>,
    readonly namespace: string,
  ) {}

  async list(selector: ObjectSelector): Promise<string[]> {
    const call = { verb: 'list', kind: selector.kind, namespace: selector.namespace };
    const list = await kubeCall(call, () =>
      this.client.objects.list(selector.apiVersion, selector.kind, selector.namespace, undefined, undefined, undefined, undefined, selector.labelSelector),
    );
    return list.items.map((item) => item.metadata?.name ?? '').filter((name) => name !== '');
  }

  async deleteAll(selector: ObjectSelector): Promise<string[]> {
    const names = await this.list(selector);
    for (const name of names) {
      await kubeRead({ verb: 'delete', kind: selector.kind, namespace: selector.namespace, name }, () =>
        this.client.objects.delete({ apiVersion: selector.apiVersion, kind: selector.kind, metadata: { name, namespace: selector.namespace } }),
      );
    }
    return names;
  }
}

/** Said instead of a password not generated yet, when nothing may be written (a diff). */
const NOT_GENERATED = '(generated at apply)';

/**
 * The three cluster-mode stores of one app, for the plugin host. Read-only
 * (for a diff): passwords are read but never created, records never written,
 * objects never deleted.
 */
export function clusterStores(client: KubeClient, namespace: string, appName: string, options: { readonly readOnly?: boolean } = {}): ClusterStores {
  const passwords = new SecretPasswordStore(client, namespace, appName);
  const records = new ConfigMapRecordStore(client, namespace, appName);
  const objects = new KubeClusterObjects(client, namespace);
  if (!options.readOnly) return { passwords, records, objects };
  const refuse = (what: string) => async (): Promise<never> => {
    throw new KubeDataError('ConfigMap', namespace, records.name, `a read-only run cannot ${what}`);
  };
  return {
    passwords: { getOrGenerate: async (name) => (await passwords.read(passwords.secretName(name))) ?? NOT_GENERATED },
    records: { get: (key) => records.get(key), set: refuse('write records'), delete: refuse('delete records') },
    objects: { namespace, list: (selector) => objects.list(selector), deleteAll: refuse('delete objects') },
  };
}
