/**
 * TEST FIXTURE (dev cluster): pulling a chart from an OCI registry over the
 * distribution API in-process, as source-controller does (it is a Go
 * library call there, not a helm process). The manifest is fetched by tag
 * once — its digest identifies the chart's content, so a chart already
 * pulled is not fetched again — and the chart layer (Helm's content media
 * type) by digest, checked against it. Plain HTTP on loopback only:
 * anything else is left to `helm pull`.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HelmError } from './helm.js';

const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const CHART_LAYER = 'application/vnd.cncf.helm.chart.content.v1.tar+gzip';

/** A content digest as registries write it: `sha256:<hex>`. */
export const sha256 = (data: string | Buffer): string => `sha256:${createHash('sha256').update(data).digest('hex')}`;

/** A chart's manifest in a registry: what identifies its content, and where its layer is. */
export interface OciChartManifest {
  /** `oci://127.0.0.1:PORT/path/chart` */
  readonly reference: string;
  readonly version: string;
  /** The manifest's digest (the registry's Docker-Content-Digest, else computed). */
  readonly digest: string;
  readonly layerDigest: string;
}

function location(reference: string): { host: string; repository: string; base: string } {
  const url = new URL(reference.replace(/^oci:\/\//, 'http://'));
  const repository = url.pathname.replace(/^\/+/, '');
  return { host: url.host, repository, base: `${url.origin}/v2/${repository}` };
}

/** The manifest of `reference` at an exact `version` (one request). */
export async function resolveOciChart(reference: string, version: string): Promise<OciChartManifest> {
  const { host, repository, base } = location(reference);
  const tag = version.replace(/\+/g, '_');
  const response = await fetch(`${base}/manifests/${tag}`, { headers: { Accept: MANIFEST } });
  // Helm's own words for a missing tag, so a failed pull reads as it does from helm.
  if (!response.ok)
    throw new HelmError(
      `failed to perform "FetchReference" on source: ${host}/${repository}:${tag}: ${response.status === 404 ? 'not found' : `${response.status} ${response.statusText}`}`,
    );
  const body = Buffer.from(await response.arrayBuffer());
  const manifest = JSON.parse(body.toString('utf8')) as { layers?: { mediaType?: string; digest?: string }[] };
  const layer = manifest.layers?.find((l) => l.mediaType === CHART_LAYER);
  if (!layer?.digest) throw new HelmError(`${reference}:${tag} is not a Helm chart: no layer of media type ${CHART_LAYER}`);
  return { reference, version, digest: response.headers.get('docker-content-digest') ?? sha256(body), layerDigest: layer.digest };
}

/** The chart layer of a resolved manifest → the archive written into `destination`. */
export async function pullOciChart(manifest: OciChartManifest, destination: string): Promise<string> {
  const { repository, base } = location(manifest.reference);
  const response = await fetch(`${base}/blobs/${manifest.layerDigest}`);
  if (!response.ok) throw new HelmError(`failed to fetch ${manifest.reference}@${manifest.layerDigest}: ${response.status} ${response.statusText}`);
  const archive = Buffer.from(await response.arrayBuffer());
  const digest = sha256(archive);
  if (digest !== manifest.layerDigest) throw new HelmError(`${manifest.reference}@${manifest.layerDigest}: the registry sent content with digest ${digest}`);
  mkdirSync(destination, { recursive: true });
  const file = join(mkdtempSync(join(destination, 'pull-')), `${repository.split('/').pop()}-${manifest.version}.tgz`);
  writeFileSync(file, archive);
  return file;
}
