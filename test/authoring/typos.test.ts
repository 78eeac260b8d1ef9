/**
 * Issue 13 item 2: every name that refers to something else is checked where
 * it is written — `flotilla build` refuses the typo at the faulty field's own
 * line, with the nearest existing name.
 */
import { describe, expect, it } from 'vitest';
import { baseApp, tempDir, writeApp } from '../support/app-fixture.js';
import { failure, flotilla } from '../support/cli.js';

async function buildError(changes: Record<string, string | null>): Promise<string> {
  const e = await failure('build', writeApp(changes), '-d', tempDir());
  expect(e.code).toBe(1);
  expect(e.stderr).not.toMatch(/\n\s+at /); // never a stack trace
  return e.stderr;
}

const deployment = baseApp()['overrides/deployment.yaml'] as string;

describe('typos are build errors with the nearest name', () => {
  it('features.services entries', async () => {
    const stderr = await buildError({ 'overrides/deployment.yaml': deployment.replace('services: [frontend]', 'services: [frontend, databse]') });
    expect(stderr).toContain('overrides/deployment.yaml:7:24: error: features.services: no service "databse"; did you mean "database"?');
  });

  it('common.groups.<group>', async () => {
    const stderr = await buildError({ 'overrides/deployment.yaml': deployment.replace('    apps:\n', '    aps:\n') });
    expect(stderr).toContain('overrides/deployment.yaml:14:5: error: common.groups: no group "aps"; did you mean "apps"?');
  });

  it('a name near nothing is a warning at its line, not an error: it applies to nothing', async () => {
    const { stderr } = await flotilla('build', writeApp({ 'overrides/deployment.yaml': deployment.replace('    apps:\n', '    storage:\n') }), '-d', tempDir());
    expect(stderr).toContain('overrides/deployment.yaml:14:5: warning: common.groups: no group "storage" (groups: apps, infra); it applies to nothing');
  });

  it('release fields (depends_on) and dependsOn entries', async () => {
    const releases = baseApp()['fluxcd/releases.yaml'] as string;
    const field = await buildError({ 'fluxcd/releases.yaml': releases.replace('dependsOn: [db]', 'depends_on: [db]') });
    expect(field).toContain('fluxcd/releases.yaml:14:5: error: unknown key "depends_on"; did you mean "dependsOn"?');
    const entry = await buildError({ 'fluxcd/releases.yaml': releases.replace('dependsOn: [db]', 'dependsOn:\n      - bd') });
    expect(entry).toContain('fluxcd/releases.yaml:15:9: error: release "web" dependsOn: no release "bd"; did you mean "db"?');
  });

  it('chart names: a release whose Chart.yaml says otherwise', async () => {
    const stderr = await buildError({ 'charts/web/Chart.yaml': 'apiVersion: v2\nname: webapp\nversion: 0.1.0\n' });
    expect(stderr).toContain('fluxcd/releases.yaml:11:5: error: release "web" names chart "web", but charts/web/Chart.yaml says "webapp"');
  });

  it('images.yaml chart keys', async () => {
    const stderr = await buildError({ 'overrides/versions/images.yaml': 'web:\n  wbe: images.tags.web\ndb:\n  db: images.tags.db\n' });
    expect(stderr).toContain('overrides/versions/images.yaml:2:3: error: image field web: no chart "wbe"; did you mean "web"?');
  });

  it('files under overrides/static and overrides/templates matching no chart', async () => {
    const stderr = await buildError({ 'overrides/static/wbe.yaml': 'a: 1\n', 'overrides/templates/dbb.yaml.hbs': 'a: 1\n' });
    expect(stderr).toContain('overrides/static/wbe.yaml:1:1: error: no chart "wbe"; did you mean "web"?');
    expect(stderr).toContain('overrides/templates/dbb.yaml.hbs:1:1: error: no chart "dbb"; did you mean "db"?');
  });

  it('disabled_charts entries: a warning with the nearest chart, however near (sysinv accepts any name)', async () => {
    const metadata = `${baseApp()['fluxcd/metadata.yaml'] as string}disabled_charts:\n  - wbe\n  - keystone-api-proxy\n`;
    const { stderr } = await flotilla('build', writeApp({ 'fluxcd/metadata.yaml': metadata }), '-d', tempDir());
    expect(stderr).toContain('fluxcd/metadata.yaml:7:5: warning: disabled_charts: no chart "wbe"; did you mean "web"?');
    expect(stderr).toContain('it disables nothing here (StarlingX accepts it too)');
    expect(stderr).toContain('fluxcd/metadata.yaml:8:5: warning: disabled_charts: no chart "keystone-api-proxy"');
  });
});
