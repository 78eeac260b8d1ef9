/**
 * `images list` and `images bump`: an app whose images sit in the catalog,
 * in StarlingX-style static overrides (commented, quoted, with markers and
 * build tokens), in a values template, and in per-backend fields.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bumpField, bumpToRelease, listImages, writeChanges } from '../../src/edit/index.js';
import { writeApp } from '../support/app-fixture.js';
import { failure, flotilla } from '../support/cli.js';

const OLD = {
  web: 'docker.io/library/nginx:1.24',
  db: 'docker.io/library/mariadb:10.6',
  dbVolume: 'quay.io/example/db-volume:1.0',
};
const NEW = {
  web: 'docker.io/library/nginx:1.27',
  db: 'docker.io/library/mariadb:11.4',
  dbVolume: 'quay.io/example/db-volume:2.0',
};

export const FILES = {
  'overrides/deployment.yaml': `# The deployment spec.
main:
  release: "1.0"   # the OpenStack release
  domain: example.org
features:
  services: [frontend]
`,
  'overrides/versions/1.0.yaml': `release: "1.0"\nimages:\n  web: ${OLD.web}\n  web_proxy: ${OLD.web}\n  db: ${OLD.db}\n  db_volume: ${OLD.dbVolume}\nserviceDefaults:\n  modern: false\n`,
  'overrides/versions/2.0.yaml': `release: "2.0"\nimages:\n  web: ${NEW.web}\n  web_proxy: ${NEW.web}\n  db: ${NEW.db}\n  db_volume: ${NEW.dbVolume}\nserviceDefaults:\n  modern: true\n`,
  'overrides/versions/images.yaml': `# field -> chart -> value path
web:
  web: images.tags.web
web_proxy:
  web: images.tags.proxy
db:
  db: images.tags.db
db_volume:
  db: images.tags.db_volume
# Per-backend volume images (custom images only; a backend without one uses db_volume).
db_volume_ceph:
  db: images.tags.db_volume_ceph
db_volume_lvm:
  db: images.tags.db_volume_lvm
`,
  'overrides/static/web.yaml': `#
# SPDX-License-Identifier: Apache-2.0
#
---
images:
  tags:
    web: ${OLD.web}   # the frontend
    proxy: '${OLD.web}'
conf:
  banner: from-static
...
`,
  'overrides/static/db.yaml': `# Database static overrides.
images:
  tags:
    db: "${OLD.db}"
    db_volume: ${OLD.dbVolume}
    db_volume_ceph: "@IMAGE_PREFIX@/example/db-volume-ceph:1.0"   # built per site
    backup: docker.io/library/busybox:1.36   # not in the catalog
`,
  'overrides/templates/web.yaml.hbs': `conf:
  host: web.{{main.domain}}
  # A fixed sidecar, the same image as the frontend.
  sidecar: ${OLD.web}
`,
};

function imagesApp(changes: Record<string, string | null> = {}): string {
  return writeApp({ ...FILES, ...changes });
}

const read = (app: string, file: string) => readFileSync(join(app, file), 'utf8');

function allFiles(dir: string, root = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? allFiles(path, root) : [relative(root, path)];
  });
}

describe('images list', () => {
  it('shows each field, its reference, where it is set and every chart value it lands in', async () => {
    const inventory = await listImages(imagesApp());
    expect(inventory.release).toBe('1.0');
    const web = inventory.fields.find((f) => f.field === 'web');
    expect(web?.reference).toBe(OLD.web);
    expect(web?.places.map((p) => `${p.kind} ${p.location.file}:${p.location.line}`)).toEqual([
      'catalog overrides/versions/1.0.yaml:3',
      'static overrides/static/web.yaml:7',
      'template overrides/templates/web.yaml.hbs:4',
    ]);
    expect(web?.lands).toEqual([
      expect.objectContaining({
        chart: 'web',
        path: 'images.tags.web',
        chartDefault: { file: 'charts/web/values.yaml', line: 3, column: 5 },
        chartInApp: true,
      }),
    ]);
    const perBackend = inventory.fields.find((f) => f.field === 'db_volume_ceph');
    expect(perBackend?.reference).toBeUndefined();
    expect(perBackend?.places.map((p) => p.reference)).toEqual(['@IMAGE_PREFIX@/example/db-volume-ceph:1.0']);
    expect(perBackend?.lands[0]?.declaredAt).toEqual({ file: 'overrides/versions/images.yaml', line: 12, column: 3 });
    const unmapped = inventory.fields.find((f) => f.field === 'db:images.tags.backup');
    expect(unmapped).toMatchObject({ reference: 'docker.io/library/busybox:1.36', source: 'static', lands: [] });
  });

  it('prints a table, or JSON with -o json, and warns about a field landing in a chart no release uses', async () => {
    const app = imagesApp({ 'overrides/versions/images.yaml': `${FILES['overrides/versions/images.yaml']}web_extra:\n  api: images.tags.web\n` });
    const { stdout, stderr } = await flotilla('images', 'list', app);
    expect(stdout).toMatch(/^FIELD\s+REFERENCE\s+WHAT\s+WHERE$/m);
    expect(stdout).toMatch(/^web\s+docker\.io\/library\/nginx:1\.24\s+set: static overrides of web\s+overrides\/static\/web\.yaml:7:5$/m);
    expect(stdout).toMatch(/^web\s+docker\.io\/library\/nginx:1\.24\s+lands: web images\.tags\.web\s+charts\/web\/values\.yaml:3:5$/m);
    expect(stderr).toBe('warning: web_extra: lands in chart api, which no release of fluxcd/releases.yaml uses\n');
    const json = JSON.parse((await flotilla('images', 'list', app, '-o', 'json')).stdout) as { fields: { field: string }[] };
    expect(json.fields.map((f) => f.field)).toContain('db_volume_lvm');
  });
});

describe('images bump --to RELEASE', () => {
  it('rewrites every file that holds an image of the current release, and only those scalars', async () => {
    const app = imagesApp();
    const before = new Map(allFiles(app).map((f) => [f, read(app, f)]));
    const result = await bumpToRelease(app, '2.0');
    await writeChanges(result.changes);
    const expected: Record<string, string> = {
      'overrides/deployment.yaml': FILES['overrides/deployment.yaml'].replace('release: "1.0"', 'release: "2.0"'),
      'overrides/static/web.yaml': FILES['overrides/static/web.yaml'].replace(`web: ${OLD.web}`, `web: ${NEW.web}`).replace(`'${OLD.web}'`, `'${NEW.web}'`),
      'overrides/static/db.yaml': FILES['overrides/static/db.yaml']
        .replace(`"${OLD.db}"`, `"${NEW.db}"`)
        .replace(`db_volume: ${OLD.dbVolume}`, `db_volume: ${NEW.dbVolume}`),
      'overrides/templates/web.yaml.hbs': FILES['overrides/templates/web.yaml.hbs'].replace(OLD.web, NEW.web),
    };
    for (const [file, text] of before) expect(read(app, file), file).toBe(expected[file] ?? text);
    // No file but the 1.0 catalog entry still names a 1.0 image.
    const stale = allFiles(app).filter((f) => Object.values(OLD).some((ref) => read(app, f).includes(ref)));
    expect(stale).toEqual(['overrides/versions/1.0.yaml']);
    expect(result.rewritten.map((r) => `${r.place.location.file}:${r.place.location.line} ${r.field}`).sort()).toEqual([
      'overrides/static/db.yaml:4 db',
      'overrides/static/db.yaml:5 db_volume',
      'overrides/static/web.yaml:7 web',
      'overrides/static/web.yaml:8 web_proxy',
      'overrides/templates/web.yaml.hbs:4 web,web_proxy',
    ]);
  });

  it('leaves custom images, disagreeing static overrides and ambiguous template text alone, and says so', async () => {
    const app = imagesApp({
      'overrides/deployment.yaml': `main:\n  release: "1.0"\n  domain: example.org\n  customImages:\n    db: docker.io/library/mariadb:10.6.20\nfeatures:\n  services: [frontend]\n`,
      'overrides/versions/2.0.yaml': FILES['overrides/versions/2.0.yaml'].replace(`web_proxy: ${NEW.web}`, 'web_proxy: docker.io/library/nginx:1.27-alpine'),
      'overrides/static/web.yaml': 'images:\n  tags:\n    web: docker.io/library/nginx:1.25\n',
    });
    const result = await bumpToRelease(app, '2.0');
    expect(result.notes).toEqual([
      "web: overrides/static/web.yaml:3:5 holds docker.io/library/nginx:1.25, not release 1.0's docker.io/library/nginx:1.24; left as it is",
      'db: the custom image docker.io/library/mariadb:10.6.20 (overrides/deployment.yaml:5:5) stays; custom images win over the release',
      'overrides/templates/web.yaml.hbs:4:12: docker.io/library/nginx:1.24 is the image of several fields that differ in release 2.0 (docker.io/library/nginx:1.27, docker.io/library/nginx:1.27-alpine); left as it is',
    ]);
    expect(result.changes.filter((c) => c.before !== c.after).map((c) => c.file)).toEqual(['overrides/static/db.yaml', 'overrides/deployment.yaml']);
  });

  it('keeps a build token: an image with one is not the catalog image, and is left alone', async () => {
    const result = await bumpToRelease(imagesApp(), '2.0');
    const db = result.changes.find((c) => c.file === 'overrides/static/db.yaml');
    expect(db?.after).toContain('db_volume_ceph: "@IMAGE_PREFIX@/example/db-volume-ceph:1.0"   # built per site');
  });

  it('refuses an unknown release and the release the app already targets', async () => {
    const app = imagesApp();
    await expect(bumpToRelease(app, '3.0')).rejects.toThrow('release "3.0" is not in the version catalog (overrides/versions/); available: 1.0, 2.0');
    await expect(bumpToRelease(app, '1.0')).rejects.toThrow('the app already targets release 1.0 (main.release in overrides/deployment.yaml)');
  });
});

describe('images bump --field', () => {
  it('sets one field everywhere it is written: catalog entry, static overrides, template text', async () => {
    const app = imagesApp();
    const ref = 'docker.io/library/mariadb:10.6.21';
    const result = await bumpField(app, new Map([['db', ref]]));
    await writeChanges(result.changes);
    expect(read(app, 'overrides/versions/1.0.yaml')).toBe(FILES['overrides/versions/1.0.yaml'].replace(`db: ${OLD.db}`, `db: ${ref}`));
    expect(read(app, 'overrides/static/db.yaml')).toBe(FILES['overrides/static/db.yaml'].replace(`"${OLD.db}"`, `"${ref}"`));
    expect(read(app, 'overrides/versions/2.0.yaml')).toBe(FILES['overrides/versions/2.0.yaml']);
  });

  it('leaves template text shared with another field alone', async () => {
    const result = await bumpField(imagesApp(), new Map([['web', 'docker.io/library/nginx:1.24.1']]));
    expect(result.notes).toEqual(['overrides/templates/web.yaml.hbs:4:12: docker.io/library/nginx:1.24 is also the image of web_proxy; left as it is']);
    expect(result.changes.map((c) => c.file).sort()).toEqual(['overrides/static/web.yaml', 'overrides/versions/1.0.yaml']);
  });

  it('sets a per-backend field as a custom image, keeping the build token rule in static overrides', async () => {
    const app = imagesApp();
    const ref = 'quay.io/vendor/db-volume-ceph:3.1';
    await expect(bumpField(app, new Map([['db_volume_ceph', ref]]))).rejects.toThrow(
      'overrides/static/db.yaml:6:5: images.tags.db_volume_ceph holds the build token @IMAGE_PREFIX@',
    );
    const lvm = await bumpField(app, new Map([['db_volume_lvm', 'quay.io/vendor/db-volume-lvm:3.1']]));
    await writeChanges(lvm.changes);
    expect(read(app, 'overrides/deployment.yaml')).toBe(
      FILES['overrides/deployment.yaml'].replace(
        '  domain: example.org\n',
        '  domain: example.org\n  customImages:\n    db_volume_lvm: quay.io/vendor/db-volume-lvm:3.1\n',
      ),
    );
    expect(lvm.notes).toEqual([
      'db_volume_lvm: release 1.0 has no image for it; set as a custom image (main.customImages.db_volume_lvm) in overrides/deployment.yaml',
    ]);
    // The app now resolves it: the next list shows the custom image.
    const listed = await listImages(app);
    expect(listed.fields.find((f) => f.field === 'db_volume_lvm')).toMatchObject({ reference: 'quay.io/vendor/db-volume-lvm:3.1', source: 'custom' });
  });

  it('refuses a field that lands nowhere and an invalid reference', async () => {
    const app = imagesApp();
    await expect(bumpField(app, new Map([['dbb', 'docker.io/x:1']]))).rejects.toThrow(
      'image field dbb lands nowhere: it is not in overrides/versions/images.yaml (fields: db, db_volume, db_volume_ceph, db_volume_lvm, web, web_proxy)',
    );
    await expect(bumpField(app, new Map([['db', 'docker.io/library/mariadb']]))).rejects.toThrow(
      '--field db=docker.io/library/mariadb: has no tag or digest; pin every image',
    );
    await expect(bumpField(app, new Map([['db', 'Docker.io/Library/MariaDB:1']]))).rejects.toThrow('not a valid image reference');
  });
});

describe('flotilla images bump (CLI)', () => {
  it('--dry-run prints the diff of every file and writes nothing; exits 2 on bad usage', async () => {
    const app = imagesApp();
    const { stdout, stderr } = await flotilla('images', 'bump', app, '--to', '2.0', '--dry-run');
    expect(stdout).toContain(`--- a/overrides/static/web.yaml\n+++ b/overrides/static/web.yaml\n`);
    expect(stdout).toContain(
      `-    web: ${OLD.web}   # the frontend\n-    proxy: '${OLD.web}'\n+    web: ${NEW.web}   # the frontend\n+    proxy: '${NEW.web}'\n`,
    );
    expect(stderr).toContain(`overrides/static/db.yaml:4:5: db: ${OLD.db} → ${NEW.db}\n`);
    expect(stderr).toContain('dry run: ');
    for (const [file, text] of Object.entries(FILES)) expect(read(app, file)).toBe(text);
    const usage = await failure('images', 'bump', app, '--to', '2.0', '--field', 'db=x:1');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe('flotilla: give either --to RELEASE or --field FIELD=REF\n');
  });
});
