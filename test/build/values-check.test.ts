import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadApp } from '../../src/app/index.js';
import { buildApp } from '../../src/build/index.js';
import { releaseCheckKeys, type ValuesInputs } from '../../src/build/values-check.js';
import { Session } from '../../src/session/index.js';
import { baseApp, tempDir, writeApp } from '../support/app-fixture.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** The app's files as the build hands them to the check: by path, chart files as `<chartPath>/<file>`. */
function inputsOf(files: Record<string, string | null>): ValuesInputs {
  return new Map(Object.entries(files).filter((e): e is [string, string] => e[1] !== null));
}

describe('the build-time values check, per release', () => {
  const app = writeApp();

  async function keysAfter(changes: Record<string, string | null>): Promise<Map<string, string>> {
    const loaded = await loadApp(app);
    const keys = releaseCheckKeys(loaded.releases, loaded.policySet, inputsOf({ ...baseApp(), ...changes }));
    return new Map([...keys].map(([release, key]) => [release.name, key]));
  }

  it("a release's own files change only its key; app-wide files change every key", async () => {
    const before = await keysAfter({});
    expect(new Set(before.values()).size).toBe(2);
    const changed = async (changes: Record<string, string | null>) => {
      const after = await keysAfter(changes);
      return [...after]
        .filter(([name, key]) => before.get(name) !== key)
        .map(([name]) => name)
        .sort();
    };
    expect(await changed({ 'overrides/static/web.yaml': 'conf:\n  greeting: hi\n' })).toEqual(['web']);
    expect(await changed({ 'overrides/templates/web.yaml.hbs': 'conf:\n  host: x\n' })).toEqual(['web']);
    expect(await changed({ 'charts/db/values.yaml': 'pod:\n  replicas: 3\n' })).toEqual(['db']);
    expect(await changed({ 'overrides/deployment.yaml': 'main:\n  release: "1.0"\n' })).toEqual(['db', 'web']);
    expect(await changed({ 'overrides/versions/2.0.yaml': 'release: "2.0"\n' })).toEqual(['db', 'web']);
    expect(await changed({ 'plugins/bundle/web.js': 'export {}' })).toEqual(['db', 'web']);
    expect(await changed({ 'overrides/static/db.yaml': '' }), 'an empty static file is not an absent one').toEqual(['db']);
  });

  it('after one edit only the release it feeds is computed again, and an unchanged rebuild computes none', async () => {
    const source = writeApp();
    const out = tempDir();
    const checked = vi.spyOn(Session.prototype, 'checkReleases');
    await buildApp(source, { outDir: out });
    expect(checked.mock.calls.map(([releases]) => releases.map((r) => r.name))).toEqual([['db', 'web']]);

    checked.mockClear();
    await buildApp(source, { outDir: out });
    expect(checked).not.toHaveBeenCalled();

    const staticFile = join(source, 'overrides/static/web.yaml');
    appendFileSync(staticFile, '# edited\n');
    await buildApp(source, { outDir: out });
    expect(checked.mock.calls.map(([releases]) => releases.map((r) => r.name))).toEqual([['web']]);

    // A chart's own values feed the releases of that chart only.
    checked.mockClear();
    const chartValues = join(source, 'charts/db/values.yaml');
    appendFileSync(chartValues, 'extra: 1\n');
    await buildApp(source, { outDir: out });
    expect(checked.mock.calls.map(([releases]) => releases.map((r) => r.name))).toEqual([['db']]);
  });

  it('a release that passed before is refused once its own file breaks it, and passes again when fixed', async () => {
    const source = writeApp();
    const out = tempDir();
    await buildApp(source, { outDir: out });
    const staticFile = join(source, 'overrides/static/web.yaml');
    const good = readFileSync(staticFile, 'utf8');
    writeFileSync(staticFile, 'image: "repo::tag"\n');
    await expect(buildApp(source, { outDir: out })).rejects.toThrow(/the values of web cannot be computed/);
    writeFileSync(staticFile, good);
    await expect(buildApp(source, { outDir: out })).resolves.toBeDefined();
  });

  it('a torn or foreign record of passed releases is not trusted: every release is checked', async () => {
    const source = writeApp();
    const out = tempDir();
    await buildApp(source, { outDir: out });
    const record = join(out, '.flotilla-cache', 'values-check.json');
    const checked = vi.spyOn(Session.prototype, 'checkReleases');
    for (const garbage of ['{"format":"flotilla-values-check/3","passed":', '{"format":"other","passed":[]}', 'null', '[]']) {
      writeFileSync(record, garbage);
      checked.mockClear();
      await buildApp(source, { outDir: out });
      expect(
        checked.mock.calls.map(([releases]) => releases.length),
        garbage,
      ).toEqual([2]);
    }
    // A record claiming keys that are not this app's lets nothing through either.
    writeFileSync(join(source, 'overrides/static/web.yaml'), 'image: "repo::tag"\n');
    writeFileSync(record, JSON.stringify({ format: 'flotilla-values-check/3', passed: [['0'.repeat(64), []]] }));
    await expect(buildApp(source, { outDir: out })).rejects.toThrow(/the values of web cannot be computed/);
  });
});
