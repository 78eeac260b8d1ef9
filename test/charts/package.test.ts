import { chmod, cp, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  buildRepoIndex,
  chartContentDigest,
  ChartFileError,
  listArchiveFiles,
  loadChart,
  packageChart,
  readChartArchive,
  stageChart,
} from '../../src/charts/index.js';
import { helm } from '../../src/tools/index.js';
import { tempDir, writeCheckout, writeTree } from './fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => cleanup());

async function packageFromCheckout(root: string, name = 'keystone', version?: string) {
  const chart = await loadChart(join(root, name));
  return packageChart(chart, version === undefined ? {} : { version });
}

/** Raw ustar header fields of every entry of a .tgz. */
function headers(tgz: Buffer) {
  const tar = gunzipSync(tgz);
  const out: { name: string; mode: string; uid: string; gid: string; mtime: number; type: string; uname: string; gname: string; magic: string }[] = [];
  const str = (b: Buffer) => b.toString('latin1').replace(/\0.*$/s, '');
  for (let off = 0; off + 512 <= tar.length; ) {
    const block = tar.subarray(off, off + 512);
    if (block.every((b) => b === 0)) break;
    const size = parseInt(str(block.subarray(124, 136)).trim(), 8);
    out.push({
      name: str(block.subarray(0, 100)),
      mode: str(block.subarray(100, 108)).trim(),
      uid: str(block.subarray(108, 116)).trim(),
      gid: str(block.subarray(116, 124)).trim(),
      mtime: parseInt(str(block.subarray(136, 148)).trim(), 8),
      type: String.fromCharCode(block[156]!),
      magic: block.subarray(257, 265).toString('latin1'),
      uname: str(block.subarray(265, 297)),
      gname: str(block.subarray(297, 329)),
    });
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

describe('packageChart', () => {
  it('lays the archive out like helm package, dependencies unpacked under charts/', async () => {
    const checkout = await writeCheckout(join(dir, 'co'));
    const packaged = await packageFromCheckout(checkout);
    expect(packaged.fileName).toBe('keystone-0.3.1.tgz');
    expect(listArchiveFiles(packaged.bytes)).toEqual([
      'keystone/Chart.yaml',
      'keystone/values.yaml',
      'keystone/.helmignore',
      'keystone/files/local-notes.txt',
      'keystone/templates/configmap.yaml',
      'keystone/charts/helm-toolkit/Chart.yaml',
      'keystone/charts/helm-toolkit/values.yaml',
      'keystone/charts/helm-toolkit/.helmignore',
      'keystone/charts/helm-toolkit/templates/_endpoints.tpl',
      'keystone/charts/helm-toolkit/templates/_labels.tpl',
    ]);
  });

  it('writes portable, ownerless, fixed-time headers and a fixed gzip header', async () => {
    const packaged = await packageFromCheckout(await writeCheckout(join(dir, 'co')));
    const all = headers(packaged.bytes);
    expect(all.length).toBe(10);
    for (const h of all) {
      expect(h).toMatchObject({ mode: '000644', uid: '000000', gid: '000000', type: '0', uname: '', gname: '', magic: 'ustar\u000000' });
      expect(h.mtime).toBe(Date.UTC(2000, 0, 1) / 1000);
    }
    // gzip: magic, deflate, no flags (no name/comment/extra), mtime 0, xfl 2 (max), OS 3 (Unix)
    expect([...packaged.bytes.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]); // XFL 0: the default level, as helm package writes
  });

  it('passes helm lint, helm template and helm show chart on the .tgz', async () => {
    const packaged = await packageFromCheckout(await writeCheckout(join(dir, 'co')));
    const file = join(dir, packaged.fileName);
    await writeFile(file, packaged.bytes);
    const lint = await helm(['lint', file]);
    expect(lint.stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    const rendered = await helm(['template', 'keystone', file, '--namespace', 'openstack']);
    expect(rendered.stdout).toContain('host: "api.openstack.svc"');
    const shown = parse((await helm(['show', 'chart', file])).stdout);
    expect(shown).toMatchObject({ name: 'keystone', version: '0.3.1', appVersion: '2025.1' });
    expect(shown.dependencies[0]).toMatchObject({ name: 'helm-toolkit', repository: 'file://../helm-toolkit' });
  });

  it('is byte-identical from two checkouts with different paths, file times and permissions', async () => {
    const a = await writeCheckout(join(dir, 'one', 'checkout'));
    const b = join(dir, 'two', 'deeper', 'other-name');
    await cp(a, b, { recursive: true });
    const old = new Date('2011-11-11T11:11:11Z');
    await utimes(join(b, 'keystone', 'values.yaml'), old, old);
    await utimes(join(b, 'helm-toolkit', 'templates', '_labels.tpl'), old, new Date('2030-01-01T00:00:00Z'));
    await chmod(join(b, 'keystone', 'templates', 'configmap.yaml'), 0o755);
    await chmod(join(b, 'helm-toolkit', 'Chart.yaml'), 0o600);
    const [pa, pb] = [await packageFromCheckout(a), await packageFromCheckout(b)];
    expect(pb.sha256).toBe(pa.sha256);
    expect(Buffer.compare(pa.bytes, pb.bytes)).toBe(0);
    expect(pb.contentDigest).toBe(pa.contentDigest);
    // and packaging twice in one process gives the same bytes
    expect((await packageFromCheckout(a)).sha256).toBe(pa.sha256);
  });

  it('changes the content digest when any file changes, dependencies included', async () => {
    const root = await writeCheckout(join(dir, 'co'));
    const before = chartContentDigest(await loadChart(join(root, 'keystone')));
    await writeFile(join(root, 'helm-toolkit', 'templates', '_labels.tpl'), '{{- define "helm-toolkit.labels" -}}\nchanged: "yes"\n{{- end -}}\n');
    const after = await loadChart(join(root, 'keystone'));
    expect(chartContentDigest(after)).not.toBe(before);
    expect(after.version).toBe('0.3.1'); // "content changed but version did not"
  });

  it('stamps another version into Chart.yaml and the file name, keeping comments', async () => {
    const packaged = await packageFromCheckout(await writeCheckout(join(dir, 'co')), 'keystone', '0.3.1+build.7');
    expect(packaged.fileName).toBe('keystone-0.3.1+build.7.tgz');
    expect(packaged.metadata.version).toBe('0.3.1+build.7');
    const archive = await readChartArchive(packaged.bytes);
    const chartYaml = archive.chart.files.find((f) => f.path === 'Chart.yaml')!.data.toString();
    expect(chartYaml).toMatch(/^# comments stay in packaged Chart\.yaml\n/);
    expect(chartYaml).toContain('version: 0.3.1+build.7\n');
    const file = join(dir, packaged.fileName);
    await writeFile(file, packaged.bytes);
    expect(parse((await helm(['show', 'chart', file])).stdout).version).toBe('0.3.1+build.7');
    await expect(packageChart(archive.chart, { version: 'v1.x' })).rejects.toThrow(ChartFileError);
  });

  it('refuses an invalid values.schema.json like helm package', async () => {
    await writeTree(dir, { 'c/Chart.yaml': 'apiVersion: v2\nname: c\nversion: 0.1.0\n', 'c/values.schema.json': '{ nope' });
    await expect(packageChart(await loadChart(join(dir, 'c')))).rejects.toThrow(/values\.schema\.json.*not valid JSON/);
  });

  it('puts values.schema.json right after values.yaml', async () => {
    await writeTree(dir, {
      'c/Chart.yaml': 'apiVersion: v2\nname: c\nversion: 0.1.0\n',
      'c/values.schema.json': '{"type":"object"}',
      'c/values.yaml': 'a: 1\n',
      'c/README.md': '# c\n',
      'c/Chart.lock': 'dependencies: []\ndigest: sha256:0\ngenerated: "2020-01-01T00:00:00Z"\n',
    });
    const packaged = await packageChart(await loadChart(join(dir, 'c')));
    expect(listArchiveFiles(packaged.bytes)).toEqual(['c/Chart.yaml', 'c/values.yaml', 'c/values.schema.json', 'c/Chart.lock', 'c/README.md']);
  });
});

describe('readChartArchive', () => {
  it('reads our archives and Helm\'s own, dependencies included', async () => {
    const root = await writeCheckout(join(dir, 'co'));
    const ours = await readChartArchive((await packageFromCheckout(root)).bytes);
    expect(ours).toMatchObject({ name: 'keystone', version: '0.3.1', topDir: 'keystone' });
    expect(ours.chart.dependencies.map((d) => [d.name, d.source])).toEqual([['helm-toolkit', 'vendored-directory']]);
    expect(ours.files[0]).toBe('keystone/Chart.yaml');

    // helm package of the staged copy: helm's archive carries the same files
    const staged = await stageChart(await loadChart(join(root, 'keystone')), join(dir, 'stage'));
    const { stdout } = await helm(['package', staged, '-d', join(dir, 'helm-out')]);
    expect(stdout).toContain('keystone-0.3.1.tgz');
    const theirs = await readChartArchive(await readFile(join(dir, 'helm-out', 'keystone-0.3.1.tgz')), { label: 'helm-made' });
    expect([...theirs.files].sort()).toEqual([...ours.files].filter((f) => f !== 'keystone/.helmignore').sort());
    // repackaging what we read back gives our archive again (the staged copy has no top .helmignore)
    const again = await packageChart(ours.chart);
    expect(again.sha256).toBe((await packageFromCheckout(root)).sha256);
  });

  it('unpacks a .tgz subchart nested in an archive when repackaging, and loads a .tgz path directly', async () => {
    const root = await writeCheckout(join(dir, 'co'), []);
    const toolkit = await packageChart(await loadChart(join(root, 'helm-toolkit')));
    const { writeTarGz } = await import('../../src/tarball/index.js');
    const outer = writeTarGz(
      [
        { path: 'app/Chart.yaml', data: 'apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n  - {name: helm-toolkit, repository: "https://x.invalid"}\n' },
        { path: 'app/templates/cm.yaml', data: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include "helm-toolkit.endpoints.host" (dict "name" "n" "namespace" "ns") }}\n' },
        { path: `app/charts/${toolkit.fileName}`, data: toolkit.bytes },
      ],
      { order: 'given' },
    );
    const read = await readChartArchive(outer, { label: 'app-1.0.0.tgz' });
    expect(read.chart.dependencies.map((d) => [d.name, d.source])).toEqual([['helm-toolkit', 'vendored-archive']]);
    expect(read.chart.dependencies[0]!.chart.origin).toEqual({ kind: 'archive', file: 'app-1.0.0.tgz', member: 'charts/helm-toolkit-0.2.5.tgz' });
    const repacked = await packageChart(read.chart);
    expect(listArchiveFiles(repacked.bytes)).toContain('app/charts/helm-toolkit/templates/_labels.tpl');
    const file = join(dir, 'app-1.0.0.tgz');
    await writeFile(file, repacked.bytes);
    expect((await helm(['template', 'x', file])).stdout).toContain('name: n.ns.svc');
    const direct = await loadChart(file);
    expect(direct.origin).toEqual({ kind: 'archive', file });
    expect(chartContentDigest(direct)).toBe(repacked.contentDigest);
  });

  it('refuses archives that are not one chart folder', async () => {
    const { writeTarGz } = await import('../../src/tarball/index.js');
    const twoTops = writeTarGz([
      { path: 'a/Chart.yaml', data: 'apiVersion: v2\nname: a\nversion: 0.1.0\n' },
      { path: 'b/x', data: 'x' },
    ]);
    await expect(readChartArchive(twoTops)).rejects.toThrow(/not all under one chart folder/);
    const loose = writeTarGz([{ path: 'Chart.yaml', data: 'apiVersion: v2\nname: a\nversion: 0.1.0\n' }]);
    await expect(readChartArchive(loose)).rejects.toThrow(/not inside the chart folder/);
    const noChart = writeTarGz([{ path: 'a/values.yaml', data: 'x: 1\n' }]);
    await expect(readChartArchive(noChart, { label: 'a-0.1.0.tgz' })).rejects.toThrow(/a-0\.1\.0\.tgz#a\/Chart\.yaml: Chart\.yaml is missing/);
  });
});

describe('buildRepoIndex', () => {
  it('writes a deterministic index.yaml that matches helm repo index', async () => {
    const root = await writeCheckout(join(dir, 'co'), ['keystone', 'glance']);
    const charts = [
      await packageFromCheckout(root, 'glance'),
      await packageFromCheckout(root, 'keystone'),
      await packageFromCheckout(root, 'keystone', '0.10.0'),
      await packageChart(await loadChart(join(root, 'helm-toolkit'))),
    ];
    const created = '2025-01-02T03:04:05Z';
    const text = buildRepoIndex(charts, { created, urlPrefix: 'http://repo.example/charts/' });
    expect(buildRepoIndex([...charts].reverse(), { created, urlPrefix: 'http://repo.example/charts/' })).toBe(text);
    const index = parse(text);
    expect(Object.keys(index)).toEqual(['apiVersion', 'entries', 'generated']);
    expect(Object.keys(index.entries)).toEqual(['glance', 'helm-toolkit', 'keystone']);
    expect(index.entries.keystone.map((e: { version: string }) => e.version)).toEqual(['0.10.0', '0.3.1']);
    expect(index.entries.keystone[1]).toMatchObject({
      apiVersion: 'v2',
      appVersion: '2025.1',
      created,
      description: 'OpenStack keystone',
      digest: charts[1]!.sha256,
      name: 'keystone',
      type: 'application',
      urls: ['http://repo.example/charts/keystone-0.3.1.tgz'],
      version: '0.3.1',
    });

    // Helm's own indexer over the same files agrees on everything but the clock
    // and `type`, which we always write (Helm omits it when Chart.yaml does).
    const repo = join(dir, 'repo');
    await writeTree(repo, Object.fromEntries(charts.map((c) => [c.fileName, c.bytes])));
    await helm(['repo', 'index', repo, '--url', 'http://repo.example/charts']);
    const helmIndex = parse(await readFile(join(repo, 'index.yaml'), 'utf8'));
    for (const [name, versions] of Object.entries(helmIndex.entries as Record<string, Record<string, unknown>[]>)) {
      const strip = (e: Record<string, unknown>) => ({ ...e, created: undefined, type: e.type ?? 'application' });
      expect(index.entries[name].map(strip), name).toEqual(versions.map(strip));
    }
  });

  it('refuses a chart version listed twice and a bad created time', async () => {
    const root = await writeCheckout(join(dir, 'co'), []);
    const toolkit = await packageChart(await loadChart(join(root, 'helm-toolkit')));
    expect(() => buildRepoIndex([toolkit, toolkit], { created: '2025-01-01T00:00:00Z' })).toThrow(/listed twice/);
    expect(() => buildRepoIndex([toolkit], { created: 'yesterday' })).toThrow(/not a date-time/);
    expect(parse(buildRepoIndex([toolkit], { created: '2025-01-01T00:00:00Z' })).entries['helm-toolkit'][0].urls).toEqual(['helm-toolkit-0.2.5.tgz']);
  });
});
