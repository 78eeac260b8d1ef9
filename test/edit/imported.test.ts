/**
 * The edit commands on an app imported from StarlingX (test/fixtures/stx-app):
 * its static overrides are StarlingX's files byte for byte, and a bump to
 * another release rewrites only their image references.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bumpToRelease, editOverrides, listImages, parseAssignment, writeChanges } from '../../src/edit/index.js';
import { importStarlingxApp } from '../../src/import/index.js';
import { stxFixture, targetDir } from '../import/stx-fixture.js';

let app: string;
let keystoneBefore: string;

beforeAll(async () => {
  const fixture = await stxFixture('separate');
  app = targetDir();
  await importStarlingxApp(fixture.dir, app, { charts: fixture.charts });
  keystoneBefore = readFileSync(join(app, 'overrides/static/keystone.yaml'), 'utf8');
}, 120_000);

describe('an imported StarlingX app', () => {
  it('lists the harvested images and the ones only static overrides hold', async () => {
    const inventory = await listImages(app);
    expect(inventory.release).toBe('imported');
    const api = inventory.fields.find((f) => f.field === 'keystone_api');
    expect(api?.places.map((p) => `${p.kind} ${p.location.file}:${p.location.line}`)).toEqual([
      'catalog overrides/versions/imported.yaml:14',
      'static overrides/static/keystone.yaml:5',
    ]);
    expect(inventory.fields.map((f) => f.field)).toContain('keystone:images.tags.rally\\.test');
  });

  it('moves to a new release: every static override holding an imported image changes in that scalar alone', async () => {
    const catalog = readFileSync(join(app, 'overrides/versions/imported.yaml'), 'utf8');
    const next = catalog
      .replace(/^release: .*$/m, 'release: "next"')
      .replace(/stx-keystone:master-debian-stable-20250101T000000Z\.0/g, 'stx-keystone:master-debian-stable-20250601T000000Z.0');
    writeFileSync(join(app, 'overrides/versions/next.yaml'), next);
    const result = await bumpToRelease(app, 'next');
    await writeChanges(result.changes);
    expect(readFileSync(join(app, 'overrides/static/keystone.yaml'), 'utf8')).toBe(keystoneBefore.replaceAll('20250101T000000Z.0', '20250601T000000Z.0'));
    expect(result.rewritten.map((r) => `${r.place.location.file}:${r.place.location.line}`).sort()).toEqual(
      expect.arrayContaining(['overrides/static/keystone.yaml:5', 'overrides/static/keystone.yaml:6']),
    );
  });

  it('sets a YAML 1.1 boolean the StarlingX file writes as `no`, keeping its comment', async () => {
    const change = await editOverrides({ appDir: app, chart: 'keystone', set: [parseAssignment('conf.keystone.DEFAULT.debug=yes')], allowNew: true });
    expect(change.after).toBe(
      readFileSync(join(app, 'overrides/static/keystone.yaml'), 'utf8').replace('debug: no   # YAML 1.1 boolean', 'debug: yes   # YAML 1.1 boolean'),
    );
  });
});
