/**
 * The lifecycle's cluster (src/lifecycle/cluster.ts) in memory, for the
 * lifecycle's own tests: app records and payload pieces with revisions
 * (a stale revision is a Conflict, a second create AlreadyExists — the
 * errors src/kube gives), objects with server-side apply's outcome for one
 * field manager, JSON merge patches and watches that judge every change, and
 * the app's lock run by src/kube's own lock protocol over leases kept here,
 * on a clock the test moves. `interfere` lets a test act between a read and
 * the write that follows it, as another writer would.
 */
import {
  acquireLeaseIn,
  AlreadyExists,
  Conflict,
  FluxMissingError,
  NotFound,
  requestAbortIn,
  WaitAbortedError,
  WaitTimeoutError,
  type KindSelector,
  type KubeObject,
  type LeaseClock,
  type LeaseState,
  type LeaseStorage,
  type WatchJudge,
  type WatchOptions,
} from '../../src/kube/index.js';
import type {
  AppRecordStore,
  Cluster,
  EncodedRecord,
  LockStore,
  ObjectRef,
  ObjectStore,
  PayloadStore,
  RecordSummary,
  SettingsStore,
} from '../../src/lifecycle/index.js';
import type { ClusterStores, JsonValue, ObjectSelector } from '../../src/plugins/index.js';

/** What a store was asked to do, for a test to count and to step between. */
export type Write = { readonly store: string; readonly verb: string; readonly name: string };

let revisions = 0;
const nextRevision = () => String(++revisions);
const call = (verb: string, kind: string, name: string, namespace?: string) => ({ verb, kind, name, ...(namespace ? { namespace } : {}) });

/** A hook run before each write; it may write itself (another writer) or throw (a fault). */
type Interference = (write: Write) => Promise<void> | void;

class Writes {
  readonly log: Write[] = [];
  private hooks: Interference[] = [];

  /** Runs `hook` before the next write (once). */
  once(hook: Interference): void {
    this.hooks.push(hook);
  }

  async before(write: Write): Promise<void> {
    this.log.push(write);
    const hook = this.hooks.shift();
    if (hook) await hook(write);
  }
}

export class MemoryRecords implements AppRecordStore {
  readonly kept = new Map<string, { text: string; revision: string; summary: RecordSummary }>();
  constructor(private readonly writes: Writes) {}

  async read(app: string): Promise<EncodedRecord | undefined> {
    const kept = this.kept.get(app);
    return kept && { text: kept.text, revision: kept.revision, where: `record ${app}` };
  }

  async list(): Promise<EncodedRecord[]> {
    return [...this.kept].map(([app, kept]) => ({ text: kept.text, revision: kept.revision, where: `record ${app}` }));
  }

  async create(app: string, text: string, summary: RecordSummary): Promise<string> {
    await this.writes.before({ store: 'records', verb: 'create', name: app });
    if (this.kept.has(app)) throw new AlreadyExists(call('create', 'record', app), 409, 'AlreadyExists', `record ${app} already exists`);
    const revision = nextRevision();
    this.kept.set(app, { text, revision, summary });
    return revision;
  }

  async replace(app: string, text: string, summary: RecordSummary, revision: string): Promise<string> {
    await this.writes.before({ store: 'records', verb: 'replace', name: app });
    const kept = this.kept.get(app);
    if (!kept) throw new NotFound(call('update', 'record', app), 404, 'NotFound', `record ${app} not found`);
    if (kept.revision !== revision)
      throw new Conflict(
        call('update', 'record', app),
        409,
        'Conflict',
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    const next = nextRevision();
    this.kept.set(app, { text, revision: next, summary });
    return next;
  }

  async remove(app: string): Promise<void> {
    await this.writes.before({ store: 'records', verb: 'remove', name: app });
    this.kept.delete(app);
  }
}

export class MemoryPayloads implements PayloadStore {
  readonly pieces = new Map<string, { app: string; piece: Buffer; count: number }>();
  constructor(private readonly writes: Writes) {}

  async write(app: string, name: string, piece: Buffer, count: number): Promise<void> {
    await this.writes.before({ store: 'payloads', verb: 'write', name });
    this.pieces.set(name, { app, piece: Buffer.from(piece), count });
  }

  async read(name: string): Promise<Buffer | undefined> {
    const kept = this.pieces.get(name);
    return kept && Buffer.from(kept.piece);
  }

  async remove(name: string): Promise<boolean> {
    await this.writes.before({ store: 'payloads', verb: 'remove', name });
    return this.pieces.delete(name);
  }
}

export class MemorySettings implements SettingsStore {
  fields: Record<string, string> = {};
  constructor(private readonly writes: Writes) {}

  async read(): Promise<Readonly<Record<string, string>>> {
    return { ...this.fields };
  }

  async merge(fields: Readonly<Record<string, string>>): Promise<void> {
    await this.writes.before({ store: 'settings', verb: 'merge', name: 'settings' });
    this.fields = { ...this.fields, ...fields };
  }
}

type Plain = Record<string, unknown>;
const isPlain = (value: unknown): value is Plain => value !== null && typeof value === 'object' && !Array.isArray(value);

/** RFC 7386: objects merge, null deletes, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlain(patch)) return patch;
  const result: Plain = isPlain(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** `a=b,c=d` (equality only: what flotilla selects by). */
function matchesLabels(object: KubeObject, selector: string | undefined): boolean {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const [key, value] = term.split('=');
    if (key === undefined || value === undefined || term.includes('!')) throw new Error(`memory cluster: unsupported label selector ${selector}`);
    return object.metadata.labels?.[key.trim()] === value.trim();
  });
}

const objectKey = (ref: Pick<ObjectRef, 'apiVersion' | 'kind' | 'metadata'>) =>
  `${ref.apiVersion}|${ref.kind}|${ref.metadata.namespace ?? ''}|${ref.metadata.name}`;
/** The key a watch's judge sees: `namespace/name`. */
const judgedKey = (object: KubeObject) => (object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name);

interface Watcher {
  readonly selector: KindSelector;
  changed(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): void;
}

export class MemoryObjects implements ObjectStore {
  readonly kept = new Map<string, KubeObject>();
  private readonly watchers = new Set<Watcher>();
  /** Kinds the cluster serves (`apiVersion|kind`); any other is NotFound. */
  readonly served: Set<string>;

  constructor(
    private readonly writes: Writes,
    served: readonly (readonly [string, string])[],
  ) {
    this.served = new Set(served.map(([apiVersion, kind]) => `${apiVersion}|${kind}`));
  }

  private requireServed(apiVersion: string, kind: string): void {
    if (!this.served.has(`${apiVersion}|${kind}`))
      throw new NotFound({ verb: 'discover', kind }, 404, 'NotFound', `the server does not serve kind ${kind} in ${apiVersion}`);
  }

  /** Stores `object` as the server would (a new resourceVersion, the generation moved on when the spec changes) and tells the watchers. */
  store(object: KubeObject): KubeObject {
    const key = objectKey(object);
    const before = this.kept.get(key);
    const specChanged = JSON.stringify(before?.spec) !== JSON.stringify(object.spec);
    const { resourceVersion: _rv, generation: _g, uid: _uid, ...metadata } = object.metadata;
    const stored: KubeObject = {
      ...object,
      metadata: {
        ...metadata,
        resourceVersion: nextRevision(),
        uid: before?.metadata.uid ?? `uid-${revisions}`,
        generation: (before?.metadata.generation ?? 0) + (before && !specChanged ? 0 : 1),
      },
    };
    this.kept.set(key, stored);
    this.tell(before ? 'MODIFIED' : 'ADDED', stored);
    return stored;
  }

  private tell(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): void {
    for (const watcher of [...this.watchers]) {
      const s = watcher.selector;
      if (
        s.apiVersion === object.apiVersion &&
        s.kind === object.kind &&
        (!s.namespace || s.namespace === object.metadata.namespace) &&
        matchesLabels(object, s.labelSelector)
      )
        watcher.changed(type, object);
    }
  }

  async apply(objects: readonly KubeObject[]): Promise<KubeObject[]> {
    const stored: KubeObject[] = [];
    for (const object of objects) {
      this.requireServed(object.apiVersion, object.kind);
      await this.writes.before({ store: 'objects', verb: 'apply', name: objectKey(object) });
      // One field manager owns every field it applies: its apply replaces what it applied before.
      stored.push(this.store(object));
    }
    return stored;
  }

  async read<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    this.requireServed(ref.apiVersion, ref.kind);
    return this.kept.get(objectKey(ref)) as T | undefined;
  }

  async list<T extends KubeObject = KubeObject>(selector: KindSelector): Promise<T[]> {
    this.requireServed(selector.apiVersion, selector.kind);
    return [...this.kept.values()].filter(
      (o) =>
        o.apiVersion === selector.apiVersion &&
        o.kind === selector.kind &&
        (!selector.namespace || o.metadata.namespace === selector.namespace) &&
        matchesLabels(o, selector.labelSelector),
    ) as T[];
  }

  async patch(ref: ObjectRef, patch: Record<string, unknown>): Promise<KubeObject> {
    this.requireServed(ref.apiVersion, ref.kind);
    await this.writes.before({ store: 'objects', verb: 'patch', name: objectKey(ref) });
    const current = this.kept.get(objectKey(ref));
    if (!current)
      throw new NotFound(call('patch', ref.kind, ref.metadata.name, ref.metadata.namespace), 404, 'NotFound', `${ref.kind} ${ref.metadata.name} not found`);
    return this.store(mergePatch(current, patch) as KubeObject);
  }

  async delete(ref: ObjectRef): Promise<boolean> {
    this.requireServed(ref.apiVersion, ref.kind);
    await this.writes.before({ store: 'objects', verb: 'delete', name: objectKey(ref) });
    const current = this.kept.get(objectKey(ref));
    if (!current) return false;
    this.kept.delete(objectKey(ref));
    this.tell('DELETED', current);
    return true;
  }

  async serves(apiVersion: string, kind: string): Promise<boolean> {
    return this.served.has(`${apiVersion}|${kind}`);
  }

  async ensureNamespace(name: string): Promise<void> {
    if (!this.kept.has(objectKey({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })))
      await this.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }]);
  }

  async watch<T extends KubeObject, R>(selector: KindSelector, judge: WatchJudge<T, R>, options: WatchOptions): Promise<R> {
    const current = new Map((await this.list<T>(selector)).map((o) => [judgedKey(o), o]));
    const describe = () => (typeof options.waitingFor === 'string' ? options.waitingFor : options.waitingFor());
    return new Promise<R>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (settle: () => void) => {
        this.watchers.delete(watcher);
        if (timer) clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        settle();
      };
      const judgeNow = (change: { type: 'LIST' | 'ADDED' | 'MODIFIED' | 'DELETED'; object?: T }) => {
        try {
          const verdict = judge(current, change);
          if (verdict !== undefined) finish(() => resolve(verdict));
        } catch (error) {
          finish(() => reject(error));
        }
      };
      const watcher: Watcher = {
        selector,
        changed(type, object) {
          if (type === 'DELETED') current.delete(judgedKey(object));
          else current.set(judgedKey(object), object as T);
          judgeNow({ type, object: object as T });
        },
      };
      const onAbort = () => finish(() => reject(new WaitAbortedError(`stopped waiting for ${describe()}`)));
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.timeoutMs !== undefined)
        timer = setTimeout(() => finish(() => reject(new WaitTimeoutError(`timed out waiting for ${describe()}`))), options.timeoutMs);
      this.watchers.add(watcher);
      judgeNow({ type: 'LIST' });
    });
  }
}

/** Leases kept in memory, for src/kube's lock protocol. */
export class MemoryLeases implements LeaseStorage {
  readonly kept = new Map<string, LeaseState>();
  constructor(private readonly writes: Writes) {}

  async read(namespace: string, name: string): Promise<LeaseState | undefined> {
    return this.kept.get(`${namespace}/${name}`);
  }

  async create(namespace: string, name: string, state: Omit<LeaseState, 'revision'>): Promise<void> {
    await this.writes.before({ store: 'leases', verb: 'create', name });
    if (this.kept.has(`${namespace}/${name}`)) throw new AlreadyExists(call('create', 'Lease', name, namespace), 409, 'AlreadyExists', `${name} exists`);
    this.kept.set(`${namespace}/${name}`, { ...state, revision: nextRevision() });
  }

  async replace(namespace: string, name: string, state: LeaseState): Promise<void> {
    await this.writes.before({ store: 'leases', verb: 'replace', name });
    const kept = this.kept.get(`${namespace}/${name}`);
    if (!kept) throw new NotFound(call('update', 'Lease', name, namespace), 404, 'NotFound', `${name} not found`);
    if (kept.revision !== state.revision) throw new Conflict(call('update', 'Lease', name, namespace), 409, 'Conflict', 'the object has been modified');
    this.kept.set(`${namespace}/${name}`, { ...state, revision: nextRevision() });
  }

  async delete(namespace: string, name: string, revision: string): Promise<void> {
    await this.writes.before({ store: 'leases', verb: 'delete', name });
    const kept = this.kept.get(`${namespace}/${name}`);
    if (!kept) throw new NotFound(call('delete', 'Lease', name, namespace), 404, 'NotFound', `${name} not found`);
    if (revision && kept.revision !== revision) throw new Conflict(call('delete', 'Lease', name, namespace), 409, 'Conflict', 'precondition failed');
    this.kept.delete(`${namespace}/${name}`);
  }
}

/**
 * A clock the test moves: `advance(ms)` runs every timer due by then, in
 * order, and lets the promises they start settle. Sleeping work waits for
 * the test to move time, so nothing depends on how fast the machine is.
 */
export class TestClock implements LeaseClock {
  private at = 0;
  private readonly wallStart = Date.parse('2026-01-01T00:00:00Z');
  private timers: { due: number; run: () => void; every?: number; id: number }[] = [];
  private ids = 0;

  monotonic(): number {
    return this.at;
  }

  wall(): Date {
    return new Date(this.wallStart + this.at);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.timers.push({ due: this.at + ms, run: resolve, id: ++this.ids }));
  }

  every(ms: number, tick: () => void): () => void {
    const id = ++this.ids;
    this.timers.push({ due: this.at + ms, run: tick, every: ms, id });
    return () => {
      this.timers = this.timers.filter((t) => t.id !== id);
    };
  }

  /** Moves time on by `ms`, running what falls due (and what that schedules) in order. */
  async advance(ms: number): Promise<void> {
    const end = this.at + ms;
    for (;;) {
      await settle();
      const next = this.timers.filter((t) => t.due <= end).sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!next) break;
      this.at = next.due;
      if (next.every !== undefined) next.due += next.every;
      else this.timers = this.timers.filter((t) => t !== next);
      next.run();
    }
    this.at = end;
    await settle();
  }
}

/** Lets every promise that can settle now settle. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

class MemoryLocks implements LockStore {
  constructor(
    readonly leases: MemoryLeases,
    private readonly clock: LeaseClock,
  ) {}

  acquire(options: Parameters<LockStore['acquire']>[0]) {
    return acquireLeaseIn(this.leases, options, this.clock);
  }

  requestAbort(namespace: string, name: string, by: string) {
    return requestAbortIn(this.leases, namespace, name, by, this.clock);
  }

  async remove(namespace: string, name: string): Promise<void> {
    const kept = await this.leases.read(namespace, name);
    if (kept) await this.leases.delete(namespace, name, kept.revision);
  }
}

/** The plugin stores of one app, in memory (passwords made once, records as JSON, objects of the store). */
function memoryPluginStores(
  objects: MemoryObjects,
  passwords: Map<string, string>,
  records: Map<string, JsonValue>,
  namespace: string,
  appName: string,
  readOnly: boolean,
): ClusterStores {
  const refuse = async (): Promise<never> => {
    throw new Error('a read-only run cannot write');
  };
  const listNames = async (selector: ObjectSelector) => (await objects.list(selector)).map((o) => o.metadata.name);
  return {
    passwords: {
      async getOrGenerate(name) {
        const key = `${namespace}/${appName}/${name}`;
        const known = passwords.get(key);
        if (known !== undefined || readOnly) return known ?? '(generated at apply)';
        const made = `pw-${passwords.size + 1}-${name}`;
        passwords.set(key, made);
        return made;
      },
    },
    records: {
      get: async (key) => records.get(`${namespace}/${appName}/${key}`),
      set: readOnly ? refuse : async (key, value) => void records.set(`${namespace}/${appName}/${key}`, value),
      delete: readOnly ? refuse : async (key) => void records.delete(`${namespace}/${appName}/${key}`),
    },
    objects: {
      namespace,
      list: listNames,
      deleteAll: readOnly
        ? refuse
        : async (selector) => {
            const names = await listNames(selector);
            for (const name of names)
              await objects.delete({ apiVersion: selector.apiVersion, kind: selector.kind, metadata: { name, namespace: selector.namespace } });
            return names;
          },
    },
  };
}

/** The Flux kinds flotilla writes and the built-in kinds it reads. */
const SERVED: readonly (readonly [string, string])[] = [
  ['v1', 'Namespace'],
  ['v1', 'Secret'],
  ['v1', 'ConfigMap'],
  ['helm.toolkit.fluxcd.io/v2', 'HelmRelease'],
  ['source.toolkit.fluxcd.io/v1', 'HelmRepository'],
];

export interface MemoryCluster extends Cluster {
  readonly records: MemoryRecords;
  readonly payloads: MemoryPayloads;
  readonly settings: MemorySettings;
  readonly objects: MemoryObjects;
  readonly locks: MemoryLocks;
  readonly clock: TestClock;
  /** Every write, in order. */
  readonly writes: readonly Write[];
  /** Runs `hook` before the next write to any store (once): another writer, or a fault. */
  interfere(hook: Interference): void;
}

export function memoryCluster(options: { readonly flux?: boolean } = {}): MemoryCluster {
  const writes = new Writes();
  const clock = new TestClock();
  const objects = new MemoryObjects(
    writes,
    SERVED.filter(([apiVersion]) => options.flux !== false || !apiVersion.includes('fluxcd')),
  );
  const passwords = new Map<string, string>();
  const pluginRecords = new Map<string, JsonValue>();
  return {
    records: new MemoryRecords(writes),
    payloads: new MemoryPayloads(writes),
    settings: new MemorySettings(writes),
    objects,
    locks: new MemoryLocks(new MemoryLeases(writes), clock),
    clock,
    writes: writes.log,
    interfere: (hook) => writes.once(hook),
    async requireFlux() {
      if (!(await objects.serves('helm.toolkit.fluxcd.io/v2', 'HelmRelease')))
        throw new FluxMissingError('this cluster has no Flux: helmreleases.helm.toolkit.fluxcd.io (helm.toolkit.fluxcd.io/v2) is not served');
    },
    pluginStores: (namespace, appName, { readOnly }) => memoryPluginStores(objects, passwords, pluginRecords, namespace, appName, readOnly),
  };
}
