/**
 * Chart dependencies on repositories, built as `helm dependency build` then
 * `helm package` would: a chart depending on `common` from an OCI repository
 * (the real docker-registry, `common` pushed there with the real `helm
 * push`) builds from the registry, then offline from the dependency cache
 * with the registry gone, and from the app's own chart the repository is
 * mapped to; an HTTP repository with an index.yaml; a Chart.lock out of
 * sync with Chart.yaml is refused; `--offline` with an empty cache names
 * what is missing. Each chart archive is held to the one real Helm makes.
 *
 * `common` is the corpus's (../shared/corpus/bitnami/common) when the corpus
 * is there, else a small library chart of the same name written here.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { bundleFromBytes, chartArchives } from '../../src/tarball/index.js';
import { cacheKey, inputDigest, sealEntry } from '../../src/cache/index.js';
import { lockDigest, parseChartYaml } from '../../src/charts/index.js';
import { chartContent, chartDifferences } from '../support/archive-content.js';
import { baseApp, tempDir, writeFiles, type Files } from '../support/app-fixture.js';
import { failure } from '../support/cli.js';
import { CORPUS } from '../support/corpus-app.js';
import { startRegistry, type TestRegistry } from '../support/registry.js';

const run = promisify(execFile);
const helm = (args: string[], cwd?: string) => run(process.env.FLOTILLA_HELM!, args, { cwd, maxBuffer: 64 * 1024 * 1024 });

/** The library the charts depend on: the corpus's common, or a small one in its place. */
function commonSource(): { dir: string; version: string; range: string } {
  if (CORPUS) {
    const dir = join(CORPUS, 'common');
    const { version } = parseChartYaml(readFileSync(join(dir, 'Chart.yaml'), 'utf8'), 'common/Chart.yaml');
    return { dir, version, range: `${version.split('.')[0]}.x.x` };
  }
  const dir = writeFiles(tempDir('flotilla-common-'), {
    'Chart.yaml': 'apiVersion: v2\nname: common\nversion: 2.3.4\ntype: library\n',
    'templates/_labels.tpl': '{{- define "common.labels.standard" -}}\napp.kubernetes.io/name: {{ .Chart.Name }}\n{{- end -}}\n',
  });
  return { dir, version: '2.3.4', range: '2.x.x' };
}

/** The app of the fixture with its `web` chart depending on `common` from `repository` too, and a Chart.lock when asked. */
function appFiles(repository: string, range: string, extra: Files = {}): Files {
  const base = baseApp();
  return {
    ...base,
    'charts/web/Chart.yaml': `apiVersion: v2\nname: web\nversion: 0.1.0\ndependencies:\n  - name: lib\n    version: 0.1.0\n    repository: file://../lib\n  - name: common\n    version: ${range}\n    repository: ${repository}\n    tags: [bitnami-common]\n`,
    ...extra,
  };
}

function chartOf(bundleBytes: Buffer, name: string): Buffer {
  const found = chartArchives(bundleFromBytes(bundleBytes, 'app.tgz').files).find(([path]) => path.startsWith(`charts/${name}-`));
  if (!found) throw new Error(`no chart ${name} in the tarball`);
  return found[1];
}

async function build(app: string, options: Parameters<typeof buildApp>[1] = {}): Promise<Buffer> {
  const out = tempDir('flotilla-out-');
  const result = await buildApp(app, { outDir: out, cacheDir: false, typecheck: false, ...options });
  return readFileSync(result.file);
}

/** What `helm dependency build` then `helm package` make of the chart `name` of `app` (a copy: the app stays as it is). */
async function helmPackaged(app: string, name: string, dependencyBuildArgs: string[] = []): Promise<Buffer> {
  const work = tempDir('flotilla-helm-');
  cpSync(join(app, 'charts'), join(work, 'charts'), { recursive: true });
  const chart = join(work, 'charts', name);
  await helm([
    'dependency',
    'build',
    chart,
    ...dependencyBuildArgs,
    '--repository-config',
    join(work, 'repositories.yaml'),
    '--repository-cache',
    join(work, 'cache'),
  ]);
  await helm(['package', chart, '-d', join(work, 'out')]);
  const [archive] = readdirSync(join(work, 'out'));
  return readFileSync(join(work, 'out', archive!));
}

describe('chart dependencies from an OCI repository', () => {
  let registry: TestRegistry;
  let repository: string;
  const common = commonSource();
  const dependencyCache = tempDir('flotilla-deps-');
  let fromRegistry: Buffer;
  let online: string;

  beforeAll(async () => {
    registry = await startRegistry();
    repository = `oci://${registry.host}/charts`;
    const work = tempDir('flotilla-push-');
    await helm(['package', common.dir, '-d', work]);
    await helm(['push', join(work, `common-${common.version}.tgz`), repository, '--plain-http']);
    online = writeFiles(tempDir('flotilla-app-'), appFiles(repository, common.range));
  }, 60_000);
  afterAll(async () => registry?.stop());

  it('builds a chart depending on common from the registry, as helm dependency build and helm package do', async () => {
    fromRegistry = chartOf(await build(online, { dependencyCacheDir: dependencyCache }), 'web');
    const files = await chartContent(fromRegistry);
    expect([...files.keys()].filter((p) => p.startsWith('charts/common/')).length).toBeGreaterThan(0);
    expect(chartDifferences(files, await chartContent(await helmPackaged(online, 'web', ['--plain-http'])))).toEqual([]);
  }, 60_000);

  it('builds offline from the cache, the registry gone, to the same archive', async () => {
    await registry.stop();
    const again = chartOf(await build(online, { dependencyCacheDir: dependencyCache, offline: true }), 'web');
    expect(again.equals(fromRegistry)).toBe(true);
    // Online too: a version the cache holds needs the registry no more (pinned by Chart.lock, it is not even listed).
    const lock = lockFor(online, [
      { name: 'lib', repository: 'file://../lib', version: '0.1.0' },
      { name: 'common', repository, version: common.version },
    ]);
    writeFileSync(join(online, 'charts/web/Chart.lock'), lock);
    const locked = await chartContent(chartOf(await build(online, { dependencyCacheDir: dependencyCache }), 'web'));
    expect(locked.get('Chart.lock')?.toString('utf8')).toBe(lock);
  }, 60_000);

  it('refuses a cached archive whose bytes no longer match its digest, offline, naming what is missing', async () => {
    // Each archive entry's content altered after its seal: it no longer opens.
    const archives = readdirSync(dependencyCache).filter((name) => name.startsWith('archive-'));
    expect(archives.length).toBeGreaterThan(0);
    for (const entry of archives) {
      const bytes = readFileSync(join(dependencyCache, entry));
      const header = bytes.subarray(0, bytes.indexOf(0x0a) + 1);
      writeFileSync(join(dependencyCache, entry), Buffer.concat([header, Buffer.from('altered')]));
    }
    const app = writeFiles(tempDir('flotilla-app-'), appFiles(repository, common.range));
    await expect(build(app, { dependencyCacheDir: dependencyCache, offline: true })).rejects.toThrow(
      `chart "web": dependency "common": common ${common.range} from ${repository} is not in the dependency cache (${dependencyCache}), and --offline fetches nothing`,
    );
  });

  it("uses nothing planted in the dependency cache by anyone without this user's cache key", async () => {
    // A cache folder as a shared CI cache could deliver it: a refs entry naming the attacker's archive, both sealed under another key.
    const planted = tempDir('flotilla-deps-');
    const otherKey = randomBytes(32);
    const evil = Buffer.from('not the chart the registry serves');
    const digest = `sha256:${createHash('sha256').update(evil).digest('hex')}`;
    const refsInputs = JSON.stringify([repository, 'common']);
    writeFileSync(join(planted, `archive-${digest.slice(7)}`), sealEntry('chart-archive', inputDigest(digest), evil, otherKey));
    writeFileSync(
      join(planted, `refs-${createHash('sha256').update(refsInputs).digest('hex')}`),
      sealEntry('chart-refs', inputDigest(refsInputs), Buffer.from(JSON.stringify({ [common.version]: digest })), otherKey),
    );
    const app = writeFiles(tempDir('flotilla-app-'), appFiles(repository, common.range));
    await expect(build(app, { dependencyCacheDir: planted, offline: true })).rejects.toThrow(/is not in the dependency cache/);
    // The control: the same entries sealed under this user's key are read (and the bytes refused as a chart archive).
    const ownKey = cacheKey() as Buffer;
    writeFileSync(join(planted, `archive-${digest.slice(7)}`), sealEntry('chart-archive', inputDigest(digest), evil, ownKey));
    writeFileSync(
      join(planted, `refs-${createHash('sha256').update(refsInputs).digest('hex')}`),
      sealEntry('chart-refs', inputDigest(refsInputs), Buffer.from(JSON.stringify({ [common.version]: digest })), ownKey),
    );
    await expect(build(app, { dependencyCacheDir: planted, offline: true })).rejects.toThrow(/common/);
    await expect(build(app, { dependencyCacheDir: planted, offline: true })).rejects.not.toThrow(/is not in the dependency cache/);
  });

  it('builds from the app chart the repository is mapped to, offline with an empty cache', async () => {
    const app = writeFiles(tempDir('flotilla-app-'), appFiles(repository, common.range));
    cpSync(common.dir, join(app, 'charts', 'common'), { recursive: true });
    const releases = readFileSync(join(app, 'fluxcd/releases.yaml'), 'utf8');
    writeFileSync(join(app, 'fluxcd/releases.yaml'), `chartRepositories:\n  ${repository}/: charts\n${releases}`);
    const mapped = chartOf(await build(app, { dependencyCacheDir: tempDir('flotilla-deps-'), offline: true }), 'web');
    // The same files: the registry's common is helm package's (its Chart.yaml re-written from the fields), the mapped one the folder.
    expect(chartDifferences(await chartContent(mapped), await chartContent(fromRegistry))).toEqual([]);
  });

  it('says which dependency is missing when --offline meets an empty cache', async () => {
    await expect(build(online, { dependencyCacheDir: tempDir('flotilla-deps-'), offline: true })).rejects.toThrow(
      new RegExp(
        `charts/web/Chart.yaml:\\d+:\\d+: chart "web": dependency "common": common ${common.version} from ${repository} is not in the dependency cache`,
      ),
    );
    // The command: exit 1, one line, the user's cache folder named.
    const saved = { FLOTILLA_CACHE_DIR: process.env.FLOTILLA_CACHE_DIR, FLOTILLA_BUILD_SERVER: process.env.FLOTILLA_BUILD_SERVER };
    const userCache = tempDir('flotilla-user-cache-');
    Object.assign(process.env, { FLOTILLA_CACHE_DIR: userCache, FLOTILLA_BUILD_SERVER: '0' });
    try {
      const failed = await failure('build', online, '--offline', '--no-typecheck', '--no-cache', '-d', tempDir('flotilla-out-'));
      expect(failed.code).toBe(1);
      expect(failed.stderr.trim().split('\n')).toHaveLength(1);
      expect(failed.stderr).toContain(`is not in the dependency cache (${join(userCache, 'chart-dependencies')}), and --offline fetches nothing`);
    } finally {
      for (const [key, value] of Object.entries(saved))
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
    }
  });
});

/** A Chart.lock as `helm dependency update` writes it for the chart's Chart.yaml and these locked versions. */
function lockFor(app: string, locked: { name: string; repository: string; version: string }[]): string {
  const { dependencies } = parseChartYaml(readFileSync(join(app, 'charts/web/Chart.yaml'), 'utf8'), 'Chart.yaml');
  const entries = locked.map((d) => `- name: ${d.name}\n  repository: ${d.repository}\n  version: ${d.version}\n`).join('');
  return `dependencies:\n${entries}digest: ${lockDigest(dependencies, locked)}\ngenerated: "2026-01-01T00:00:00Z"\n`;
}

describe('chart dependencies from an HTTP repository', () => {
  const common = commonSource();
  let server: ReturnType<typeof createServer>;
  let url: string;
  const folder = tempDir('flotilla-repo-');

  beforeAll(async () => {
    // A repository as `helm repo index` lays it out: the archives and an index.yaml naming them by relative URL.
    await helm(['package', common.dir, '-d', folder]);
    server = createServer((req, res) => {
      const file = join(folder, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/+/, ''));
      if (!file.startsWith(folder) || !existsSync(file)) res.writeHead(404).end();
      else res.writeHead(200).end(readFileSync(file));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await helm(['repo', 'index', folder, '--url', url]);
  }, 60_000);
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it('takes the highest version within range from index.yaml, as helm does', async () => {
    const app = writeFiles(tempDir('flotilla-app-'), appFiles(url, common.range));
    const ours = await chartContent(chartOf(await build(app, { dependencyCacheDir: tempDir('flotilla-deps-') }), 'web'));
    expect(ours.get('charts/common/Chart.yaml')).toBeDefined();
    expect(chartDifferences(ours, await chartContent(await helmPackaged(app, 'web')))).toEqual([]);
  }, 60_000);

  it('refuses an archive whose sha256 is not the one index.yaml gives', async () => {
    const index = join(folder, 'index.yaml');
    const original = readFileSync(index, 'utf8');
    writeFileSync(index, original.replace(/digest: [0-9a-f]{64}/, `digest: ${'f'.repeat(64)}`));
    try {
      const app = writeFiles(tempDir('flotilla-app-'), appFiles(url, common.range));
      await expect(build(app, { dependencyCacheDir: tempDir('flotilla-deps-') })).rejects.toThrow(`says ${'f'.repeat(64)}: refused`);
    } finally {
      writeFileSync(index, original);
    }
  });

  it('refuses a Chart.lock out of sync with Chart.yaml, as helm dependency build does', async () => {
    const app = writeFiles(tempDir('flotilla-app-'), appFiles(url, common.range));
    // Locked for another range than Chart.yaml now declares: the digest no longer matches.
    const lock = lockFor(app, [
      { name: 'lib', repository: 'file://../lib', version: '0.1.0' },
      { name: 'common', repository: url, version: common.version },
    ]);
    writeFileSync(join(app, 'charts/web/Chart.lock'), lock);
    writeFileSync(join(app, 'charts/web/Chart.yaml'), readFileSync(join(app, 'charts/web/Chart.yaml'), 'utf8').replace(common.range, `'>=${common.version}'`));
    await expect(build(app, { dependencyCacheDir: tempDir('flotilla-deps-') })).rejects.toThrow(
      /charts\/web\/Chart\.lock:8:1: out of sync with the dependencies of Chart\.yaml/,
    );
    const { stderr } = await helm(['dependency', 'build', join(app, 'charts/web')]).catch((error: { stderr: string }) => error);
    expect(stderr).toContain('out of sync');
  }, 60_000);
});
