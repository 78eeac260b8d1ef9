import { describe, expect, it } from 'vitest';
import { AppLoadError, buildReleaseGraph, DependencyCycleError, loadApp, readStxBool, UnknownDependencyError, type Release } from '../../src/app/index.js';
import { writeApp } from '../support/app-fixture.js';

const loadError = async (changes: Record<string, string | null>) => {
  const error = await loadApp(writeApp(changes)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(Error);
  return (error as Error).message;
};

describe('loading an app', () => {
  it('loads the release table, the merged spec and the target release', async () => {
    const app = await loadApp(writeApp());
    expect(app.releases.map((r) => [r.name, r.releaseName, r.namespace, r.timeout])).toEqual([
      ['db', 'demo-db', 'demo', '10m'],
      ['web', 'demo-web', 'demo', '10m'],
    ]);
    expect(app.target.release).toBe('2.0');
    expect(app.spec.common.charts?.values).toEqual({ labels: { tier: 'standard', team: 'platform' } });
    // web is listed; db comes in through dependsOn
    expect(app.enabled.map((r) => r.name)).toEqual(['db', 'web']);
    expect(app.metadata.maintainUserOverrides).toBe(true);
  });

  it('reports metadata schema errors with file, line, column and path, all at once', async () => {
    const message = await loadError({
      'fluxcd/metadata.yaml': `app_name: Demo_App\napp_version: ""\nsupported_k8s_version:\n  minimum: "1.x"\nmaintain_user_overrides: perhaps\nupgrades:\n  from_versions: ["1.0-[", "1\\\\.0-.*"]\nclass: fancy\n`,
    });
    expect(message).toContain(
      'fluxcd/metadata.yaml:1:1: error: expected a lower-case name of letters, digits and dashes, at most 63 long (it labels every object of the app), got "Demo_App" (at app_name)',
    );
    expect(message).toContain('fluxcd/metadata.yaml:2:1: error: expected a non-empty string');
    expect(message).toContain(
      'fluxcd/metadata.yaml:4:3: error: expected a Kubernetes version major.minor[.patch], e.g. v1.29.2, got "1.x" (at supported_k8s_version.minimum)',
    );
    expect(message).toContain('fluxcd/metadata.yaml:5:1: error: expected a boolean (true/false, yes/no, y/n, 1/0), got "perhaps" (at maintain_user_overrides)');
    expect(message).toContain('fluxcd/metadata.yaml:7:19: error: expected a valid regular expression, got "1.0-[" (at upgrades.from_versions[0])');
    expect(message).toContain(
      'fluxcd/metadata.yaml:8:1: error: expected one of "critical", "storage", "discovery", "optional", "reporting", got "fancy" (at class)',
    );
    expect(message).not.toContain('1\\\\.0-');
  });

  it('reads booleans as StarlingX does and warns about unknown keys with the nearest known one', async () => {
    expect(['yes', 'Y', 'true', '1', 1, true].map(readStxBool)).toEqual([true, true, true, true, true, true]);
    expect(['no', 'N', 'False', '0', 0, false].map(readStxBool)).toEqual([false, false, false, false, false, false]);
    expect(readStxBool('maybe')).toBeUndefined();
    const app = await loadApp(
      writeApp({
        'fluxcd/metadata.yaml': `app_name: demo\napp_version: "1"\nsupported_k8s_version: {minimum: v1.29, maximum: "1.31.2"}\nupgrades:\n  from_version: ["0\\\\..*"]\n  auto_update: Y\nmaintain_user_overides: n\n`,
      }),
    );
    const warnings = app.warnings.map((w) => `${w.location?.file}:${w.location?.line}: ${w.message}`);
    expect(warnings).toContain('fluxcd/metadata.yaml:5: unknown metadata key "from_version" is ignored; did you mean "from_versions"?');
    expect(warnings).toContain('fluxcd/metadata.yaml:7: unknown metadata key "maintain_user_overides" is ignored; did you mean "maintain_user_overrides"?');
    expect(app.metadata.upgrades.autoUpdate).toBe(true);
  });

  it('checks the Kubernetes version range', async () => {
    const message = await loadError({
      'fluxcd/metadata.yaml': `app_name: demo\napp_version: "1"\nsupported_k8s_version: {minimum: v1.30.0, maximum: v1.29}\n`,
    });
    expect(message).toMatch(/metadata\.yaml:3:\d+: error: supported_k8s_version\.minimum v1\.30\.0 is above maximum v1\.29/);
  });

  it('reports release table problems: schema, missing chart, long releaseName, duplicates', async () => {
    const message = await loadError({
      'fluxcd/releases.yaml': `releases:
  - name: db
    chart: db
    timeout: 10 minutes
  - name: web
    chart: nochart
    releaseName: ${'x'.repeat(60)}
  - name: db
    chart: db
    installl: {}
`,
    });
    expect(message).toContain('fluxcd/releases.yaml:4:5: error: expected a Flux duration such as 30m, 1h or 90s, got "10 minutes" (at releases[0].timeout)');
    expect(message).toContain('fluxcd/releases.yaml:7:5: error: expected a Helm release name of at most 53 characters');
    expect(message).toContain('fluxcd/releases.yaml:10:5: error: unknown key "installl"; did you mean "install"? (at releases[2].installl)');
  });

  it('refuses an app name or a namespace longer than the 63 characters Kubernetes takes in a label value or a namespace', async () => {
    const long = 'n'.repeat(64);
    const metadata = (name: string) => ({ 'fluxcd/metadata.yaml': `app_name: ${name}\napp_version: "1"\nsupported_k8s_version:\n  minimum: v1.29.0\n` });
    expect(await loadError(metadata(long))).toContain(
      'fluxcd/metadata.yaml:1:1: error: expected a lower-case name of letters, digits and dashes, at most 63 long (it labels every object of the app) (must NOT have more than 63 characters) (at app_name)',
    );
    expect((await loadApp(writeApp(metadata(long.slice(1))))).metadata.appName).toBe(long.slice(1));
    const message = await loadError({
      'fluxcd/releases.yaml': `defaults:\n  namespace: ${long}\nreleases:\n  - {name: db, chart: db, namespace: ${long}}\n  - {name: web, chart: web, dependsOn: [{name: db, namespace: ${long}}]}\n`,
    });
    expect(message).toContain(
      'fluxcd/releases.yaml:2:3: error: expected a namespace name (DNS-1123 label, at most 63 long) (must NOT have more than 63 characters) (at defaults.namespace)',
    );
    expect(message).toMatch(
      /fluxcd\/releases\.yaml:4:\d+: error: expected a namespace name \(DNS-1123 label, at most 63 long\) \(must NOT have more than 63 characters\) \(at releases\[0\]\.namespace\)/,
    );
    expect(message).toContain(
      `fluxcd/releases.yaml:5:41: error: expected a release name, or {name, namespace} of a HelmRelease outside the app, got {"name":"db","namespace":"${long}"} (at releases[1].dependsOn[0])`,
    );
  });

  it('refuses labels the API server refuses: keys and values past 63 characters or outside its characters, a group (its chart_group label) likewise, annotation keys as label keys', async () => {
    const message = await loadError({
      'fluxcd/releases.yaml': `releases:
  - name: db
    chart: db
    group: infra tier
    labels:
      fine: "yes"
      example.com/also-fine: ""
      long: ${'v'.repeat(64)}
      spaced: has space
      ${'k'.repeat(64)}: x
      bad prefix/x: z
  - name: web
    chart: web
    labels: {ok: ${'v'.repeat(63)}, example.com/k_1.x: -starts-with-dash}
    annotations: {any text: "is fine as a value, not as a key", example.com/note: "free text: yes"}
`,
    });
    expect(message).toContain(
      'fluxcd/releases.yaml:4:5: error: expected a label value: at most 63 letters, digits, -, _ or ., a letter or digit at each end, got "infra tier" (at releases[0].group)',
    );
    expect(message).toMatch(/releases\.yaml:8:\d+: error: expected a label value: .*, got "v{64}" \(at releases\[0\]\.labels\.long\)/);
    expect(message).toMatch(/releases\.yaml:9:\d+: error: expected a label value: .*, got "has space" \(at releases\[0\]\.labels\.spaced\)/);
    expect(message).toMatch(
      /releases\.yaml:10:7: error: key "k{64}" is not allowed here: expected a label key: \[prefix\/\]name, the name at most 63 letters, digits, -, _ or \. \(at releases\[0\]\.labels\.k{64}\)/,
    );
    expect(message).toContain('fluxcd/releases.yaml:11:7: error: key "bad prefix/x" is not allowed here: expected a label key');
    expect(message).toContain(
      'fluxcd/releases.yaml:14:83: error: expected a label value: at most 63 letters, digits, -, _ or ., a letter or digit at each end, got "-starts-with-dash" (at releases[1].labels["example.com/k_1.x"])',
    );
    // One line a fault: nothing about the labels that are fine, nor the map around a refused key.
    expect(message).toContain('fluxcd/releases.yaml:15:19: error: key "any text" is not allowed here: expected a label key');
    expect(message.split('\n').filter((line) => line.includes('error:'))).toHaveLength(7);
  });

  it('finds releases whose chart is missing and release names too long after the prefix', async () => {
    const message = await loadError({
      'fluxcd/releases.yaml': `defaults:\n  releaseNamePrefix: ${'p'.repeat(50)}-\nreleases:\n  - name: db\n    chart: db\n  - name: web\n    chart: nochart\n`,
    });
    // 50 + "-db" is exactly 53 and fine; "-web" is one too many
    expect(message).not.toContain('-db" is');
    expect(message).toMatch(/releases\.yaml:6:5: error: releaseName "p+-web" is 54 characters; Helm allows at most 53/);
    expect(message).toMatch(/releases\.yaml:6:5: error: release "web": no chart at charts\/nochart/);
  });

  it('prints a dependency cycle, and names an unknown dependency', async () => {
    const cyc = await loadError({
      'fluxcd/releases.yaml': `releases:\n  - {name: db, chart: db, dependsOn: [web]}\n  - {name: web, chart: web, dependsOn: [db]}\n`,
    });
    expect(cyc).toContain('dependency cycle between releases: db → web → db');
    const unknown = await loadError({ 'fluxcd/releases.yaml': `releases:\n  - {name: db, chart: db}\n  - {name: web, chart: web, dependsOn: [cache]}\n` });
    expect(unknown).toContain('fluxcd/releases.yaml:3:41: error: release "web" dependsOn: no release "cache" (releases: db, web)');
  });

  it('reports spec errors: bad sections, unquoted release, unknown preset, services typos, features schema', async () => {
    const message = await loadError({
      'overrides/deployment.yaml': `main:\n  release: 2.0\n  preset: huge\nfeatures:\n  services: [frontend]\ncommon:\n  chart: {}\n`,
    });
    expect(message).toContain('overrides/deployment.yaml:2:3: error: expected a quoted release name such as "2025.1"');
    expect(message).toContain('overrides/deployment.yaml:7:3: error: unknown key "chart"; did you mean "charts"? (at common.chart)');

    const preset = await loadError({ 'overrides/deployment.yaml': `main:\n  release: "2.0"\n  preset: huge\n` });
    expect(preset).toContain('overrides/deployment.yaml:3:3: error: preset "huge" not found (overrides/presets/huge.yaml); available: standard');

    const typo = await loadError({
      'overrides/deployment.yaml': `main:\n  release: "2.0"\nservices:\n  frontend:\n    webb:\n      values: {}\n  backend:\n    db: {}\n`,
    });
    expect(typo).toContain('overrides/deployment.yaml:5:5: error: service "frontend": no chart "webb"; did you mean "web"? (charts: web)');
    expect(typo).toContain('overrides/deployment.yaml:7:3: error: services: no service "backend" (services: database, frontend)');

    const schema = JSON.stringify({
      type: 'object',
      properties: { services: { type: 'array', items: { enum: ['frontend', 'database'] } } },
      additionalProperties: false,
    });
    const features = await loadError({
      'overrides/features.schema.json': schema,
      'overrides/sizes/small.yaml': `features:\n  extra: 1\n`,
      'overrides/deployment.yaml': `main:\n  release: "2.0"\n  size: small\nfeatures:\n  services: [frontend, cache]\n`,
    });
    // each error points at the file that set the value, whichever spec layer it is
    expect(features).toContain('overrides/sizes/small.yaml:2:3: error: unknown key "extra" (at features.extra)');
    expect(features).toMatch(/overrides\/deployment\.yaml:5:\d+: error: expected one of "frontend", "database", got "cache" \(at features\.services\[1\]\)/);
  });

  it('refuses an unknown target release listing the available ones, and unpinned images', async () => {
    expect(await loadError({ 'overrides/deployment.yaml': `main:\n  release: "3.0"\n` })).toBe(
      'overrides/deployment.yaml:2:3: release "3.0" is not in the version catalog (overrides/versions/); available: 1.0, 2.0; or create overrides/versions/3.0.yaml (release: "3.0", its images and serviceDefaults)',
    );
    const images = await loadError({
      'overrides/versions/1.0.yaml': `release: "1.0"\nimages:\n  web: docker.io/library/nginx:latest\n  db: docker.io/library/mariadb\n`,
    });
    expect(images).toContain('overrides/versions/1.0.yaml:3:3: error: image web: uses the floating tag "latest"; pin every image');
    expect(images).toContain('overrides/versions/1.0.yaml:4:3: error: image db: has no tag or digest; pin every image');
    const nowhere = await loadError({ 'overrides/versions/1.0.yaml': `release: "1.0"\nimages:\n  web: docker.io/library/nginx:1\n  extra: x/y:1\n` });
    expect(nowhere).toContain(
      'overrides/versions/1.0.yaml:4:3: error: image field extra of release 1.0 lands nowhere: add it to overrides/versions/images.yaml',
    );
  });

  it('refuses a custom image for a field no chart takes, or one not pinned, at its line', async () => {
    const message = await loadError({
      'overrides/deployment.yaml': `main:\n  release: "2.0"\n  customImages:\n    wbe: registry.example.org/web:1\n    db: registry.example.org/db:latest\n    web: registry.example.org/web:2\n`,
    });
    expect(message).toContain(
      'overrides/deployment.yaml:4:5: error: custom image wbe: is not an image field of the catalog (fields: overrides/versions/images.yaml) (at main.customImages.wbe)',
    );
    expect(message).toContain(
      'overrides/deployment.yaml:5:5: error: custom image db: uses the floating tag "latest"; pin every image (at main.customImages.db)',
    );
    expect(message).not.toContain('customImages.web');
  });

  it("resolves images once: the target release's, custom ones on top", async () => {
    const app = await loadApp(
      writeApp({
        'overrides/deployment.yaml': `main:\n  release: "2.0"\n  customImages:\n    web: registry.example.org/web:2\nfeatures:\n  services: [frontend]\n`,
      }),
    );
    expect([...app.images].map(([field, image]) => [field, image.reference, image.source, image.location.line])).toEqual([
      ['web', 'registry.example.org/web:2', 'custom', 4],
      ['db', 'docker.io/library/mariadb:11.4', 'release', 4],
    ]);
  });

  it('refuses a policy set that does not exist, at the spec line that names it; "none" selects none', async () => {
    const spec = (set: string) => `main:\n  release: "2.0"\n  domain: example.org\nfeatures:\n  services: [frontend]\n  policies: ${set}\n`;
    expect(await loadError({ 'overrides/deployment.yaml': spec('nosuch'), 'policies/strict/web.yaml': 'conf: {}\n' })).toContain(
      'overrides/deployment.yaml:6:3: error: policy set "nosuch" not found: policies/nosuch/ does not exist; available: strict (at features.policies)',
    );
    expect((await loadApp(writeApp({ 'overrides/deployment.yaml': spec('none') }))).policySet).toBeUndefined();
    expect((await loadApp(writeApp({ 'overrides/deployment.yaml': spec('strict'), 'policies/strict/web.yaml': 'conf: {}\n' }))).policySet).toBe('strict');
  });

  it('refuses a disabled chart that an enabled release needs', async () => {
    const message = await loadError({
      'fluxcd/metadata.yaml': `app_name: demo\napp_version: "1"\nsupported_k8s_version: {minimum: v1.29}\ndisabled_charts: [db]\n`,
    });
    expect(message).toContain('chart "db" is in metadata disabled_charts, but enabled release(s) web depend on release "db"');
  });

  it('is an AppLoadError carrying every diagnostic', async () => {
    const error = await loadApp(writeApp({ 'fluxcd/metadata.yaml': `app_version: 1\nsupported_k8s_version: {}\n` })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppLoadError);
    expect((error as AppLoadError).diagnostics.map((d) => d.message)).toEqual(['missing required key "app_name"', 'missing required key "minimum"']);
  });
});

describe('release graph', () => {
  const release = (name: string, dependsOn: string[] = []): Release => ({
    name,
    chart: name,
    chartPath: `charts/${name}`,
    namespace: 'ns',
    releaseName: name,
    dependsOn,
    dependencies: dependsOn.map((dep) => ({ name: dep, namespace: 'ns', external: false })),
    timeout: '5m',
    install: { disableHooks: false, disableWait: false },
    upgrade: { disableHooks: false, disableWait: false },
    labels: {},
    annotations: {},
    interval: '1m',
    helmReleaseSpec: {},
    kustomization: {},
    staticOverrides: `overrides/static/${name}.yaml`,
    location: { file: 'fluxcd/releases.yaml', line: 1, column: 1 },
  });

  it('groups releases into waves that depend only on earlier waves', () => {
    const graph = buildReleaseGraph([
      release('nova', ['placement', 'glance']),
      release('glance', ['keystone']),
      release('keystone', ['mariadb']),
      release('mariadb'),
      release('placement', ['keystone']),
      release('horizon', ['keystone']),
    ]);
    expect(graph.waves.map((w) => w.map((r) => r.name))).toEqual([['mariadb'], ['keystone'], ['glance', 'placement', 'horizon'], ['nova']]);
    expect([...graph.dependenciesOf(['nova'])].sort()).toEqual(['glance', 'keystone', 'mariadb', 'placement']);
    expect([...graph.dependenciesOf(['horizon', 'glance'])].sort()).toEqual(['keystone', 'mariadb']);
    expect([...graph.dependentsOf('keystone')].sort()).toEqual(['glance', 'horizon', 'nova', 'placement']);
    expect([...graph.dependentsOf('nova')]).toEqual([]);
  });

  it('takes a dependency chain of any length: no recursion, no closure kept per release', () => {
    // 100,000 releases one after another: recursion overflowed the stack, and a closure kept per release held 5·10⁹ names.
    // Listed last first, so that walking the first release's dependencies runs the whole chain down.
    const n = 100_000;
    const chain = Array.from({ length: n }, (_, i) => release(`r${n - 1 - i}`, i === n - 1 ? [] : [`r${n - 2 - i}`]));
    const graph = buildReleaseGraph(chain);
    expect(graph.waves).toHaveLength(n);
    expect(graph.waves[n - 1]!.map((r) => r.name)).toEqual([`r${n - 1}`]);
    expect(graph.dependenciesOf([`r${n - 1}`]).size).toBe(n - 1);
    expect(graph.dependentsOf('r0').size).toBe(n - 1);
    chain[n - 1] = release('r0', [`r${n - 1}`]);
    expect(() => buildReleaseGraph(chain)).toThrow(DependencyCycleError);
  });

  it('prints the cycle, however long', () => {
    expect(() => buildReleaseGraph([release('a', ['b']), release('b', ['c']), release('c', ['a']), release('d')])).toThrow(DependencyCycleError);
    expect(() => buildReleaseGraph([release('a', ['b']), release('b', ['c']), release('c', ['a'])])).toThrow('a → b → c → a');
    expect(() => buildReleaseGraph([release('a', ['a'])])).toThrow('a → a');
    expect(() => buildReleaseGraph([release('a', ['zz'])])).toThrow(UnknownDependencyError);
  });
});

describe('release table defaults', () => {
  it("merge as values layers do: maps deeply, a release's own list replaces the default (no concatenation)", async () => {
    const releases = `defaults:
  namespace: demo
  labels: {team: platform}
  helmReleaseSpec:
    postRenderers:
      - kustomize: {patches: [{patch: from-defaults}]}
releases:
  - name: db
    chart: db
    service: database
    group: infra
    labels: {tier: data}
  - name: web
    chart: web
    service: frontend
    group: apps
    dependsOn: [db]
    helmReleaseSpec:
      postRenderers:
        - kustomize: {patches: [{patch: from-release}]}
`;
    const app = await loadApp(writeApp({ 'fluxcd/releases.yaml': releases }));
    const web = app.graph.byName.get('web')!;
    const db = app.graph.byName.get('db')!;
    expect(web.helmReleaseSpec.postRenderers).toEqual([{ kustomize: { patches: [{ patch: 'from-release' }] } }]);
    expect(db.helmReleaseSpec.postRenderers).toEqual([{ kustomize: { patches: [{ patch: 'from-defaults' }] } }]);
    expect(db.labels).toEqual({ team: 'platform', tier: 'data' });
  });
});
