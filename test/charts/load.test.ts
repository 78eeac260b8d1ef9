import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ChartDependencyError,
  ChartError,
  ChartFileError,
  createChartLoader,
  HelmignoreError,
  loadChart,
  parseChartYaml,
  rewriteChartVersion,
  type ChartSource,
} from '../../src/charts/index.js';
import { parseYaml } from '../../src/yaml/index.js';
import { helm } from '../../src/tools/index.js';
import { serviceChart, tempDir, writeCheckout, writeTree } from './fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => cleanup());

const paths = (chart: ChartSource): string[] => chart.files.map((f) => f.path);

async function expectError<T extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => T): Promise<T> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  return error as T;
}

describe('loadChart: Chart.yaml', () => {
  it('reads metadata with Helm defaults', async () => {
    await writeTree(dir, { 'Chart.yaml': 'apiVersion: v2\nname: tiny\nversion: v1.2\nappVersion: "2025.10"\n', 'templates/a.yaml': 'x: 1\n' });
    const chart = await loadChart(dir);
    expect(chart.name).toBe('tiny');
    expect(chart.version).toBe('v1.2');
    expect(chart.metadata.type).toBe('application');
    expect(chart.metadata.appVersion).toBe('2025.10');
    expect(chart.dependencies).toEqual([]);
    expect(chart.origin).toEqual({ kind: 'directory', dir });
  });

  it("reads the fields of a Chart.yaml its caller parsed while the file holds that text, and the file otherwise", async () => {
    const text = 'apiVersion: v2\nname: web\nversion: 0.1.0\nkubeVersion: 1.30\ndependencies:\n  - name: lib\n    version: 1.10\n    repository: file://../lib\n';
    await writeTree(dir, { 'web/Chart.yaml': text, 'lib/Chart.yaml': 'apiVersion: v2\nname: lib\nversion: 1.10.0\ntype: library\n' });
    const known = { text, parsed: parseYaml(text, 'charts/web/Chart.yaml', { layer: 'chart' }) };
    const fromTree = await createChartLoader().load(join(dir, 'web'), known);
    // Places come from the tree given (its file name), numbers written where text belongs read as written.
    expect(fromTree.metadata.dependencies[0]).toMatchObject({ name: 'lib', version: '1.10', location: { file: 'charts/web/Chart.yaml', line: 6 } });
    expect(fromTree.metadata.kubeVersion).toBe('1.30');
    const stale = { text: text.replace('0.1.0', '0.0.9'), parsed: known.parsed };
    const fromFile = await createChartLoader().load(join(dir, 'web'), stale);
    expect(fromFile.metadata.dependencies[0]?.location.file).toBe(join(dir, 'web', 'Chart.yaml'));
    expect({ ...fromFile.metadata, dependencies: [] }).toEqual({ ...fromTree.metadata, dependencies: [] });
  });

  it('reports YAML syntax errors with file, line and column', async () => {
    await writeTree(dir, { 'Chart.yaml': 'apiVersion: v2\nname: bad\nversion: 0.1.0\nkeywords: [a, b\n' });
    const error = await expectError(loadChart(dir), ChartFileError);
    expect(error.location?.file).toBe(join(dir, 'Chart.yaml'));
    expect(error.location?.line).toBeGreaterThanOrEqual(4);
    expect(error.message).toMatch(/Chart\.yaml:\d+:\d+: not valid YAML/);
  });

  const cases: [string, string, RegExp, number][] = [
    ['missing name', 'apiVersion: v2\nversion: 0.1.0\n', /name is required/, 1],
    ['empty name', 'apiVersion: v2\nname:\nversion: 0.1.0\n', /name: is required/, 2],
    ['apiVersion v3', 'apiVersion: v3\nname: a\nversion: 0.1.0\n', /apiVersion: must be "v1" or "v2"/, 1],
    ['numeric version', 'apiVersion: v2\nname: a\nversion: 1.0\n', /version: 1\.0 is a YAML number.*quote it/, 3],
    ['numeric appVersion (helm lint refuses it)', 'apiVersion: v2\nname: a\nversion: 0.1.0\nappVersion: 2025.1\n', /appVersion: 2025\.1 is a YAML number.*quote it/, 4],
    ['bad semver', 'apiVersion: v2\nname: a\nversion: "1.2.3-01"\n', /not a valid semantic version/, 3],
    ['bad type', 'apiVersion: v2\nname: a\nversion: 0.1.0\ntype: service\n', /type: must be "application" or "library"/, 4],
    ['path in name', 'apiVersion: v2\nname: ../a\nversion: 0.1.0\n', /not a valid chart name/, 2],
    ['duplicate key', 'apiVersion: v2\nname: a\nname: b\nversion: 0.1.0\n', /not valid YAML/, 3],
    ['annotation not a string', 'apiVersion: v2\nname: a\nversion: 0.1.0\nannotations:\n  k: 1\n', /annotations\.k: must be a string/, 5],
    [
      'duplicate dependency',
      'apiVersion: v2\nname: a\nversion: 0.1.0\ndependencies:\n  - name: x\n    repository: file://../x\n  - name: x\n    repository: file://../x\n',
      /more than one dependency with name or alias "x" \(first at line 5\)/,
      7,
    ],
    ['bad alias', 'apiVersion: v2\nname: a\nversion: 0.1.0\ndependencies:\n  - name: x\n    alias: "x.y"\n', /alias: "x\.y" has characters/, 6],
    ['not a map', '- a\n- b\n', /must be a YAML map/, 1],
  ];
  it.each(cases)('refuses %s, naming the line', (_title, text, message, line) => {
    let error: unknown;
    try {
      parseChartYaml(text, '/src/c/Chart.yaml');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ChartFileError);
    expect((error as Error).message).toMatch(message);
    expect((error as ChartFileError).location?.line).toBe(line);
  });

  it('says Chart.yaml is missing', async () => {
    await writeTree(dir, { 'values.yaml': 'a: 1\n' });
    const error = await expectError(loadChart(dir), ChartFileError);
    expect(error.message).toMatch(/Chart\.yaml is missing/);
  });

  it('rewrites only the version bytes, keeping comments', () => {
    const text = '# keep me\napiVersion: v2\nname: a\nversion: 0.1.0 # bumped by CI\n';
    expect(rewriteChartVersion(text, '0.2.0', 'Chart.yaml')).toBe('# keep me\napiVersion: v2\nname: a\nversion: 0.2.0 # bumped by CI\n');
    expect(rewriteChartVersion(text, '1.0', 'Chart.yaml')).toContain('version: "1.0" # bumped');
    expect(() => rewriteChartVersion(text, 'not-a-version', 'Chart.yaml')).toThrow(ChartFileError);
  });
});

describe('loadChart: files and .helmignore', () => {
  it('takes what Helm takes: rules, default templates/.?* rule, .helmignore itself', async () => {
    await writeCheckout(dir);
    const chart = await loadChart(join(dir, 'keystone'));
    expect(paths(chart)).toEqual(['.helmignore', 'Chart.yaml', 'files/local-notes.txt', 'templates/configmap.yaml', 'values.yaml']);
  });

  it('agrees with `helm package` on the file list', async () => {
    const chartDir = join(dir, 'mixed');
    await writeTree(chartDir, {
      'Chart.yaml': 'apiVersion: v2\nname: mixed\nversion: 0.1.0\n',
      'values.yaml': 'a: 1\n',
      '.helmignore': '*.orig\nsecrets/\n/TODO\ntemplates/tests/*\nfil?s/[ab].txt\n',
      'templates/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n',
      'templates/cm.yaml.orig': 'x',
      'templates/tests/t.yaml': 'x',
      'templates/.gitkeep': '',
      'secrets/key': 'x',
      'nested/secrets/key': 'x',
      'TODO': 'x',
      'docs/TODO': 'kept',
      'files/a.txt': 'x',
      'files/c.txt': 'kept',
      'a.b': 'kept',
    });
    const chart = await loadChart(chartDir);
    await helm(['package', chartDir, '-d', dir]);
    const listed = execFileSync('tar', ['-tzf', join(dir, 'mixed-0.1.0.tgz')], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((p) => p.replace(/^mixed\//, ''))
      .sort();
    expect(paths(chart).sort()).toEqual(listed);
  });

  it('explains Helm\'s negation trap instead of a bare "Chart.yaml is missing"', async () => {
    await writeTree(dir, { 'Chart.yaml': 'apiVersion: v2\nname: neg\nversion: 0.1.0\n', '.helmignore': '*.txt\n!keep.txt\n', 'keep.txt': 'x' });
    const error = await expectError(loadChart(dir), HelmignoreError);
    expect(error.location).toMatchObject({ file: join(dir, '.helmignore'), line: 2 });
    expect(error.message).toMatch(/"!keep\.txt" excludes Chart\.yaml.*does NOT match/);
    // helm agrees that the chart is unusable
    await expect(helm(['package', dir, '-d', join(dir, '..')])).rejects.toThrow(/Chart.yaml file is missing/);
  });

  it('refuses ** in .helmignore with its line', async () => {
    await writeTree(dir, { 'Chart.yaml': 'apiVersion: v2\nname: a\nversion: 0.1.0\n', '.helmignore': '# x\nfoo/**/bar\n' });
    const error = await expectError(loadChart(dir), HelmignoreError);
    expect(error.location?.line).toBe(2);
  });

  it('follows symlinks like Helm and strips a UTF-8 BOM', async () => {
    await writeTree(dir, {
      'shared/common.yaml': 'x: 1\n',
      'c/Chart.yaml': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('apiVersion: v2\nname: c\nversion: 0.1.0\n')]),
    });
    await symlink(join(dir, 'shared'), join(dir, 'c', 'files'));
    const chart = await loadChart(join(dir, 'c'));
    expect(paths(chart)).toEqual(['Chart.yaml', 'files/common.yaml']);
    expect(chart.files[0]!.data.subarray(0, 3).toString()).toBe('api');
  });

  it('refuses irregular files (a FIFO) and symlink loops', async () => {
    await writeTree(dir, { 'c/Chart.yaml': 'apiVersion: v2\nname: c\nversion: 0.1.0\n' });
    execFileSync('mkfifo', [join(dir, 'c', 'pipe')]);
    await expect(loadChart(join(dir, 'c'))).rejects.toThrow(/pipe: cannot load an irregular file/);
    await writeTree(dir, { 'd/Chart.yaml': 'apiVersion: v2\nname: d\nversion: 0.1.0\n' });
    await symlink(join(dir, 'd'), join(dir, 'd', 'self'));
    await expect(loadChart(join(dir, 'd'))).rejects.toThrow(/symbolic link loop/);
  });

  it('says when the chart folder does not exist', async () => {
    await expect(loadChart(join(dir, 'nope'))).rejects.toThrow(ChartError);
  });
});

describe('loadChart: dependencies', () => {
  it('loads file:// dependencies relative to the chart (openstack-helm layout)', async () => {
    await writeCheckout(dir, ['keystone', 'glance']);
    const chart = await loadChart(join(dir, 'keystone'));
    expect(chart.dependencies).toHaveLength(1);
    const dep = chart.dependencies[0]!;
    expect(dep).toMatchObject({ name: 'helm-toolkit', source: 'file' });
    expect(dep.declared.map((d) => d.repository)).toEqual(['file://../helm-toolkit']);
    expect(dep.chart.metadata.type).toBe('library');
    // the toolkit's own .helmignore applies to it
    expect(paths(dep.chart)).toEqual(['.helmignore', 'Chart.yaml', 'templates/_endpoints.tpl', 'templates/_labels.tpl', 'values.yaml']);
  });

  it('vendors one copy for several aliases of the same chart', async () => {
    await writeCheckout(dir, []);
    await writeTree(join(dir, 'app'), {
      'Chart.yaml': [
        'apiVersion: v2',
        'name: app',
        'version: 0.1.0',
        'dependencies:',
        '  - {name: helm-toolkit, alias: tk1, repository: "file://../helm-toolkit", condition: tk1.enabled}',
        '  - {name: helm-toolkit, alias: tk2, repository: "file://../helm-toolkit"}',
        '',
      ].join('\n'),
    });
    const chart = await loadChart(join(dir, 'app'));
    expect(chart.dependencies.map((d) => [d.name, d.declared.map((x) => x.alias)])).toEqual([['helm-toolkit', ['tk1', 'tk2']]]);
  });

  it('uses a dependency vendored under charts/ (folder or .tgz) as is, whatever its repository', async () => {
    await writeCheckout(dir, []);
    await helm(['package', join(dir, 'helm-toolkit'), '-d', join(dir, 'app', 'charts')]);
    await writeTree(join(dir, 'app'), {
      'Chart.yaml': [
        'apiVersion: v2',
        'name: app',
        'version: 0.1.0',
        'dependencies:',
        '  - {name: helm-toolkit, repository: "https://charts.example.com", version: 0.2.5}',
        '  - {name: mariadb, repository: "oci://registry.example.com/charts", version: 1.0.0}',
        '',
      ].join('\n'),
      'charts/mariadb/Chart.yaml': 'apiVersion: v2\nname: mariadb\nversion: 1.0.0\n',
      'charts/mariadb/templates/svc.yaml': 'x: 1\n',
      'charts/_scratch/notes': 'skipped by Helm',
      'charts/helm-toolkit-0.2.5.tgz.prov': 'provenance stays a plain file',
      'charts/undeclared/Chart.yaml': 'apiVersion: v2\nname: undeclared\nversion: 0.0.1\n',
    });
    const chart = await loadChart(join(dir, 'app'));
    expect(chart.dependencies.map((d) => [d.name, d.source, d.declared.length])).toEqual([
      ['helm-toolkit', 'vendored-archive', 1],
      ['mariadb', 'vendored-directory', 1],
      ['undeclared', 'vendored-directory', 0],
    ]);
    expect(paths(chart)).toEqual(['Chart.yaml', 'charts/helm-toolkit-0.2.5.tgz.prov']);
    const toolkit = chart.dependencies[0]!.chart;
    expect(toolkit.origin).toEqual({ kind: 'archive', file: join(dir, 'app', 'charts', 'helm-toolkit-0.2.5.tgz') });
    expect(paths(toolkit)).toContain('templates/_labels.tpl');
  });

  it('refuses a non-file dependency that is not vendored, naming chart, dependency and line', async () => {
    await writeTree(dir, {
      'Chart.yaml': 'apiVersion: v2\nname: nova\nversion: 0.1.0\ndependencies:\n  - name: rabbitmq\n    repository: https://charts.example.com\n    version: 1.x\n',
    });
    const error = await expectError(loadChart(dir), ChartDependencyError);
    expect(error.chart).toBe('nova');
    expect(error.dependency).toBe('rabbitmq');
    expect(error.location).toMatchObject({ file: join(dir, 'Chart.yaml'), line: 5 });
    expect(error.message).toMatch(/chart "nova": dependency "rabbitmq": comes from https:\/\/charts\.example\.com and is not vendored under charts\//);
  });

  it('refuses an oci:// or repository-less dependency that is not vendored', async () => {
    await writeTree(dir, { 'a/Chart.yaml': 'apiVersion: v2\nname: a\nversion: 0.1.0\ndependencies:\n  - name: x\n    repository: oci://r.example/x\n' });
    await expect(loadChart(join(dir, 'a'))).rejects.toThrow(/dependency "x": comes from oci:\/\/r\.example\/x/);
    await writeTree(dir, { 'b/Chart.yaml': 'apiVersion: v2\nname: b\nversion: 0.1.0\ndependencies:\n  - name: z\n' });
    await expect(loadChart(join(dir, 'b'))).rejects.toThrow(/dependency "z": is not vendored under charts\/ and names no repository/);
  });

  it('refuses a file:// dependency that is missing or holds another chart', async () => {
    await writeCheckout(dir, []);
    await writeTree(dir, {
      'a/Chart.yaml': 'apiVersion: v2\nname: a\nversion: 0.1.0\ndependencies:\n  - name: helm-toolkit\n    repository: file://../nowhere\n',
      'b/Chart.yaml': 'apiVersion: v2\nname: b\nversion: 0.1.0\ndependencies:\n  - name: toolkit\n    repository: file://../helm-toolkit\n',
    });
    await expect(loadChart(join(dir, 'a'))).rejects.toThrow(/file:\/\/\.\.\/nowhere points to .*nowhere, which does not exist/);
    await expect(loadChart(join(dir, 'b'))).rejects.toThrow(/holds chart "helm-toolkit", not "toolkit"/);
  });

  it('refuses file:// cycles', async () => {
    await writeTree(dir, {
      'a/Chart.yaml': 'apiVersion: v2\nname: a\nversion: 0.1.0\ndependencies:\n  - {name: b, repository: "file://../b"}\n',
      'b/Chart.yaml': 'apiVersion: v2\nname: b\nversion: 0.1.0\ndependencies:\n  - {name: a, repository: "file://../a"}\n',
    });
    await expect(loadChart(join(dir, 'a'))).rejects.toThrow(/dependency cycle: .*a -> .*b -> .*a/);
  });

  it('reads a v1 chart\'s requirements.yaml', async () => {
    await writeCheckout(dir, []);
    await writeTree(join(dir, 'old'), {
      'Chart.yaml': 'apiVersion: v1\nname: old\nversion: 0.1.0\n',
      'requirements.yaml': 'dependencies:\n  - name: helm-toolkit\n    repository: file://../helm-toolkit\n    version: 0.2.5\n',
    });
    const chart = await loadChart(join(dir, 'old'));
    expect(chart.dependencies.map((d) => d.name)).toEqual(['helm-toolkit']);
    expect(paths(chart)).toContain('requirements.yaml');
  });

  it('refuses a stray file directly under charts/ like Helm', async () => {
    await writeTree(dir, { 'Chart.yaml': 'apiVersion: v2\nname: a\nversion: 0.1.0\n', 'charts/README.md': 'x' });
    await expect(loadChart(dir)).rejects.toThrow(/charts\/README\.md is neither a chart folder nor a \.tgz/);
  });

  it('loads a chart folder whose service chart sits anywhere (absolute file:// path)', async () => {
    await writeCheckout(dir, []);
    const tree = serviceChart('abs');
    tree['Chart.yaml'] = (tree['Chart.yaml'] as string).replace('file://../helm-toolkit', `file://${join(dir, 'helm-toolkit')}`);
    await mkdir(join(dir, 'elsewhere'));
    await writeTree(join(dir, 'elsewhere', 'abs'), tree);
    await writeFile(join(dir, 'elsewhere', 'abs', 'extra.txt'), 'x');
    const chart = await loadChart(join(dir, 'elsewhere', 'abs'));
    expect(chart.dependencies[0]?.source).toBe('file');
  });
});
