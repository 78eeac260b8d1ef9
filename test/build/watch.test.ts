import { cpSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTarGzSafely } from '../../src/tarball/index.js';
import { buildApp, watchApp, type WatchedBuild } from '../../src/build/index.js';
import { tempDir, touchAll, writeApp } from '../support/app-fixture.js';

/** Collects builds and lets a test wait for the next one. */
function recorder() {
  const builds: WatchedBuild[] = [];
  const waiters: ((b: WatchedBuild) => void)[] = [];
  return {
    builds,
    onBuild: (b: WatchedBuild) => {
      builds.push(b);
      waiters.shift()?.(b);
    },
    next: (): Promise<WatchedBuild> =>
      new Promise((done, fail) => {
        waiters.push(done);
        setTimeout(() => fail(new Error('no build within 20 s')), 20_000);
      }),
  };
}

/** `app` under `build --watch` into `outDir`, its builds recorded; `first` is its first build. */
function watching(app: string, outDir: string) {
  const r = recorder();
  const first = r.next();
  return { r, first, watch: watchApp(app, { outDir, settleMillis: 50 }, r.onBuild) };
}

describe('flotilla build --watch', () => {
  it('builds, rebuilds on a change, reports a broken edit and recovers', async () => {
    const app = writeApp();
    const out = tempDir();
    const { r, first, watch } = watching(app, out);
    try {
      const initial = await first;
      expect(initial.ok).toBe(true);
      expect(initial.changed).toEqual([]);

      const staticFile = join(app, 'overrides/static/web.yaml');
      let next = r.next();
      writeFileSync(staticFile, `${readFileSync(staticFile, 'utf8')}extra: 1\n`);
      const rebuilt = await next;
      expect(rebuilt.ok && rebuilt.changed).toEqual(['overrides/static/web.yaml']);
      if (!rebuilt.ok) throw rebuilt.error;
      expect(rebuilt.result.charts.every((c) => c.reused)).toBe(true);
      const files = await readTarGzSafely(rebuilt.result.file);
      expect(files.get('fluxcd-manifests/web/web-static-overrides.yaml')?.toString()).toContain('extra: 1');

      next = r.next();
      writeFileSync(join(app, 'fluxcd/releases.yaml'), 'releases:\n  - {name: web, chart: web, dependsOn: [web]}\n');
      const broken = await next;
      expect(broken.ok).toBe(false);
      if (!broken.ok) expect(broken.error.message).toContain('dependency cycle between releases: web → web');

      next = r.next();
      writeFileSync(
        join(app, 'fluxcd/releases.yaml'),
        'releases:\n  - {name: db, chart: db, service: database, group: infra}\n  - {name: web, chart: web, service: frontend, group: apps}\n',
      );
      expect((await next).ok).toBe(true);
      // writing into the output folder does not trigger a build
      writeFileSync(join(out, 'note.txt'), 'x');
      await new Promise((done) => setTimeout(done, 300));
      expect(r.builds).toHaveLength(4);
    } finally {
      await watch.close();
    }
  });

  it('repackages exactly the charts below a change, the shared library included, and writes what a cold build writes', async () => {
    const app = writeApp();
    // An old checkout, its inode times a second behind the first build:
    // fingerprints alone decide (no file is recent enough to be re-read as racily clean).
    touchAll(app, new Date('2020-01-01T00:00:00Z'));
    await new Promise((done) => setTimeout(done, 1100));
    const out = tempDir();
    const { r, first, watch } = watching(app, out);
    const cold = async () => readFileSync((await buildApp(app, { outDir: tempDir(), cacheDir: false })).file);
    const rebuildAfter = async (file: string, text: string) => {
      const next = r.next();
      writeFileSync(join(app, file), text);
      const build = await next;
      if (!build.ok) throw build.error;
      expect(readFileSync(build.result.file).equals(await cold()), `after ${file}`).toBe(true);
      return Object.fromEntries(build.result.charts.map((c) => [c.name, c.reused]));
    };
    try {
      expect((await first).ok).toBe(true);
      expect(await rebuildAfter('charts/web/templates/extra.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n')).toEqual({
        db: true,
        web: false,
      });
      expect(await rebuildAfter('charts/lib/templates/_extra.tpl', '{{- define "lib.extra" -}}x{{- end -}}\n')).toEqual({ db: false, web: false });
      expect(await rebuildAfter('overrides/static/db.yaml', 'conf:\n  banner: db\n')).toEqual({ db: true, web: true });
    } finally {
      await watch.close();
    }
  });

  it('has written its cache files when close resolves, and writes nothing after', async () => {
    const app = writeApp();
    const out = tempDir();
    const { first, watch } = watching(app, out);
    expect((await first).ok).toBe(true);
    // Closed at once, before the build has been idle long enough for them to be written.
    await watch.close();
    const cache = join(out, '.flotilla-cache');
    const written = readdirSync(cache).sort();
    expect(written).toEqual(expect.arrayContaining(['bundle-pieces.json', 'manifests.json', 'parsed-yaml.bin']));
    expect(written.filter((name) => name.endsWith('.partial'))).toEqual([]);
    await new Promise((done) => setTimeout(done, 500));
    expect(readdirSync(cache).sort()).toEqual(written);
    rmSync(out, { recursive: true });
  });

  it('writes every cache file again into an output folder removed while watching', async () => {
    const app = writeApp();
    const out = tempDir();
    const { r, first, watch } = watching(app, out);
    expect((await first).ok).toBe(true);
    await new Promise((done) => setTimeout(done, 500)); // the first build's cache files written, idle
    rmSync(out, { recursive: true });
    const next = r.next();
    writeFileSync(join(app, 'overrides/static/web.yaml'), 'extra: 1\n');
    expect((await next).ok).toBe(true);
    await watch.close();
    expect(
      readdirSync(join(out, '.flotilla-cache'))
        .filter((name) => !name.startsWith('plugins-'))
        .sort(),
    ).toEqual(['bundle-pieces.json', 'index.json', 'manifests.json', 'parsed-yaml.bin', 'values-check.json']);
  });

  it('keeps watching an app folder moved away and back, or replaced by a copy', async () => {
    const app = writeApp();
    const out = tempDir();
    const { r, first, watch } = watching(app, out);
    try {
      expect((await first).ok).toBe(true);
      let next = r.next();
      renameSync(app, `${app}.away`);
      expect((await next).ok).toBe(false);
      next = r.next();
      renameSync(`${app}.away`, app);
      expect((await next).ok).toBe(true);
      next = r.next();
      writeFileSync(join(app, 'overrides/static/web.yaml'), 'extra: 1\n');
      const edited = await next;
      expect(edited.ok && edited.changed).toEqual(['overrides/static/web.yaml']);
      // Removed and made again (a fresh clone in its place): another folder at the same path.
      cpSync(app, `${app}.copy`, { recursive: true });
      next = r.next();
      rmSync(app, { recursive: true });
      renameSync(`${app}.copy`, app);
      await next;
      // The removal and the new folder may come as more than one build; the last one builds the copy.
      for (let seen = -1; seen !== r.builds.length;) {
        seen = r.builds.length;
        await new Promise((done) => setTimeout(done, 1000));
      }
      expect(r.builds.at(-1)?.ok).toBe(true);
      next = r.next();
      writeFileSync(join(app, 'overrides/static/web.yaml'), 'extra: 2\n');
      const editedAgain = await next;
      expect(editedAgain.ok && editedAgain.changed).toEqual(['overrides/static/web.yaml']);
    } finally {
      await watch.close();
    }
  });

  it("says which path failed, in the user's words, when the output folder cannot be made", async () => {
    const app = writeApp();
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, 'not a folder\n');
    const { first, watch } = watching(app, file);
    try {
      const failed = await first;
      expect(failed.ok).toBe(false);
      // The cache folder there cannot be used (src/cache), so the output folder is the first thing made.
      if (!failed.ok) expect(failed.error.message).toBe(`${file}: is not a folder`);
    } finally {
      await watch.close();
    }
  });

  it('checks links again in a folder where something changed: a link out of the app added while watching is refused', async () => {
    const app = writeApp();
    const secretDir = tempDir();
    writeFileSync(join(secretDir, 'secret.yaml'), 'token: abc\n');
    const out = tempDir();
    const { r, first, watch } = watching(app, out);
    try {
      expect((await first).ok).toBe(true);
      for (const folder of ['overrides/static', 'charts/web/templates']) {
        const link = join(app, folder, 'leak.yaml');
        let next = r.next();
        symlinkSync(join(secretDir, 'secret.yaml'), link);
        const refused = await next;
        expect(refused.ok, folder).toBe(false);
        if (!refused.ok) expect(refused.error.message).toContain('leak.yaml');
        // Node 20's recursive watcher on Linux does not report a link's removal: a saved file next to it does.
        next = r.next();
        rmSync(link);
        writeFileSync(join(app, folder, 'saved.yaml'), '{}\n');
        expect((await next).ok, folder).toBe(true);
      }
    } finally {
      await watch.close();
    }
  });
});
