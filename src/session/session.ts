/**
 * The session: one app and everything commands need around it, wired once
 * (docs/architecture.md, "The session") — the way Helm's action.Configuration
 * is handed to every action. Load the app (from a source tree or a built
 * tarball) → its plugin host (loaded when first needed) → the values layer
 * providers (plugins, and the cluster's user overrides when the lifecycle
 * gives them) → the redactor for anything printed.
 */
import { assembleApp, loadApp, type App, type LoadOptions, type Release } from '../app/index.js';
import { bundleFolder, openBundle, PLUGINS_DIR, type OpenedBundle } from '../tarball/index.js';
import {
  createPluginHost,
  loadAppPlugins,
  loadPluginBundleFiles,
  SecretRegistry,
  type PluginHost,
  type PluginHostOptions,
  type SecretPathRule,
  type SecretPathSegment,
} from '../plugins/index.js';
import {
  commandLineValues,
  computeReleaseValues,
  schemaFileSecrecy,
  valuesDiagnostics,
  type CommandLineValues,
  type LayerProvider,
  type LayerProviders,
  type ReleaseValues,
} from '../values/index.js';
import { bundleAppSource } from './bundle-source.js';
import { openParseMemo, saveParseMemo } from './parse-cache.js';
import type { CacheFolder } from '../cache/index.js';
import type { AppVersions } from '../catalog/index.js';
import type { ParseMemo } from '../yaml/index.js';
import { DiagnosticsError, FlotillaError, formatLocation, type Diagnostic } from '../diagnostics/index.js';

export interface SessionOptions {
  /** How plugins run; offline (no cluster) unless the lifecycle says otherwise. */
  readonly plugins?: Partial<PluginHostOptions>;
  /** Values layer 8: the user overrides (stored in the cluster), when the caller has them. */
  readonly userOverrides?: LayerProvider;
  /** The top values layer: -f/--set/--set-string given on the command line (preflight, template, overrides). */
  readonly commandLine?: readonly CommandLineValues[];
  /** The app's plugins/ already bundled (build keeps them cached): loaded as they are instead of bundling the sources again. */
  readonly pluginBundle?: ReadonlyMap<string, Buffer>;
  /**
   * A folder kept between runs (the build's cache): the app's YAML files are
   * parsed through a memo kept there, so only files changed since the last
   * run are parsed again (see `saveCache`).
   */
  readonly cache?: CacheFolder;
  /** `--strict`: values warnings (kind clashes, unknown keys) are errors, as the release table's `strictValues` makes them for the app. */
  readonly strict?: boolean;
}

export class Session {
  private host: Promise<PluginHost> | undefined;
  private loadedHost: PluginHost | undefined;

  private constructor(
    readonly app: App,
    /** The tarball the app was read from (charts, fluxcd-manifests, plugins as shipped), when it was. */
    readonly bundle: OpenedBundle | undefined,
    private readonly options: SessionOptions,
    private readonly parseMemo?: ParseMemo,
  ) {}

  /** A session over an app source tree (`flotilla build`, `preflight`, `overrides`). */
  static async fromDirectory(appDir: string, options: SessionOptions & LoadOptions = {}): Promise<Session> {
    const memo = options.cache === undefined ? undefined : await openParseMemo(options.cache);
    return new Session(await loadApp(appDir, { ...options, parseMemo: memo ?? options.parseMemo }), undefined, options, memo);
  }

  /**
   * A session over a built tarball, read in memory: its app/ assembled into
   * the App (with a cluster's version state when given), its plugins/ run as shipped.
   */
  static async fromBundle(bundle: string | OpenedBundle, options: SessionOptions & { readonly versions?: AppVersions } = {}): Promise<Session> {
    const opened = typeof bundle === 'string' ? await openBundle(bundle) : bundle;
    return new Session(assembleApp(bundleAppSource(opened), options.versions ? { versions: options.versions } : {}), opened, options);
  }

  /** A session over an App already loaded (from a source tree). */
  static forApp(app: App, options: SessionOptions = {}): Session {
    return new Session(app, undefined, options);
  }

  /** The plugin host, loaded on first use and kept. */
  plugins(): Promise<PluginHost> {
    this.host ??= this.loadPlugins().then((host) => (this.loadedHost = host));
    return this.host;
  }

  /** The providers of the values layers computed outside the app files: plugins (5) and user overrides (8). */
  async providers(): Promise<LayerProviders> {
    const host = await this.plugins();
    const commandLine = commandLineValues(this.options.commandLine ?? []);
    return {
      plugin: host.overridesProvider(),
      ...(this.options.userOverrides ? { user: this.options.userOverrides } : {}),
      ...(commandLine ? { commandLine: () => Promise.resolve(commandLine) } : {}),
    };
  }

  /** Every values layer of one release, merged and split into static and system overrides. */
  async releaseValues(release: Release): Promise<ReleaseValues> {
    return computeReleaseValues(this.app, release, await this.providers());
  }

  /** Whether values warnings are errors: `--strict` (options.strict) or the release table's `strictValues`. */
  get strictValues(): boolean {
    return this.options.strict === true || this.app.strictValues;
  }

  /** What a release's values warn about or refuse (kind clashes, unknown keys, malformed images), each at its file:line, with this session's strictness. */
  valuesDiagnostics(values: ReleaseValues): Diagnostic[] {
    return valuesDiagnostics(values, this.strictValues).map((d) => ({ ...d, message: `release "${values.release.name}": ${d.message}` }));
  }

  /**
   * Computes and checks everything a command could refuse, short of running
   * helm: the plugins load and bind to releases, and every release's values
   * layers parse, render and merge (plugins returning their values), with no
   * malformed image and (when strict) no values warning. Build and verify
   * call this, so what `overrides` or `preflight` refuses never ships.
   * Resolves to the values warnings, for the caller to print.
   */
  async checkAll(): Promise<Diagnostic[]> {
    return [...(await this.checkReleases(this.app.releases)).values()].flat();
  }

  /** `checkAll` for some releases (the build checks only those whose inputs changed since they last passed): the warnings by release name. */
  async checkReleases(releases: readonly Release[]): Promise<Map<string, Diagnostic[]>> {
    await this.plugins();
    const problems: Diagnostic[] = [];
    const warnings = new Map<string, Diagnostic[]>();
    const failed = new Set<string>();
    const causes: Error[] = [];
    for (const release of releases) {
      try {
        const found = this.valuesDiagnostics(await this.releaseValues(release));
        const errors = found.filter((d) => d.severity === 'error');
        if (errors.length > 0) failed.add(release.name);
        problems.push(...errors);
        warnings.set(
          release.name,
          found.filter((d) => d.severity === 'warning'),
        );
      } catch (error) {
        if (!(error instanceof FlotillaError)) throw error;
        failed.add(release.name);
        causes.push(error);
        problems.push(...asDiagnostics(error).map((d) => ({ ...d, message: `release "${release.name}": ${d.message}` })));
      }
    }
    if (problems.length > 0) throw new DiagnosticsError(`the values of ${[...failed].join(', ')} cannot be computed:`, problems, causes);
    return warnings;
  }

  /** Keeps what this session parsed in `options.cache`, for the next run: call once its work is done. */
  async saveCache(): Promise<void> {
    if (this.parseMemo && this.options.cache !== undefined) await saveParseMemo(this.options.cache, this.parseMemo);
  }

  /** A copy with every secret (plugins' passwords, values under secret keys) replaced by `<secret>`: for anything printed or reported. */
  redact<T>(value: T, at?: readonly SecretPathSegment[]): T {
    if (this.loadedHost) return this.loadedHost.redact(value, at);
    const registry = new SecretRegistry();
    registry.markSecretPaths(this.chartSecrecy);
    return registry.redact(value, at);
  }

  /** The paths the charts' values.schema.json files mark secret, read when first asked (most runs print nothing). */
  private readonly chartSecrecy: SecretPathRule = (() => {
    let rules: SecretPathRule[] | undefined;
    return (path) => {
      rules ??= this.app.releases.flatMap((release) => schemaFileSecrecy(this.app.chartFile(release, 'values.schema.json')) ?? []);
      return rules.some((rule) => rule(path));
    };
  })();

  private async loadPlugins(): Promise<PluginHost> {
    const options: PluginHostOptions = {
      mode: 'offline',
      ...this.options.plugins,
      secretPathRules: [...(this.options.plugins?.secretPathRules ?? []), this.chartSecrecy],
    };
    const bundled = this.bundle ? bundleFolder(this.bundle.files, PLUGINS_DIR) : this.options.pluginBundle;
    if (!bundled) return loadAppPlugins(this.app, options);
    // Checked as a folder would be (every file's sha256 against the manifest) before any of it runs.
    return createPluginHost(this.app, await loadPluginBundleFiles(bundled, this.bundle ? `the tarball's ${PLUGINS_DIR}/` : 'the plugin bundle'), options);
  }
}

/** An error as diagnostics, each with its place kept apart from its text. */
function asDiagnostics(error: FlotillaError): readonly Diagnostic[] {
  if (error instanceof DiagnosticsError) return error.diagnostics;
  const prefix = error.location ? `${formatLocation(error.location)}: ` : '';
  const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  return [{ severity: 'error', message, ...(error.location ? { location: error.location } : {}) }];
}
