/**
 * Build benchmark (`npm run bench`, docs/benchmark.md). Everything is
 * measured in one run, and every ratio is against the real `helm package`
 * loop over the same charts measured in the same round (the machine may be
 * shared, so a ratio from one round is steadier than any absolute time).
 * Two apps:
 *   - corpus: every application chart of ../shared/corpus/bitnami (real
 *     charts, 116), each with its dependencies (`common` and the others)
 *     vendored in its charts/, as `helm dependency build` leaves them: the
 *     benchmark; skipped with a line when the corpus is absent;
 *   - library (scale test): BENCH_CHARTS (80) generated charts, each
 *     depending on a helm-toolkit-sized library chart of the app.
 * Chart archives are compared in size with helm package's of the same round.
 * For each, per round: the helm loop (dependencies built beforehand, not
 * timed); `flotilla build` cold, after editing one static override, and
 * of a fresh copy of the app into the same output folder (CI keeping its
 * output folder as a cache), each as the `flotilla` command (the entry run
 * as a program: Node's start-up included, peak memory read), and the cold
 * build again as `node dist/cli/flotilla.cjs`, which skips the entry's
 * choice of how Node starts (src/cli/entry-shell.ts); then under
 * `build --watch` in one process, its first build and BENCH_WATCH_EDITS (5)
 * one-file edits, each rebuilt alone (the median, and the first apart: it is
 * the process's first rebuild, its code still warming up); then one-shot
 * builds again with a build server, started by the first of them as at an
 * author's terminal: the server's first build and BENCH_WATCH_EDITS one-file
 * edits, each a new CLI process (the median), and a cold build of another
 * app the server has never seen (the same shape, every file's text its own),
 * into a new output folder, once the server has warmed up (it does when
 * quiet): a first build at a terminal while a server runs.
 * After the rounds, builds
 * from nothing in this process, its code warm (the bound faster code alone
 * could bring a cold build to). Then, once: Node's own start-up (bare, and
 * as the entry starts it for a build), and the
 * values engine with plugins computing every release's system overrides,
 * and a checkout of every chart's templates heard by the watcher of a
 * long-lived process. BENCH_ROUNDS (default 3) rounds; the median is
 * printed with the spread (min–max) of each ratio.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CORPUS, writeCorpusApp } from '../support/corpus-app.js';
import { generateBenchApp, generatePlugins } from './generate.js';

const CHARTS = Number(process.env.BENCH_CHARTS ?? 80);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Edits made one after another under `build --watch` in each round, each to another static override. */
const WATCH_EDITS = Number(process.env.BENCH_WATCH_EDITS ?? 5);
const root = resolve(import.meta.dirname, '..', '..');
const helmBin = process.env.FLOTILLA_HELM ?? join(root, '.cache', 'tools', 'helm');
const cli = join(root, 'dist', 'cli', 'flotilla.cjs');
const work = mkdtempSync(join(tmpdir(), 'flotilla-bench-'));
const dist = (module: string) => pathToFileURL(join(root, 'dist', module)).href;

function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

interface Run {
  readonly seconds: number;
  /** CPU time (user + system, every thread): steadier than wall time when the machine is shared. */
  readonly cpu: number;
  readonly maxRssMiB: number;
}

/**
 * Loaded before the CLI in each measured process (`--require` in NODE_OPTIONS): reports
 * its peak memory and CPU time as it exits. The peak is Linux's VmHWM, the
 * process's own: getrusage's maxrss carries the parent's size over a fork,
 * and this bench's process is larger than what it measures.
 */
const probe = join(work, 'probe.cjs');
writeFileSync(
  probe,
  `process.on('exit', () => {
    const u = process.resourceUsage();
    let kib = u.maxRSS;
    try { kib = Number(/VmHWM:\\s*(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]); } catch {}
    process.stderr.write('MAXRSS ' + kib + ' CPU ' + (u.userCPUTime + u.systemCPUTime) + '\\n');
  });\n`,
);

/** NODE_OPTIONS that load `file` first, after the environment's own. */
const requiring = (file: string) => `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(file)}`;

/**
 * Node 20 reads the certificates NODE_EXTRA_CA_CERTS names as it starts,
 * whether or not the process opens a TLS connection; the entry starts a
 * build without them (src/cli/entry-shell.ts). The bench says what Node's
 * start-up costs with and without them.
 */
const START_UP_VARIABLE = 'NODE_EXTRA_CA_CERTS';
const startUpVariableSet = Boolean(process.env[START_UP_VARIABLE]);
const withoutStartUpVariable = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env[START_UP_VARIABLE];
  return env;
};

/**
 * Runs a CLI command in a child, as a user does (the `flotilla` command;
 * `direct`: `node dist/cli/flotilla.cjs` instead), and reads its wall time
 * and peak memory; `server`: FLOTILLA_BUILD_SERVER for it (default 0: no
 * build server; unset: the default).
 */
function runCli(args: readonly string[], server: '0' | '1' | 'unset' = '0', how: 'command' | 'direct' = 'command'): Run {
  const env: NodeJS.ProcessEnv = { ...process.env, FLOTILLA_BUILD_SERVER: server, NODE_OPTIONS: requiring(probe) };
  if (server === 'unset') delete env.FLOTILLA_BUILD_SERVER;
  const start = process.hrtime.bigint();
  const result = how === 'command' ? spawnSync(cli, args, { encoding: 'utf8', env }) : spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env });
  const elapsed = seconds(start);
  if (result.status !== 0) throw new Error(`flotilla ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  const [, rss, cpu] = /MAXRSS (\d+) CPU (\d+)/.exec(result.stderr) ?? [];
  return { seconds: elapsed, cpu: Number(cpu ?? 0) / 1e6, maxRssMiB: Number(rss ?? 0) / 1024 };
}

function timeProcess(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): number {
  const start = process.hrtime.bigint();
  execFileSync(command, args, { stdio: 'ignore', env });
  return seconds(start);
}

/** The bytes of the chart archives in the tarball an output folder holds (GNU tar's listing). */
function chartArchiveBytes(out: string): number {
  const listing = execFileSync('sh', ['-c', `tar -tvzf ${out}/*.tgz`], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return listing
    .split('\n')
    .filter((line) => /\s(?:\.\/)?charts\/[^/]+\.tgz$/.test(line))
    .reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[2]), 0);
}

/** A file time more than a second old: younger files are "racily clean" and read again (src/build/chart-cache.ts). */
const settle = () => new Promise((done) => setTimeout(done, 1100));

interface Round {
  readonly helm: number;
  readonly helmCpu: number;
  readonly cold: Run;
  /** The same cold build as `node dist/cli/flotilla.cjs`: Node started as it is by default, not as the entry starts it. */
  readonly coldDirect: Run;
  readonly edit: Run;
  /** A fresh copy of the app (new file times, another folder), built into the same output folder: CI with its output folder kept as a cache. */
  readonly checkout: Run;
  readonly watchCold: number;
  /** Median of WATCH_EDITS successive one-file edits, each rebuilt alone: what an author editing under --watch waits. */
  readonly watchEdit: number;
  /** The first of them, the process's first rebuild (its code still warming up). */
  readonly watchFirstEdit: number;
  /** One-shot builds run by a build server started by an earlier build: its first build of the app, then the median of WATCH_EDITS one-file edits. */
  readonly servedFirst: Run;
  readonly servedEdit: Run;
  /** A one-shot build of an app the running server has never built, into a new output folder: cold for that app, flotilla's code warm. */
  readonly servedNewApp: Run;
  /** The build server's own peak memory after those builds. */
  readonly serverPeakMiB: number;
  readonly tarballMiB: number;
  /** The chart archives' bytes: flotilla's (in the cold build's tarball) and helm package's. */
  readonly chartBytes: number;
  readonly helmChartBytes: number;
}

async function round(app: string, helmApp: string, names: readonly string[], n: number): Promise<Round> {
  // The app's files must be older than a second when the cold build fingerprints them. Waited for before
  // the helm loop (which takes seconds), not after it: the cold build then runs, as the loop's processes
  // do, on a machine already busy; after a second of idle this 2-vCPU VM runs its next process slower.
  await settle();
  const helmOut = join(work, `helm-out-${n}`);
  // One shell runs the loop and reports its children's CPU time (bash's `times`).
  const loop = `for c in ${names.join(' ')}; do "$0" package "$1/charts/$c" -d "$2" >/dev/null || exit 1; done; times`;
  const helmStart = process.hrtime.bigint();
  const times = execFileSync('bash', ['-c', loop, helmBin, helmApp, helmOut], { encoding: 'utf8' });
  const helm = seconds(helmStart);
  const [, userMin, userSec, sysMin, sysSec] = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(times.trim()) ?? [];
  const helmCpu = Number(userMin) * 60 + Number(userSec) + Number(sysMin) * 60 + Number(sysSec);
  const helmChartBytes = readdirSync(helmOut).reduce((sum, file) => sum + readFileSync(join(helmOut, file)).length, 0);
  rmSync(helmOut, { recursive: true, force: true });

  const out = join(work, `out-${n}`);
  const directOut = join(work, `out-direct-${n}`);
  const coldDirectly = () => runCli(['build', app, '-d', directOut], '0', 'direct');
  // The two cold builds take turns at coming first after the loop, so that neither gains by its place.
  const directFirst = n % 2 === 1 ? coldDirectly() : undefined;
  const cold = runCli(['build', app, '-d', out]);
  const coldDirect = directFirst ?? coldDirectly();
  rmSync(directOut, { recursive: true, force: true });
  const staticFile = join(app, 'overrides', 'static', `${names[Math.floor(names.length / 2)]}.yaml`);
  writeFileSync(staticFile, `${readFileSync(staticFile, 'utf8')}# edited in round ${n}\n`);
  const chartBytes = chartArchiveBytes(out);
  const edit = runCli(['build', app, '-d', out]);
  const tarball = execFileSync('sh', ['-c', `du -k ${out}/*.tgz | cut -f1`], { encoding: 'utf8' });
  const copy = `${app}-checkout-${n}`;
  cpSync(app, copy, { recursive: true });
  await settle();
  const checkout = runCli(['build', copy, '-d', out]);
  rmSync(copy, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });

  // The same two builds under `flotilla build --watch`: one process, no Node
  // start-up or module loading per build. Each build reports its own duration.
  const { watchApp } = (await import(dist('build/index.js'))) as typeof import('../../src/build/index.js');
  const builds: { ok: boolean; millis: number }[] = [];
  let notify: () => void = () => {};
  const nextBuild = () => new Promise<void>((done) => (notify = done));
  let awaited = nextBuild();
  const watchOut = join(work, `out-watch-${n}`);
  const watch = watchApp(app, { outDir: watchOut, settleMillis: 20 }, (build) => {
    builds.push(build);
    notify();
  });
  await awaited;
  for (let edit = 0; edit < WATCH_EDITS; edit++) {
    awaited = nextBuild();
    const file = join(app, 'overrides', 'static', `${names[(Math.floor(names.length / 2) + edit) % names.length]}.yaml`);
    writeFileSync(file, `${readFileSync(file, 'utf8')}# edited under --watch in round ${n}\n`);
    await awaited;
  }
  await watch.close();
  rmSync(watchOut, { recursive: true, force: true });
  if (!builds.every((b) => b.ok)) throw new Error('a watched build failed');

  // One-shot builds again, as at an author's terminal: the first starts a build
  // server (FLOTILLA_BUILD_SERVER=1 does what a terminal does), which runs the next ones.
  const servedOut = join(work, `out-served-${n}`);
  runCli(['build', app, '-d', servedOut], '1');
  await serverListening();
  const servedFirst = runCli(['build', app, '-d', servedOut], 'unset');
  const servedEdits: Run[] = [];
  for (let edit = 0; edit < WATCH_EDITS; edit++) {
    const file = join(app, 'overrides', 'static', `${names[(Math.floor(names.length / 2) + edit) % names.length]}.yaml`);
    writeFileSync(file, `${readFileSync(file, 'utf8')}# edited with a build server in round ${n}\n`);
    servedEdits.push(runCli(['build', app, '-d', servedOut], 'unset'));
  }
  const newApp = `${app}-new-${n}`;
  copyAsAnotherApp(app, newApp, `round ${n}`);
  // An author turns to another app some time after their last build: by then the server, quiet, has warmed up.
  await serverWarmedUp();
  const newOut = join(work, `out-new-${n}`);
  const servedNewApp = runCli(['build', newApp, '-d', newOut], 'unset');
  rmSync(newApp, { recursive: true, force: true });
  rmSync(newOut, { recursive: true, force: true });
  const [server] = (
    JSON.parse(execFileSync(process.execPath, [cli, 'build-server', 'status', '-o', 'json'], { encoding: 'utf8' })) as { items: { peakMemoryMiB: number }[] }
  ).items;
  execFileSync(process.execPath, [cli, 'build-server', 'stop']);
  rmSync(servedOut, { recursive: true, force: true });
  const servedEdit = [...servedEdits].sort((a, b) => a.seconds - b.seconds)[Math.floor(servedEdits.length / 2)]!;
  return {
    helm,
    helmCpu,
    cold,
    coldDirect,
    edit,
    checkout,
    watchCold: (builds[0]?.millis ?? 0) / 1000,
    watchEdit: median(builds.slice(1).map((b) => b.millis)) / 1000,
    watchFirstEdit: (builds[1]?.millis ?? 0) / 1000,
    servedFirst,
    servedEdit,
    servedNewApp,
    serverPeakMiB: server?.peakMemoryMiB ?? 0,
    tarballMiB: Number(tarball) / 1024,
    chartBytes,
    helmChartBytes,
  };
}

/**
 * A copy of `app` whose every file's text is its own (a comment naming
 * `tag` at its end): nothing a server kept from `app`, by folder or by
 * content, serves it.
 */
function copyAsAnotherApp(app: string, copy: string, tag: string): void {
  cpSync(app, copy, { recursive: true });
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      // On a line of its own: real files do not all end with a line break (airflow's values.yaml does not).
      const text = () => readFileSync(path, 'utf8').replace(/([^\n])$/, '$1\n');
      if (entry.isDirectory()) visit(path);
      else if (/\.(ya?ml|tpl)$/.test(entry.name)) writeFileSync(path, `${text()}${entry.name.endsWith('.tpl') ? `{{/* ${tag} */}}` : `# ${tag}`}\n`);
      else if (entry.name.endsWith('.ts')) writeFileSync(path, `${text()}// ${tag}\n`);
    }
  };
  visit(copy);
}

/** Waits until the server says it has warmed up (it does once quiet for a moment after its first builds). */
async function serverWarmedUp(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const [server] = (
      JSON.parse(execFileSync(process.execPath, [cli, 'build-server', 'status', '-o', 'json'], { encoding: 'utf8' })) as { items: { warmedUp?: boolean }[] }
    ).items;
    if (server?.warmedUp) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error('the build server did not warm up');
}

/** Waits until `flotilla build-server status` lists a server. */
async function serverListening(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const servers = (JSON.parse(execFileSync(process.execPath, [cli, 'build-server', 'status', '-o', 'json'], { encoding: 'utf8' })) as { items: unknown[] })
      .items;
    if (servers.length > 0) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error('no build server started');
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function report(title: string, rounds: readonly Round[], targets: { cold?: number; servedEdit?: number; watchEdit?: number }): void {
  const row = (label: string, pick: (r: Round) => number, target?: number, run?: (r: Round) => Run) => {
    const ratios = rounds.map((r) => r.helm / pick(r));
    const time = median(rounds.map(pick));
    const peak = run ? `   peak ${Math.max(...rounds.map((r) => run(r).maxRssMiB)).toFixed(0)} MiB` : '';
    const cpu = run
      ? `   CPU ${median(rounds.map((r) => run(r).cpu)).toFixed(2)} s, ${median(rounds.map((r) => r.helmCpu / run(r).cpu)).toFixed(1)}x the loop's`
      : '';
    const goal = target ? `   (target >= ${target}x)` : '';
    const ratio =
      label === 'helm package loop'
        ? `   CPU ${median(rounds.map((r) => r.helmCpu)).toFixed(2)} s`
        : `${median(ratios).toFixed(1).padStart(6)}x  [${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)}]`;
    console.log(`  ${label.padEnd(32)} ${time.toFixed(3).padStart(7)} s  ${ratio}${goal}${peak}${cpu}`);
  };
  console.log(`\n${title}  (${rounds.length} rounds; median time, median ratio vs the helm loop [min–max])`);
  row('helm package loop', (r) => r.helm);
  row(
    'flotilla build (cold)',
    (r) => r.cold.seconds,
    targets.cold,
    (r) => r.cold,
  );
  row(
    '  cold, as node flotilla.cjs',
    (r) => r.coldDirect.seconds,
    undefined,
    (r) => r.coldDirect,
  );
  row(
    'flotilla build after one edit',
    (r) => r.edit.seconds,
    undefined,
    (r) => r.edit,
  );
  row(
    'fresh checkout, output kept',
    (r) => r.checkout.seconds,
    undefined,
    (r) => r.checkout,
  );
  row(
    '  build server: its first build',
    (r) => r.servedFirst.seconds,
    undefined,
    (r) => r.servedFirst,
  );
  row(
    `  build server: after one edit`,
    (r) => r.servedEdit.seconds,
    targets.servedEdit,
    (r) => r.servedEdit,
  );
  row(
    '  build server: another app, cold',
    (r) => r.servedNewApp.seconds,
    undefined,
    (r) => r.servedNewApp,
  );
  row('  build --watch: first build', (r) => r.watchCold);
  row(`  build --watch: after one edit`, (r) => r.watchEdit, targets.watchEdit);
  row(`    (the first of the ${WATCH_EDITS} edits)`, (r) => r.watchFirstEdit);
  console.log(`  tarball: ${median(rounds.map((r) => r.tarballMiB)).toFixed(2)} MiB`);
  const [ours, helms] = [median(rounds.map((r) => r.chartBytes)), median(rounds.map((r) => r.helmChartBytes))];
  console.log(
    `  chart archives: ${(ours / 2 ** 20).toFixed(2)} MiB, helm package's ${(helms / 2 ** 20).toFixed(2)} MiB (${(((ours - helms) / helms) * 100).toFixed(1)}%)`,
  );
  const first = firstBuilds.get(title.split(' ')[0] ?? '');
  if (first)
    console.log(
      `  first build of the shape (${firstBuilds.keys().next().value === title.split(' ')[0] ? 'no code cache yet, as the first run after an install' : 'code cache from the shape before'}): ${first.seconds.toFixed(3)} s, ${(median(rounds.map((r) => r.helm)) / first.seconds).toFixed(1)}x the median helm loop`,
    );
}

/** The first cold build of a shape, before the rounds: with no code cache yet when it is the first build of the bench (a first run after an install). */
const firstBuilds = new Map<string, Run>();

async function shape(name: string, generate: (dir: string, charts: number) => string[]): Promise<Round[]> {
  const app = join(work, name);
  const names = generate(app, CHARTS);
  // helm needs dependencies vendored (helm dependency build); done on a copy, untimed. The corpus app's are vendored already
  // (its charts also name oci:// repositories, which `dependency build` would fetch).
  const helmApp = join(work, `${name}-helm`);
  cpSync(app, helmApp, { recursive: true });
  for (const chart of names) {
    if (!existsSync(join(helmApp, 'charts', chart, 'charts')) && readFileSync(join(helmApp, 'charts', chart, 'Chart.yaml'), 'utf8').includes('file://')) {
      execFileSync(helmBin, ['dependency', 'build', join(helmApp, 'charts', chart)], { stdio: 'ignore' });
    }
  }
  // Untimed in the rounds: it leaves flotilla's code cache as any earlier build would.
  const scratch = join(work, `${name}-first`);
  firstBuilds.set(name, runCli(['build', app, '-d', scratch]));
  rmSync(scratch, { recursive: true, force: true });
  const rounds: Round[] = [];
  for (let n = 0; n < ROUNDS; n++) rounds.push(await round(app, helmApp, names, n));
  warmFromNothing.set(name, await warmBuildFromNothing(app));
  return rounds;
}

/**
 * A build from nothing (new output and cache folder) in this process once
 * its code is warm: the median of the last of WARM_BUILDS builds. It bounds
 * what a cold one-shot build could reach by faster code alone: that build
 * also pays Node's start-up and loading flotilla, and its code is cold.
 */
const WARM_BUILDS = 6;
const warmFromNothing = new Map<string, number>();

async function warmBuildFromNothing(app: string): Promise<number> {
  const { buildApp } = (await import(dist('build/index.js'))) as typeof import('../../src/build/index.js');
  const times: number[] = [];
  for (let n = 0; n < WARM_BUILDS; n++) {
    const out = join(work, `out-warm-${n}`);
    const start = process.hrtime.bigint();
    await buildApp(app, { outDir: out });
    times.push(seconds(start));
    rmSync(out, { recursive: true, force: true });
  }
  return median(times.slice(-3));
}

/** Every release's system overrides, as `flotilla overrides` computes one: app loaded, plugins bundled and loaded first (not timed). */
interface Timed {
  readonly wall: number;
  readonly cpu: number;
}

async function systemOverrides(): Promise<{ first: Timed; again: Timed; releases: number; processStart: number; roundTrip: number }> {
  const app = join(work, 'with-plugins');
  generatePlugins(app, generateBenchApp(app, CHARTS));
  const { loadApp } = (await import(dist('app/index.js'))) as typeof import('../../src/app/index.js');
  const { loadAppPlugins } = (await import(dist('plugins/index.js'))) as typeof import('../../src/plugins/index.js');
  const { computeReleaseValues } = (await import(dist('values/index.js'))) as typeof import('../../src/values/index.js');
  const loaded = await loadApp(app);
  const plugins = await loadAppPlugins(loaded, { mode: 'offline' });
  const all = async () => {
    const start = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    for (const release of loaded.releases) await computeReleaseValues(loaded, release, { plugin: plugins.overridesProvider() });
    const used = process.cpuUsage(cpu);
    return { wall: seconds(start), cpu: (used.user + used.system) / 1e6 };
  };
  const first = await all();
  const again = await all();
  // What running plugins outside flotilla's process costs: starting the plugin process with the bundle imported
  // (paid once per run), and one call's round trip (a getOverrides answering at once).
  const sandbox = plugins.bundle.instances!.sandbox;
  const starts: number[] = [];
  for (let i = 0; i < 5; i++) {
    sandbox.stop('measuring its start');
    const start = process.hrtime.bigint();
    await sandbox.ready();
    starts.push(seconds(start));
  }
  const release = loaded.releases[0]!;
  const calls = 200;
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await plugins.overrides(release);
  return { first, again, releases: loaded.releases.length, processStart: median(starts), roundTrip: seconds(start) / calls };
}

/**
 * A checkout seen by a long-lived process (`--watch`, the build server): the
 * library shape built with four memories (output folders) kept, then every
 * chart's templates rewritten at once. The CPU time until the watcher has
 * heard them all: what each change costs it, times the files changed.
 */
async function checkoutHeard(): Promise<{ files: number; cpuMs: number; wallMs: number }> {
  const app = join(work, 'checkout');
  const names = generateBenchApp(app, CHARTS);
  const { AppWatcher } = (await import(dist('build/app-watcher.js'))) as typeof import('../../src/build/app-watcher.js');
  const { buildApp } = (await import(dist('build/index.js'))) as typeof import('../../src/build/index.js');
  const watcher = new AppWatcher(app);
  try {
    for (const key of ['a', 'b', 'c', 'd']) {
      const outDir = join(work, `checkout-out-${key}`);
      await buildApp(app, { outDir, watched: watcher.memoryFor({ outDir }).memory });
    }
    const files = names.flatMap((name) => readdirSync(join(app, 'charts', name, 'templates')).map((file) => join(app, 'charts', name, 'templates', file)));
    const before = watcher.generation;
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (const file of files) writeFileSync(file, `${readFileSync(file, 'utf8')}# checked out\n`);
    while (watcher.generation - before < files.length) await new Promise((done) => setTimeout(done, 2));
    const used = process.cpuUsage(cpu);
    return { files: files.length, cpuMs: (used.user + used.system) / 1000, wallMs: seconds(start) * 1000 };
  } finally {
    await watcher.close();
  }
}

// flotilla keeps V8's code cache of its CLI per user (docs/architecture.md): the
// bench gets its own, so the first build below runs as the first one after an install.
process.env.FLOTILLA_CACHE_DIR = join(work, 'user-cache');

try {
  const nodeBare = median(Array.from({ length: 5 }, () => timeProcess(process.execPath, ['-e', ''])));
  const nodeBareWithoutVariable = startUpVariableSet
    ? median(Array.from({ length: 5 }, () => timeProcess(process.execPath, ['-e', ''], withoutStartUpVariable())))
    : undefined;
  // Node started by the entry for a build, ended by a module NODE_OPTIONS loads before the entry's code runs.
  const exitAtOnce = join(work, 'exit-at-once.cjs');
  writeFileSync(exitAtOnce, 'process.exit(0);\n');
  const nodeForBuild = median(Array.from({ length: 5 }, () => timeProcess(cli, ['build', '--help'], { ...process.env, NODE_OPTIONS: requiring(exitAtOnce) })));
  // `build --help`: Node, the CLI bundle and the modules a build loads, but no build.
  const cliStartup = median(Array.from({ length: 5 }, () => timeProcess(cli, ['build', '--help'])));
  if (!CORPUS) console.log('../shared/corpus is absent: the corpus app is skipped, the scale test alone runs');
  const corpus = CORPUS ? await shape('corpus', (dir) => writeCorpusApp(CORPUS!, dir)) : undefined;
  const library = await shape('library', generateBenchApp);
  const shapes = [...(corpus ? [['corpus', corpus] as const] : []), ['library', library] as const];
  const values = await systemOverrides();
  const checkout = await checkoutHeard();

  console.log(`build benchmark: ${CHARTS} charts per app; ${process.version}; ${execFileSync('nproc', { encoding: 'utf8' }).trim()} cores`);
  if (corpus) report('corpus app: every application chart of ../shared/corpus/bitnami, its dependencies vendored', corpus, {});
  report(`library shape (scale test): ${CHARTS} generated charts, each depending on a 130-template library chart (~0.5 MB)`, library, {
    cold: 15,
    servedEdit: 40,
    watchEdit: 100,
  });
  const all = shapes.flatMap(([, rounds]) => rounds);
  const peak = Math.max(...all.flatMap((r) => [r.cold.maxRssMiB, r.edit.maxRssMiB, r.checkout.maxRssMiB]));
  console.log(
    `\n  peak memory of any one-shot build: ${peak.toFixed(0)} MiB (target < 300 MB); of a build server after its builds: ${Math.max(...all.map((r) => r.serverPeakMiB))} MiB`,
  );
  const bareNote =
    nodeBareWithoutVariable === undefined
      ? ''
      : ` (${(nodeBareWithoutVariable * 1000).toFixed(0)} ms with ${START_UP_VARIABLE} unset: Node reads the certificates it names as it starts)`;
  console.log(
    `  start-up: node -e '' ${(nodeBare * 1000).toFixed(0)} ms${bareNote}; Node as the flotilla entry starts it for a build ${(nodeForBuild * 1000).toFixed(0)} ms; flotilla build --help (Node + CLI + a build's modules) ${(cliStartup * 1000).toFixed(0)} ms`,
  );
  // Where a one-shot build's time goes: Node itself, loading flotilla, then the build (what --watch pays).
  for (const [name, rounds] of shapes) {
    for (const [label, pick] of [
      ['cold', (r: Round) => r.cold.seconds],
      ['one edit', (r: Round) => r.edit.seconds],
    ] as const) {
      const total = median(rounds.map(pick));
      const part = (s: number) => `${(s * 1000).toFixed(0)} ms (${((100 * s) / total).toFixed(0)}%)`;
      console.log(
        `  ${name} shape, one-shot ${label} ${(total * 1000).toFixed(0)} ms: Node start-up ${part(nodeForBuild)}, loading flotilla ${part(cliStartup - nodeForBuild)}, the build ${part(total - cliStartup)}`,
      );
    }
  }
  for (const [name, rounds] of shapes) {
    const warm = warmFromNothing.get(name) ?? 0;
    const bound = warm + cliStartup;
    console.log(
      `  ${name} shape, a build from nothing in a process already warm: ${(warm * 1000).toFixed(0)} ms; with Node's start-up and loading flotilla ${(bound * 1000).toFixed(0)} ms, ${(median(rounds.map((r) => r.helm)) / bound).toFixed(1)}x the helm loop: the most a cold one-shot build reaches with its code warm`,
    );
  }
  for (const [name, rounds] of shapes) {
    const total = median(rounds.map((r) => r.servedEdit.seconds));
    console.log(
      `  ${name} shape, one-shot after one edit with a build server ${(total * 1000).toFixed(0)} ms: Node start-up ${(nodeForBuild * 1000).toFixed(0)} ms (${((100 * nodeForBuild) / total).toFixed(0)}%), the rest (launcher, socket, the server's build) ${((total - nodeForBuild) * 1000).toFixed(0)} ms`,
    );
  }
  console.log(
    `  a checkout of ${checkout.files} files seen by --watch or a build server keeping 4 memories of the library shape: heard in ${checkout.wallMs.toFixed(0)} ms, ${checkout.cpuMs.toFixed(0)} ms of CPU with the writes`,
  );
  console.log(
    `  system overrides of all ${values.releases} releases (values engine with ${values.releases} plugins): ${(values.first.wall * 1000).toFixed(0)} ms first pass (CPU ${(values.first.cpu * 1000).toFixed(0)} ms), ${(values.again.wall * 1000).toFixed(0)} ms again (CPU ${(values.again.cpu * 1000).toFixed(0)} ms) (target < 100 ms)`,
  );
  console.log(
    `  the plugin process: started with the ${values.releases} plugins' bundle imported in ${(values.processStart * 1000).toFixed(0)} ms (once per run), a getOverrides call through it ${(values.roundTrip * 1000).toFixed(2)} ms`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
