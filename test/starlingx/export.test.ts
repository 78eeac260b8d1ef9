/**
 * `flotilla starlingx export`: what an operator deploys with StarlingX's own
 * `system application-*` commands is what flotilla computed. Held to the
 * platform's rules as sysinv's code states them (test/support/sysinv.ts), to
 * the real `kubectl kustomize` and to the real `helm template`.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { load, loadAll } from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { toolPath } from '../../src/tools/index.js';
import { tempDir } from '../support/app-fixture.js';
import { sysinvChartListing, sysinvRewriteImages } from '../support/sysinv.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const cli = join(root, 'dist/cli/flotilla.cjs');

/** The default app with the `core` preset: identity, image, networking, dashboard, clients (and what they need). */
const CORE = 'main:\n  release: "2025.1"\n  preset: core\n  size: small\n  domain: cloud.example.com\n';
const CORE_RELEASES = ['mariadb', 'rabbitmq', 'memcached', 'ovn', 'keystone', 'glance', 'neutron', 'horizon', 'clients'];

interface Exported {
  readonly tarball: string;
  readonly passwordStore: string;
  readonly releases: readonly { release: string; namespace: string; file: string; movedImages: readonly { path: string }[] }[];
  readonly leftOut: readonly string[];
}

async function exportApp(deployment: string, dir: string, env: NodeJS.ProcessEnv, ...extra: string[]): Promise<Exported> {
  const { stdout } = await run(process.execPath, [cli, 'starlingx', 'export', root, '--deployment', deployment, '-d', dir, '-o', 'json', ...extra], {
    env,
    maxBuffer: 1 << 26,
  });
  return JSON.parse(stdout) as Exported;
}

/** Every string a YAML text sets under a key naming a password. */
function passwordsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) passwordsIn(item, found);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      if (/password/i.test(key) && typeof child === 'string') found.push(child);
      else passwordsIn(child, found);
    }
  }
  return found;
}

/** Every `image:` string of the rendered objects. */
function renderedImages(docs: readonly unknown[], found: string[] = []): string[] {
  const walk = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        if (key === 'image' && typeof child === 'string') found.push(child);
        else walk(child);
      }
    }
  };
  docs.forEach(walk);
  return found;
}

/** Every file below `dir`. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe('flotilla starlingx export of the core preset', () => {
  let work: string;
  let env: NodeJS.ProcessEnv;
  let deployment: string;
  let out: string;
  let exported: Exported;
  let unpacked: string;

  beforeAll(async () => {
    work = tempDir('flotilla-stx-export-');
    // Build and plugins keep their offline state here, not in the user's home.
    env = { ...process.env, FLOTILLA_STATE_DIR: join(work, 'state'), FLOTILLA_BUILD_SERVER: '0' };
    deployment = join(work, 'core.yaml');
    writeFileSync(deployment, CORE);
    out = join(work, 'out');
    exported = await exportApp(deployment, out, env);
    unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    await run('tar', ['-xzf', exported.tarball, '-C', unpacked]);
  }, 300_000);

  it('writes the tarball, apply.sh and one values file per enabled release, private', () => {
    expect(exported.releases.map((r) => r.release)).toEqual(CORE_RELEASES);
    expect(exported.leftOut).toEqual(['placement', 'cinder', 'nova']);
    expect(statSync(out).mode & 0o777).toBe(0o700);
    for (const r of exported.releases) expect(statSync(join(out, r.file)).mode & 0o777).toBe(0o600);
    expect(statSync(join(out, 'apply.sh')).mode & 0o777).toBe(0o700);
    expect(exported.passwordStore).toBe(join(work, 'state', 'flotilla-openstack', 'starlingx', 'core'));
  });

  it("deploys exactly the enabled releases: sysinv's chart listing and kubectl kustomize agree", async () => {
    const manifests = join(unpacked, 'fluxcd-manifests');
    expect(sysinvChartListing(manifests).map((c) => c.release)).toEqual(CORE_RELEASES);
    const { stdout } = await run(toolPath('kubectl'), ['kustomize', manifests], { maxBuffer: 1 << 26 });
    const releases = loadAll(stdout).filter((d): d is { kind: string; metadata: { name: string } } => (d as { kind?: string }).kind === 'HelmRelease');
    expect(releases.map((r) => r.metadata.name).sort()).toEqual([...CORE_RELEASES].sort());
    // Otherwise the normal build: every chart ships, the checksums hold.
    expect(readdirSync(join(unpacked, 'charts')).length).toBeGreaterThanOrEqual(12);
    await run('md5sum', ['-c', '--quiet', 'checksum.md5'], { cwd: unpacked });
    await run('sha256sum', ['-c', '--quiet', 'checksum.sha256'], { cwd: unpacked });
  });

  it('renders every image through the platform registry once sysinv has rewritten the static overrides', async () => {
    const rewritten = sysinvRewriteImages(unpacked);
    expect(rewritten.length).toBe(CORE_RELEASES.length);
    const images: string[] = [];
    for (const release of exported.releases) {
      const folder = join(unpacked, 'fluxcd-manifests', release.release);
      const hr = load(readFileSync(join(folder, 'helmrelease.yaml'), 'utf8')) as {
        spec: { releaseName: string; chart: { spec: { chart: string; version: string } } };
      };
      const { chart, version } = hr.spec.chart.spec;
      // Flux's order: static overrides, then the system overrides Secret the platform fills with the user overrides apply.sh stores.
      const { stdout } = await run(
        toolPath('helm'),
        [
          'template',
          hr.spec.releaseName,
          join(unpacked, 'charts', `${chart}-${version}.tgz`),
          '-n',
          release.namespace,
          '-f',
          join(folder, `${release.release}-static-overrides.yaml`),
          '-f',
          join(out, release.file),
        ],
        { maxBuffer: 1 << 26 },
      );
      const own = renderedImages(loadAll(stdout));
      expect(own.length, `${release.release} renders no image`).toBeGreaterThan(0);
      images.push(...own);
    }
    expect(images.filter((i) => !i.startsWith('registry.local:9001/'))).toEqual([]);
  });

  it('keeps images out of the values files and passwords out of the tarball', () => {
    const passwords: string[] = [];
    for (const release of exported.releases) {
      const values = load(readFileSync(join(out, release.file), 'utf8')) as { images?: { tags?: unknown } };
      expect(values.images?.tags, release.release).toBeUndefined();
      passwords.push(...passwordsIn(values));
    }
    expect(passwords.length).toBeGreaterThan(10);
    for (const file of filesBelow(unpacked)) {
      const text = readFileSync(file, 'latin1');
      for (const password of passwords) expect(text.includes(password), `${file} holds a generated password`).toBe(false);
    }
  });

  it('gives the same passwords when exported again', async () => {
    const again = join(work, 'again');
    await exportApp(deployment, again, env);
    for (const release of exported.releases) expect(readFileSync(join(again, release.file), 'utf8')).toBe(readFileSync(join(out, release.file), 'utf8'));
  }, 120_000);

  it('writes an apply.sh that parses, quotes every name and runs the system commands in apply order', async () => {
    await run('bash', ['-n', join(out, 'apply.sh')]);
    const script = readFileSync(join(out, 'apply.sh'), 'utf8');
    const commands = script.split('\n').filter((l) => l.startsWith('system '));
    expect(commands).toEqual([
      ...CORE_RELEASES.map((r) => `system helm-override-update "$APP" '${r}' 'openstack' --reuse-values --values '${r}.yaml'`),
      'system application-apply "$APP"',
    ]);
    expect(script).toContain("APP='flotilla-openstack'");
    // Run as written, from another folder: a stand-in `system` on PATH records its arguments.
    const bin = tempDir('flotilla-bin-');
    writeFileSync(join(bin, 'system'), '#!/bin/sh\necho "$@" >> "$CALLS"\n', { mode: 0o755 });
    const calls = join(bin, 'calls.txt');
    await run('sh', [join(out, 'apply.sh')], { cwd: bin, env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, CALLS: calls } });
    expect(readFileSync(calls, 'utf8').trim().split('\n')).toEqual([
      ...CORE_RELEASES.map((r) => `helm-override-update flotilla-openstack ${r} openstack --reuse-values --values ${r}.yaml`),
      'application-apply flotilla-openstack',
    ]);
  });
});

describe('flotilla starlingx export refuses', () => {
  it('a deployment an apply check hook refuses, writing nothing', async () => {
    const work = tempDir('flotilla-stx-refuse-');
    const deployment = join(work, 'rbd.yaml');
    writeFileSync(deployment, `${CORE}features:\n  services: [identity, image, block-storage]\n  glance: {storage: rbd}\n  cinder:\n    backends: {lvm: {}}\n`);
    const out = join(work, 'out');
    const failed = await run(process.execPath, [cli, 'starlingx', 'export', root, '--deployment', deployment, '-d', out], {
      env: { ...process.env, FLOTILLA_STATE_DIR: join(work, 'state') },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toMatch(/features\.glance\.storage is rbd/);
    expect(() => statSync(out)).toThrow();
  });

  it('a folder that is not empty, and a missing -d, as the user mistakes they are', async () => {
    const full = tempDir();
    writeFileSync(join(full, 'keep.txt'), 'mine');
    const notEmpty = await run(process.execPath, [cli, 'starlingx', 'export', root, '-d', full]).catch((e: { code: number; stderr: string }) => e);
    expect(notEmpty).toMatchObject({ code: 1 });
    expect((notEmpty as { stderr: string }).stderr).toMatch(/is not empty: give a new or empty folder/);
    expect(readdirSync(full)).toEqual(['keep.txt']);
    const noDir = await run(process.execPath, [cli, 'starlingx', 'export', root]).catch((e: { code: number; stderr: string }) => e);
    expect(noDir).toMatchObject({ code: 2 });
  });
});
