/**
 * TEST FIXTURE (dev cluster): Helm's release storage as the Flux simulation
 * keeps it — one Secret per revision, `sh.helm.release.v1.NAME.vN` of type
 * `helm.sh/release.v1`, labelled owner/name/status/version, the release
 * gzipped JSON, base64 inside the Secret's data — so the real `helm list`
 * and `helm history` read what the simulation installed.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Cluster } from './cluster.js';
import type { ChartMetadata } from './helm.js';
import { isObject, type JsonObject } from './patch.js';
import { ApiError } from './status.js';
import { now } from './store.js';

/** A Helm release as Helm stores it (the fields the fixture writes and reads). */
export interface HelmReleaseRecord {
  name: string;
  namespace: string;
  version: number;
  info: { first_deployed: string; last_deployed: string; deleted: string; description: string; status: string };
  chart: { metadata: ChartMetadata };
  config: JsonObject;
  manifest: string;
}

export interface NewRevision {
  readonly revision: number;
  readonly status: 'deployed' | 'failed';
  readonly chart: ChartMetadata;
  readonly config: JsonObject;
  readonly manifest: string;
  readonly description: string;
  readonly started: string;
  /** Revisions kept (the HelmRelease's maxHistory; 0: all). */
  readonly maxHistory: number;
}

const secretName = (releaseName: string, version: number) => `sh.helm.release.v1.${releaseName}.v${version}`;

export class HelmReleaseStorage {
  constructor(
    private readonly cluster: Cluster,
    private readonly manager: string,
  ) {}

  private get secrets() {
    return this.cluster.types.get('', 'v1', 'secrets')!;
  }

  /** The stored revisions of a release, newest first. */
  list(namespace: string, releaseName: string): HelmReleaseRecord[] {
    const items = this.cluster.list(this.secrets, namespace, { labelSelector: `owner=helm,name=${releaseName}` }).items as JsonObject[];
    return items
      .map((secret) => {
        const data = isObject(secret.data) ? String(secret.data.release ?? '') : '';
        const inner = Buffer.from(Buffer.from(data, 'base64').toString('utf8'), 'base64');
        return JSON.parse(gunzipSync(inner).toString('utf8')) as HelmReleaseRecord;
      })
      .sort((a, b) => b.version - a.version);
  }

  /** Stores a new revision; a deployed one supersedes the revision deployed before; revisions beyond maxHistory go. */
  store(namespace: string, releaseName: string, next: NewRevision): void {
    const previous = this.list(namespace, releaseName);
    if (next.status === 'deployed') {
      for (const old of previous.filter((r) => r.info.status === 'deployed')) this.write(namespace, { ...old, info: { ...old.info, status: 'superseded' } });
    }
    this.write(namespace, {
      name: releaseName,
      namespace,
      version: next.revision,
      info: {
        first_deployed: previous[previous.length - 1]?.info.first_deployed ?? next.started,
        last_deployed: now(),
        deleted: '',
        description: next.description,
        status: next.status,
      },
      chart: { metadata: next.chart },
      config: next.config,
      manifest: next.manifest,
    });
    // maxHistory 0 keeps every revision, as Helm does.
    for (const old of next.maxHistory > 0 ? previous.slice(next.maxHistory - 1) : []) {
      try {
        this.cluster.delete(this.secrets, namespace, secretName(releaseName, old.version));
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 404)) throw error;
      }
    }
  }

  /** Forgets every revision of a release (uninstall). */
  remove(namespace: string, releaseName: string): void {
    this.cluster.deleteCollection(this.secrets, namespace, { labelSelector: `owner=helm,name=${releaseName}` });
  }

  private write(namespace: string, record: HelmReleaseRecord): void {
    const name = secretName(record.name, record.version);
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'helm.sh/release.v1',
      metadata: { name, namespace, labels: { name: record.name, owner: 'helm', status: record.info.status, version: String(record.version) } },
      data: { release: Buffer.from(gzipSync(JSON.stringify(record)).toString('base64')).toString('base64') },
    };
    this.cluster.apply(this.secrets, namespace, name, JSON.stringify(secret), { fieldManager: this.manager, force: true });
  }
}
