/**
 * Verify in the right order: checksums, then the signature, then the layout,
 * and only then may helm or kubectl see the content. Tools run fenced (time,
 * memory, no remote network); temp folders do not outlive a stopped run.
 */
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readTarGzSafely, signBundleFile, writeTarGz } from '../../src/tarball/index.js';
import { buildApp } from '../../src/build/index.js';
import { sweepStaleTempDirs } from '../../src/files/index.js';
import { helm, runTool } from '../../src/tools/index.js';
import { verifyBundle } from '../../src/verify/index.js';
import { rawTar } from '../tarball/raw-tar.js';
import { gzipSync } from 'node:zlib';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { tarballVariant } from './variant.js';

const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');
const realHelm = process.env.FLOTILLA_HELM!;
const realKubectl = process.env.FLOTILLA_KUBECTL!;

let good: string;
let goodFiles: Map<string, Buffer>;
beforeAll(async () => {
  good = (await buildApp(writeApp(), { outDir: tempDir() })).file;
  goodFiles = await readTarGzSafely(good);
});

afterEach(() => {
  process.env.FLOTILLA_HELM = realHelm;
  process.env.FLOTILLA_KUBECTL = realKubectl;
  delete process.env.FLOTILLA_TOOL_TIMEOUT;
  delete process.env.FLOTILLA_TOOL_MEMORY;
});

/** Wrappers around helm and kubectl that log each run, then run the real tool. */
function recordTools(): () => string[] {
  const dir = tempDir();
  const log = join(dir, 'runs.log');
  writeFileSync(log, '');
  for (const [name, real] of [
    ['helm', realHelm],
    ['kubectl', realKubectl],
  ] as const) {
    const script = join(dir, name);
    writeFileSync(script, `#!/bin/sh\necho "${name} $1" >> "${log}"\nexec "${real}" "$@"\n`);
    chmodSync(script, 0o755);
    process.env[`FLOTILLA_${name.toUpperCase()}`] = script;
  }
  return () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

const variant = (change: (files: Map<string, Buffer>) => void, options: { keepChecksums?: boolean } = {}): string => tarballVariant(goodFiles, change, options);

const keys = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
};

describe('verify order: checksums, signature, layout, then tools', () => {
  it('runs helm and kubectl on a sound tarball', async () => {
    const runs = recordTools();
    expect((await verifyBundle(good)).problems).toEqual([]);
    expect(runs()).toEqual(expect.arrayContaining(['helm lint', 'kubectl kustomize']));
  });

  it('runs no tool on a tarball that fails its checksums, and reports only that', async () => {
    const runs = recordTools();
    const tampered = variant(
      (f) => f.set('charts/web-0.1.0.tgz', writeTarGz([{ path: 'web/Chart.yaml', data: 'apiVersion: v2\nname: web\nversion: 0.1.0\n' }])),
      { keepChecksums: true },
    );
    const report = await verifyBundle(tampered);
    expect(report.problems).toEqual([
      expect.stringMatching(/^checksum\.sha256:\d+: charts\/web-0\.1\.0\.tgz checksum mismatch/),
      expect.stringMatching(/^checksum\.md5:\d+: charts\/web-0\.1\.0\.tgz checksum mismatch/),
    ]);
    expect(runs()).toEqual([]);
  });

  it('runs no tool on a tarball whose signature fails, even with sound checksums', async () => {
    const runs = recordTools();
    const signed = variant(() => undefined);
    await signBundleFile(signed, keys().privateKey);
    const report = await verifyBundle(signed, { publicKey: keys().publicKey });
    expect(report.problems).toEqual(['checksum.sha256.sig: not a valid signature of checksum.sha256 by the given key']);
    expect(runs()).toEqual([]);
  });

  it('runs no tool when the layout fails, folder entries included', async () => {
    const runs = recordTools();
    const stray = await verifyBundle(variant((f) => f.set('bin/evil.sh', Buffer.from('#!/bin/sh\n'))));
    expect(stray.problems).toContainEqual(expect.stringMatching(/^unexpected entry bin\/evil\.sh /));
    // A folder entry outside the layout, added by another tool after the checksums (folders are not checksummed).
    const files = await readTarGzSafely(good);
    const withFolder = join(tempDir(), 'demo-1.0-1.tgz');
    const tar = rawTar([...[...files].map(([name, data]) => ({ name, data })), { name: 'hooks/', type: '5' }, { name: 'metadata.yaml.d/', type: '5' }]);
    writeFileSync(withFolder, gzipSync(tar));
    const report = await verifyBundle(withFolder);
    expect(report.problems).toEqual([
      expect.stringMatching(/^unexpected entry hooks\/ \(an application tarball holds/),
      expect.stringMatching(/^unexpected entry metadata\.yaml\.d\//),
    ]);
    expect(runs()).toEqual([]);
  });

  it('refuses a kustomization naming a URL or anything outside the tarball before kustomize runs', async () => {
    const runs = recordTools();
    const remote = variant((f) => {
      f.set(
        'fluxcd-manifests/base/kustomization.yaml',
        Buffer.from(
          'resources:\n  - helmrepository.yaml\n  - https://example.com/evil.yaml\n  - github.com/org/repo//deploy?ref=v1\n  - ../../../../etc\n  - /etc/passwd\n',
        ),
      );
      f.set(
        'fluxcd-manifests/web/kustomization.yaml',
        Buffer.from(`${f.get('fluxcd-manifests/web/kustomization.yaml')}helmCharts:\n  - name: x\n    repo: https://charts.example.com\n`),
      );
    });
    const report = await verifyBundle(remote);
    expect(report.problems).toEqual(
      expect.arrayContaining([
        'fluxcd-manifests/base/kustomization.yaml: resources[1] "https://example.com/evil.yaml" is a remote resource; a tarball must be self-contained (kustomize is never let fetch)',
        'fluxcd-manifests/base/kustomization.yaml: resources[2] "github.com/org/repo//deploy?ref=v1" is a remote resource; a tarball must be self-contained (kustomize is never let fetch)',
        'fluxcd-manifests/base/kustomization.yaml: resources[3] "../../../../etc" leaves fluxcd-manifests/',
        'fluxcd-manifests/base/kustomization.yaml: resources[4] "/etc/passwd" is an absolute path; a tarball may only name its own files',
        'fluxcd-manifests/web/kustomization.yaml: helmCharts is not allowed (kustomize would run helm and may download charts)',
      ]),
    );
    expect(runs().filter((r) => r.startsWith('kubectl'))).toEqual([]);
  });
});

describe('no external tool on refused content', () => {
  it('runs neither helm nor kubectl once a manifest is refused (an alias bomb in a HelmRelease)', async () => {
    const runs = recordTools();
    const laughs = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(', ')}]`,
      ),
    ].join('\n');
    const bomb = variant((f) => f.set('fluxcd-manifests/web/helmrelease.yaml', Buffer.from(`${f.get('fluxcd-manifests/web/helmrelease.yaml')}${laughs}\n`)));
    const report = await verifyBundle(bomb);
    expect(report.problems).toContainEqual(
      expect.stringMatching(/fluxcd-manifests\/web\/helmrelease\.yaml:\d+:\d+: aliases expand to more than 100000 values/),
    );
    expect(runs()).toEqual([]);
  });
});

describe('external tools run fenced', () => {
  function fakeTool(body: string): string {
    const script = join(tempDir(), 'tool');
    writeFileSync(script, `#!/bin/sh\n${body}\n`);
    chmodSync(script, 0o755);
    return script;
  }

  it('stops a tool that runs past the time limit', async () => {
    process.env.FLOTILLA_HELM = fakeTool('sleep 30');
    process.env.FLOTILLA_TOOL_TIMEOUT = '0.5';
    // (`sleep 30` left alone would end with exit 0, and no error.)
    await expect(helm(['lint', 'x'])).rejects.toThrow(/helm lint did not finish within 0\.5 s and was stopped \(FLOTILLA_TOOL_TIMEOUT raises the limit\)/);
  });

  it("caps a tool's memory", async () => {
    process.env.FLOTILLA_TOOL_MEMORY = '64';
    await expect(helm(['version'])).rejects.toThrow(/ran out of its 64 MiB memory limit; FLOTILLA_TOOL_MEMORY raises it/);
    delete process.env.FLOTILLA_TOOL_MEMORY;
    expect((await helm(['version', '--short'])).stdout).toMatch(/^v\d/);
  });

  it('gives tools no route to remote hosts (loopback stays reachable)', async () => {
    process.env.FLOTILLA_KUBECTL = fakeTool('env');
    const env = (await runTool('kubectl', [], { env: { HTTPS_PROXY: 'http://proxy.example.com:3128' } })).stdout;
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'https_proxy']) expect(env).toContain(`${name}=http://127.0.0.1:9\n`);
    expect(env).toContain('NO_PROXY=127.0.0.1,localhost,::1\n');
    expect(env).toContain('GIT_ALLOW_PROTOCOL=file\n');
    // helm itself, asked for a remote chart, fails at the closed proxy without leaving the machine.
    await expect(helm(['show', 'chart', 'https://charts.example.com/web-1.0.0.tgz'])).rejects.toThrow(/127\.0\.0\.1:9|proxyconnect|connection refused/);
  });

  it('names a tool that is missing', async () => {
    process.env.FLOTILLA_HELM = join(tempDir(), 'no-helm-here');
    await expect(helm(['version'])).rejects.toThrow(/^helm not found \(looked for .*no-helm-here\); run `npm run tools` or set FLOTILLA_HELM$/);
  });
});

describe('temporary folders', () => {
  /** Runs the CLI's verify with a helm that hangs, waits for its temp folder, then sends `signal`. */
  async function stopMidway(signal: NodeJS.Signals): Promise<{ tmp: string; code: number | null; during: string[] }> {
    const tmp = tempDir();
    const hang = join(tempDir(), 'helm');
    writeFileSync(hang, '#!/bin/sh\nsleep 30\n');
    chmodSync(hang, 0o755);
    const child = spawn(process.execPath, [cli, 'verify', good], { env: { ...process.env, TMPDIR: tmp, FLOTILLA_HELM: hang }, stdio: 'ignore' });
    const exited = new Promise<number | null>((done) => child.on('exit', (code, sig) => done(code ?? (sig ? 128 : null))));
    let during: string[] = [];
    for (let i = 0; i < 300 && during.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      during = readdirSync(tmp).filter((n) => n.startsWith('flotilla-verify-'));
    }
    child.kill(signal);
    return { tmp, code: await exited, during };
  }

  it.each(['SIGINT', 'SIGTERM'] as const)('removes the verify work folder when the run is stopped by %s', async (signal) => {
    const { tmp, code, during } = await stopMidway(signal);
    expect(during).toHaveLength(1);
    expect(code).not.toBe(0);
    expect(readdirSync(tmp).filter((n) => n.startsWith('flotilla-'))).toEqual([]);
  });

  it('sweeps folders a killed run left behind (its process is gone), and nothing else', () => {
    const tmp = tempDir();
    const stale = join(tmp, 'flotilla-verify-999999999-AbC123');
    const mine = join(tmp, `flotilla-verify-${process.pid}-XyZ789`);
    const other = join(tmp, 'flotilla-verify-not-a-pid');
    for (const dir of [stale, mine, other]) mkdirSync(join(dir, 'charts'), { recursive: true });
    expect(sweepStaleTempDirs(tmp)).toEqual([stale]);
    expect([existsSync(stale), existsSync(mine), existsSync(other)]).toEqual([false, true, true]);
  });
});
