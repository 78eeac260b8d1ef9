/**
 * Issue 27 item 3: what sysinv accepts in a FluxCD app imports with a warning
 * at its file:line, not a refusal — names in `disabled_charts` the app does
 * not ship (whatever they resemble), stx-openstack's `from_version` typo,
 * optional metadata fields left out, and static overrides that set
 * `extraObjects` to a list where the chart's values.yaml has a map (as
 * stx-openstack's aodh, ceilometer and prometheus-openstack-exporter do) —
 * and the imported app builds, shipping the original manifests.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type BuildResult } from '../../src/build/index.js';
import { formatDiagnostic } from '../../src/diagnostics/index.js';
import { readTarGzSafely } from '../../src/tarball/index.js';
import { importStarlingxApp, type ImportReport } from '../../src/import/index.js';
import { tempDir } from '../support/app-fixture.js';
import { edit, listFiles, stxFixture, targetDir, write, type StxFixture } from './stx-fixture.js';

const METADATA = `# stx-openstack's shape: optional fields left out, its from_version typo, disabled charts it does not ship.
app_name: stx-demo
app_version: 1.0-3
supported_k8s_version:
  minimum: v1.29.2
disabled_charts:
  - keystone-api-proxy
  - dcdbsync
upgrades:
  from_version:
    - 1.0-1
`;

const EXTRA_OBJECTS = `extraObjects:
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: keystone-extra
    data:
      note: from the static overrides
`;

describe('import accepts what sysinv accepts, and the result builds', () => {
  let fixture: StxFixture;
  let report: ImportReport;
  let built: BuildResult;

  beforeAll(async () => {
    fixture = await stxFixture('separate');
    write(fixture.dir, 'metadata.yaml', METADATA);
    // The chart declares extraObjects as a map; the static overrides give a list.
    edit(fixture.dir, 'charts/keystone/values.yaml', 'conf: {}\n', 'conf: {}\nextraObjects: {}\n');
    edit(fixture.dir, 'fluxcd-manifests/keystone/keystone-static-overrides.yaml', /$/, EXTRA_OBJECTS);
    const out = targetDir();
    report = await importStarlingxApp(fixture.dir, out, { charts: fixture.charts });
    built = await buildApp(out, { outDir: tempDir('flotilla-built-'), cacheDir: false });
  });

  it('warns, at the line, about every name in disabled_charts the app does not ship, and about from_version', () => {
    const warnings = report.warnings.map(formatDiagnostic);
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^fluxcd\/metadata\.yaml:7:5: warning: disabled_charts: no chart "keystone-api-proxy"; did you mean "keystone"\?.*it disables nothing here/,
      ),
    );
    expect(warnings).toContainEqual(expect.stringMatching(/^fluxcd\/metadata\.yaml:8:5: warning: disabled_charts: no chart "dcdbsync"/));
    expect(warnings).toContainEqual(
      expect.stringMatching(/^fluxcd\/metadata\.yaml:10:3: warning: unknown metadata key "from_version" is ignored; did you mean "from_versions"\?/),
    );
  });

  it('builds with a warning about the extraObjects list over the chart map, with both places; the list wins', () => {
    const clash = built.valuesWarnings.map(formatDiagnostic).find((w) => w.includes('type clash at extraObjects'));
    expect(clash).toMatch(
      /^overrides\/static\/keystone\.yaml:\d+:\d+: warning: release "keystone": type clash at extraObjects: chart keystone \(charts\/keystone\/values\.yaml:\d+:\d+\) sets a map, but static \(overrides\/static\/keystone\.yaml:\d+:\d+\) sets a list/,
    );
  });

  it('builds, shipping the original static overrides and metadata byte for byte', async () => {
    const shipped = await readTarGzSafely(built.file);
    expect(shipped.get('metadata.yaml')?.equals(readFileSync(join(fixture.dir, 'metadata.yaml')))).toBe(true);
    const originals = listFiles(join(fixture.dir, 'fluxcd-manifests')).filter((f) => f.endsWith('-overrides.yaml'));
    expect(originals.length).toBeGreaterThan(3);
    for (const file of originals)
      expect(shipped.get(`fluxcd-manifests/${file}`)?.equals(readFileSync(join(fixture.dir, 'fluxcd-manifests', file))), file).toBe(true);
  });
});

describe('import refuses, before writing anything, an app that would not build', () => {
  it('a malformed image reference in static overrides, at its line', async () => {
    const fixture = await stxFixture('separate');
    edit(fixture.dir, 'fluxcd-manifests/keystone/keystone-static-overrides.yaml', /$/, 'image: "repo::tag"\n');
    const out = targetDir();
    const error = await importStarlingxApp(fixture.dir, out, { charts: fixture.charts }).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(
      /overrides\/static\/keystone\.yaml:\d+:\d+: error: release "keystone": image: image reference "repo::tag" is malformed/,
    );
    expect(listFiles(out)).toEqual([]);
  });
});
