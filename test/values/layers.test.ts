import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadApp } from '../../src/app/index.js';
import { fromPlain } from '../../src/yaml/index.js';
import { computeReleaseValues, explain, TemplateError } from '../../src/values/index.js';
import { writeApp } from '../support/app-fixture.js';

async function webValues(changes = {}) {
  const app = await loadApp(writeApp(changes));
  return { app, values: await computeReleaseValues(app, app.graph.byName.get('web')!) };
}

const origins = (values: Awaited<ReturnType<typeof computeReleaseValues>>, all = false) =>
  Object.fromEntries(explain(values, { all }).map((l) => [l.path.join('.'), `${l.origin.layer} ${l.origin.location.file}:${l.origin.location.line}`]));

describe('values layering of one release', () => {
  it('records the layer and file:line of every leaf, for each kind of layer', async () => {
    const { values } = await webValues({
      'overrides/deployment.yaml': `main:
  release: "2.0"
  preset: standard
  size: small
  domain: example.org
  customImages:
    web: registry.example.org/web:hotfix-1
features:
  services: [frontend]
  policies: strict
common:
  charts:
    values:
      labels:
        team: platform
  groups:
    apps:
      values:
        pod:
          replicas: 2
services:
  frontend:
    web:
      values:
        conf:
          banner: from-service
`,
      'policies/strict/web.yaml': `conf:\n  policy:\n    admin_required: "role:admin"\n`,
    });
    const all = origins(values, true);
    expect(all['images.tags.web']).toBe('main.customImages overrides/deployment.yaml:7');
    expect(all['images.tags.db']).toBeUndefined();
    expect(all['conf.greeting']).toBe('static overrides/static/web.yaml:4');
    expect(all['conf.host']).toBe('template overrides/templates/web.yaml.hbs:2');
    expect(all['conf.mode']).toBe('template overrides/templates/web.yaml.hbs:4');
    expect(all['conf.release']).toBe('template overrides/templates/web.yaml.hbs:8');
    expect(all['conf.policy.admin_required']).toBe('policy strict policies/strict/web.yaml:3');
    expect(all['labels.team']).toBe('common.charts overrides/deployment.yaml:15');
    expect(all['labels.tier']).toBe('common.charts overrides/presets/standard.yaml:7');
    expect(all['pod.replicas']).toBe('common.groups.apps overrides/deployment.yaml:20');
    expect(all['resources.cpu']).toBe('services.frontend.web overrides/sizes/small.yaml:6');
    expect(all['conf.banner']).toBe('services.frontend.web overrides/deployment.yaml:26');
    expect(all['list.0']).toBe('static overrides/static/web.yaml:6');
    // layer 0 is the chart's own values.yaml
    expect(values.layers[0]?.kind).toBe('chart');
    const chartOnly = explain(values, { all: true }).find((l) => l.path.join('.') === 'images.tags.web');
    expect(chartOnly?.value).toBe('registry.example.org/web:hotfix-1');
  });

  it('puts layer 1 in the static overrides and only layers 2-8 in the system overrides', async () => {
    const { values } = await webValues();
    expect(values.staticOverrides).toEqual({ conf: { banner: 'from-static', greeting: 'hello' }, list: ['a', 'b'] });
    expect(values.systemOverrides).toEqual({
      conf: { host: 'web.example.org', mode: 'modern', release: '2.0', banner: 'from-service' },
      images: { tags: { web: 'docker.io/library/nginx:1.27' } },
      labels: { team: 'platform', tier: 'standard' },
      pod: { replicas: 2 },
      resources: { cpu: '100m' },
    });
    expect(Object.keys(origins(values))).not.toContain('conf.greeting');
  });

  it('takes images and serviceDefaults from the target release', async () => {
    const { values } = await webValues({ 'overrides/deployment.yaml': `main:\n  release: "1.0"\n  domain: example.org\nfeatures:\n  services: [frontend]\n` });
    expect(values.systemOverrides).toMatchObject({ conf: { mode: 'classic', release: '1.0' }, images: { tags: { web: 'docker.io/library/nginx:1.24' } } });
    expect(origins(values)['images.tags.web']).toBe('images 1.0 overrides/versions/1.0.yaml:3');
  });

  it('ships a whole list in the system overrides when a higher layer edits it', async () => {
    const { values } = await webValues({ 'overrides/sizes/small.yaml': `services:\n  frontend:\n    web:\n      values:\n        list: !append [c]\n` });
    expect(values.systemOverrides).toMatchObject({ list: ['a', 'b', 'c'] });
    const o = origins(values);
    expect(o['list.0']).toBe('static overrides/static/web.yaml:6');
    expect(o['list.2']).toBe('services.frontend.web overrides/sizes/small.yaml:5');
  });

  it('accepts plugin and user layers through providers, above the spec and at the top', async () => {
    const app = await loadApp(writeApp());
    const values = await computeReleaseValues(app, app.graph.byName.get('web')!, {
      plugin: async (r) =>
        fromPlain({ conf: { banner: 'from-plugin', plugin: r.chart } }, { layer: 'plugin web', location: { file: 'plugins/web.ts', line: 0, column: 0 } }),
      user: async () => fromPlain({ pod: { replicas: 5 } }, { layer: 'user', location: { file: 'cluster:user-overrides/web', line: 0, column: 0 } }),
    });
    const o = origins(values);
    expect(o['conf.plugin']).toBe('plugin web plugins/web.ts:0');
    expect(o['conf.banner']).toMatch(/^services\.frontend\.web/); // layer 7 beats layer 5
    expect(values.systemOverrides).toMatchObject({ pod: { replicas: 5 } });
  });

  it('puts every one of layers 2-8 into the system overrides Secret, whatever label a provider gives its values', async () => {
    const app = await loadApp(
      writeApp({
        'overrides/deployment.yaml': `main:\n  release: "2.0"\n  preset: standard\n  size: small\n  domain: example.org\n  customImages:\n    db: registry.example.org/db:1\nfeatures:\n  services: [frontend]\n  policies: strict\ncommon:\n  charts:\n    values:\n      labels:\n        team: platform\n  groups:\n    apps:\n      values:\n        pod:\n          replicas: 2\nservices:\n  frontend:\n    web:\n      values:\n        conf:\n          banner: from-service\n`,
        'overrides/versions/images.yaml': `web:\n  web: images.tags.web\ndb:\n  web: images.tags.sidecar\n`,
        'policies/strict/web.yaml': `conf:\n  policy:\n    admin_required: "role:admin"\n`,
      }),
    );
    const web = app.graph.byName.get('web')!;
    const at = (file: string) => ({ file, line: 1, column: 1 });
    const values = await computeReleaseValues(app, web, {
      plugin: async () => fromPlain({ conf: { fromPlugin: true } }, { layer: 'keystone-plugin', location: at('plugins/web.ts') }),
      user: async () => fromPlain({ pod: { replicas: 7 }, conf: { fromUser: 'yes' } }, { layer: 'user overrides (cluster)', location: at('cluster:web') }),
    });
    const kinds = new Map(values.layers.filter((l) => l.root).map((l) => [l.kind, l.label]));
    expect([...kinds.keys()]).toEqual(['chart', 'static', 'template', 'images', 'custom-images', 'policy', 'plugin', 'common', 'group', 'service', 'user']);
    const content = values.systemOverrides as Record<string, Record<string, unknown>>;
    expect(content.conf).toMatchObject({
      host: 'web.example.org',
      policy: { admin_required: 'role:admin' },
      fromPlugin: true,
      banner: 'from-service',
      fromUser: 'yes',
    }); // 2, 4, 5, 7, 8
    expect(content.images).toEqual({ tags: { web: 'docker.io/library/nginx:1.27', sidecar: 'registry.example.org/db:1' } }); // 3, custom images
    expect(content.labels).toEqual({ team: 'platform', tier: 'standard' }); // 6 (common.charts)
    expect(content.pod).toEqual({ replicas: 7 }); // 6 (group), then 8 on top
    expect(content.conf).not.toHaveProperty('greeting'); // layer 1 stays in the static overrides
  });

  it('lets the higher layer win a kind clash, with a warning naming both places (an error only when values are strict)', async () => {
    // between spec layers (size below the deployment file): a warning of the app
    const small = `services:\n  frontend:\n    web:\n      values:\n        conf: off\n`;
    const { app } = await webValues({ 'overrides/sizes/small.yaml': small });
    expect(app.warnings.map((w) => w.message)).toContain(
      'type clash at services.frontend.web.values.conf: size small (overrides/sizes/small.yaml:5:9) sets a boolean, but deployment (overrides/deployment.yaml:22:9) sets a map; the higher layer wins, as in Helm',
    );
    expect(app.spec.services.frontend?.web?.values).toMatchObject({ conf: { banner: 'from-service' } });
    // between values layers (static below the common layer): the release's clashes, the map wins
    const { values } = await webValues({ 'overrides/presets/standard.yaml': `common:\n  charts:\n    values:\n      list:\n        x: 1\n` });
    expect(
      values.clashes.map(
        (c) =>
          `${c.path.join('.')}: ${c.lowerKind} at ${c.lower.location.file}:${c.lower.location.line} under ${c.upperKind} at ${c.upper.location.file}:${c.upper.location.line}`,
      ),
    ).toEqual([
      'list: a list at overrides/static/web.yaml:5 under a map at overrides/presets/standard.yaml:4',
      'list: a list at charts/web/values.yaml:9 under a map at overrides/presets/standard.yaml:4',
    ]);
    expect(values.clashes.map((c) => c.helm)).toEqual([undefined, 'skipped']);
    expect(explain(values, { all: true }).find((l) => l.path.join('.') === 'list.x')?.value).toBe(1);
    // strictValues in the release table makes the spec's clash an error
    const releases = readFileSync(join(writeApp({}), 'fluxcd/releases.yaml'), 'utf8');
    await expect(webValues({ 'overrides/sizes/small.yaml': small, 'fluxcd/releases.yaml': `strictValues: true\n${releases}` })).rejects.toThrow(
      /error: type clash at services\.frontend\.web\.values\.conf/,
    );
  });
});

describe('values templates', () => {
  it('fails on a missing variable naming the template file and line (strict mode)', async () => {
    const template = `conf:\n  host: web.{{main.domain}}\n  port: {{features.web.port}}\n`;
    const error = await webValues({ 'overrides/templates/web.yaml.hbs': template }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemplateError);
    expect((error as Error).message).toMatch(
      /^overrides\/templates\/web\.yaml\.hbs:3:\d+: "features\.web" is not set \(templates are strict\); read an optional value with \(lookup features "web"\)/,
    );
  });

  it('reads optional fields with lookup', async () => {
    const template = `conf:\n{{#if (lookup features "web")}}\n  port: 1\n{{else}}\n  port: 2\n{{/if}}\n`;
    const { values } = await webValues({ 'overrides/templates/web.yaml.hbs': template });
    expect(values.systemOverrides).toMatchObject({ conf: { port: 2 } });
    expect(origins(values)['conf.port']).toBe('template overrides/templates/web.yaml.hbs:5');
  });

  it('maps values from loops and multi-line output back to their template lines', async () => {
    const template = `conf:\n  items:\n{{#each features.services}}\n    - name: {{this}}\n      index: {{@index}}\n{{/each}}\n  blob: {{{json spec.main}}}\n`;
    const { values } = await webValues({ 'overrides/templates/web.yaml.hbs': template });
    const o = origins(values);
    expect(o['conf.items.0.name']).toBe('template overrides/templates/web.yaml.hbs:4');
    expect(o['conf.items.0.index']).toBe('template overrides/templates/web.yaml.hbs:5');
    expect(o['conf.blob.domain']).toBe('template overrides/templates/web.yaml.hbs:7');
  });

  it('reports template syntax errors and invalid rendered YAML at the template line', async () => {
    await expect(webValues({ 'overrides/templates/web.yaml.hbs': 'conf:\n  a: {{#if x}}\n' })).rejects.toThrow(
      'web.yaml.hbs:3:1: template syntax error: the template ends inside a block: a {{#…}} has no {{/…}}',
    );
    await expect(webValues({ 'overrides/templates/web.yaml.hbs': 'conf:\n  a: 1\n\n  b: [{{main.domain}}\n' })).rejects.toThrow(
      /web\.yaml\.hbs:4:\d+: .*in the rendered output/,
    );
  });
});
