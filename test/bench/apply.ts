/**
 * Apply benchmark (`npm run bench:apply`): an app of 80 releases with an
 * OpenStack-like dependency graph (infrastructure, identity, services that
 * need identity and infrastructure, services on top of those, dashboards),
 * uploaded to a fresh dev cluster TEST FIXTURE whose Flux simulation makes
 * every release take BENCH_READY_MS (default 3000) from rendered to Ready.
 * Then `flotilla apply` runs as a user runs it, in a child process. Each of
 * BENCH_RUNS (default 3) runs reports where the time went — flotilla before
 * the first HelmRelease is written, how soon after its dependencies' Ready
 * each dependant is written, each release's chart pull, wake-up, wait
 * for a helm slot, helm template, set delay, how soon flotilla reported it
 * Ready, how late the fixture's event loop ran, and the time above the
 * critical path split into those parts along the chain that finished last —
 * Each run then times the perfect client on a fresh cluster of its own
 * (perfectClientOnce: what flotilla wrote, written in-process with no cost
 * the moment it is due). The summary gives the median and spread of:
 *   - elapsed time against the perfect client: the floor is 1.2× (the
 *     bench exits 1 above it);
 *   - against the critical path of the graph (the longest dependsOn chain ×
 *     the ready time), which counts none of the fixture's own costs (chart
 *     pulls, helm template, storing, on the machine's cores), and the
 *     perfect client's time against it;
 *   - against applying the releases one after another (80 × the ready time);
 *   - against Flux alone with every HelmRelease written at once, each level
 *     of the chain waiting for the dependency requeue (BENCH_REQUEUE_MS,
 *     default 30000 as helm-controller's, the fixture set to it);
 *   - against the chain as the fixture ran it (each release weighed by its
 *     measured time from eligible to Ready), plus flotilla's own time;
 *   - the peak memory (max RSS) of the `flotilla apply` process;
 *   - the load average while it ran (the machine is shared);
 *   - the time above the critical path, part by part.
 * BENCH_VERBOSE=1 adds flotilla's requests up to its first HelmRelease and
 * its output lines; BENCH_CPU_PROF=DIR writes a V8 CPU profile of each
 * `flotilla apply` and `upload` into DIR (open it in Chrome's DevTools).
 * BENCH_BASELINE_CLI=FILE takes turns with another build's CLI (a copy of
 * its dist/ with node_modules beside it): each run applies with both, and
 * the summary gives this build's figures against the baseline's, run by run.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { dirname, join, resolve } from 'node:path';
import { buildApp } from '../../src/build/index.js';
import { WriteSchedule, type ScheduledRelease } from '../../src/lifecycle/schedule.js';
import { startDevCluster, type DevCluster, type FluxTrace, type JsonObject } from '../support/dev-cluster/index.js';
import { readyCondition } from '../support/dev-cluster/flux.js';

const RELEASES = Number(process.env.BENCH_RELEASES ?? 80);
const READY_MS = Number(process.env.BENCH_READY_MS ?? 3000);
/** Fresh clusters the apply is measured on; the summary gives the median and the spread. */
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** helm processes the simulated helm-controller runs at once (Flux's --concurrent). */
const CONTROLLER_CONCURRENCY = Number(process.env.BENCH_CONTROLLER_CONCURRENCY ?? 8);
const root = resolve(import.meta.dirname, '..', '..');
const cli = join(root, 'dist', 'cli', 'flotilla.cjs');
/** Another build's CLI (a copy of an earlier dist/, with node_modules beside it) to take turns with: each run applies with both, on fresh clusters. */
const baselineCli = process.env.BENCH_BASELINE_CLI ? resolve(process.env.BENCH_BASELINE_CLI) : undefined;
/** helm-controller's --requeue-dependency in the fixture (its default, as Flux's). */
const REQUEUE_MS = Number(process.env.BENCH_REQUEUE_MS ?? 30_000);
const work = mkdtempSync(join(tmpdir(), 'flotilla-bench-apply-'));

function write(base: string, path: string, text: string): void {
  mkdirSync(dirname(join(base, path)), { recursive: true });
  writeFileSync(join(base, path), text);
}

/** Tiers of an OpenStack-like graph: share of the releases, and how many of the tiers below each one needs. */
const TIERS = [
  { share: 0.08, picks: 0 }, // mariadb, rabbitmq, memcached, ovn…
  { share: 0.05, picks: 2 }, // keystone and its kin
  { share: 0.4, picks: 2 }, // services needing identity and infrastructure
  { share: 0.35, picks: 3 }, // services on top of services (nova on placement, …)
  { share: 0.12, picks: 4 }, // dashboards, clients, tests
];

/** A deterministic graph: each release depends on `picks` releases of lower tiers, at least one from the tier just below. */
function graph(count: number): { name: string; dependsOn: string[] }[] {
  const sizes = TIERS.map((t) => Math.max(1, Math.round(t.share * count)));
  sizes[2] = (sizes[2] ?? 0) + count - sizes.reduce((a, b) => a + b, 0);
  const tiers: string[][] = [];
  const releases: { name: string; dependsOn: string[] }[] = [];
  let n = 0;
  sizes.forEach((size, tier) => {
    const names: string[] = [];
    for (let i = 0; i < size; i++) {
      const name = `r${String(n++).padStart(2, '0')}`;
      const below = tiers.slice(0, tier).flat();
      const previous = tiers[tier - 1] ?? [];
      const picks = TIERS[tier]?.picks ?? 0;
      const deps = new Set<string>();
      if (previous.length > 0) deps.add(previous[(i * 7) % previous.length] as string);
      for (let k = 1; deps.size < Math.min(picks, below.length) && k < 50; k++) deps.add(below[(i * 13 + k * 5) % below.length] as string);
      releases.push({ name, dependsOn: [...deps].sort() });
      names.push(name);
    }
    tiers.push(names);
  });
  return releases;
}

/** The longest path through the graph, each release weighing `cost(name)`. */
function criticalPath(releases: readonly { name: string; dependsOn: readonly string[] }[], cost: (name: string) => number): number {
  const byName = new Map(releases.map((r) => [r.name, r]));
  const finish = new Map<string, number>();
  const of = (name: string): number => {
    const known = finish.get(name);
    if (known !== undefined) return known;
    const f = cost(name) + Math.max(0, ...(byName.get(name)?.dependsOn ?? []).map(of));
    finish.set(name, f);
    return f;
  };
  return Math.max(...releases.map((r) => of(r.name)));
}

function generateApp(dir: string, releases: readonly { name: string; dependsOn: readonly string[] }[]): void {
  for (const r of releases) {
    write(dir, `charts/${r.name}/Chart.yaml`, `apiVersion: v2\nname: ${r.name}\nversion: 0.1.0\nappVersion: "1.0"\n`);
    write(dir, `charts/${r.name}/values.yaml`, `images:\n  tags:\n    ${r.name}_api: example/${r.name}:1\nconf:\n  debug: false\n`);
    write(
      dir,
      `charts/${r.name}/templates/configmap.yaml`,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-etc\ndata:\n  image: {{ .Values.images.tags.${r.name}_api | quote }}\n  debug: {{ .Values.conf.debug | quote }}\n`,
    );
  }
  const table = releases
    .map(
      (r) =>
        `  - name: ${r.name}\n    chart: ${r.name}\n    service: ${r.name}\n${r.dependsOn.length > 0 ? `    dependsOn: [${r.dependsOn.join(', ')}]\n` : ''}`,
    )
    .join('');
  write(dir, 'fluxcd/metadata.yaml', 'app_name: bench\napp_version: 1.0-0\nsupported_k8s_version:\n  minimum: v1.29.0\n');
  write(dir, 'fluxcd/releases.yaml', `defaults:\n  namespace: openstack\n  timeout: 30m\nreleases:\n${table}`);
  write(dir, 'overrides/deployment.yaml', `main:\n  release: "2025.1"\nfeatures:\n  services: [${releases.map((r) => r.name).join(', ')}]\n`);
  write(
    dir,
    'overrides/versions/2025.1.yaml',
    `release: "2025.1"\nimages:\n${releases.map((r) => `  ${r.name}_api: docker.io/example/${r.name}:2025.1`).join('\n')}\n`,
  );
  write(dir, 'overrides/versions/images.yaml', `${releases.map((r) => `${r.name}_api:\n  ${r.name}: images.tags.${r.name}_api`).join('\n')}\n`);
}

/** A line of the CLI's output and when this process received it. */
interface TimedLine {
  readonly at: number;
  readonly text: string;
}

/** Runs the CLI in a child, as a user would, reading its wall time, peak memory and each output line's arrival time. Asynchronously: the dev cluster answers from this process. */
async function run(
  cli: string,
  kubeconfig: string,
  args: readonly string[],
): Promise<{ startedAt: number; seconds: number; maxRssMiB: number; output: string; lines: TimedLine[]; status: number | null }> {
  const probe = `
    process.argv = [process.argv[0], ${JSON.stringify(cli)}, ...${JSON.stringify(args)}];
    process.on('exit', () => process.stderr.write('MAXRSS ' + process.resourceUsage().maxRSS + '\\n'));
    await import(${JSON.stringify(cli)});
  `;
  const startedAt = Date.now();
  const start = process.hrtime.bigint();
  const profile = process.env.BENCH_CPU_PROF ? [`--cpu-prof`, `--cpu-prof-dir=${resolve(process.env.BENCH_CPU_PROF)}`] : [];
  const child = spawn(process.execPath, [...profile, '--input-type=module', '-e', probe], { env: { ...process.env, KUBECONFIG: kubeconfig } });
  let output = '';
  const lines: TimedLine[] = [];
  const collect = (stream: NodeJS.ReadableStream) => {
    let partial = '';
    stream.on('data', (chunk: Buffer) => {
      const at = Date.now();
      output += chunk.toString();
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop() ?? '';
      for (const text of parts) lines.push({ at, text });
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  const status = await new Promise<number | null>((done) => child.on('close', done));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const rss = /MAXRSS (\d+)/.exec(output)?.[1];
  return { startedAt, seconds, maxRssMiB: rss ? Number(rss) / 1024 : NaN, output, lines, status };
}

/** When each thing happened to one release during the apply (Date.now() values). */
interface ReleaseTimes {
  applied?: number;
  /** Its HelmChart Ready (the chart pulled by the simulated source-controller). */
  chartReady?: number;
  renderQueued?: number;
  renderStart?: number;
  renderEnd?: number;
  ready?: number;
  /** When flotilla said it was ready (its output line reached this process). */
  seen?: number;
}

/**
 * Follows the fixture while flotilla applies: HelmReleases written, renders
 * queued/started/ended (the simulation's trace), Ready turning True. Runs in
 * this process, so every time is on one clock.
 */
class Timeline {
  readonly releases = new Map<string, ReleaseTimes>();
  private unsubscribe: () => void = () => undefined;

  of(name: string): ReleaseTimes {
    let times = this.releases.get(name);
    if (!times) this.releases.set(name, (times = {}));
    return times;
  }

  follow(cluster: DevCluster): void {
    this.unsubscribe = cluster.cluster.store.subscribe((change) => {
      if (change.type === 'DELETED') return;
      const ready = readyCondition(change.object)?.status === 'True';
      if (change.resource === 'source.toolkit.fluxcd.io/helmcharts' && ready) {
        const release = (change.object.metadata as { labels?: Record<string, string> }).labels?.['helm.toolkit.fluxcd.io/name'];
        if (release) this.of(release).chartReady ??= Date.now();
      }
      if (change.resource !== 'helm.toolkit.fluxcd.io/helmreleases') return;
      const times = this.of(change.name);
      times.applied ??= Date.now();
      if (ready) times.ready ??= Date.now();
    });
  }

  trace(event: FluxTrace): void {
    const times = this.of(event.name);
    if (event.phase === 'render-queued') times.renderQueued ??= event.at;
    if (event.phase === 'render-start') times.renderStart ??= event.at;
    if (event.phase === 'render-end') times.renderEnd ??= event.at;
  }

  seen(lines: readonly TimedLine[]): void {
    for (const line of lines) {
      const name = /^release (\S+) ready/.exec(line.text)?.[1];
      if (name) this.of(name).seen ??= line.at;
    }
  }

  stop(): void {
    this.unsubscribe();
  }
}

/** Mean and max of the defined values, in seconds. */
function spread(values: readonly (number | undefined)[]): string {
  const defined = values.filter((v): v is number => v !== undefined && Number.isFinite(v));
  if (defined.length === 0) return 'n/a';
  const mean = defined.reduce((a, b) => a + b, 0) / defined.length;
  return `mean ${(mean / 1000).toFixed(2)} s, max ${(Math.max(...defined) / 1000).toFixed(2)} s`;
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

interface RunFigures {
  readonly elapsed: number;
  readonly maxRssMiB: number;
  /** The longest chain, each release weighed by its measured time from eligible (written, dependencies Ready) to Ready. */
  readonly asRun: number;
  /** Where the time above the critical path went, along the chain that finished last (parts of `elapsed − critical`); its `startup` and `finish` are flotilla's own time. */
  readonly above: AboveCriticalPath;
  readonly load: readonly number[];
  /** How late the fixture's event loop (API server and Flux simulation) ran, in ms: p99 and max. */
  readonly loopDelay: { readonly p99: number; readonly max: number };
  /** What flotilla wrote for Flux (namespace, sources, values Secrets, HelmReleases), for the perfect client to write again. */
  readonly written: AppObjects;
  /** The perfect client's time on a fresh cluster of its own, in ms (see perfectClientOnce). */
  perfect?: number;
}

/** The objects of the app that Flux reads, as flotilla wrote them, and the chart repository they name. */
interface AppObjects {
  readonly chartRepository: string;
  readonly prerequisites: readonly JsonObject[];
  readonly helmReleases: readonly JsonObject[];
}

/** The chain that finished last, from flotilla's start to its exit: every part but the set delays, in ms. */
interface AboveCriticalPath {
  /** flotilla's start → its first HelmRelease written. */
  readonly startup: number;
  /** First HelmRelease written → the chain's first release written (the rest of the one server-side apply). */
  readonly writing: number;
  /** Summed over the chain: the last dependency Ready → the release written (flotilla noticing the Ready and writing the dependant). */
  readonly handoff: number;
  /** Summed over the chain: eligible → render queued (the wake-up, or a chart still being pulled). */
  readonly wake: number;
  /** Render queued → started (waiting for a helm slot). */
  readonly slot: number;
  /** helm template. */
  readonly template: number;
  /** Rendered → Ready, less the set delay (storing the objects, timer lag). */
  readonly settle: number;
  /** Last release Ready → flotilla exits. */
  readonly finish: number;
}

const releases = graph(RELEASES);
const chain = criticalPath(releases, () => 1);
const byName = new Map(releases.map((r) => [r.name, r]));
const names = releases.map((r) => r.name);
const critical = chain * READY_MS;
/**
 * Flux alone, every HelmRelease written at once (as a kustomization applies
 * them): a release waiting on a dependency checks it again every REQUEUE_MS,
 * so each level of the chain starts at the first check after the level below
 * is Ready. flotilla writes each dependant once what it depends on is Ready,
 * so no release of its apply waits for a requeue: `critical` is its floor.
 */
const fluxAlone = (() => {
  const finish = new Map<string, number>();
  const of = (name: string): number => {
    const known = finish.get(name);
    if (known !== undefined) return known;
    const depsReady = Math.max(0, ...(byName.get(name)?.dependsOn ?? []).map(of));
    const f = Math.ceil(depsReady / REQUEUE_MS) * REQUEUE_MS + READY_MS;
    finish.set(name, f);
    return f;
  };
  return Math.max(...releases.map((r) => of(r.name)));
})();
const serial = releases.length * READY_MS;
const edges = releases.reduce((sum, r) => sum + r.dependsOn.length, 0);

/** One fresh dev cluster, the app uploaded, then `flotilla apply` timed and traced. */
async function benchOnce(bundle: string, index: number, cli: string): Promise<RunFigures> {
  const timeline = new Timeline();
  const cluster = await startDevCluster({
    defaultReadyDelayMs: READY_MS,
    requeueDependencyMs: REQUEUE_MS,
    concurrency: CONTROLLER_CONCURRENCY,
    trace: (event) => timeline.trace(event),
  });
  try {
    const upload = await run(cli, cluster.kubeconfigPath, ['upload', bundle]);
    if (upload.status !== 0) throw new Error(`upload failed:\n${upload.output}`);
    await cluster.settled();
    timeline.follow(cluster);
    const load: number[] = [loadavg()[0] ?? 0];
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const sampler = setInterval(() => load.push(loadavg()[0] ?? 0), 1000);
    const apply = await run(cli, cluster.kubeconfigPath, ['apply', 'bench', '--timeout', '30m']).finally(() => {
      clearInterval(sampler);
      loop.disable();
    });
    const loopDelay = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
    timeline.stop();
    timeline.seen(apply.lines);
    if (apply.status !== 0) throw new Error(`apply failed:\n${apply.output}`);

    const times = (name: string) => timeline.releases.get(name) ?? {};
    /** When a release could start: written by flotilla and every dependency Ready. */
    const eligible = (name: string): number | undefined => {
      const deps = (byName.get(name)?.dependsOn ?? []).map((d) => times(d).ready);
      const applied = times(name).applied;
      if (applied === undefined || deps.some((d) => d === undefined)) return undefined;
      return Math.max(applied, ...(deps as number[]));
    };
    const gap = (to: number | undefined, from: number | undefined) => (to !== undefined && from !== undefined ? to - from : undefined);
    const endedAt = apply.startedAt + apply.seconds * 1000;
    const firstApplied = Math.min(...names.map((n) => times(n).applied ?? Infinity));
    const lastReady = Math.max(...names.map((n) => times(n).ready ?? -Infinity));
    const lastSeen = Math.max(...names.map((n) => times(n).seen ?? -Infinity));
    const asRun = criticalPath(releases, (n) => gap(times(n).ready, eligible(n)) ?? READY_MS);
    // The chain that finished last, walked back through the dependency that became Ready last.
    const path: string[] = [];
    for (let at: string | undefined = names.reduce((a, b) => ((times(b).ready ?? 0) > (times(a).ready ?? 0) ? b : a)); at;) {
      path.unshift(at);
      at = [...(byName.get(at)?.dependsOn ?? [])].sort((a, b) => (times(b).ready ?? 0) - (times(a).ready ?? 0))[0];
    }
    // One release's parts of its time from eligible to Ready.
    /** The last of its dependencies Ready (undefined: none, or one never Ready). */
    const dependenciesReady = (name: string): number | undefined => {
      const deps = (byName.get(name)?.dependsOn ?? []).map((d) => times(d).ready);
      return deps.length === 0 || deps.some((d) => d === undefined) ? undefined : Math.max(...(deps as number[]));
    };
    const handoff = (n: string) => (dependenciesReady(n) === undefined ? undefined : Math.max(0, gap(times(n).applied, dependenciesReady(n)) ?? NaN));
    const wake = (n: string) => gap(times(n).renderQueued, eligible(n));
    const slot = (n: string) => gap(times(n).renderStart, times(n).renderQueued);
    const template = (n: string) => gap(times(n).renderEnd, times(n).renderStart);
    const settle = (n: string) => (gap(times(n).ready, times(n).renderEnd) ?? NaN) - READY_MS;
    const along = (part: (n: string) => number | undefined) => path.reduce((sum, n) => sum + (part(n) ?? NaN), 0);
    const above: AboveCriticalPath = {
      startup: firstApplied - apply.startedAt,
      writing: (times(path[0]!).applied ?? NaN) - firstApplied,
      handoff: path.slice(1).reduce((sum, n) => sum + (handoff(n) ?? NaN), 0),
      wake: along(wake),
      slot: along(slot),
      template: along(template),
      settle: along(settle),
      finish: endedAt - lastReady,
    };
    const figures: RunFigures = { elapsed: apply.seconds * 1000, maxRssMiB: apply.maxRssMiB, asRun, above, load, loopDelay, written: writtenBy(cluster) };
    console.log(
      `run ${index}: apply ${s(figures.elapsed)} = ${(figures.elapsed / critical).toFixed(2)}× the critical path; upload ${upload.seconds.toFixed(1)} s; load average ${(load[0] ?? 0).toFixed(2)} at start, max ${Math.max(...load).toFixed(2)}`,
    );
    console.log(
      `  flotilla before the first HelmRelease is written  ${s(above.startup)} (process start, record and payload read, hooks, overrides, server-side apply)`,
    );
    console.log(`  last dependency Ready → flotilla writes it        ${spread(names.map(handoff))} (its watch sees the Ready, then a server-side apply)`);
    console.log(
      `  HelmRelease written → its chart pulled           ${spread(names.map((n) => gap(times(n).chartReady, times(n).applied)))} (source-controller, while the dependencies install)`,
    );
    console.log(
      `  eligible (dependencies Ready) → render queued     ${spread(names.map(wake))} (woken by the dependency's Ready, or its chart if still pulling)`,
    );
    console.log(`  render queued → started (a free helm slot)        ${spread(names.map(slot))}`);
    console.log(`  helm template                                     ${spread(names.map(template))}`);
    console.log(`  rendered → Ready (the set delay)                  ${spread(names.map((n) => gap(times(n).ready, times(n).renderEnd)))}`);
    console.log(`  Ready → flotilla reports it (its watch)           ${spread(names.map((n) => gap(times(n).seen, times(n).ready)))}`);
    console.log(
      `  last release Ready → flotilla exits               ${s(above.finish)} (post hooks, record written; last reported ${s(endedAt - lastSeen)} before exit)`,
    );
    console.log(
      `  the fixture's event loop ran late by up to ${loopDelay.max.toFixed(0)} ms (p99 ${loopDelay.p99.toFixed(0)} ms): timers and watch events wait that long`,
    );
    console.log(`  above the critical path: ${describeAbove(above)} = ${s(sumAbove(above))} (elapsed − critical ${s(figures.elapsed - critical)})`);
    const part = (ms: number | undefined) => (ms === undefined ? '?' : (ms / 1000).toFixed(2));
    const parts = (n: string) =>
      `written ${part(handoff(n) ?? 0)}, wake ${part(wake(n))}, slot ${part(slot(n))}, template ${part(template(n))}, settle ${part(settle(n))}`;
    console.log(
      `  the chain that finished last: ${path.map((n) => `${n} (eligible → Ready ${s(gap(times(n).ready, eligible(n)) ?? NaN)}: ${parts(n)})`).join(' → ')}`,
    );
    if (process.env.BENCH_VERBOSE) {
      const firstRelease = cluster.requests.findIndex((r) => r.at >= apply.startedAt && r.url.includes('/helmreleases/'));
      for (const r of cluster.requests.filter((r, i) => r.at >= apply.startedAt && i <= firstRelease))
        console.log(`  +${s(r.at - apply.startedAt)} ${r.method} ${r.url.split('?')[0]} ${r.status}`);
      for (const line of apply.lines) console.log(`  +${s(line.at - apply.startedAt)} ${line.text}`);
    }
    return figures;
  } finally {
    await cluster.stop();
  }
}

/** The app's objects flotilla wrote (its field manager among their managers), bare of what the server set. */
function writtenBy(cluster: DevCluster): AppObjects {
  const bare = (object: JsonObject): JsonObject => {
    const { name, namespace, labels, annotations } = object.metadata as { name: string; namespace?: string; labels?: JsonObject; annotations?: JsonObject };
    const { status: _status, ...rest } = object;
    return { ...rest, metadata: { name, ...(namespace ? { namespace } : {}), ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) } };
  };
  const byFlotilla = (object: JsonObject) =>
    ((object.metadata as { managedFields?: { manager?: string }[] }).managedFields ?? []).some((f) => f.manager === 'flotilla');
  const ofKind = (apiVersion: string, kind: string, namespace?: string) => cluster.list(apiVersion, kind, namespace).filter(byFlotilla).map(bare);
  return {
    chartRepository: cluster.chartRepository ?? '',
    prerequisites: [
      ...ofKind('v1', 'Namespace').filter((o) => (o.metadata as { name: string }).name === 'openstack'),
      ...ofKind('source.toolkit.fluxcd.io/v1', 'HelmRepository', 'openstack'),
      ...ofKind('v1', 'Secret', 'openstack'),
      ...ofKind('v1', 'ConfigMap', 'openstack'),
    ],
    helmReleases: ofKind('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'openstack'),
  };
}

/**
 * The perfect client: on a fresh cluster with the app uploaded, it writes
 * what flotilla wrote, in-process (no HTTP, no start-up), every release the
 * moment its last dependency turns Ready, in flotilla's order; what the releases read (sources,
 * values) is written before its clock starts. Its time from the first
 * HelmRelease written to the last Ready is the best any client can get from
 * this fixture on this machine: the critical path with the fixture's own
 * costs (chart pulls, helm template on the machine's cores, storing) and
 * none of a client's.
 */
async function perfectClientOnce(bundle: string, cli: string, app: AppObjects): Promise<number> {
  const cluster = await startDevCluster({ defaultReadyDelayMs: READY_MS, requeueDependencyMs: REQUEUE_MS, concurrency: CONTROLLER_CONCURRENCY });
  try {
    const upload = await run(cli, cluster.kubeconfigPath, ['upload', bundle]);
    if (upload.status !== 0) throw new Error(`upload failed:\n${upload.output}`);
    await cluster.settled();
    const here = (object: JsonObject): JsonObject =>
      JSON.parse(JSON.stringify(object).replaceAll(app.chartRepository, cluster.chartRepository ?? '')) as JsonObject;
    const nameOf = (object: JsonObject) => (object.metadata as { name: string }).name;
    const schedule = new WriteSchedule(
      app.helmReleases.map((object) => ({
        key: nameOf(object),
        dependsOn: ((object.spec as { dependsOn?: { name: string }[] }).dependsOn ?? []).map((d) => d.name),
        spec: {},
        object,
      })),
    );
    const ready = new Set<string>();
    let lastReady = 0;
    // flotilla's order (schedule.ts): each release the moment it is due, the most urgent first.
    const write = (due: readonly ScheduledRelease<JsonObject>[]) => {
      for (const release of due) cluster.apply(here(release.object));
    };
    const unsubscribe = cluster.cluster.store.subscribe((change) => {
      if (change.resource !== 'helm.toolkit.fluxcd.io/helmreleases' || ready.has(change.name)) return;
      if (readyCondition(change.object)?.status !== 'True') return;
      ready.add(change.name);
      lastReady = Date.now();
      // Not inside the store's notification: the write is a change of its own.
      const due = schedule.markReady(change.name);
      setImmediate(() => write(due));
    });
    try {
      // What the releases read is there before the clock starts: only the HelmReleases are on the critical path.
      for (const object of app.prerequisites) cluster.apply(here(object));
      await cluster.settled();
      const startedAt = Date.now();
      write(schedule.first());
      await cluster.waitFor(() => ready.size === app.helmReleases.length, 10 * 60_000);
      return lastReady - startedAt;
    } finally {
      unsubscribe();
    }
  } finally {
    await cluster.stop();
  }
}

const ABOVE_PARTS: readonly [keyof AboveCriticalPath, string][] = [
  ['startup', 'flotilla before the first HelmRelease'],
  ['writing', 'the rest of its server-side apply'],
  ['handoff', 'dependency Ready → dependant written'],
  ['wake', 'eligible → render queued'],
  ['slot', 'waiting for a helm slot'],
  ['template', 'helm template'],
  ['settle', 'rendered → Ready less the delay'],
  ['finish', 'flotilla after the last Ready'],
];
const sumAbove = (above: AboveCriticalPath) => ABOVE_PARTS.reduce((sum, [key]) => sum + above[key], 0);
const describeAbove = (above: AboveCriticalPath) => ABOVE_PARTS.map(([key, label]) => `${label} ${s(above[key])}`).join(' + ');

/** The median (the lower of the middle two of an even count). */
const medianOf = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? NaN;

/** `median (min–max)` of a figure over the runs. */
function summary(values: readonly number[], format: (v: number) => string): string {
  const sorted = [...values].sort((a, b) => a - b);
  const median = medianOf(sorted);
  return sorted.length > 1
    ? `${format(median)} (${format(sorted[0] ?? NaN)}–${format(sorted.at(-1) ?? NaN)}, spread ${(((sorted.at(-1)! - sorted[0]!) / median) * 100).toFixed(0)}%)`
    : format(median);
}

/** Prints the summary of `runs` (median and spread of each figure); returns the median ratio to the perfect client (NaN without one). */
function summarize(runs: readonly RunFigures[], label: string): number {
  const ratios = runs.map((r) => r.elapsed / critical);
  const perfect = runs.filter((r) => r.perfect !== undefined);
  const median = medianOf(perfect.map((r) => r.elapsed / r.perfect!));
  const loads = runs.flatMap((r) => r.load);
  console.log(`summary of ${label} over ${runs.length} run(s): median (min–max)`);
  console.log(
    `  flotilla apply elapsed            ${summary(
      runs.map((r) => r.elapsed),
      s,
    )}`,
  );
  console.log(
    `  critical path                     ${s(critical)} (${chain} × ${READY_MS} ms, with no cost of the fixture's) → ${summary(ratios, (v) => `${v.toFixed(2)}×`)}`,
  );
  if (perfect.length > 0) {
    console.log(
      `  the perfect client                ${summary(
        perfect.map((r) => r.perfect!),
        s,
      )} = ${summary(
        perfect.map((r) => r.perfect! / critical),
        (v) => `${v.toFixed(2)}×`,
      )} the critical path (what flotilla wrote, written in-process in its order the moment it is due, on a fresh cluster: the critical path with the fixture's costs on this machine)`,
    );
    console.log(
      `  against the perfect client        ${summary(
        perfect.map((r) => r.elapsed / r.perfect!),
        (v) => `${v.toFixed(2)}×`,
      )}; floor ≤ 1.20×: ${median <= 1.2 ? 'OK' : 'ABOVE THE FLOOR'}`,
    );
  }
  console.log(
    `  one after another                 ${s(serial)} (${releases.length} × ${READY_MS} ms) → ${summary(
      runs.map((r) => r.elapsed / serial),
      (v) => `${v.toFixed(3)}×`,
    )}`,
  );
  console.log(
    `  Flux alone, all written at once   ${s(fluxAlone)} (each level of the chain at the first dependency requeue, every ${REQUEUE_MS} ms, after the level below is Ready) → ${summary(
      runs.map((r) => r.elapsed / fluxAlone),
      (v) => `${v.toFixed(2)}×`,
    )}`,
  );
  console.log(
    `  critical path as the fixture ran  ${summary(
      runs.map((r) => r.asRun),
      s,
    )} (each release weighed by its measured eligible → Ready: chart pull, helm template, the set delay) → ${summary(
      runs.map((r) => r.elapsed / (r.asRun + r.above.startup + r.above.finish)),
      (v) => `${v.toFixed(2)}×`,
    )} of it plus flotilla's own time`,
  );
  const medianAbove = Object.fromEntries(ABOVE_PARTS.map(([key]) => [key, medianOf(runs.map((r) => r.above[key]))])) as unknown as AboveCriticalPath;
  console.log(
    `  above the critical path (medians, along the chain that finished last, ${chain} releases): ${describeAbove(medianAbove)} = ${s(sumAbove(medianAbove))}`,
  );
  console.log(
    `  flotilla's own time               ${summary(
      runs.map((r) => r.above.startup),
      s,
    )} before the first release is written, ${summary(
      runs.map((r) => r.above.finish),
      s,
    )} after the last is Ready`,
  );
  console.log(
    `  peak memory of flotilla apply     ${summary(
      runs.map((r) => r.maxRssMiB),
      (v) => `${v.toFixed(0)} MiB`,
    )} (max RSS of the CLI process)`,
  );
  console.log(
    `  load average (1 min) during runs  mean ${(loads.reduce((a, b) => a + b, 0) / loads.length).toFixed(2)}, min ${Math.min(...loads).toFixed(2)}, max ${Math.max(...loads).toFixed(2)}`,
  );
  return median;
}

try {
  const app = join(work, 'app');
  generateApp(app, releases);
  const built = await buildApp(app, { outDir: join(work, 'out'), cacheDir: false });
  console.log(
    `apply benchmark: ${releases.length} releases, ${edges} dependsOn edges, longest chain ${chain} releases; each release Ready ${READY_MS} ms after it renders; dev cluster TEST FIXTURE with ${CONTROLLER_CONCURRENCY} helm at once; ${RUNS} run(s) on ${cpus().length} CPUs`,
  );
  const runs: RunFigures[] = [];
  const baselineRuns: RunFigures[] = [];
  for (let i = 1; i <= RUNS; i++) {
    // With a baseline, the two CLIs take turns: each pair of runs meets the same load.
    const figures = await benchOnce(built.file, i, cli);
    figures.perfect = await perfectClientOnce(built.file, cli, figures.written);
    console.log(
      `  the perfect client on a fresh cluster              ${s(figures.perfect)} (${(figures.perfect / critical).toFixed(2)}× the critical path); flotilla took ${(figures.elapsed / figures.perfect).toFixed(2)}× it`,
    );
    runs.push(figures);
    if (baselineCli) baselineRuns.push(await benchOnce(built.file, i, baselineCli));
  }
  const median = summarize(runs, 'this build');
  if (baselineCli) {
    summarize(baselineRuns, `the baseline ${baselineCli}`);
    console.log(
      `this build against the baseline, run by run: elapsed ${summary(
        runs.map((r, i) => r.elapsed / (baselineRuns[i]?.elapsed ?? NaN)),
        (v) => `${v.toFixed(2)}×`,
      )}; before the first HelmRelease ${summary(
        runs.map((r, i) => r.above.startup / (baselineRuns[i]?.above.startup ?? NaN)),
        (v) => `${v.toFixed(2)}×`,
      )}`,
    );
  }
  if (median > 1.2) process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
