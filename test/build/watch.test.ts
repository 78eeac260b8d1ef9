import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTarGzSafely } from '../../src/bundle/index.js';
import { watchApp, type WatchedBuild } from '../../src/build/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

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

describe('flotilla build --watch', () => {
  it('builds, rebuilds on a change, reports a broken edit and recovers', async () => {
    const app = writeApp();
    const out = tempDir();
    const r = recorder();
    const first = r.next();
    const watch = watchApp(app, { outDir: out, settleMillis: 50 }, r.onBuild);
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
      writeFileSync(join(app, 'fluxcd/releases.yaml'), 'releases:\n  - {name: db, chart: db, service: database, group: infra}\n  - {name: web, chart: web, service: frontend, group: apps}\n');
      expect((await next).ok).toBe(true);
      // writing into the output folder does not trigger a build
      writeFileSync(join(out, 'note.txt'), 'x');
      await new Promise((done) => setTimeout(done, 300));
      expect(r.builds).toHaveLength(4);
    } finally {
      await watch.close();
    }
  });
});
