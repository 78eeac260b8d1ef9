/**
 * Preflight: render every enabled release with the real `helm template`,
 * values fed in Flux's order (static overrides, then system overrides), and
 * explain each failure with Helm's own message and the layers that set the
 * values it names.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { App, Release } from '../app/index.js';
import { loadChart, stageChart } from '../charts/index.js';
import { appRepositoryResolver } from '../dependencies/index.js';
import { mapConcurrently } from '../concurrency/index.js';
import { FlotillaError, formatDiagnostic, type Diagnostic } from '../diagnostics/index.js';
import { dumpYaml, parseYamlStream, type Leaf } from '../yaml/index.js';
import { overridesValuesKey } from '../flux/index.js';
import type { Session } from '../session/index.js';
import { helm, ToolError } from '../tools/index.js';
import { culpritsOf, unsetPathsOf, type ReleaseValues } from '../values/index.js';
import { makeTempDir, removeTempDir } from '../files/index.js';

export interface RenderedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
}

export interface ReleaseCheck {
  readonly release: Release;
  readonly ok: boolean;
  /** Objects Helm rendered (when ok). */
  readonly objects: readonly RenderedObject[];
  /** What `helm template` printed (when ok): the release's Kubernetes objects. */
  readonly manifest?: string;
  /** What went wrong: Helm's message, or flotilla's own (a template or merge error). */
  readonly error?: string;
  /** The values the message names, with the layer and place that set each. */
  readonly culprits: readonly Leaf[];
  /** Value paths the message names that no layer sets (a typo in a chart value, or a value that must be given). */
  readonly unset: readonly string[];
  /** What the release's values warn about (kind clashes, unknown keys), each at its file:line. */
  readonly warnings: readonly Diagnostic[];
  readonly millis: number;
}

export interface PreflightReport {
  readonly app: App;
  readonly checks: readonly ReleaseCheck[];
  readonly ok: boolean;
}

export interface PreflightOptions {
  /** How many `helm template` run at once. */
  readonly concurrency?: number;
  /** The releases to render; default: every release the spec enables. */
  readonly releases?: readonly Release[];
  /** The Kubernetes version charts are rendered for (their `kubeVersion` constraint is checked against it); default: metadata's supported_k8s_version.minimum. */
  readonly kubeVersion?: string;
  /** Fetch no chart dependency from a repository: the app's mapping and the dependency cache only (`--offline`). */
  readonly offline?: boolean;
  /** The cache of chart dependencies fetched from repositories; default `<user cache>/chart-dependencies`. */
  readonly dependencyCacheDir?: string;
}

/** Renders every release the session's app enables (or those given); the values come through the session (its plugins offline). */
export async function preflight(session: Session, options: PreflightOptions = {}): Promise<PreflightReport> {
  const { app } = session;
  await session.plugins();
  const work = await makeTempDir('preflight');
  try {
    const staged = new Map<string, Promise<string>>();
    // Dependencies on repositories resolved as the build resolves them, so what is rendered is what ships.
    const repositories = appRepositoryResolver(app, { offline: options.offline, cacheDir: options.dependencyCacheDir });
    const stage = (release: Release): Promise<string> => {
      const dir = app.path(release.chartPath);
      const known = staged.get(dir);
      if (known) return known;
      const path = loadChart(dir, { repositories }).then((chart) => stageChart(chart, join(work, 'charts', String(staged.size))));
      staged.set(dir, path);
      return path;
    };
    const kubeVersion = options.kubeVersion ?? app.metadata.supportedK8sVersion.minimum;
    const releases = options.releases ?? app.enabled;
    const checks = (await mapConcurrently(releases, options.concurrency ?? 3, (release) => checkRelease(session, release, stage, work, kubeVersion)))
      // Generated passwords never reach the report.
      .map((c) => ({
        ...c,
        ...(c.error ? { error: session.redact(c.error) } : {}),
        culprits: c.culprits.map((l) => ({ ...l, value: session.redact(l.value, l.path) })),
      }));
    return { app, checks, ok: checks.every((c) => c.ok) };
  } finally {
    await removeTempDir(work);
  }
}

async function checkRelease(
  session: Session,
  release: Release,
  stage: (release: Release) => Promise<string>,
  work: string,
  kubeVersion: string,
): Promise<ReleaseCheck> {
  const started = Date.now();
  const done = (fields: Pick<ReleaseCheck, 'ok'> & Partial<ReleaseCheck>): ReleaseCheck => ({
    release,
    objects: [],
    culprits: [],
    unset: [],
    warnings: [],
    millis: Date.now() - started,
    ...fields,
  });
  let values: ReleaseValues;
  try {
    values = await session.releaseValues(release);
  } catch (error) {
    if (error instanceof FlotillaError) return done({ ok: false, error: error.message });
    throw error;
  }
  const found = session.valuesDiagnostics(values);
  const warnings = found.filter((d) => d.severity === 'warning');
  const refused = found.filter((d) => d.severity === 'error');
  if (refused.length > 0) return done({ ok: false, error: refused.map(formatDiagnostic).join('\n'), warnings });
  try {
    const chartDir = await stage(release);
    const staticFile = join(work, overridesValuesKey(release.name, 'static'));
    const systemFile = join(work, overridesValuesKey(release.name, 'system'));
    await writeFile(staticFile, dumpYaml(values.staticOverrides));
    await writeFile(systemFile, dumpYaml(values.systemOverrides));
    const { stdout } = await helm([
      'template',
      release.releaseName,
      chartDir,
      '--namespace',
      release.namespace,
      '--kube-version',
      kubeVersion,
      '-f',
      staticFile,
      '-f',
      systemFile,
    ]);
    return done({ ok: true, objects: renderedObjects(stdout, release.name), manifest: stdout, warnings });
  } catch (error) {
    if (error instanceof ToolError) {
      const message = error.stderr.trim();
      return done({ ok: false, error: message, culprits: culpritsOf(message, values.merged), unset: unsetPathsOf(message, values.merged), warnings });
    }
    if (error instanceof FlotillaError) return done({ ok: false, error: error.message, warnings });
    throw error;
  }
}

function renderedObjects(manifests: string, release: string): RenderedObject[] {
  const objects: RenderedObject[] = [];
  for (const doc of parseYamlStream(manifests, `helm template ${release}`)) {
    if (doc === null || typeof doc !== 'object') continue;
    const o = doc as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
    if (typeof o.kind !== 'string' || typeof o.apiVersion !== 'string' || typeof o.metadata?.name !== 'string') {
      throw new FlotillaError(`helm rendered an object without apiVersion, kind and metadata.name: ${JSON.stringify(doc).slice(0, 200)}`);
    }
    objects.push({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name });
  }
  return objects;
}
/** A `helm template` output split by the `# Source: chart/templates/x.yaml` line of each document, as `helm template --output-dir` writes it. */
export function splitBySource(manifest: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const document of manifest.split(/^---\s*$/m)) {
    const source = /^# Source: (.+)$/m.exec(document)?.[1]?.trim();
    if (!source || source.split('/').includes('..')) continue;
    const text = `---\n${document.replace(/^\n+/, '')}`;
    files.set(source, (files.get(source) ?? '') + text);
  }
  return files;
}
