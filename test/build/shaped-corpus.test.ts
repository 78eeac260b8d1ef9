/**
 * A generated corpus with the shapes real chart repositories have (see
 * test/support/shaped-app.ts), built again and again with random edits in
 * between: each build with the cache (kept from the build before, as an
 * author's or CI's output folder keeps it) must equal, byte for byte, a
 * build of the same input without any cache, and no build may fail. A sample
 * of chart archives is compared in content with `helm package`'s.
 * Seeded: `npm test` runs fixed seeds (among them those that once found a
 * fault), so a run is repeatable; `npm run fuzz` runs a random one
 * (FLOTILLA_SHAPES_SEED=random). FLOTILLA_SHAPES_SEED=N replays a run (its
 * seed is in the failure message), FLOTILLA_SHAPES_ROUNDS runs longer.
 */
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { readTarGzSafely } from '../../src/tarball/index.js';
import { helm } from '../../src/tools/index.js';
import { tempDir } from '../support/app-fixture.js';
import { expectSameChart, filesOfArchive, withNestedUnpacked } from '../support/archive-content.js';
import { seededRandom } from '../support/random.js';
import { editShapedApp, writeShapedApp } from '../support/shaped-app.js';

const FIXED_SEEDS = [6666, 93745];
const asked = process.env.FLOTILLA_SHAPES_SEED;
const SEEDS = asked === undefined ? FIXED_SEEDS : [asked === 'random' ? Date.now() % 100_000 : Number(asked)];
const ROUNDS = Number(process.env.FLOTILLA_SHAPES_ROUNDS ?? 6);
const CHARTS = 14;

describe('builds of generated charts of real shapes, edited between builds', () => {
  it.each(SEEDS)(
    'each build with the cache equals a build without one (seed %i)',
    async (SEED) => {
      const app = tempDir('flotilla-shaped-');
      const charts = writeShapedApp(app, { charts: CHARTS, seed: SEED });
      const random = seededRandom(SEED ^ 0x5eed);
      const cached = tempDir();
      const edits: string[] = [];
      let last: Awaited<ReturnType<typeof buildApp>> | undefined;
      for (let round = 0; round <= ROUNDS; round++) {
        if (round > 0) for (let n = 1 + Math.floor(random() * 3); n > 0; n--) edits.push(`round ${round}: ${editShapedApp(app, random)}`);
        const context = `seed ${SEED}, after:\n  ${edits.join('\n  ')}`;
        last = await buildApp(app, { outDir: cached }).catch((error: Error) => expect.fail(`cached build failed (${context}): ${error.stack}`));
        const fresh = await buildApp(app, { outDir: tempDir(), cacheDir: false }).catch((error: Error) =>
          expect.fail(`cache-less build failed (${context}): ${error.stack}`),
        );
        expect(readFileSync(last.file).equals(readFileSync(fresh.file)), `the cached build differs from the cache-less one (${context})`).toBe(true);
      }
      // A sample of the last build's chart archives against helm package (on a copy: -u writes into the chart).
      const members = await readTarGzSafely(last!.file);
      const copy = tempDir('flotilla-shaped-helm-');
      cpSync(app, copy, { recursive: true });
      const helmOut = tempDir();
      for (const chart of charts.filter((_, i) => i % 4 === 0)) {
        const built = last!.charts.find((c) => c.name === chart)!;
        const ours = await filesOfArchive(members.get(`charts/${built.fileName}`)!);
        const { stdout } = await helm(['package', '--dependency-update', join(copy, 'charts', chart), '-d', helmOut]);
        const theirs = await withNestedUnpacked(
          await filesOfArchive(readFileSync(/Successfully packaged chart and saved it to: (.+)/.exec(stdout)![1]!.trim())),
        );
        theirs.delete(`${chart}/Chart.lock`); // written by -u into the copy, not in the chart built
        expectSameChart(`${chart} (seed ${SEED})`, ours, theirs);
      }
    },
    600_000,
  );
});
