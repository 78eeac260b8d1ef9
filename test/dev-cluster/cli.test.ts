/**
 * `npm run dev-cluster -- --kubeconfig FILE` (the dev cluster TEST FIXTURE in
 * the foreground): writes FILE once ready, says what it is, serves the real
 * kubectl, and on SIGTERM stops everything and removes its temp folders.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');
// As `npm run dev-cluster` runs it: tsx as a loader in this one process (tsx's own CLI would relay signals to a child, racily under load).
const devClusterCommand = ['--import', 'tsx', join(root, 'test', 'support', 'dev-cluster', 'cli.ts')];

describe('npm run dev-cluster (test fixture)', () => {
  it('runs in the foreground, writes the kubeconfig once ready, and cleans up on SIGTERM', async () => {
    const work = mkdtempSync(join(tmpdir(), 'flotilla-dev-cli-'));
    const kubeconfig = join(work, 'kube', 'config');
    const child = spawn(process.execPath, [...devClusterCommand, '--kubeconfig', kubeconfig], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
    const deadline = Date.now() + 60_000;
    while (!stdout.includes('Ctrl-C stops') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(stdout).toContain('a TEST FIXTURE standing in for Kubernetes + Flux (not a real cluster)');
    expect(stdout).toContain('dependencies re-checked every 30000 ms');
    expect(readFileSync(kubeconfig, 'utf8')).toContain('current-context: flotilla-dev');
    const server = /API server\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)![1]!;
    const registry = /chart registry\s+oci:\/\/(127\.0\.0\.1:\d+)\/charts/.exec(stdout)![1]!;
    const workDir = /serving (\S+)\/http-repo/.exec(stdout)![1]!;
    const namespaces = await new Promise<string>((resolveRun, reject) =>
      execFile(
        process.env.FLOTILLA_KUBECTL!,
        ['get', 'namespaces', '-o', 'name'],
        { env: { PATH: process.env.PATH, HOME: work, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(work, 'cache') } },
        (error, out) => (error ? reject(error) : resolveRun(out)),
      ),
    );
    expect(namespaces.split('\n')).toEqual(expect.arrayContaining(['namespace/flotilla-system', 'namespace/flux-system', 'namespace/default']));
    expect((await fetch(`http://${registry}/v2/`)).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(kubeconfig)).toBe(false);
    expect(existsSync(workDir)).toBe(false);
    await expect(fetch(`${server}/version`)).rejects.toThrow();
    await expect(fetch(`http://${registry}/v2/`)).rejects.toThrow();
  });

  it('exits 2 with the usage when --kubeconfig is missing', async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolveRun) => {
      execFile(process.execPath, devClusterCommand, { cwd: root }, (error, _out, stderr) => resolveRun({ code: error ? (error.code as number) : 0, stderr }));
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('dev-cluster: --kubeconfig FILE is required');
  });

  it('exits 2 naming the flag when --requeue-dependency is not a positive number of milliseconds', async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolveRun) => {
      execFile(
        process.execPath,
        [...devClusterCommand, '--kubeconfig', join(tmpdir(), 'unused-kubeconfig'), '--requeue-dependency', '0'],
        { cwd: root },
        (error, _out, stderr) => resolveRun({ code: error ? (error.code as number) : 0, stderr }),
      );
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('dev-cluster: --requeue-dependency must be a positive whole number of milliseconds, got "0"\n');
  });
});
