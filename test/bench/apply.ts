/**
 * Apply benchmark (`npm run bench:apply`): an app of 80 releases with an
 * OpenStack-like dependency graph (infrastructure, identity, services that
 * need identity and infrastructure, services on top of those, dashboards),
 * uploaded to the dev cluster TEST FIXTURE whose Flux simulation makes every
 * release take BENCH_READY_MS (default 3000) from rendered to Ready. Then
 * `flotilla apply` runs as a user runs it, in a child process, and reports:
 *   - elapsed time against the critical path of the graph (the longest
 *     dependsOn chain × the ready time): the floor is 1.2×;
 *   - against applying the releases one after another (80 × the ready time);
 *   - the peak memory (max RSS) of `flotilla apply`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { buildApp } from '../../src/build/index.js';
import { startDevCluster } from '../support/dev-cluster/index.js';

const RELEASES = Number(process.env.BENCH_RELEASES ?? 80);
const READY_MS = Number(process.env.BENCH_READY_MS ?? 3000);
/** helm processes the simulated helm-controller runs at once (Flux's --concurrent). */
const CONTROLLER_CONCURRENCY = Number(process.env.BENCH_CONTROLLER_CONCURRENCY ?? 8);
const root = resolve(import.meta.dirname, '..', '..');
const cli = join(root, 'dist', 'cli', 'flotilla.mjs');
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
    write(dir, `charts/${r.name}/templates/configmap.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-etc\ndata:\n  image: {{ .Values.images.tags.${r.name}_api | quote }}\n  debug: {{ .Values.conf.debug | quote }}\n`);
  }
  const table = releases.map((r) => `  - name: ${r.name}\n    chart: ${r.name}\n    service: ${r.name}\n${r.dependsOn.length > 0 ? `    dependsOn: [${r.dependsOn.join(', ')}]\n` : ''}`).join('');
  write(dir, 'fluxcd/metadata.yaml', 'app_name: bench\napp_version: 1.0-0\nsupported_k8s_version:\n  minimum: v1.29.0\n');
  write(dir, 'fluxcd/releases.yaml', `defaults:\n  namespace: openstack\n  timeout: 30m\nreleases:\n${table}`);
  write(dir, 'overrides/deployment.yaml', `main:\n  release: "2025.1"\nfeatures:\n  services: [${releases.map((r) => r.name).join(', ')}]\n`);
  write(dir, 'overrides/versions/2025.1.yaml', `release: "2025.1"\nimages:\n${releases.map((r) => `  ${r.name}_api: docker.io/example/${r.name}:2025.1`).join('\n')}\n`);
  write(dir, 'overrides/versions/images.yaml', `${releases.map((r) => `${r.name}_api:\n  ${r.name}: images.tags.${r.name}_api`).join('\n')}\n`);
}

/** Runs the CLI in a child, as a user would, reading its wall time and peak memory. Asynchronously: the dev cluster answers from this process. */
async function run(kubeconfig: string, args: readonly string[]): Promise<{ seconds: number; maxRssMiB: number; output: string; status: number | null }> {
  const probe = `
    process.argv = [process.argv[0], ${JSON.stringify(cli)}, ...${JSON.stringify(args)}];
    process.on('exit', () => process.stderr.write('MAXRSS ' + process.resourceUsage().maxRSS + '\\n'));
    await import(${JSON.stringify(cli)});
  `;
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, ['--input-type=module', '-e', probe], { env: { ...process.env, KUBECONFIG: kubeconfig } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const status = await new Promise<number | null>((done) => child.on('close', done));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const rss = /MAXRSS (\d+)/.exec(stderr)?.[1];
  return { seconds, maxRssMiB: rss ? Number(rss) / 1024 : NaN, output: stdout + stderr, status };
}

const releases = graph(RELEASES);
const chain = criticalPath(releases, () => 1);
const app = join(work, 'app');
generateApp(app, releases);
const built = await buildApp(app, { outDir: join(work, 'out'), cacheDir: false });
const cluster = await startDevCluster({ defaultReadyDelayMs: READY_MS, concurrency: CONTROLLER_CONCURRENCY });
try {
  const upload = await run(cluster.kubeconfigPath, ['upload', built.file]);
  if (upload.status !== 0) throw new Error(`upload failed:\n${upload.output}`);
  const apply = await run(cluster.kubeconfigPath, ['apply', 'bench', '--timeout', '30m']);
  if (process.env.BENCH_VERBOSE) process.stderr.write(apply.output);
  if (apply.status !== 0) throw new Error(`apply failed:\n${apply.output}`);
  // What each release cost the (simulated) controller: from the start of its helm install to deployed and Ready.
  const took = new Map<string, number>();
  for (const hr of cluster.list('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'openstack') as { metadata: { name: string }; status?: { history?: { firstDeployed: string; lastDeployed: string }[] } }[]) {
    const last = hr.status?.history?.[0];
    if (last) took.set(hr.metadata.name, Date.parse(last.lastDeployed) - Date.parse(last.firstDeployed));
  }
  const effective = criticalPath(releases, (name) => took.get(name) ?? READY_MS) / 1000;
  const critical = (chain * READY_MS) / 1000;
  const serial = (releases.length * READY_MS) / 1000;
  const ratio = apply.seconds / critical;
  const edges = releases.reduce((sum, r) => sum + r.dependsOn.length, 0);
  console.log(`apply benchmark: ${releases.length} releases, ${edges} dependsOn edges, longest chain ${chain} releases; each release Ready ${READY_MS} ms after it renders (dev cluster TEST FIXTURE)`);
  console.log(`  upload                    ${upload.seconds.toFixed(1)} s (verify, ${built.charts.length} charts pushed, payload stored)`);
  console.log(`  flotilla apply            ${apply.seconds.toFixed(1)} s, peak memory ${apply.maxRssMiB.toFixed(0)} MiB`);
  console.log(`  critical path             ${critical.toFixed(1)} s   → apply is ${ratio.toFixed(2)}× the critical path (floor: ≤ 1.20×) ${ratio <= 1.2 ? 'OK' : 'ABOVE THE FLOOR'}`);
  console.log(`  one after another         ${serial.toFixed(1)} s   → apply is ${(apply.seconds / serial).toFixed(2)}× serial (${(serial / apply.seconds).toFixed(1)}× faster)`);
  console.log(`  critical path as run      ${effective.toFixed(1)} s   → apply is ${(apply.seconds / effective).toFixed(2)}× (each release weighed by its measured helm install + ready time; the rest is the controller's queue: ${CONTROLLER_CONCURRENCY} helm at once on this machine)`);
  if (ratio > 1.2) process.exitCode = 1;
} finally {
  await cluster.stop();
  rmSync(work, { recursive: true, force: true });
}
