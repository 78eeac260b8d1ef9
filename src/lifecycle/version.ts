/**
 * One uploaded version of the app, ready to operate on: its stored payload
 * written out as an app folder, the app model loaded from it, its plugin
 * bundle loaded into a cluster-mode host (passwords in Secrets, records in a
 * ConfigMap), and the values of each release computed with the user
 * overrides the cluster keeps as layer 8.
 */
import { loadApp, type App, type Release } from '../app/index.js';
import { fromPlain, type ValueNode } from '../document/index.js';
import { clusterStores, type KubeClient } from '../kube/index.js';
import { createPluginHost, loadPluginBundle, type PluginHost } from '../plugins/index.js';
import { computeReleaseValues, type LayerProvider, type ReleaseValues } from '../values/index.js';
import type { EventSink } from './events.js';
import { materialize, readPayload, type MaterializedApp } from './payload.js';
import type { RecordedBundle, UserOverrides } from './record.js';

export interface LoadedVersion {
  readonly app: App;
  readonly host: PluginHost;
  readonly files: MaterializedApp;
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
}

/** The namespace most releases use. */
export function appNamespace(releases: readonly { readonly namespace: string }[]): string {
  const counts = new Map<string, number>();
  for (const r of releases) counts.set(r.namespace, (counts.get(r.namespace) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? 'default';
}

/** Layer 8 from the record: one chart's user overrides, labelled `user`. */
export function userOverridesProvider(appName: string, overrides: UserOverrides): LayerProvider {
  return async (release) => {
    const values = overrides[release.chart];
    if (!values || Object.keys(values).length === 0) return undefined;
    return fromPlain(values, { layer: 'user', location: { file: `flotilla override show ${appName} ${release.chart}`, line: 0, column: 0 } }) as ValueNode;
  };
}

export async function loadVersion(client: KubeClient, bundle: RecordedBundle, appName: string, options: LoadVersionOptions): Promise<LoadedVersion> {
  return loadVersionFiles(client, await readPayload(client, bundle.payload), `stored bundle ${bundle.payload}`, appName, options);
}

/** The same, from payload files in memory (a tarball not uploaded, for a diff). */
export async function loadVersionFiles(client: KubeClient, payload: ReadonlyMap<string, Buffer>, label: string, appName: string, options: LoadVersionOptions): Promise<LoadedVersion> {
  const files = await materialize(payload, label);
  try {
    const app = await loadApp(files.root);
    const namespace = appNamespace(app.releases);
    const host = await createPluginHost(app, await loadPluginBundle(files.plugins), {
      mode: 'cluster',
      cluster: clusterStores(client, namespace, appName, { readOnly: options.readOnly === true }),
      ...(options.applyMode ? { applyMode: options.applyMode } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      log: (entry) => options.events({ type: 'plugin-log', entry }),
    });
    const user = userOverridesProvider(appName, options.userOverrides);
    return {
      app,
      host,
      files,
      namespace,
      values: (release) => computeReleaseValues(app, release, { plugin: host.overridesProvider(), user }),
      dispose: () => files.dispose(),
    };
  } catch (error) {
    await files.dispose();
    throw error;
  }
}
