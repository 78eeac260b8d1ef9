/**
 * The chart cache and the fingerprints the chart loader takes as it reads a chart
 * (src/build/chart-cache.ts, src/files/folder-fingerprint.ts): a change saved while
 * the chart is being packaged is never hidden by the fingerprint taken before it,
 * in the memory a long-lived process (`--watch`, the build server) keeps
 * from build to build, nor in the index a later process reads.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BundleReuse } from '../../src/build/bundle-reuse.js';
import { ChartCache, type KeptPrints } from '../../src/build/chart-cache.js';
import { CacheFolder } from '../../src/cache/index.js';
import { createChartLoader } from '../../src/charts/index.js';
import { tempDir } from '../support/app-fixture.js';

/** More than the cache's racily-clean second: what was written before is then trusted by its stat data alone. */
const settle = () => new Promise((done) => setTimeout(done, 1150));

describe('the chart cache with fingerprints taken as charts are read', () => {
  it('does not reuse an archive whose chart was edited while it was packaged, in the same process or the next', async () => {
    const base = tempDir();
    const dir = join(base, 'chart');
    mkdirSync(join(dir, 'templates'), { recursive: true });
    writeFileSync(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: demo\nversion: 1.0.0\n');
    writeFileSync(join(dir, 'values.yaml'), 'replicas: 1\n');
    writeFileSync(join(dir, 'templates', 'cm.yaml'), 'kind: ConfigMap\n');
    await settle();
    const stored = new Map<string, Buffer>();
    const archives = { storedFile: (_path: string, sha256: string) => stored.get(sha256) } as unknown as BundleReuse;
    // What a long-lived process keeps from build to build (WatchMemory): the folders' fingerprints, and the changes its watcher heard.
    let heard = 0;
    const kept: KeptPrints = { folderFingerprints: new Map(), changesHeard: () => heard };
    const fingerprints = kept.folderFingerprints;
    /** What the watcher does when it hears a change below `dir`. */
    const hear = () => {
      heard++;
      fingerprints.delete(dir);
    };
    const cacheDir = CacheFolder.open(join(base, 'cache'))!;

    const cache = ChartCache.open(cacheDir, archives, kept);
    expect(cache.unchanged(dir)).toBeUndefined();
    const chart = await createChartLoader({ fingerprint: () => true }).load(dir);
    expect(chart.fingerprint).toBeDefined();
    // Saved while the chart is packaged: the watcher hears it.
    writeFileSync(join(dir, 'values.yaml'), 'replicas: 5\n');
    hear();
    const built = await cache.packaged(dir, chart);
    stored.set(built.archive.sha256, Buffer.from(built.archive.bytes));
    await cache.save();
    // The index holds the fingerprint read with the chart, taken before the change, from when it began.
    const entry = (
      JSON.parse(cacheDir.readSync('index.json', 'chart-index', 'flotilla-chart-cache/9')!.toString('utf8')) as {
        charts: Record<string, { fingerprint: string; takenAt: number }>;
      }
    ).charts[dir]!;
    expect(entry.takenAt).toBe(chart.fingerprint!.takenAt);
    await settle();

    // The build the change starts, in the same process, and a build in a new one.
    expect(ChartCache.open(cacheDir, archives, kept).unchanged(dir)).toBeUndefined();
    expect(ChartCache.open(cacheDir, archives).unchanged(dir)).toBeUndefined();
    // The fingerprint taken before the change was not kept: the next build looked at the folder itself.
    expect(fingerprints.get(dir)?.digest).not.toBe(chart.fingerprint!.digest);
    // Packaged again from what the folder now holds, with nothing heard meanwhile: the fingerprint read is kept, and the archive reused.
    fingerprints.delete(dir);
    const again = ChartCache.open(cacheDir, archives, kept);
    const reread = await createChartLoader({ fingerprint: () => true }).load(dir);
    const rebuilt = await again.packaged(dir, reread);
    expect(fingerprints.get(dir)).toBe(reread.fingerprint);
    stored.set(rebuilt.archive.sha256, Buffer.from(rebuilt.archive.bytes));
    await again.save();
    await settle();
    expect(ChartCache.open(cacheDir, archives, kept).unchanged(dir)?.sha256).toBe(rebuilt.archive.sha256);
    expect(ChartCache.open(cacheDir, archives).unchanged(dir)?.sha256).toBe(rebuilt.archive.sha256);

    // Edited between builds: the next build walks the folder to see it changed, and does not fingerprint it
    // again as the loader reads it; the fingerprint it walked serves the new entry, and the build after reuses the archive.
    writeFileSync(join(dir, 'values.yaml'), 'replicas: 7\n');
    await settle();
    const edited = ChartCache.open(cacheDir, archives);
    expect(edited.fingerprintsAgain(dir)).toBe(true);
    expect(edited.unchanged(dir)).toBeUndefined();
    expect(edited.fingerprintsAgain(dir)).toBe(false);
    const loaded = await createChartLoader({ fingerprint: (d) => edited.fingerprintsAgain(d) }).load(dir);
    expect(loaded.fingerprint).toBeUndefined();
    const repackaged = await edited.packaged(dir, loaded);
    expect(repackaged.reused).toBe(false);
    stored.set(repackaged.archive.sha256, Buffer.from(repackaged.archive.bytes));
    await edited.save();
    await settle();
    expect(ChartCache.open(cacheDir, archives).unchanged(dir)?.sha256).toBe(repackaged.archive.sha256);
  });
});
