/**
 * `overrides set|unset`: on files full of comments, document markers, quoting
 * styles, anchors and build tokens, the output is the input with only the
 * edited scalars changed (whole files compared), and each refusal says why.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EditRefusedError, editOverrides, parseAssignment, parseValuePath, UnknownPathError, writeChanges, YamlFileEditor } from '../../src/edit/index.js';
import { baseApp, writeApp } from '../support/app-fixture.js';
import { failure, flotilla } from '../support/cli.js';

/** A StarlingX-style static overrides file: license header, markers, every quoting style, anchors, tokens. */
export const GNARLY = `#
# Copyright (c) 2025 Wind River Systems, Inc.
#
# SPDX-License-Identifier: Apache-2.0
#

---
# Images: the build fills in @IMAGE_PREFIX@.
images:
  tags:
    web: "@IMAGE_PREFIX@/starlingx/stx-web:master-debian-stable"   # built
    db: docker.io/library/mariadb:10.6
    'quoted': 'single ''style'''
    "double": "double\\tstyle"
  pull_policy:    IfNotPresent     # odd spacing kept

pod:
  replicas: &replicas
    api: 2    # two for HA
    worker: 1
  lifecycle:
    upgrades: {deployments: {revision_history: 3, pod_replacement_strategy: RollingUpdate}}

conf:
  banner: >-
    folded
    text
  motd: |
    line one
    line two

  flags: [a, "b", 'c']
  copies: *replicas
  yes_key:
    y: 1
list:
  - name: first   # first item
    value: 1
  - name: second
    value: 2
...
# trailing comment after the end marker
`;

function gnarlyApp(extra: Record<string, string> = {}): string {
  return writeApp({
    'overrides/static/web.yaml': GNARLY,
    'charts/web/values.yaml': `images:\n  tags:\n    web: example/web:0\n    db: x\n  pull_policy: Always\npod:\n  replicas:\n    api: 1\n    worker: 1\n  lifecycle: {}\nconf:\n  banner: default\n  motd: ""\n  flags: []\n  timeouts:\n    connect: 5\nlabels: {}\nlist: []\n`,
    ...extra,
  });
}

const staticFile = (app: string) => join(app, 'overrides/static/web.yaml');
const read = (app: string) => readFileSync(staticFile(app), 'utf8');

async function set(app: string, assignments: string[], options: { asString?: boolean; allowNew?: boolean; force?: boolean } = {}) {
  const change = await editOverrides({ appDir: app, chart: 'web', set: assignments.map(parseAssignment), ...options });
  await writeChanges([change]);
  return change;
}

describe('overrides set: only the edited scalars change', () => {
  it('replaces a plain scalar, keeping its trailing comment and every other byte', async () => {
    const app = gnarlyApp();
    await set(app, ['pod.replicas.api=3']);
    expect(read(app)).toBe(GNARLY.replace('    api: 2    # two for HA', '    api: 3    # two for HA'));
  });

  it('keeps each scalar quoting style, and quotes only what would read back as something else', async () => {
    const app = gnarlyApp();
    await set(app, ["images.tags.quoted=it's", 'images.tags.double=tab\there', 'images.pull_policy=yes', 'images.tags.db=docker.io/library/mariadb:11.4'], {
      asString: true,
    });
    expect(read(app)).toBe(
      GNARLY.replace(`'quoted': 'single ''style'''`, `'quoted': 'it''s'`)
        .replace(`"double": "double\\tstyle"`, `"double": "tab\\there"`)
        .replace('pull_policy:    IfNotPresent     #', 'pull_policy:    "yes"     #')
        .replace('db: docker.io/library/mariadb:10.6', 'db: docker.io/library/mariadb:11.4'),
    );
  });

  it('writes numbers and booleans as typed, and rewrites block scalars in place', async () => {
    const app = gnarlyApp();
    await set(app, ['conf.banner=plain now', 'list[1].value=0x10']);
    await set(app, ['conf.motd=first\nsecond\n'], { asString: true });
    expect(read(app)).toBe(
      GNARLY.replace('  banner: >-\n    folded\n    text\n', '  banner: plain now\n')
        .replace('  motd: |\n    line one\n    line two\n', '  motd: |\n    first\n    second\n')
        .replace('    value: 2\n', '    value: 0x10\n'),
    );
  });

  it('keeps a quoted string a string when the new value reads as a number or boolean', async () => {
    const app = gnarlyApp({ 'overrides/static/web.yaml': 'conf:\n  banner: "2025.1"\n  motd: \'no\'\n' });
    await set(app, ['conf.banner=2025.2', 'conf.motd=yes']);
    expect(read(app)).toBe('conf:\n  banner: "2025.2"\n  motd: \'yes\'\n');
  });

  it('edits flow collections, list items and keys YAML 1.1 reads as booleans', async () => {
    const app = gnarlyApp();
    await set(app, ['conf.flags[1]=B', 'conf.flags[3]=d', 'pod.lifecycle.upgrades.deployments.revision_history=5', 'conf.yes_key.y=2', 'list[0].name=one']);
    expect(read(app)).toBe(
      GNARLY.replace(`flags: [a, "b", 'c']`, `flags: [a, "B", 'c', d]`)
        .replace('revision_history: 3,', 'revision_history: 5,')
        .replace('    y: 1', '    y: 2')
        .replace('  - name: first   # first item', '  - name: one   # first item'),
    );
  });

  it('adds a new key at the end of its map with the map indentation, before the end marker', async () => {
    const app = gnarlyApp();
    await set(app, ['conf.timeouts.connect=10', 'pod.replicas.worker=3', 'labels.tier=web']);
    expect(read(app)).toBe(
      GNARLY.replace('    worker: 1\n', '    worker: 3\n')
        .replace(`  yes_key:\n    y: 1\n`, `  yes_key:\n    y: 1\n  timeouts:\n    connect: 10\n`)
        .replace('    value: 2\n...', '    value: 2\nlabels:\n  tier: web\n...'),
    );
  });

  it('adds a key to a map that inherits through an anchor, and to a new file', async () => {
    const app = gnarlyApp({ 'overrides/static/web.yaml': 'base: &b\n  a: 1\nuse:\n  <<: *b\n' });
    await editOverrides({ appDir: app, chart: 'web', set: [parseAssignment('use.a=2')], allowNew: true }).then((c) => writeChanges([c]));
    expect(read(app)).toBe('base: &b\n  a: 1\nuse:\n  <<: *b\n  a: 2\n');
    const fresh = writeApp({ 'overrides/static/web.yaml': null });
    const change = await editOverrides({ appDir: fresh, chart: 'web', set: [parseAssignment('pod.replicas=3')] });
    expect(change.before).toBeUndefined();
    await writeChanges([change]);
    expect(read(fresh)).toBe('pod:\n  replicas: 3\n');
  });

  it('keeps a build token when the new value has one', async () => {
    const app = gnarlyApp();
    await set(app, ['images.tags.web=@IMAGE_PREFIX@/starlingx/stx-web:2025.1']);
    expect(read(app)).toBe(GNARLY.replace('stx-web:master-debian-stable', 'stx-web:2025.1'));
  });
});

describe('overrides unset', () => {
  it('removes a key with its line, a list item, and a flow entry; an emptied map goes too', async () => {
    const app = gnarlyApp();
    const change = await editOverrides({
      appDir: app,
      chart: 'web',
      unset: ['pod.replicas.worker', 'list[0]', 'pod.lifecycle.upgrades.deployments.revision_history', 'conf.yes_key.y'].map(parseValuePath),
    });
    await writeChanges([change]);
    expect(read(app)).toBe(
      GNARLY.replace('    worker: 1\n', '')
        .replace('  - name: first   # first item\n    value: 1\n', '')
        .replace('{revision_history: 3, pod_replacement_strategy', '{pod_replacement_strategy')
        .replace('  yes_key:\n    y: 1\n', ''),
    );
    expect(change.edits.map((e) => e.action)).toEqual(['removed', 'removed', 'removed', 'removed']);
  });

  it('refuses a path that is not set, and a value inherited through a merge key', async () => {
    const app = gnarlyApp();
    await expect(editOverrides({ appDir: app, chart: 'web', unset: [parseValuePath('pod.replicas.nope')] })).rejects.toThrow(
      'overrides/static/web.yaml:19:5: pod.replicas.nope is not set in this file',
    );
    const editor = new YamlFileEditor('base: &b\n  a: 1\nuse:\n  <<: *b\n', 'f.yaml');
    expect(() => editor.unset(['use', 'a'])).toThrow('use.a is not written here: it is inherited through a merge key (<<); remove it at the anchor (line 2)');
  });
});

describe('overrides set: refusals', () => {
  it('refuses an unknown path with the nearest known key, unless --new', async () => {
    const app = gnarlyApp();
    const attempt = editOverrides({ appDir: app, chart: 'web', set: [parseAssignment('pod.replicas.apii=3')] });
    await expect(attempt).rejects.toThrow(UnknownPathError);
    await expect(attempt).rejects.toThrow(
      'overrides/static/web.yaml: pod.replicas.apii is not a known path (checked against charts/web/values.yaml and charts/web/values.schema.json); did you mean pod.replicas.api? pass --new to add it anyway',
    );
    await set(app, ['pod.replicas.apii=3'], { allowNew: true });
    expect(read(app)).toBe(GNARLY.replace('    worker: 1\n', '    worker: 1\n    apii: 3\n'));
  });

  it('accepts a new key under a key the chart does not know but the file already holds', async () => {
    const app = gnarlyApp({ 'overrides/static/web.yaml': 'site:\n  motd: hi\n' });
    await set(app, ['site.contact=ops@example.org']);
    expect(read(app)).toBe('site:\n  motd: hi\n  contact: ops@example.org\n');
    await expect(editOverrides({ appDir: app, chart: 'web', set: [parseAssignment('sitee.contact=x')] })).rejects.toThrow(UnknownPathError);
  });

  it('accepts a path only the chart schema knows, and anything under an empty map of values.yaml', async () => {
    const app = gnarlyApp({
      'charts/web/values.schema.json': JSON.stringify({ type: 'object', properties: { extra: { type: 'object', properties: { knob: { type: 'integer' } } } } }),
    });
    await set(app, ['extra.knob=1', 'pod.lifecycle.upgrades.daemonsets.pod_replacement_strategy=OnDelete']);
    expect(read(app)).toContain('extra:\n  knob: 1\n');
  });

  it('refuses a change of kind with file:line, unless --force', async () => {
    const app = gnarlyApp();
    await expect(editOverrides({ appDir: app, chart: 'web', set: [parseAssignment('pod.replicas=3')] })).rejects.toThrow(
      'overrides/static/web.yaml:18:3: pod.replicas holds a map; the new value is a scalar (pass --force to change its kind)',
    );
    await expect(editOverrides({ appDir: app, chart: 'web', set: [parseAssignment('pod.replicas.api.x=3')] })).rejects.toThrow(
      'overrides/static/web.yaml:19:5: pod.replicas.api holds a scalar (2); setting pod.replicas.api.x would turn it into a map (pass --force to replace it)',
    );
    await expect(editOverrides({ appDir: app, chart: 'web', set: [parseAssignment('conf.flags={a: 1}')] })).rejects.toThrow(EditRefusedError);
    await set(app, ['conf.flags={a: 1}'], { force: true });
    expect(read(app)).toBe(GNARLY.replace(`flags: [a, "b", 'c']`, 'flags: {a: 1}'));
  });

  it('refuses to drop a build token unless --force', async () => {
    const app = gnarlyApp();
    await expect(editOverrides({ appDir: app, chart: 'web', set: [parseAssignment('images.tags.web=docker.io/starlingx/stx-web:1')] })).rejects.toThrow(
      'overrides/static/web.yaml:11:5: images.tags.web holds the build token @IMAGE_PREFIX@ ("@IMAGE_PREFIX@/starlingx/stx-web:master-debian-stable"), filled in when the app is built; the new value has no token and would lose it (keep a token in the value, or pass --force)',
    );
    await set(app, ['images.tags.web=docker.io/starlingx/stx-web:1'], { force: true });
    expect(read(app)).toBe(GNARLY.replace('"@IMAGE_PREFIX@/starlingx/stx-web:master-debian-stable"', '"docker.io/starlingx/stx-web:1"'));
  });

  it('refuses editing through an alias, and a file with several documents', async () => {
    const app = gnarlyApp();
    await expect(editOverrides({ appDir: app, chart: 'web', set: [parseAssignment('conf.copies.api=1')] })).rejects.toThrow(
      'overrides/static/web.yaml:33:11: conf.copies is an alias (*replicas) of the anchor &replicas at line 19: editing through it would change every use of the anchor; edit it there',
    );
    const two = gnarlyApp({ 'overrides/static/web.yaml': 'a: 1\n---\nb: 2\n' });
    await expect(editOverrides({ appDir: two, chart: 'web', set: [parseAssignment('pod.replicas=1')] })).rejects.toThrow(
      'overrides/static/web.yaml:2:1: holds several YAML documents; flotilla edits files with one (values files have one)',
    );
  });

  it('refuses a bad path and an unknown chart with the nearest name', async () => {
    expect(() => parseAssignment('a..b=1')).toThrow('path "a..b": empty key');
    expect(() => parseAssignment('novalue')).toThrow('expected PATH=VALUE, got "novalue"');
    expect(parseValuePath('a\\.b.c[2].d')).toEqual(['a.b', 'c', 2, 'd']);
    await expect(editOverrides({ appDir: gnarlyApp(), chart: 'webb', set: [parseAssignment('a=1')] })).rejects.toThrow(
      'no chart "webb" in fluxcd/releases.yaml; did you mean "web"? (charts: db, web)',
    );
  });
});

describe('overrides set --file', () => {
  it('edits a version catalog, checking fields against images.yaml and references', async () => {
    const app = writeApp();
    const file = 'overrides/versions/2.0.yaml';
    const change = await editOverrides({ appDir: app, file, set: [parseAssignment('images.web=docker.io/library/nginx:1.28')] });
    expect(change.after).toBe(readFileSync(join(app, file), 'utf8').replace('nginx:1.27', 'nginx:1.28'));
    await expect(editOverrides({ appDir: app, file, set: [parseAssignment('images.wbe=docker.io/library/nginx:1.28')] })).rejects.toThrow(
      'did you mean images.web?',
    );
    await expect(editOverrides({ appDir: app, file, set: [parseAssignment('images.web=docker.io/library/nginx')] })).rejects.toThrow(
      'image web: has no tag or digest; pin every image',
    );
  });

  it('checks overrides/versions/images.yaml after the edit', async () => {
    const app = writeApp();
    await expect(
      editOverrides({ appDir: app, file: 'overrides/versions/images.yaml', set: [parseAssignment('web.web=images..web')], asString: true }),
    ).rejects.toThrow(
      'the edit would leave overrides/versions/images.yaml invalid; nothing was written:\n  overrides/versions/images.yaml:2:3: error: image field web → chart web: expected a dotted value path such as images.tags.web, or {repository: image.repository, tag: image.tag, digest: image.digest} (digest optional) (at web.web)',
    );
  });

  it('edits the deployment spec and metadata against their schemas', async () => {
    const app = writeApp();
    await expect(editOverrides({ appDir: app, file: 'overrides/deployment.yaml', set: [parseAssignment('main.relase="1.0"')] })).rejects.toThrow(
      'did you mean main.release?',
    );
    const spec = await editOverrides({ appDir: app, file: 'overrides/deployment.yaml', set: [parseAssignment('main.release="1.0"')] });
    expect(spec.after).toBe(readFileSync(join(app, 'overrides/deployment.yaml'), 'utf8').replace('release: "2.0"', 'release: "1.0"'));
    const metadata = await editOverrides({ appDir: app, file: 'fluxcd/metadata.yaml', set: [parseAssignment('maintain_user_overrides=no')] });
    expect(metadata.after).toBe(readFileSync(join(app, 'fluxcd/metadata.yaml'), 'utf8').replace('maintain_user_overrides: yes', 'maintain_user_overrides: no'));
    await expect(editOverrides({ appDir: app, file: 'fluxcd/metadata.yaml', set: [parseAssignment('app_nmae=x')] })).rejects.toThrow('did you mean app_name?');
  });

  it('checks the release table against the Flux version it declares after the edit', async () => {
    const table = `${baseApp()['fluxcd/releases.yaml']}    helmReleaseSpec: {postRenderStrategy: combined}\nfluxVersion: latest\n`;
    const app = writeApp({ 'fluxcd/releases.yaml': table });
    // Going back to StarlingX's Flux while a helm-controller v1.6 field is in use would break the table.
    await expect(editOverrides({ appDir: app, file: 'fluxcd/releases.yaml', set: [parseAssignment('fluxVersion=starlingx')] })).rejects.toThrow(
      'field spec.postRenderStrategy exists from helm-controller v1.6.0; this app targets helm-controller v1.5.3 (fluxVersion: starlingx)',
    );
    expect(readFileSync(join(app, 'fluxcd/releases.yaml'), 'utf8')).toBe(table);
    const declared = await editOverrides({ appDir: writeApp(), file: 'fluxcd/releases.yaml', set: [parseAssignment('fluxVersion=latest')] });
    expect(declared.after).toMatch(/^fluxVersion: latest$/m);
  });
});

describe('flotilla overrides set|unset (CLI)', () => {
  it('--dry-run prints a unified diff and writes nothing', async () => {
    const app = gnarlyApp();
    const before = statSync(staticFile(app)).mtimeMs;
    const { stdout, stderr } = await flotilla('overrides', 'set', app, 'web', 'pod.replicas.api=4', '--dry-run');
    expect(stdout).toBe(
      [
        '--- a/overrides/static/web.yaml',
        '+++ b/overrides/static/web.yaml',
        '@@ -16,7 +16,7 @@',
        ' ',
        ' pod:',
        '   replicas: &replicas',
        '-    api: 2    # two for HA',
        '+    api: 4    # two for HA',
        '     worker: 1',
        '   lifecycle:',
        '     upgrades: {deployments: {revision_history: 3, pod_replacement_strategy: RollingUpdate}}',
        '',
      ].join('\n'),
    );
    expect(stderr).toBe('dry run: overrides/static/web.yaml would change; nothing was written\n');
    expect(read(app)).toBe(GNARLY);
    expect(statSync(staticFile(app)).mtimeMs).toBe(before);
  });

  it('writes the file, prints the diff, and leaves no temp file behind', async () => {
    const app = gnarlyApp();
    const { stdout, stderr } = await flotilla('overrides', 'unset', app, 'web', 'conf.motd');
    expect(stdout).toContain('-  motd: |\n-    line one\n-    line two\n');
    expect(stderr).toBe('wrote overrides/static/web.yaml\n');
    expect(read(app)).toBe(GNARLY.replace('  motd: |\n    line one\n    line two\n', ''));
    expect(readdirSync(join(app, 'overrides/static'))).toEqual(['web.yaml']);
  });

  it('exits 1 on a refusal and 2 on a malformed argument, leaving the file as it was', async () => {
    const app = gnarlyApp();
    const refused = await failure('overrides', 'set', app, 'web', 'pod.replicas=1');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'flotilla: overrides/static/web.yaml:18:3: pod.replicas holds a map; the new value is a scalar (pass --force to change its kind)\n',
    );
    const usage = await failure('overrides', 'set', app, 'web', 'pod.replicas');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe('flotilla: expected PATH=VALUE, got "pod.replicas"\n');
    expect(read(app)).toBe(GNARLY);
  });

  it('edits another file with --file, and still prints computed overrides for `overrides CHART`', async () => {
    const app = writeApp();
    await flotilla('overrides', 'set', app, '--file', 'overrides/versions/2.0.yaml', 'images.web=docker.io/library/nginx:1.28');
    expect(readFileSync(join(app, 'overrides/versions/2.0.yaml'), 'utf8')).toContain('web: docker.io/library/nginx:1.28\n');
    const { stdout } = await flotilla('overrides', app, 'web');
    expect(stdout).toContain('tags:\n    web: docker.io/library/nginx:1.28\n');
  });
});

describe('the editor on less common files', () => {
  it('keeps CRLF line endings, new lines included', () => {
    const text = '# header\r\nconf:\r\n  a: 1\r\nlist:\r\n  - x\r\n';
    const editor = new YamlFileEditor(text, 'f.yaml');
    editor.set(['conf', 'a'], 2, { raw: '2' });
    editor.set(['conf', 'b', 'c'], 'd');
    editor.set(['list', 1], 'z');
    expect(editor.text).toBe('# header\r\nconf:\r\n  a: 2\r\n  b:\r\n    c: d\r\nlist:\r\n  - x\r\n  - z\r\n');
  });

  it('follows the file indentation step, fills an empty value and an empty flow map', () => {
    const editor = new YamlFileEditor('top:\n    nested:\n        leaf: 1\nempty:\nlabels: {}\n', 'f.yaml');
    editor.set(['top', 'other', 'deep'], true, { raw: 'true' });
    editor.set(['empty', 'a'], 1, { raw: '1' });
    editor.set(['labels', 'tier'], 'web');
    expect(editor.text).toBe('top:\n    nested:\n        leaf: 1\n    other:\n        deep: true\nempty:\n    a: 1\nlabels: {tier: web}\n');
  });

  it('refuses setting a map or list to null without --force (Helm would drop the chart defaults under it)', () => {
    const editor = new YamlFileEditor('conf:\n  a: 1\n', 'f.yaml');
    expect(() => editor.set(['conf'], null)).toThrow('f.yaml:1:1: conf holds a map; the new value is a scalar (pass --force to change its kind)');
    editor.set(['conf', 'a'], null, { raw: 'null' });
    expect(editor.text).toBe('conf:\n  a: null\n');
  });

  it('reports invalid YAML with its place', () => {
    expect(() => new YamlFileEditor('a: [1\n', 'f.yaml')).toThrow(/^f\.yaml:2:1: invalid YAML: /);
  });
});

describe('the editor and anchors, aliases and block scalars', () => {
  it('replaces an alias itself, never the anchored node it reads', () => {
    const editor = new YamlFileEditor('base: &b\n  a: 1\ncopy: *b\n', 'f.yaml');
    expect(editor.lookup(['copy'])).toMatchObject({ exists: true, value: { a: 1 }, kind: 'map' });
    expect(() => editor.set(['copy'], 'x')).toThrow('f.yaml:3:1: copy holds a map; the new value is a scalar (pass --force to change its kind)');
    editor.set(['copy'], { a: 2 });
    expect(editor.text).toBe('base: &b\n  a: 1\ncopy: {a: 2}\n');
  });

  it('keeps an anchor when its block is replaced, and refuses to remove a node aliases still use', () => {
    const editor = new YamlFileEditor('base: &b\n  a: 1\ncopy: *b\n', 'f.yaml');
    expect(() => editor.unset(['base'])).toThrow(
      'f.yaml:2:3: base carries the anchor &b, used by *b at line 3; removing it would break them (edit those first)',
    );
    editor.set(['base'], 'x', { force: true });
    expect(editor.text).toBe('base: &b x\ncopy: *b\n');
  });

  it('adds a key after a block scalar that keeps its trailing blank lines', () => {
    const editor = new YamlFileEditor('conf:\n  motd: |+\n    hello\n\n', 'f.yaml');
    editor.set(['conf', 'banner'], 'x');
    expect(editor.text).toBe('conf:\n  motd: |+\n    hello\n\n  banner: x\n');
    expect(new YamlFileEditor(editor.text, 'f.yaml').lookup(['conf', 'motd']).value).toBe('hello\n\n');
  });
});
