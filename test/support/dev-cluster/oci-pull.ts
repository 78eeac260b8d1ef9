/**
 * TEST FIXTURE (dev cluster): pulling a chart from an OCI registry over the
 * distribution API in-process, as source-controller does (it is a Go
 * library call there, not a helm process). The manifest is fetched by tag,
 * the chart layer (Helm's content media type) by digest and checked against
 * it. Plain HTTP on loopback only: anything else is left to `helm pull`.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HelmError } from './helm.js';

const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const CHART_LAYER = 'application/vnd.cncf.helm.chart.content.v1.tar+gzip';

/** `oci://127.0.0.1:PORT/path/chart` at an exact `version` → the archive written into `destination`. */
export async function pullOciChart(reference: string, version: string, destination: string): Promise<string> {
  const location = new URL(reference.replace(/^oci:\/\//, 'http://'));
  const repository = location.pathname.replace(/^\/+/, '');
  const base = `${location.origin}/v2/${repository}`;
  const tag = version.replace(/\+/g, '_');
  const manifestResponse = await fetch(`${base}/manifests/${tag}`, { headers: { Accept: MANIFEST } });
  // Helm's own words for a missing tag, so a failed pull reads as it does from helm.
  if (!manifestResponse.ok) throw new HelmError(`failed to perform "FetchReference" on source: ${location.host}/${repository}:${tag}: ${manifestResponse.status === 404 ? 'not found' : `${manifestResponse.status} ${manifestResponse.statusText}`}`);
  const manifest = (await manifestResponse.json()) as { layers?: { mediaType?: string; digest?: string }[] };
  const layer = manifest.layers?.find((l) => l.mediaType === CHART_LAYER);
  if (!layer?.digest) throw new HelmError(`${reference}:${tag} is not a Helm chart: no layer of media type ${CHART_LAYER}`);
  const blobResponse = await fetch(`${base}/blobs/${layer.digest}`);
  if (!blobResponse.ok) throw new HelmError(`failed to fetch ${reference}@${layer.digest}: ${blobResponse.status} ${blobResponse.statusText}`);
  const archive = Buffer.from(await blobResponse.arrayBuffer());
  const digest = `sha256:${createHash('sha256').update(archive).digest('hex')}`;
  if (digest !== layer.digest) throw new HelmError(`${reference}@${layer.digest}: the registry sent content with digest ${digest}`);
  mkdirSync(destination, { recursive: true });
  const file = join(mkdtempSync(join(destination, 'pull-')), `${repository.split('/').pop()}-${version}.tgz`);
  writeFileSync(file, archive);
  return file;
}
