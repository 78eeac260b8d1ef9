/**
 * Helm charts in an OCI registry, laid out as `helm push` lays them out so
 * that `helm pull oci://…` and Flux's OCI HelmRepository read them: a config
 * blob `application/vnd.cncf.helm.config.v1+json` holding Chart.yaml's
 * metadata as JSON (Helm's field order), one layer
 * `application/vnd.cncf.helm.chart.content.v1.tar+gzip` (the archive as is),
 * manifest annotations from the metadata, repository `<base>/<chart name>`,
 * tag = chart version with `+` written `_` (tags cannot hold `+`).
 * A version already in the registry is left alone when its chart layer is the
 * same archive and refused when it differs: published versions never change.
 */
import { createHash } from 'node:crypto';
import { goJson, readChartArchive, ChartVersionConflictError, type ChartDependency, type ChartMetadata } from '../charts/index.js';
import { mapConcurrently } from '../concurrency/index.js';
import { parseYamlValue } from '../yaml/index.js';
import type { OciClient } from './client.js';
import { InvalidReference, ManifestUnknown } from './errors.js';
import { MediaType, type ImageManifest } from './media-types.js';
import { OciReference, parseReference } from './reference.js';

/** A chart archive to deliver: its bytes and a label (file or bundle entry) for messages. */
export interface ChartArchiveInput {
  readonly label: string;
  readonly bytes: Buffer;
}

export interface PushedChart {
  readonly name: string;
  readonly version: string;
  /** `host/base/name:tag@digest` of the manifest. */
  readonly reference: string;
  readonly digest: string;
  /** `pushed`, or `unchanged` when the registry already had this archive at this version. */
  readonly status: 'pushed' | 'unchanged';
}

export interface PushChartOptions {
  /** `org.opencontainers.image.created` (default: now), as Helm stamps it. */
  readonly created?: Date;
}

/** The tag Helm stores a chart version under: `+` is not allowed in tags, Helm writes `_`. */
export function chartVersionTag(version: string): string {
  return version.replaceAll('+', '_');
}

/** Dependency as Helm's JSON marshalling writes it (name and repository always present). */
function dependencyJson(d: ChartDependency): Record<string, unknown> {
  return dropEmpty(
    {
      name: d.name,
      version: d.version,
      repository: d.repository ?? '',
      condition: d.condition,
      tags: d.tags,
      'import-values': d.importValues,
      alias: d.alias,
    },
    ['name', 'repository'],
  );
}

function dropEmpty(fields: Record<string, unknown>, keep: readonly string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    const empty =
      value === undefined ||
      value === '' ||
      value === false ||
      (Array.isArray(value) && value.length === 0) ||
      (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0);
    if (!empty || keep.includes(key)) out[key] = value;
  }
  return out;
}

function sortedRecord(record: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
  if (!record) return undefined;
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Chart.yaml metadata as the config blob Helm writes: Go's field order, empty
 * fields omitted, maps sorted. `type` only when Chart.yaml declares it (Helm
 * keeps the field as written; flotilla's metadata defaults it).
 */
function helmConfigJson(m: ChartMetadata, typeDeclared: boolean): Buffer {
  return Buffer.from(
    goJson(
      dropEmpty({
        name: m.name,
        home: m.home,
        sources: m.sources,
        version: m.version,
        description: m.description,
        keywords: m.keywords,
        maintainers: m.maintainers?.map((x) => dropEmpty({ name: x.name, email: x.email, url: x.url })),
        icon: m.icon,
        apiVersion: m.apiVersion,
        appVersion: m.appVersion,
        deprecated: m.deprecated,
        annotations: sortedRecord(m.annotations),
        kubeVersion: m.kubeVersion,
        dependencies: m.dependencies.map(dependencyJson),
        type: typeDeclared ? m.type : undefined,
      }),
    ),
  );
}

/** The manifest annotations Helm derives from Chart.yaml (the chart's own annotations cannot override title or version). */
function helmAnnotations(m: ChartMetadata, created: Date): Record<string, string> {
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(m.annotations ?? {})) annotations[key] = value;
  const set = (key: string, value: string | undefined) => {
    if (value) annotations[`org.opencontainers.image.${key}`] = value;
  };
  set('description', m.description);
  set('title', m.name);
  set('version', m.version);
  set('url', m.home);
  set('source', m.sources?.[0]);
  set('created', created.toISOString().replace(/\.\d{3}Z$/, 'Z'));
  set(
    'authors',
    m.maintainers
      ?.filter((x) => x.name)
      .map((x) => (x.email ? `${x.name} (${x.email})` : x.name!))
      .join(', '),
  );
  return sortedRecord(annotations)!;
}

/** `oci://host/path` → the repository base charts are pushed under. */
function chartRepositoryBase(target: string): OciReference {
  if (!target.startsWith('oci://')) throw new InvalidReference(JSON.stringify(target), 'a chart repository in a registry is written oci://HOST[:PORT]/PATH');
  const base = parseReference(target);
  if (base.tag !== undefined || base.digest !== undefined)
    throw new InvalidReference(target, 'a chart repository names no tag or digest: charts are tagged with their versions');
  return base;
}

/** A chart archive read and checked against the registry, ready to push (or already there). */
interface PlannedChart {
  readonly archive: ChartArchiveInput;
  readonly name: string;
  readonly version: string;
  readonly metadata: ChartMetadata;
  readonly typeDeclared: boolean;
  readonly ref: OciReference;
  /** The manifest digest when the registry already holds this very archive at this version. */
  readonly existing?: string;
}

/** Reads an archive and looks at what the registry holds at its version; refuses a version published with other content. */
async function planChart(client: OciClient, base: OciReference, archive: ChartArchiveInput): Promise<PlannedChart> {
  const chart = await readChartArchive(archive.bytes, { label: archive.label });
  const ref = new OciReference(base.registry, `${base.repository}/${chart.name}`, chartVersionTag(chart.version));
  const chartYaml = chart.chart.files.find((f) => f.path === 'Chart.yaml');
  const typeDeclared =
    chartYaml !== undefined &&
    (parseYamlValue(chartYaml.data.toString('utf8'), `${archive.label}#Chart.yaml`) as { type?: unknown } | undefined)?.type !== undefined;
  const planned = { archive, name: chart.name, version: chart.version, metadata: chart.metadata, typeDeclared, ref };
  const existing = await client.getManifest(ref).catch((error: unknown) => {
    if (error instanceof ManifestUnknown) return undefined;
    throw error;
  });
  if (!existing) return planned;
  const layerDigest = `sha256:${createHash('sha256').update(archive.bytes).digest('hex')}`;
  const layer = 'layers' in existing.manifest ? (existing.manifest as ImageManifest).layers.find((l) => l.mediaType === MediaType.helmChart) : undefined;
  if (layer?.digest !== layerDigest) {
    throw new ChartVersionConflictError(
      `oci://${ref}`,
      chart.name,
      chart.version,
      layer?.digest ?? `${existing.descriptor.digest} (not a Helm chart)`,
      layerDigest,
    );
  }
  return { ...planned, existing: existing.descriptor.digest };
}

async function pushPlanned(client: OciClient, planned: PlannedChart, created: Date): Promise<PushedChart> {
  const { ref, name, version } = planned;
  if (planned.existing) return { name, version, reference: ref.withDigest(planned.existing).toString(), digest: planned.existing, status: 'unchanged' };
  const config = await client.pushBlob(ref, helmConfigJson(planned.metadata, planned.typeDeclared), MediaType.helmConfig);
  const layer = await client.pushBlob(ref, planned.archive.bytes, MediaType.helmChart);
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: MediaType.ociManifest,
    config,
    layers: [layer],
    annotations: helmAnnotations(planned.metadata, created),
  };
  const pushed = await client.pushManifest(ref, Buffer.from(JSON.stringify(manifest)), MediaType.ociManifest);
  return { name, version, reference: ref.withDigest(pushed.digest).toString(), digest: pushed.digest, status: 'pushed' };
}

/** How many charts are read, checked or uploaded at once. */
const PARALLEL = 4;

/**
 * Pushes chart archives under `target` (`oci://host/path`): each to
 * `<path>/<name>:<version tag>`. Every archive is read and checked against
 * the registry first, so a version published with other content is refused
 * before anything is pushed. Results keep the input order.
 */
export async function pushCharts(
  client: OciClient,
  target: string,
  archives: readonly ChartArchiveInput[],
  options: PushChartOptions = {},
): Promise<PushedChart[]> {
  const base = chartRepositoryBase(target);
  const plans = await mapConcurrently(archives, PARALLEL, (archive) => planChart(client, base, archive));
  const seen = new Map<string, PlannedChart>();
  for (const planned of plans) {
    const first = seen.get(planned.ref.toString());
    if (first && !first.archive.bytes.equals(planned.archive.bytes)) {
      const digest = (p: PlannedChart) => `sha256:${createHash('sha256').update(p.archive.bytes).digest('hex')}`;
      throw new ChartVersionConflictError(`${first.archive.label} and ${planned.archive.label}`, planned.name, planned.version, digest(first), digest(planned));
    }
    seen.set(planned.ref.toString(), planned);
  }
  const created = options.created ?? new Date();
  return mapConcurrently(plans, PARALLEL, (planned) => pushPlanned(client, planned, created));
}
