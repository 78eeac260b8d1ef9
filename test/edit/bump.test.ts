/** `flotilla bump`: app and chart versions, comments and quoting kept; --all-changed decides as build --bump-changed. */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/build/index.js';
import { bumpVersions, nextAppVersion, nextChartVersion, writeChanges } from '../../src/edit/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { failure, flotilla } from '../support/cli.js';

const METADATA = `#
# SPDX-License-Identifier: Apache-2.0
#
---
app_name: demo
# <major>.<minor>-<package revision>
app_version: "1.0-2"   # bumped by the release job
supported_k8s_version:
  minimum: v1.29.0
maintain_user_overrides: yes
...
`;
const WEB_CHART = `# The web chart.
apiVersion: v2
name: web
version: 0.1.9   # patch releases only
dependencies:
  - name: lib
    version: 0.1.0
    repository: file://../lib
`;

const read = (app: string, file: string) => readFileSync(join(app, file), 'utf8');

describe('next versions', () => {
  it('raises the StarlingX package revision, else the last number', () => {
    expect(nextAppVersion('1.0-2')).toBe('1.0-3');
    expect(nextAppVersion('24.09-9')).toBe('24.09-10');
    expect(nextAppVersion('25.03-0')).toBe('25.03-1');
    expect(nextAppVersion('1.4')).toBe('1.5');
    expect(nextAppVersion('2.0.07')).toBe('2.0.08');
    expect(() => nextAppVersion('@APP_VERSION@')).toThrow('cannot work out the version after app_version "@APP_VERSION@"; give it: --app-version VERSION');
    expect(() => nextAppVersion('stable')).toThrow('give it: --app-version VERSION');
    expect(nextChartVersion('0.1.9', 'web')).toBe('0.1.10');
    expect(nextChartVersion('1.2.3-rc.1+build.5', 'web')).toBe('1.2.4');
    expect(() => nextChartVersion('one', 'web')).toThrow('chart web: version "one" is not semver; give the new one: --chart web=VERSION');
  });
});

describe('bump --app-version and --chart', () => {
  it('changes only the version scalars, keeping quotes, comments and markers', async () => {
    const app = writeApp({ 'fluxcd/metadata.yaml': METADATA, 'charts/web/Chart.yaml': WEB_CHART });
    const result = await bumpVersions({ appDir: app, appVersion: true, charts: [{ chart: 'web' }, { chart: 'db', version: '1.0.0' }] });
    await writeChanges(result.changes);
    expect(read(app, 'fluxcd/metadata.yaml')).toBe(METADATA.replace('"1.0-2"', '"1.0-3"'));
    expect(read(app, 'charts/web/Chart.yaml')).toBe(WEB_CHART.replace('version: 0.1.9   #', 'version: 0.1.10   #'));
    expect(read(app, 'charts/db/Chart.yaml')).toContain('\nversion: 1.0.0\n');
    expect(result.bumped).toEqual([
      { kind: 'app', what: 'app_version', file: 'fluxcd/metadata.yaml', from: '1.0-2', to: '1.0-3' },
      { kind: 'chart', what: 'db', file: 'charts/db/Chart.yaml', from: '0.1.0', to: '1.0.0' },
      { kind: 'chart', what: 'web', file: 'charts/web/Chart.yaml', from: '0.1.9', to: '0.1.10' },
    ]);
  });

  it('refuses an app version that cannot name the tarball (a slash, a leading dot, a space)', async () => {
    const app = writeApp();
    for (const version of ['1/../x', '.hidden', '2.0 beta']) {
      await expect(bumpVersions({ appDir: app, appVersion: version }), version).rejects.toMatchObject({
        exitCode: 2,
        message: `app version "${version}" cannot name the tarball: expected letters, digits, ., _, + and -, at most 128, a letter or digit first`,
      });
    }
  });

  it('sets a given app version, and bumps a library chart with the exact versions its dependents ask for', async () => {
    const app = writeApp({ 'charts/web/Chart.yaml': WEB_CHART.replace('    version: 0.1.0\n', '    version: ~0.1.0   # any 0.1 patch\n') });
    const dbChart = read(app, 'charts/db/Chart.yaml');
    const result = await bumpVersions({ appDir: app, appVersion: '2.0-1', charts: [{ chart: 'lib' }] });
    await writeChanges(result.changes);
    expect(read(app, 'fluxcd/metadata.yaml')).toContain('\napp_version: 2.0-1\n');
    expect(read(app, 'charts/lib/Chart.yaml')).toBe('apiVersion: v2\nname: lib\nversion: 0.1.1\ntype: library\n');
    // db pins lib 0.1.0 exactly: it follows; web's range still matches: left alone.
    expect(read(app, 'charts/db/Chart.yaml')).toBe(dbChart.replace('  - name: lib\n    version: 0.1.0\n', '  - name: lib\n    version: 0.1.1\n'));
    expect(result.bumped.filter((b) => b.kind === 'dependency')).toEqual([
      { kind: 'dependency', what: 'db → lib', file: 'charts/db/Chart.yaml', from: '0.1.0', to: '0.1.1' },
    ]);
    expect(result.changes.map((c) => c.file)).toEqual(['fluxcd/metadata.yaml', 'charts/lib/Chart.yaml', 'charts/db/Chart.yaml']);
    // The app still builds: every file:// dependency resolves.
    await expect(buildApp(app, { outDir: tempDir(), cacheDir: false })).resolves.toBeDefined();
  });

  it('refuses a chart version that is not above the current one unless --force, and unknown charts', async () => {
    const app = writeApp({ 'charts/web/Chart.yaml': WEB_CHART });
    await expect(bumpVersions({ appDir: app, charts: [{ chart: 'web', version: '0.1.2' }] })).rejects.toThrow(
      'chart web: 0.1.2 is not above the current version 0.1.9 (pass --force to set it anyway)',
    );
    await expect(bumpVersions({ appDir: app, charts: [{ chart: 'web', version: 'next' }] })).rejects.toThrow(
      'chart web: "next" is not a semantic version such as 1.2.3',
    );
    await expect(bumpVersions({ appDir: app, charts: [{ chart: 'webb' }] })).rejects.toThrow(
      'no chart "webb" in fluxcd/releases.yaml; did you mean "web"? (charts: db, lib, web)',
    );
    const forced = await bumpVersions({ appDir: app, charts: [{ chart: 'web', version: '0.1.2' }], force: true });
    expect(forced.changes[0]?.after).toBe(WEB_CHART.replace('0.1.9', '0.1.2'));
  });

  it('refuses to replace an app version holding a build token unless --force', async () => {
    const app = writeApp({ 'fluxcd/metadata.yaml': METADATA.replace('"1.0-2"', '"@APP_VERSION@"') });
    await expect(bumpVersions({ appDir: app, appVersion: '1.0-3' })).rejects.toThrow(
      'fluxcd/metadata.yaml:7:1: app_version holds the build token @APP_VERSION@',
    );
    await expect(bumpVersions({ appDir: app, appVersion: true })).rejects.toThrow('cannot work out the version after app_version "@APP_VERSION@"');
  });
});

describe('bump --all-changed --against', () => {
  it('bumps exactly the charts build --bump-changed bumps, and nothing when nothing changed', async () => {
    const source = writeApp();
    const previous = await buildApp(source, { outDir: tempDir(), cacheDir: false });
    const unchanged = await bumpVersions({ appDir: source, allChangedAgainst: previous.file });
    expect(unchanged.bumped).toEqual([]);
    writeFileSync(join(source, 'charts/web/templates/extra.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n');
    const copy = tempDir();
    cpSync(source, copy, { recursive: true });
    const result = await bumpVersions({ appDir: source, allChangedAgainst: previous.file });
    await writeChanges(result.changes);
    const built = await buildApp(copy, { outDir: tempDir(), cacheDir: false, against: previous.file, bumpChanged: true });
    expect(result.bumped.map((b) => [b.what, [b.from, b.to]])).toEqual([...built.bumped]);
    expect(result.bumped.map((b) => b.what)).toEqual(['web']);
    expect(read(source, 'charts/web/Chart.yaml')).toBe(read(copy, 'charts/web/Chart.yaml'));
    // Built again against the same previous release, the bumped source passes the version check.
    await expect(buildApp(source, { outDir: tempDir(), cacheDir: false, against: previous.file })).resolves.toBeDefined();
  });

  it('compares against a repository index.yaml by archive digest', async () => {
    const source = writeApp();
    const previous = await buildApp(source, { outDir: tempDir(), cacheDir: false });
    const index = join(tempDir(), 'index.yaml');
    const entry = (c: (typeof previous.charts)[number]) => `  ${c.name}:\n  - name: ${c.name}\n    version: ${c.version}\n    digest: ${c.sha256}\n`;
    writeFileSync(index, `apiVersion: v1\nentries:\n${previous.charts.map(entry).join('')}`);
    writeFileSync(join(source, 'charts/db/values.yaml'), 'changed: true\n');
    const result = await bumpVersions({ appDir: source, allChangedAgainst: index });
    expect(result.bumped.map((b) => `${b.what} ${b.from} → ${b.to}`)).toEqual(['db 0.1.0 → 0.1.1']);
  });
});

describe('flotilla bump (CLI)', () => {
  it('--dry-run prints the diff and writes nothing; usage errors exit 2', async () => {
    const app = writeApp({ 'fluxcd/metadata.yaml': METADATA });
    const { stdout, stderr } = await flotilla('bump', app, '--app-version', '--chart', 'web', '--dry-run');
    expect(stdout).toContain('-app_version: "1.0-2"   # bumped by the release job\n+app_version: "1.0-3"   # bumped by the release job\n');
    expect(stdout).toContain('-version: 0.1.0\n+version: 0.1.1\n');
    expect(stderr).toBe(
      'app_version: 1.0-2 → 1.0-3 (fluxcd/metadata.yaml)\nchart web: 0.1.0 → 0.1.1 (charts/web/Chart.yaml)\ndry run: fluxcd/metadata.yaml, charts/web/Chart.yaml would change; nothing was written\n',
    );
    expect(read(app, 'fluxcd/metadata.yaml')).toBe(METADATA);
    const usage = await failure('bump', app, '--all-changed');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe('flotilla: --all-changed needs --against PREVIOUS (a tarball or index.yaml)\n');
    const nothing = await failure('bump', app);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toBe('flotilla: nothing to bump: give --app-version, --chart or --all-changed\n');
  });
});
