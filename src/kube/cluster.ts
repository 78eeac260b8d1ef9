/**
 * The cluster as the lifecycle asks for it (src/lifecycle/cluster.ts
 * declares what it needs; this implements it over the Kubernetes API, which
 * the lifecycle never sees): app records and stored payloads as Secrets of
 * the system namespace, flotilla's settings as its ConfigMap, objects by
 * server-side apply and watches, the app's lock as a Lease. Every call goes
 * through kubeCall (retry.ts), so the one retry policy covers them all.
 */
import type { V1ConfigMap, V1Namespace, V1Secret } from '@kubernetes/client-node';
import type { ClusterStores } from '../plugins/index.js';
import type { KubeClient } from './client.js';
import { requireFlux } from './discovery.js';
import { AlreadyExists, NotFound } from './errors.js';
import { acquireLease, requestAbort, type HeldLease, type LeaseOptions } from './lease.js';
import { deleteObject, discoverKind, listObjects, mergePatch, readObject, serverSideApply, type KindSelector, type KubeObject } from './objects.js';
import { kubeCall, kubeRead } from './retry.js';
import { APP_LABEL, changeConfigMap, clusterStores, KubeDataError, MANAGED_BY } from './stores.js';
import { watchUntil, type WatchJudge, type WatchOptions } from './watch.js';

/** Where flotilla keeps its own objects: app records, stored payloads, locks, its settings. */
export const SYSTEM_NAMESPACE = 'flotilla-system';

type ObjectRef = Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>;

/** The lifecycle's cluster (src/lifecycle/cluster.ts) over `client`. */
export function kubeCluster(client: KubeClient) {
  return {
    records: new SecretAppRecords(client),
    payloads: new SecretPayloads(client),
    settings: new ConfigMapSettings(client),
    objects: new KubeObjects(client),
    locks: new LeaseLocks(client),
    requireFlux: () => requireFlux(client),
    pluginStores: (namespace: string, appName: string, options: { readonly readOnly: boolean }): ClusterStores =>
      clusterStores(client, namespace, appName, options),
  };
}

const RECORD_TYPE = 'flotilla.starlingx.io/app.v1';
const RECORD_KEY = 'record';
/** Label telling app records from flotilla's other Secrets (listing by Secret type is not served everywhere). */
const KIND_LABEL = 'flotilla.starlingx.io/kind';

export function recordSecretName(app: string): string {
  return `flotilla-app-${app}`;
}

/**
 * App records: one Secret per app, `flotilla-app-<app>`, its `record` key
 * holding the encoded record (the way Helm keeps a release), labelled with
 * its state and version. The revision is the Secret's resourceVersion.
 */
class SecretAppRecords {
  constructor(private readonly client: Pick<KubeClient, 'core'>) {}

  async read(app: string): Promise<{ text: string; revision: string; where: string } | undefined> {
    const name = recordSecretName(app);
    const secret = await kubeRead({ verb: 'read', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () =>
      this.client.core.readNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE }),
    );
    if (!secret) return undefined;
    const data = secret.data?.[RECORD_KEY];
    if (data === undefined) throw new KubeDataError('Secret', SYSTEM_NAMESPACE, name, `holds no "${RECORD_KEY}"`);
    return {
      text: Buffer.from(data, 'base64').toString('utf8'),
      revision: secret.metadata?.resourceVersion ?? '',
      where: `Secret ${SYSTEM_NAMESPACE}/${name}`,
    };
  }

  async list(): Promise<{ text: string; revision: string; where: string }[]> {
    const secrets = await kubeCall({ verb: 'list', kind: 'Secret', namespace: SYSTEM_NAMESPACE }, () =>
      this.client.core.listNamespacedSecret({ namespace: SYSTEM_NAMESPACE, labelSelector: `${KIND_LABEL}=app-record` }),
    );
    return secrets.items
      .filter((s) => s.type === RECORD_TYPE && s.data?.[RECORD_KEY] !== undefined)
      .map((s) => ({
        text: Buffer.from(s.data?.[RECORD_KEY] ?? '', 'base64').toString('utf8'),
        revision: s.metadata?.resourceVersion ?? '',
        where: `Secret ${SYSTEM_NAMESPACE}/${s.metadata?.name}`,
      }));
  }

  async create(app: string, text: string, summary: { readonly state: string; readonly version: string }): Promise<string> {
    const created = await kubeCall({ verb: 'create', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name: recordSecretName(app) }, () =>
      this.client.core.createNamespacedSecret({ namespace: SYSTEM_NAMESPACE, body: recordSecret(app, text, summary) }),
    );
    return created.metadata?.resourceVersion ?? '';
  }

  async replace(app: string, text: string, summary: { readonly state: string; readonly version: string }, revision: string): Promise<string> {
    const name = recordSecretName(app);
    const written = await kubeCall({ verb: 'update', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () =>
      this.client.core.replaceNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE, body: recordSecret(app, text, summary, revision) }),
    );
    return written.metadata?.resourceVersion ?? '';
  }

  async remove(app: string): Promise<void> {
    const name = recordSecretName(app);
    await kubeRead({ verb: 'delete', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () =>
      this.client.core.deleteNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE }),
    );
  }
}

function recordSecret(app: string, text: string, summary: { readonly state: string; readonly version: string }, resourceVersion?: string): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: RECORD_TYPE,
    metadata: {
      name: recordSecretName(app),
      namespace: SYSTEM_NAMESPACE,
      labels: {
        ...MANAGED_BY,
        [KIND_LABEL]: 'app-record',
        [APP_LABEL]: app,
        'flotilla.starlingx.io/state': summary.state,
        'flotilla.starlingx.io/version': labelSafe(summary.version),
      },
      ...(resourceVersion ? { resourceVersion } : {}),
    },
    data: { [RECORD_KEY]: Buffer.from(text, 'utf8').toString('base64') },
  };
}

/** Label values are at most 63 characters of [A-Za-z0-9._-]. */
function labelSafe(value: string): string {
  return value
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
}

const PAYLOAD_TYPE = 'flotilla.starlingx.io/bundle.v1';

/** Stored payloads: one Secret per piece in the system namespace, its bytes under `payload`. */
class SecretPayloads {
  constructor(private readonly client: Pick<KubeClient, 'core'>) {}

  async write(app: string, name: string, piece: Buffer, count: number): Promise<void> {
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: PAYLOAD_TYPE,
      metadata: {
        name,
        namespace: SYSTEM_NAMESPACE,
        labels: { ...MANAGED_BY, [APP_LABEL]: app },
        annotations: { 'flotilla.starlingx.io/pieces': String(count) },
      },
      data: { payload: piece.toString('base64') },
    };
    const existing = await this.secret(name);
    if (existing) {
      await kubeCall({ verb: 'update', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () =>
        this.client.core.replaceNamespacedSecret({
          name,
          namespace: SYSTEM_NAMESPACE,
          body: { ...body, metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion } },
        }),
      );
    } else {
      await kubeCall({ verb: 'create', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () =>
        this.client.core.createNamespacedSecret({ namespace: SYSTEM_NAMESPACE, body }),
      );
    }
  }

  async read(name: string): Promise<Buffer | undefined> {
    const secret = await this.secret(name);
    return secret && Buffer.from(secret.data?.payload ?? '', 'base64');
  }

  async remove(name: string): Promise<boolean> {
    try {
      await kubeCall({ verb: 'delete', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () =>
        this.client.core.deleteNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE }),
      );
      return true;
    } catch (error) {
      if (error instanceof NotFound) return false;
      throw error;
    }
  }

  private secret(name: string): Promise<V1Secret | undefined> {
    return kubeRead({ verb: 'read', kind: 'Secret', namespace: SYSTEM_NAMESPACE, name }, () =>
      this.client.core.readNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE }),
    );
  }
}

const SETTINGS_CONFIG_MAP = 'flotilla-config';

/** flotilla's settings: the ConfigMap `flotilla-config` in the system namespace. */
class ConfigMapSettings {
  constructor(private readonly client: Pick<KubeClient, 'core'>) {}

  async read(): Promise<Readonly<Record<string, string>>> {
    const map: V1ConfigMap | undefined = await kubeRead({ verb: 'read', kind: 'ConfigMap', namespace: SYSTEM_NAMESPACE, name: SETTINGS_CONFIG_MAP }, () =>
      this.client.core.readNamespacedConfigMap({ name: SETTINGS_CONFIG_MAP, namespace: SYSTEM_NAMESPACE }),
    );
    return map?.data ?? {};
  }

  merge(fields: Readonly<Record<string, string>>): Promise<void> {
    return changeConfigMap(this.client, SYSTEM_NAMESPACE, SETTINGS_CONFIG_MAP, (data) => {
      Object.assign(data, fields);
      return true;
    });
  }
}

/** Objects of any kind (objects.ts, watch.ts). */
class KubeObjects {
  constructor(private readonly client: KubeClient) {}

  apply(objects: readonly KubeObject[], options: { readonly force?: boolean } = {}): Promise<KubeObject[]> {
    return serverSideApply(this.client, objects, options);
  }

  read<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    return readObject<T>(this.client, ref);
  }

  async list<T extends KubeObject = KubeObject>(selector: KindSelector): Promise<T[]> {
    return (await listObjects<T>(this.client, selector)).items;
  }

  patch(ref: ObjectRef, patch: Record<string, unknown>): Promise<KubeObject> {
    return mergePatch(this.client, ref, patch);
  }

  delete(ref: ObjectRef): Promise<boolean> {
    return deleteObject(this.client, ref);
  }

  async serves(apiVersion: string, kind: string): Promise<boolean> {
    try {
      return (await discoverKind(this.client, apiVersion, kind)) !== undefined;
    } catch (error) {
      if (error instanceof NotFound) return false;
      throw error;
    }
  }

  async ensureNamespace(name: string): Promise<void> {
    const existing = await kubeRead({ verb: 'read', kind: 'Namespace', name }, () => this.client.core.readNamespace({ name }));
    if (existing) return;
    const body: V1Namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { ...MANAGED_BY } } };
    try {
      await kubeCall({ verb: 'create', kind: 'Namespace', name }, () => this.client.core.createNamespace({ body }));
    } catch (error) {
      if (!(error instanceof AlreadyExists)) throw error;
    }
  }

  watch<T extends KubeObject, R>(selector: KindSelector, judge: WatchJudge<T, R>, options: WatchOptions): Promise<R> {
    return watchUntil(this.client, selector, judge, options);
  }
}

/** The app's lock: a Lease (lease.ts). */
class LeaseLocks {
  constructor(private readonly client: KubeClient) {}

  acquire(options: LeaseOptions): Promise<HeldLease> {
    return acquireLease(this.client, options);
  }

  requestAbort(namespace: string, name: string, by: string): Promise<{ holder: string; operation?: string } | undefined> {
    return requestAbort(this.client, namespace, name, by);
  }

  async remove(namespace: string, name: string): Promise<void> {
    await kubeRead({ verb: 'delete', kind: 'Lease', namespace, name }, () => this.client.coordination.deleteNamespacedLease({ name, namespace }));
  }
}
