/**
 * One version of the app, ready to operate on: a session (src/session) over
 * its stored payload — the app assembled from it in memory, its plugin
 * bundle in a cluster-mode host (passwords in Secrets, records in a
 * ConfigMap), the user overrides the cluster keeps as values layer 8 — and
 * its fluxcd-manifests/ written out for kustomize.
 */
import type { App, Release } from '../app/index.js';
import type { OpenedBundle } from '../tarball/index.js';
import { fromPlain, type ValueNode } from '../yaml/index.js';
import type { Cluster } from './cluster.js';
import type { PluginHost } from '../plugins/index.js';
import { Session } from '../session/index.js';
import type { AppVersions } from '../catalog/index.js';
import type { LayerProvider, ReleaseValues } from '../values/index.js';
import { readClusterConfig } from './config.js';
import type { EventSink } from './events.js';
import { readPayload, writeManifests } from './payload.js';
import type { RecordedBundle, UserOverrides } from './record.js';

export interface LoadedVersion {
  readonly app: App;
  readonly host: PluginHost;
  /** The version's fluxcd-manifests/, written out (a private copy: apply edits it). */
  readonly manifests: string;
  /** The namespace of the app's own objects (password Secrets, records). */
  readonly namespace: string;
  /** Values of one release, user overrides on top. */
  values(release: Release): Promise<ReleaseValues>;
  dispose(): Promise<void>;
}

export interface LoadVersionOptions {
  readonly events: EventSink;
  readonly signal?: AbortSignal;
  readonly applyMode?: string;
  readonly userOverrides: UserOverrides;
  /** Write nothing to the cluster (a diff): passwords not yet generated are shown as such. */
  readonly readOnly?: boolean;
  /** The record's version state: its target and custom images instead of the bundle's spec's. */
  readonly versions?: AppVersions;
}

/** Layer 8 from the record: one chart's user overrides, labelled `user`. */
function userOverridesProvider(appName: string, overrides: UserOverrides): LayerProvider {
  return async (release) => {
    const values = overrides[release.chart];
    if (!values || Object.keys(values).length === 0) return undefined;
    return fromPlain(values, { layer: 'user', location: { file: `flotilla override show ${appName} ${release.chart}`, line: 0, column: 0 } }) as ValueNode;
  };
}

export async function loadVersion(cluster: Cluster, bundle: RecordedBundle, appName: string, options: LoadVersionOptions): Promise<LoadedVersion> {
  // Checked against the upload's digests (and the signing key) before the app assembles or a plugin loads.
  const { signingKey } = await readClusterConfig(cluster.settings);
  return loadVersionFrom(cluster, await readPayload(cluster.payloads, bundle, signingKey), appName, options);
}

/** The same, from a payload (or a whole tarball) in memory. */
export async function loadVersionFrom(cluster: Cluster, payload: OpenedBundle, appName: string, options: LoadVersionOptions): Promise<LoadedVersion> {
  // The manifests are written while the app assembles and the plugins load: neither needs the other.
  const writing = writeManifests(payload);
  writing.catch(() => undefined);
  try {
    let namespace = 'default';
    const session = await Session.fromBundle(payload, {
      ...(options.versions ? { versions: options.versions } : {}),
      plugins: {
        mode: 'cluster',
        // Asked for when the host loads, after the app (and so its namespace) is known.
        get cluster() {
          return cluster.pluginStores(namespace, appName, { readOnly: options.readOnly === true });
        },
        ...(options.applyMode ? { applyMode: options.applyMode } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        log: (entry) => options.events({ type: 'plugin-log', entry }),
      },
      userOverrides: userOverridesProvider(appName, options.userOverrides),
    });
    namespace = session.app.namespace;
    const host = await session.plugins();
    const manifests = await writing;
    return {
      app: session.app,
      host,
      manifests: manifests.dir,
      namespace,
      values: (release) => session.releaseValues(release),
      dispose: manifests.dispose,
    };
  } catch (error) {
    await writing.then((manifests) => manifests.dispose()).catch(() => undefined);
    throw error;
  }
}
