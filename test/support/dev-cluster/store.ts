/**
 * TEST FIXTURE (dev cluster): object storage with one global resourceVersion
 * counter (as etcd's revision) and a bounded history of changes, from which
 * watches resume; a watch older than the history gets 410 Expired.
 *
 * Stored objects are never mutated in place: every change stores a new
 * object, so history entries can share them safely.
 */
import type { JsonObject } from './patch.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredChange {
  readonly resourceVersion: number;
  readonly type: ChangeType;
  /** `group/plural`: one storage per group and resource, whatever the version. */
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
  readonly object: JsonObject;
  /** The object before the change (selector transitions need it). */
  readonly previous?: JsonObject;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<{ uid: string; kind: string; name: string; apiVersion: string }>;
  managedFields?: JsonObject[];
}

/** A timestamp as Kubernetes writes them (RFC 3339, whole seconds). */
export const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

export const metaOf = (object: JsonObject): ObjectMeta => object.metadata as unknown as ObjectMeta;

const objectKey = (namespace: string, name: string): string => `${namespace}/${name}`;

export class Store {
  private revision = 1;
  private readonly objects = new Map<string, Map<string, JsonObject>>();
  private readonly history: StoredChange[] = [];
  /** The revision of the oldest change still in history; older watches expire. */
  private compacted = 1;
  private readonly subscribers = new Set<(change: StoredChange) => void>();
  /** Changes stored but not yet told to every subscriber, oldest first. */
  private readonly undelivered: StoredChange[] = [];
  private delivering = false;

  constructor(private readonly historySize: number) {}

  get resourceVersion(): number {
    return this.revision;
  }

  /** Watches may resume from any revision at or after this one. */
  get oldestResumable(): number {
    return this.compacted;
  }

  get(resource: string, namespace: string, name: string): JsonObject | undefined {
    return this.objects.get(resource)?.get(objectKey(namespace, name));
  }

  /** Objects of a resource, optionally of one namespace, ordered by namespace then name. */
  list(resource: string, namespace?: string): JsonObject[] {
    const all = [...(this.objects.get(resource)?.entries() ?? [])];
    const prefix = namespace !== undefined ? `${namespace}/` : undefined;
    return all
      .filter(([key]) => prefix === undefined || key.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, object]) => object);
  }

  /**
   * Stores (ADDED/MODIFIED) or removes (DELETED) an object, stamping the next
   * resourceVersion on it, and tells subscribers.
   */
  commit(resource: string, type: ChangeType, object: JsonObject): JsonObject {
    const meta = metaOf(object);
    const namespace = meta.namespace ?? '';
    const key = objectKey(namespace, meta.name);
    const byName = this.objects.get(resource) ?? new Map<string, JsonObject>();
    this.objects.set(resource, byName);
    const previous = byName.get(key);
    this.revision++;
    const stored: JsonObject = { ...object, metadata: { ...(object.metadata as JsonObject), resourceVersion: String(this.revision) } };
    if (type === 'DELETED') byName.delete(key);
    else byName.set(key, stored);
    const change: StoredChange = {
      resourceVersion: this.revision,
      type,
      resource,
      namespace,
      name: meta.name,
      object: stored,
      ...(previous ? { previous } : {}),
    };
    this.history.push(change);
    if (this.history.length > this.historySize) {
      const dropped = this.history.splice(0, this.history.length - this.historySize);
      this.compacted = dropped[dropped.length - 1]!.resourceVersion;
    }
    this.undelivered.push(change);
    this.deliver();
    return stored;
  }

  /**
   * Tells subscribers of each change in resourceVersion order. A subscriber
   * that writes while it is told of a change (garbage collection, a
   * controller) does not get its change delivered before the one being told:
   * it waits its turn, so every watch sees resourceVersions ascending, as
   * the real server's watch cache sends them.
   */
  private deliver(): void {
    if (this.delivering) return;
    this.delivering = true;
    try {
      for (let change = this.undelivered.shift(); change; change = this.undelivered.shift()) {
        for (const subscriber of this.subscribers) subscriber(change);
      }
    } finally {
      this.delivering = false;
    }
  }

  /** Changes after `resourceVersion`, or undefined when history no longer reaches back that far. */
  changesSince(resourceVersion: number): StoredChange[] | undefined {
    if (resourceVersion < this.compacted) return undefined;
    const start = this.history.findIndex((c) => c.resourceVersion > resourceVersion);
    return start < 0 ? [] : this.history.slice(start);
  }

  subscribe(subscriber: (change: StoredChange) => void): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }
}
