/**
 * What running plugins in the plugin process costs the default app
 * (`npm run build --silent && npx tsx test/bench/plugin-process.ts`), in CPU
 * time, which a shared machine disturbs less than wall time: starting the
 * process with the app's bundle imported (once per build, apply or other
 * run), and a pass of every release's getOverrides through it (passwords
 * answered at once, so the messages and the plugins' own work are what is
 * counted). Linux only (/proc).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..', '..');
const dist = (file: string) => pathToFileURL(join(ROOT, 'dist', file)).href;
const { loadApp } = (await import(dist('app/index.js'))) as typeof import('../../src/app/index.js');
const { loadAppPlugins } = (await import(dist('plugins/index.js'))) as typeof import('../../src/plugins/index.js');

const TICKS = 100; // USER_HZ: /proc's unit of CPU time
const ownCpu = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};
const children = () =>
  readdirSync('/proc/self/task').flatMap((task) => readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean));
const pluginProcess = () => children().find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('sandbox-child'));
const cpuOf = (pid: string) => {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / TICKS) * 1000;
};
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;

const app = await loadApp(ROOT);
const host = await loadAppPlugins(app, { mode: 'offline', passwords: { getOrGenerate: async (name) => `bench-${name}` } });
const sandbox = host.bundle.instances!.sandbox;
const startChild: number[] = [];
const startHost: number[] = [];
for (let i = 0; i < 7; i++) {
  sandbox.stop('measuring its start');
  const before = ownCpu();
  await sandbox.ready();
  startHost.push(ownCpu() - before);
  startChild.push(cpuOf(pluginProcess()!));
}
const PASSES = 20;
const pass = async () => {
  for (const release of app.releases) await host.overrides(release);
};
await pass();
const pid = pluginProcess()!;
const [child0, host0] = [cpuOf(pid), ownCpu()];
for (let i = 0; i < PASSES; i++) await pass();
const [childPass, hostPass] = [(cpuOf(pid) - child0) / PASSES, (ownCpu() - host0) / PASSES];

console.log(
  `plugin process start, the default app's bundle imported: ${median(startChild).toFixed(0)} ms CPU in that process + ${median(startHost).toFixed(0)} ms in flotilla (median of 7; once per run)`,
);
console.log(
  `getOverrides of all ${app.releases.length} releases through it: ${childPass.toFixed(1)} ms CPU in the plugin process + ${hostPass.toFixed(1)} ms in flotilla per pass (mean of ${PASSES})`,
);
process.exit(0);
