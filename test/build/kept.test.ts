/**
 * KeptBuilds (the build server's builds): each build keeps what it learnt
 * for the next (a chart folder's fingerprint is then trusted without a
 * stat), and a change made just before a build is always seen: the watcher
 * drops what was known of the folder. Every result is compared with a build
 * from nothing. Each edit comes more than a second after the files it
 * follows were written, so they are not "racily clean"
 * (src/build/chart-cache.ts) and kept fingerprints are what decides.
 */
import { cpSync, existsSync, linkSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, KeptBuilds } from '../../src/build/index.js';
import { readTarGzSafely } from '../../src/tarball/index.js';
import { AppWatcher } from '../../src/build/app-watcher.js';
import { baseApp, simpleChart, tempDir, touchAll, writeApp, writeFiles } from '../support/app-fixture.js';
import { runCli } from '../../src/cli/program.js';

const LONG_AGO = new Date('2020-01-01T00:00:00Z');
const settle = () => new Promise((done) => setTimeout(done, 1100));

/** What a build from nothing (no cache, no memory) writes for the app as it is now. */
async function fromNothing(app: string): Promise<string> {
  return (await buildApp(app, { outDir: tempDir(), cacheDir: false })).sha256;
}

/** Edits a file and dates it back, so only an event, not its stat, can tell it changed. */
function editQuietly(file: string, text: string, when: Date): void {
  writeFileSync(file, text);
  utimesSync(file, when, when);
}

/** Writes `text` to `file` and waits until `kept` has begun preparing the change. */
async function editAndAwaitPreparation(kept: KeptBuilds, file: string, text: string): Promise<void> {
  const made = kept.preparations.made;
  writeFileSync(file, text);
  for (let i = 0; i < 200 && kept.preparations.made === made; i++) await new Promise((done) => setTimeout(done, 10));
}

describe('KeptBuilds', () => {
  let kept: KeptBuilds | undefined;
  afterEach(() => kept?.close());

  it('sees every change made before a build, and builds what a build from nothing builds', async () => {
    const app = writeApp();
    touchAll(app, LONG_AGO);
    await settle();
    const out = tempDir();
    kept = new KeptBuilds();
    const first = await kept.build(app, { outDir: out });
    expect(first.sha256).toBe(await fromNothing(app));
    const again = await kept.build(app, { outDir: out });
    expect(again.sha256).toBe(first.sha256);
    expect(again.charts.every((c) => c.reused)).toBe(true);

    const template = join(app, 'charts/web/templates/configmap.yaml');
    const edits: [string, () => void][] = [
      [
        'a chart template, same size, older mtime',
        () => editQuietly(template, readFileSync(template, 'utf8').replace('-conf', '-cnf'), new Date(LONG_AGO.getTime() + 5000)),
      ],
      [
        'a new file in another chart',
        () => writeFileSync(join(app, 'charts/db/templates/extra.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n'),
      ],
      ['a file removed from a chart', () => rmSync(join(app, 'charts/db/templates/extra.yaml'))],
      [
        'the library every chart uses',
        () =>
          editQuietly(
            join(app, 'charts/lib/templates/_helpers.tpl'),
            readFileSync(join(app, 'charts/lib/templates/_helpers.tpl'), 'utf8').replace('name:', 'nom:'),
            new Date(LONG_AGO.getTime() + 9000),
          ),
      ],
      ['a static override', () => writeFileSync(join(app, 'overrides/static/web.yaml'), 'conf:\n  greeting: hi\n')],
      [
        'a chart folder removed and made again',
        () => {
          const chart = simpleChart('web');
          rmSync(join(app, 'charts/web'), { recursive: true });
          writeFiles(app, { ...chart, 'charts/web/templates/configmap.yaml': `${chart['charts/web/templates/configmap.yaml']}  remade: "yes"\n` });
        },
      ],
      [
        'a file in the folder made again',
        () => writeFileSync(join(app, 'charts/web/templates/later.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: later\n'),
      ],
    ];
    let previous = again.sha256;
    for (const [what, edit] of edits) {
      // The last build's files a second old, and built once more: what it kept is trusted, not re-read as racy.
      await settle();
      await kept.build(app, { outDir: out });
      edit();
      const built = await kept.build(app, { outDir: out });
      expect(built.sha256, what).toBe(await fromNothing(app));
      expect(built.sha256, what).not.toBe(previous);
      previous = built.sha256;
    }
  });

  it('sees every edit when the tarball is written into the app folder itself (`build -d .` in the app)', async () => {
    const app = writeApp();
    kept = new KeptBuilds();
    await kept.build(app, { outDir: app });
    await settle();
    await kept.build(app, { outDir: app });
    writeFileSync(join(app, 'overrides/static/web.yaml'), 'conf:\n  greeting: in place\n');
    expect((await kept.build(app, { outDir: app })).sha256).toBe(await fromNothing(app));
  });

  it('sees an edit made through a symbolic link inside the app', async () => {
    const app = writeApp({ 'shared/web.yaml': 'conf:\n  greeting: shared\n' });
    rmSync(join(app, 'overrides/static/web.yaml'));
    symlinkSync('../../shared/web.yaml', join(app, 'overrides/static/web.yaml'));
    kept = new KeptBuilds();
    const out = tempDir();
    await kept.build(app, { outDir: out });
    await settle();
    await kept.build(app, { outDir: out });
    writeFileSync(join(app, 'shared/web.yaml'), 'conf:\n  greeting: changed behind the link\n');
    expect((await kept.build(app, { outDir: out })).sha256).toBe(await fromNothing(app));
  });

  it('prepares the last build again, in memory, as soon as a change is heard; the build asked for writes it', async () => {
    const app = writeApp();
    const out = tempDir();
    kept = new KeptBuilds();
    const first = await kept.build(app, { outDir: out });
    const written = readFileSync(first.file);
    await editAndAwaitPreparation(kept, join(app, 'overrides/static/web.yaml'), 'conf:\n  greeting: prepared\n');
    expect(kept.preparations.made).toBe(1);
    await kept.build(app, { outDir: out, prepareOnly: true }); // waits for the preparation under way
    expect(readFileSync(first.file).equals(written)).toBe(true);
    const built = await kept.build(app, { outDir: out });
    expect(kept.preparations.used).toBe(1); // the answer was the preparation, written
    expect(built.sha256).toBe(await fromNothing(app));
    expect(readFileSync(built.file).equals(written)).toBe(false);
  });

  it('keeps hearing an app whose folder was replaced by a copy (a fresh clone in its place)', async () => {
    const app = writeApp();
    const out = tempDir();
    kept = new KeptBuilds();
    await kept.build(app, { outDir: out });
    cpSync(app, `${app}.copy`, { recursive: true });
    writeFileSync(join(`${app}.copy`, 'overrides/static/web.yaml'), 'conf:\n  greeting: copy\n');
    rmSync(app, { recursive: true });
    renameSync(`${app}.copy`, app);
    expect((await kept.build(app, { outDir: out })).sha256).toBe(await fromNothing(app));
    await new Promise((done) => setTimeout(done, 500)); // what the replacement itself set off
    const made = kept.preparations.made;
    await editAndAwaitPreparation(kept, join(app, 'overrides/static/web.yaml'), 'conf:\n  greeting: edited in the copy\n');
    expect(kept.preparations.made).toBe(made + 1); // the edit was heard
    expect((await kept.build(app, { outDir: out })).sha256).toBe(await fromNothing(app));
  });

  it('writes every cache file again into an output folder removed since the last build', async () => {
    const app = writeApp();
    const out = tempDir();
    kept = new KeptBuilds();
    await kept.build(app, { outDir: out });
    await editAndAwaitPreparation(kept, join(app, 'overrides/static/web.yaml'), 'conf:\n  greeting: prepared\n');
    await kept.build(app, { outDir: out, prepareOnly: true }); // waits for the preparation under way
    await kept.saveNow(); // else the idle write of the first build's cache files may race the removal
    // Written now, not once idle: the parse memo, which the idle write adds, is there.
    expect(readdirSync(join(out, '.flotilla-cache'))).toContain('parsed-yaml.bin');
    // A write that saveNow does not wait for may still land: rm retries, as rm -rf would be run again.
    rmSync(out, { recursive: true, maxRetries: 5 });
    const built = await kept.build(app, { outDir: out });
    expect(kept.preparations.used).toBe(0);
    expect(built.sha256).toBe(await fromNothing(app));
    await kept.close(); // writes what is still unwritten
    expect(
      readdirSync(join(out, '.flotilla-cache'))
        .filter((name) => !name.startsWith('plugins-'))
        .sort(),
    ).toEqual(['bundle-pieces.json', 'index.json', 'manifests.json', 'parsed-yaml.bin', 'values-check.json']);
  });

  it('still hears a source folder a refused build named as its output folder', async () => {
    const app = writeApp();
    const out = tempDir();
    kept = new KeptBuilds();
    await kept.build(app, { outDir: out });
    await expect(kept.build(app, { outDir: join(app, 'overrides') })).rejects.toThrow("inside the app's overrides/");
    writeFileSync(join(app, 'overrides/static/web.yaml'), 'conf:\n  greeting: heard after a refused build\n');
    expect((await kept.build(app, { outDir: out })).sha256).toBe(await fromNothing(app));
  });

  it('sees an edit made through a hard link outside the app, which no watcher hears', async () => {
    const app = writeApp();
    const outside = tempDir();
    for (const [name, file] of [
      ['template.yaml', 'charts/web/templates/configmap.yaml'],
      ['static.yaml', 'overrides/static/web.yaml'],
    ]) {
      writeFileSync(join(outside, name), readFileSync(join(app, file)));
      rmSync(join(app, file));
      linkSync(join(outside, name), join(app, file));
    }
    touchAll(app, LONG_AGO);
    await settle();
    const out = tempDir();
    kept = new KeptBuilds();
    await kept.build(app, { outDir: out });
    // Edited in place through the other name: same inode, same size, its old time kept.
    editQuietly(
      join(outside, 'template.yaml'),
      readFileSync(join(outside, 'template.yaml'), 'utf8').replace('-conf', '-cnf'),
      new Date(LONG_AGO.getTime() + 5000),
    );
    writeFileSync(join(outside, 'static.yaml'), 'conf:\n  greeting: through the other name\n');
    expect((await kept.build(app, { outDir: out })).sha256).toBe(await fromNothing(app));
  });

  it('answers with a prepared build only when nothing changed since it was prepared', async () => {
    const app = writeApp();
    const out = tempDir();
    kept = new KeptBuilds();
    await kept.build(app, { outDir: out });
    await editAndAwaitPreparation(kept, join(app, 'overrides/static/web.yaml'), 'conf:\n  greeting: first\n');
    // Changed again while (or after) the first edit was prepared: the preparation is not the answer.
    writeFileSync(join(app, 'overrides/static/db.yaml'), 'conf:\n  greeting: second\n');
    const built = await kept.build(app, { outDir: out });
    expect(kept.preparations.used).toBe(0);
    expect(built.sha256).toBe(await fromNothing(app));
    expect((await readTarGzSafely(built.file)).get('fluxcd-manifests/db/db-static-overrides.yaml')?.toString()).toContain('second');
  });

  it("writes a kept build's cache files once idle, and a later process builds from them", async () => {
    const app = writeApp();
    await settle(); // past the racy window: the later process may trust the chart fingerprints
    const out = tempDir();
    kept = new KeptBuilds();
    await kept.build(app, { outDir: out });
    const table = join(out, '.flotilla-cache', 'bundle-pieces.json');
    expect(existsSync(table)).toBe(false); // not while builds may follow
    await new Promise((done) => setTimeout(done, 600));
    expect(existsSync(table)).toBe(true);
    const later = await buildApp(app, { outDir: out });
    expect(later.charts.every((c) => c.reused)).toBe(true);
  });

  it('keeps the most recently built apps up to its limit, each still building right', async () => {
    const [one, two] = [writeApp(), writeApp({ 'fluxcd/metadata.yaml': baseApp()['fluxcd/metadata.yaml']!.replace('app_name: demo', 'app_name: other') })];
    kept = new KeptBuilds(1);
    await kept.build(one!, { outDir: tempDir() });
    await kept.build(two!, { outDir: tempDir() });
    expect(kept.apps()).toEqual([two]);
    writeFileSync(join(one!, 'overrides/static/web.yaml'), 'conf:\n  greeting: again\n');
    expect((await kept.build(one!, { outDir: tempDir() })).sha256).toBe(await fromNothing(one!));
    expect(kept.apps()).toEqual([one]);
  });

  it('never prepares a build that writes to the app (--bump-changed)', async () => {
    const app = writeApp();
    await expect(buildApp(app, { outDir: tempDir(), prepareOnly: true, bumpChanged: true, against: join(app, 'missing.tgz') })).rejects.toThrow(
      'a build made in memory only cannot bump chart versions (--bump-changed)',
    );
  });

  it('builds a cacheless build as buildApp does, keeping nothing', async () => {
    const app = writeApp();
    kept = new KeptBuilds();
    const built = await kept.build(app, { outDir: tempDir(), cacheDir: false });
    expect(built.sha256).toBe(await fromNothing(app));
    expect(kept.apps()).toEqual([]);
  });

  it("removes the markers a killed process left in the app's folder, and only those", () => {
    const app = writeApp();
    const stale = '.flotilla-watch-marker-999999999-3';
    const live = `.flotilla-watch-marker-${process.pid}-999`;
    for (const name of [stale, live, '.flotilla-watch-marker-notes']) writeFileSync(join(app, name), '');
    const watcher = new AppWatcher(app);
    void watcher.close();
    expect(
      readdirSync(app)
        .filter((name) => name.startsWith('.flotilla-watch-marker-'))
        .sort(),
    ).toEqual([live, '.flotilla-watch-marker-notes'].sort());
  });

  it('has heard every change made before caughtUp resolves, and leaves no marker behind', async () => {
    const app = writeApp();
    const heard: string[] = [];
    const watcher = new AppWatcher(app, (changed) => heard.push(changed));
    try {
      await watcher.caughtUp();
      for (const file of ['overrides/static/web.yaml', 'charts/web/values.yaml', 'fluxcd/releases.yaml']) {
        writeFileSync(join(app, file), `${readFileSync(join(app, file), 'utf8')}# edited\n`);
        await watcher.caughtUp();
        expect(heard).toContain(file);
      }
      expect(readdirSync(app).filter((name) => name.startsWith('.flotilla'))).toEqual([]);
    } finally {
      await watcher.close();
    }
  });
});

describe('a cancelled build (a build server whose client is gone)', () => {
  it('stops between charts, not only before it writes', async () => {
    const app = writeApp();
    // A signal that turns aborted at its second look: a build that looks only before it writes never gets there (this app has two charts).
    let looks = 0;
    const cancelled = {
      get aborted() {
        return looks >= 2;
      },
      throwIfAborted() {
        if (++looks >= 2) throw new Error('the client is gone');
      },
    } as unknown as AbortSignal;
    await expect(buildApp(app, { outDir: tempDir(), cancelled, cacheDir: false })).rejects.toThrow('the client is gone');
  });

  it('writes no tarball, built or prepared, and the command line says it failed', async () => {
    const app = writeApp();
    const out = tempDir();
    const gone = new AbortController();
    gone.abort();
    await expect(buildApp(app, { outDir: out, cancelled: gone.signal })).rejects.toThrow();
    const kept = new KeptBuilds();
    try {
      await kept.build(app, { outDir: out, prepareOnly: true });
      await expect(kept.build(app, { outDir: out, cancelled: gone.signal })).rejects.toThrow();
      const lines: string[] = [];
      const io = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) };
      expect(await runCli(['node', 'flotilla', 'build', app, '-d', out], { io, kept, cancelled: gone.signal })).toBe(1);
      expect(readdirSync(out).filter((name) => name.endsWith('.tgz'))).toEqual([]);
      // The next change is prepared as ever (the cancelled build's signal is not kept for it), and used.
      const { used } = kept.preparations;
      await editAndAwaitPreparation(kept, join(app, 'overrides/static/web.yaml'), 'conf:\n  greeting: after a cancelled build\n');
      // Time for the preparation to end (a build of this app takes a few tens of milliseconds here).
      await new Promise((done) => setTimeout(done, 2000));
      expect((await kept.build(app, { outDir: out })).sha256).toBe(await fromNothing(app));
      expect(kept.preparations.used).toBe(used + 1);
    } finally {
      await kept.close();
    }
  });
});
