/**
 * Registry benchmark (`npm run bench:registry`), against Debian's
 * docker-registry on loopback, in one run:
 *   1. chart delivery of the default app's charts: the real `helm push`, one
 *      chart after another (the baseline), then flotilla's `pushCharts` into
 *      another repository, then `pushCharts` again (everything already there);
 *   2. a bundle-sized file (BENCH_BUNDLE_MIB, default 256 MiB) pushed with
 *      `pushBundle` and pulled back with `pullBundle` (digest checked);
 *   3. resolving tags: 200 HEADs, one after another.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { writeTarGz } from '../../src/tarball/index.js';
import { loadChart, packageChart } from '../../src/charts/index.js';
import { MediaType, OciClient, parseReference, pullBundle, pushBundle, pushCharts } from '../../src/oci/index.js';
import { startRegistry } from '../support/registry.js';

const root = resolve(import.meta.dirname, '..', '..');
const helmBin = process.env.FLOTILLA_HELM ?? join(root, '.cache', 'tools', 'helm');
const bundleMiB = Number(process.env.BENCH_BUNDLE_MIB ?? 256);
const work = mkdtempSync(join(tmpdir(), 'flotilla-bench-registry-'));

function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function main(): Promise<void> {
  const registry = await startRegistry();
  const client = new OciClient({ credentials: { credentialFor: () => undefined } });
  try {
    // 1. charts
    const chartsDir = join(root, 'charts');
    const charts = [];
    for (const name of readdirSync(chartsDir).sort()) charts.push(await packageChart(await loadChart(join(chartsDir, name))));
    const files = charts.map((c) => {
      const file = join(work, c.fileName);
      writeFileSync(file, c.bytes);
      return file;
    });
    let start = process.hrtime.bigint();
    for (const file of files) execFileSync(helmBin, ['push', file, `oci://${registry.host}/helm`, '--plain-http'], { stdio: 'ignore' });
    const helmSeconds = seconds(start);
    const archives = charts.map((c) => ({ label: c.fileName, bytes: c.bytes }));
    start = process.hrtime.bigint();
    await pushCharts(client, `oci://${registry.host}/flotilla`, archives);
    const oursSeconds = seconds(start);
    start = process.hrtime.bigint();
    await pushCharts(client, `oci://${registry.host}/flotilla`, archives);
    const againSeconds = seconds(start);
    const size = charts.reduce((sum, c) => sum + c.bytes.length, 0);
    console.log(`charts: ${charts.length} archives, ${(size / 1048576).toFixed(1)} MiB`);
    console.log(`  helm push, one after another   ${helmSeconds.toFixed(2)} s`);
    console.log(`  flotilla pushCharts            ${oursSeconds.toFixed(2)} s  (${(helmSeconds / oursSeconds).toFixed(1)}x faster)`);
    console.log(`  flotilla pushCharts, unchanged ${againSeconds.toFixed(2)} s`);

    // 2. a bundle-sized tarball: incompressible payload so the size is real
    const payload = join(work, 'payload.bin');
    const out = createWriteStream(payload);
    for (let i = 0; i < bundleMiB; i++) out.write(randomBytes(1048576));
    out.end();
    await finished(out);
    const bundle = join(work, 'bench-1.0-1.tgz');
    writeFileSync(
      bundle,
      writeTarGz(
        [
          { path: 'metadata.yaml', data: Buffer.from('app_name: bench\napp_version: 1.0-1\n') },
          { path: 'charts/payload.bin', data: readFileSync(payload) },
        ],
        { level: 0 },
      ),
    );
    const bundleSize = readFileSync(bundle).length;
    start = process.hrtime.bigint();
    await pushBundle(client, bundle, `oci://${registry.host}/apps/bench`);
    const pushSeconds = seconds(start);
    start = process.hrtime.bigint();
    await pullBundle(client, `oci://${registry.host}/apps/bench:1.0-1`, join(work, 'pulled'));
    const pullSeconds = seconds(start);
    const mib = bundleSize / 1048576;
    console.log(`bundle: ${mib.toFixed(0)} MiB`);
    console.log(`  pushBundle (16 MiB chunks)     ${pushSeconds.toFixed(2)} s  (${(mib / pushSeconds).toFixed(0)} MiB/s)`);
    console.log(`  pullBundle (digest checked)    ${pullSeconds.toFixed(2)} s  (${(mib / pullSeconds).toFixed(0)} MiB/s)`);

    // 3. resolving tags
    const repo = parseReference(`${registry.host}/images/app`);
    const config = await client.pushBlob(repo, Buffer.from('{}'), 'application/vnd.oci.image.config.v1+json');
    const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociManifest, config, layers: [] }));
    await client.pushManifest(repo.withTag('v1'), manifest, MediaType.ociManifest);
    start = process.hrtime.bigint();
    for (let i = 0; i < 200; i++) await client.resolve(repo.withTag('v1'));
    console.log(`resolve: 200 tags one after another ${seconds(start).toFixed(2)} s (${((seconds(start) / 200) * 1000).toFixed(1)} ms each)`);
  } finally {
    await registry.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
