/**
 * Contexts for testing plugins without a cluster or an app on disk: offline,
 * with in-memory passwords and records and a logger that keeps what it was told.
 */
import type {
  ChartContext,
  DeploymentSpec,
  HookKind,
  JsonValue,
  LifecycleContext,
  OfflineContext,
  Operation,
  PasswordStore,
  PluginLogger,
  RecordStore,
  ReleaseRef,
  Timing,
} from './context.js';

export interface TestContextOptions {
  readonly app?: { readonly name: string; readonly version: string };
  /** Sections of the spec; `main.release` defaults to the version's release. */
  readonly spec?: {
    readonly main?: Partial<DeploymentSpec['main']>;
    readonly features?: Record<string, unknown>;
    readonly common?: DeploymentSpec['common'];
    readonly services?: DeploymentSpec['services'];
  };
  readonly version?: {
    readonly release?: string;
    readonly deployed?: string | null;
    readonly images?: Record<string, string>;
    readonly imageSources?: Record<string, 'release' | 'custom'>;
    readonly serviceDefaults?: Record<string, unknown>;
  };
  readonly releases?: readonly ReleaseRef[];
  readonly applyMode?: string;
  readonly records?: Record<string, JsonValue>;
  readonly signal?: AbortSignal;
}

/** Passwords that are predictable in tests: `test-password-<name>`. */
export class MemoryPasswordStore implements PasswordStore {
  readonly values = new Map<string, string>();
  async getOrGenerate(name: string): Promise<string> {
    const known = this.values.get(name);
    if (known !== undefined) return known;
    const value = `test-password-${name}`;
    this.values.set(name, value);
    return value;
  }
}

export class MemoryRecordStore implements RecordStore {
  readonly values: Map<string, JsonValue>;
  constructor(initial: Record<string, JsonValue> = {}) {
    this.values = new Map(Object.entries(initial));
  }
  async get(key: string): Promise<JsonValue | undefined> {
    return this.values.get(key);
  }
  async set(key: string, value: JsonValue): Promise<void> {
    this.values.set(key, value);
  }
  async delete(key: string): Promise<void> {
    this.values.delete(key);
  }
}

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn';
  readonly message: string;
}

export class MemoryLogger implements PluginLogger {
  readonly lines: LogLine[] = [];
  debug(message: string): void {
    this.lines.push({ level: 'debug', message });
  }
  info(message: string): void {
    this.lines.push({ level: 'info', message });
  }
  warn(message: string): void {
    this.lines.push({ level: 'warn', message });
  }
}

export type TestContext = OfflineContext & { readonly passwords: MemoryPasswordStore; readonly records: MemoryRecordStore; readonly log: MemoryLogger };

export function testContext(options: TestContextOptions = {}): TestContext {
  const release = options.version?.release ?? options.spec?.main?.release ?? '2025.1';
  const spec: DeploymentSpec = {
    main: { domain: 'cloud.example.com', ...options.spec?.main, release },
    features: options.spec?.features ?? {},
    common: options.spec?.common ?? {},
    services: options.spec?.services ?? {},
  };
  return {
    mode: 'offline',
    app: options.app ?? { name: 'test-app', version: '1.0-1' },
    spec,
    version: {
      release,
      target: release,
      deployed: options.version?.deployed ?? null,
      images: options.version?.images ?? {},
      imageSources: options.version?.imageSources ?? Object.fromEntries(Object.keys(options.version?.images ?? {}).map((field) => [field, 'release' as const])),
      serviceDefaults: options.version?.serviceDefaults ?? {},
    },
    releases: options.releases ?? [],
    applyMode: options.applyMode ?? 'normal',
    log: new MemoryLogger(),
    signal: options.signal ?? new AbortController().signal,
    passwords: new MemoryPasswordStore(),
    records: new MemoryRecordStore(options.records),
  };
}

/** A context for a chart plugin's hooks; the release defaults to one named after the chart. */
export function testChartContext(chart: string, options: TestContextOptions & { readonly release?: Partial<ReleaseRef> } = {}): TestContext & ChartContext {
  const release: ReleaseRef = { name: chart, chart, namespace: 'openstack', releaseName: `osh-openstack-${chart}`, dependsOn: [], ...options.release };
  const base = testContext({ ...options, releases: options.releases ?? [release] });
  return { ...base, release };
}

export function testLifecycleContext(operation: Operation, timing: Timing, kind: HookKind, options: TestContextOptions = {}): TestContext & LifecycleContext {
  return { ...testContext(options), operation, timing, kind };
}
