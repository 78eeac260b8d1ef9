/**
 * Build benchmark (`npm run bench`). In one run, on a generated app of 80
 * charts each depending on a helm-toolkit-sized library chart:
 *   1. the real `helm package`, one chart after another (dependencies built beforehand, not timed);
 *   2. `flotilla build`, cold (no reusable archives);
 *   3. `flotilla build` again after editing one static override.
 * Each flotilla build runs as the CLI would, in a child process, so the
 * times include Node's start-up, and its peak memory (max RSS) is read.
 * The same builds are then timed under `flotilla build --watch` (one process).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateBenchApp } from './generate.js';

const CHARTS = Number(process.env.BENCH_CHARTS ?? 80);
const root = resolve(import.meta.dirname, '..', '..');
const helmBin = process.env.FLOTILLA_HELM ?? join(root, '.cache', 'tools', 'helm');
const cli = join(root, 'dist', 'cli', 'flotilla.mjs');
const work = mkdtempSync(join(tmpdir(), 'flotilla-bench-'));

function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

interface Run {
  readonly seconds: number;
  readonly maxRssMiB: number;
}

/** Runs the CLI build in a child and reads its wall time and peak memory. */
function flotillaBuild(app: string, out: string): Run {
  const probe = `
    process.argv = [process.argv[0], ${JSON.stringify(cli)}, 'build', ${JSON.stringify(app)}, '-d', ${JSON.stringify(out)}];
    process.on('exit', () => process.stderr.write('MAXRSS ' + process.resourceUsage().maxRSS + '\\n'));
    await import(${JSON.stringify(cli)});
  `;
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8' });
  const elapsed = seconds(start);
  if (result.status !== 0) throw new Error(`flotilla build failed:\n${result.stdout}\n${result.stderr}`);
  const rss = Number(/MAXRSS (\d+)/.exec(result.stderr)?.[1] ?? 0);
  return { seconds: elapsed, maxRssMiB: rss / 1024 };
}

try {
  const app = join(work, 'app');
  const names = generateBenchApp(app, CHARTS);

  // helm needs the dependency vendored (helm dependency build); done on a copy, untimed.
  const helmApp = join(work, 'helm-app');
  cpSync(app, helmApp, { recursive: true });
  for (const name of names) execFileSync(helmBin, ['dependency', 'build', join(helmApp, 'charts', name)], { stdio: 'ignore' });
  const helmOut = join(work, 'helm-out');
  const helmStart = process.hrtime.bigint();
  for (const name of names) execFileSync(helmBin, ['package', join(helmApp, 'charts', name), '-d', helmOut], { stdio: 'ignore' });
  const helmLoop = seconds(helmStart);

  // A checkout is more than a second old when it is built; files younger than
  // that are "racily clean" and the build reads them again rather than trust
  // their time stamps (see src/build/chart-cache.ts).
  await new Promise((done) => setTimeout(done, 1100));
  const out = join(work, 'out');
  const cold = flotillaBuild(app, out);
  const staticFile = join(app, 'overrides', 'static', `${names[Math.floor(names.length / 2)]}.yaml`);
  writeFileSync(staticFile, `${readFileSync(staticFile, 'utf8')}# edited\nconf: {edited: true}\n`);
  const rebuild = flotillaBuild(app, out);

  // The same two builds under `flotilla build --watch`: one process, no Node
  // start-up or module loading per build. Each build reports its own duration.
  const { watchApp } = (await import(pathToFileURL(join(root, 'dist', 'build', 'index.js')).href)) as typeof import('../../src/build/index.js');
  const builds: { ok: boolean; millis: number }[] = [];
  let notify: () => void = () => {};
  const nextBuild = () => new Promise<void>((done) => (notify = done));
  let awaited = nextBuild();
  const watch = watchApp(app, { outDir: join(work, 'out-watch'), settleMillis: 20 }, (build) => {
    builds.push(build);
    notify();
  });
  await awaited;
  awaited = nextBuild();
  writeFileSync(staticFile, `${readFileSync(staticFile, 'utf8')}# edited again\n`);
  await awaited;
  await watch.close();
  if (!builds.every((b) => b.ok)) throw new Error('a watched build failed');
  const inProcessCold = (builds[0]?.millis ?? 0) / 1000;
  const inProcessEdit = (builds[1]?.millis ?? 0) / 1000;

  const rows = [
    ['helm package loop', helmLoop, undefined],
    ['flotilla build (cold)', cold.seconds, cold.maxRssMiB],
    ['flotilla build after one edit', rebuild.seconds, rebuild.maxRssMiB],
    ['  build --watch: first build', inProcessCold, undefined],
    ['  build --watch: after one edit', inProcessEdit, undefined],
  ] as const;
  console.log(`build benchmark: ${CHARTS} charts, each with a ${130}-template library chart\n`);
  for (const [label, secs, rss] of rows) console.log(`  ${label.padEnd(32)} ${secs.toFixed(2).padStart(7)} s${rss === undefined ? '' : `   peak ${rss.toFixed(0)} MiB`}`);
  const full = helmLoop / cold.seconds;
  const edit = helmLoop / rebuild.seconds;
  console.log(`\n  full build:    ${full.toFixed(1)}x faster than the helm loop (target >= 8x); --watch ${(helmLoop / inProcessCold).toFixed(1)}x`);
  console.log(`  one-edit:      ${edit.toFixed(1)}x faster than the helm loop (target >= 30x); --watch ${(helmLoop / inProcessEdit).toFixed(1)}x`);
  console.log(`  peak memory:   ${Math.max(cold.maxRssMiB, rebuild.maxRssMiB).toFixed(0)} MiB (target < 300 MB)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
