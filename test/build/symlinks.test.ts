/**
 * Symbolic links out of the source: `build` and `import` refuse a file or
 * folder link that resolves outside the app (or the import source), naming
 * both paths; --follow-external-symlinks allows it and says so. Loops are
 * clean errors naming the path.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readTarGzSafely } from '../../src/tarball/index.js';
import { buildApp } from '../../src/build/index.js';
import { SourceTreeError } from '../../src/files/index.js';
import { importStarlingxApp } from '../../src/import/index.js';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { stxFixture, targetDir } from '../import/stx-fixture.js';

const run = promisify(execFile);
const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');

/** A "secret" of the building machine, outside any app. */
function machineSecret(): { dir: string; file: string } {
  const dir = tempDir('flotilla-outside-');
  const file = join(dir, 'id_rsa');
  writeFileSync(file, 'PRIVATE KEY\n');
  return { dir, file };
}

async function refusal(promise: Promise<unknown>): Promise<SourceTreeError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SourceTreeError);
  return error as SourceTreeError;
}

describe('build and symbolic links', () => {
  it('refuses a file link out of the app, naming the link and its target, and writes nothing', async () => {
    const secret = machineSecret();
    const app = writeApp();
    const link = join(app, 'charts/web/templates/key.yaml');
    symlinkSync(secret.file, link);
    const out = tempDir();
    const error = await refusal(buildApp(app, { outDir: out }));
    expect(error.message).toBe(`${link} → ${secret.file}: symbolic link resolves outside the app (${app}); --follow-external-symlinks allows it`);
    expect(readdirSync(out)).toEqual([]);
  });

  it('refuses a folder link out of the app (static overrides, plugins)', async () => {
    const secret = machineSecret();
    for (const where of ['overrides/static/elsewhere', 'plugins/shared']) {
      const app = writeApp();
      mkdirSync(join(app, where, '..'), { recursive: true });
      symlinkSync(secret.dir, join(app, where));
      const error = await refusal(buildApp(app, { outDir: tempDir() }));
      expect(error.message).toContain(`${join(app, where)} → ${secret.dir}: symbolic link resolves outside the app`);
    }
  });

  it('follows links inside the app, and links out of it with followExternalSymlinks (reported)', async () => {
    const secret = machineSecret();
    const app = writeApp({ 'overrides/shared/notes.yaml': 'a: 1\n' });
    symlinkSync('../shared', join(app, 'overrides/static/shared'));
    symlinkSync(secret.file, join(app, 'overrides/key.yaml'));
    const result = await buildApp(app, { outDir: tempDir(), followExternalSymlinks: true });
    expect(result.externalLinks).toEqual([{ link: join(app, 'overrides/key.yaml'), target: secret.file }]);
    const files = await readTarGzSafely(result.file);
    expect(files.get('app/overrides/key.yaml')?.toString()).toBe('PRIVATE KEY\n');
    expect(files.get('app/overrides/static/shared/notes.yaml')?.toString()).toBe('a: 1\n');
  });

  it('names a link loop and a self-referencing link', async () => {
    const app = writeApp();
    symlinkSync('..', join(app, 'charts/web/templates/up'));
    expect((await refusal(buildApp(app, { outDir: tempDir() }))).message).toMatch(/charts\/web\/templates\/up: symbolic link loop \(back to .*charts\/web\)$/);
    const selfish = writeApp();
    symlinkSync('self', join(selfish, 'overrides/self'));
    expect((await refusal(buildApp(selfish, { outDir: tempDir() }))).message).toMatch(/overrides\/self: symbolic link loop$/);
  });

  it.skipIf(process.getuid?.() === 0)('names a folder it may not read', async () => {
    const app = writeApp();
    const locked = join(app, 'overrides/locked');
    mkdirSync(locked, { mode: 0o000 });
    expect((await refusal(buildApp(app, { outDir: tempDir() }))).message).toMatch(/overrides\/locked: cannot read the folder \(permission denied\)$/);
  });

  it('exits 1 with one line from the CLI, and says which links --follow-external-symlinks followed', async () => {
    const secret = machineSecret();
    const app = writeApp();
    symlinkSync(secret.file, join(app, 'overrides/key.yaml'));
    const out = tempDir();
    const failed = (await run(process.execPath, [cli, 'build', app, '-d', out]).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe(
      `flotilla: ${join(app, 'overrides/key.yaml')} → ${secret.file}: symbolic link resolves outside the app (${app}); --follow-external-symlinks allows it\n`,
    );
    const ok = await run(process.execPath, [cli, 'build', app, '-d', out, '--follow-external-symlinks']);
    expect(ok.stderr).toContain(`following symbolic link ${join(app, 'overrides/key.yaml')} → ${secret.file}, outside the app (--follow-external-symlinks)`);
    expect(existsSync(join(out, 'demo-1.0-1.tgz'))).toBe(true);
  });
});

describe('import and symbolic links', () => {
  it('refuses a link out of the StarlingX source, and follows it when asked', async () => {
    const secret = machineSecret();
    const f = await stxFixture();
    const link = join(f.dir, 'fluxcd-manifests/glance/extra.yaml');
    symlinkSync(secret.file, link);
    const out = targetDir();
    const error = await refusal(importStarlingxApp(f.dir, out, { charts: f.charts }));
    expect(error.message).toBe(`${link} → ${secret.file}: symbolic link resolves outside the import source (${f.dir}); --follow-external-symlinks allows it`);
    expect(existsSync(out)).toBe(false);
    const report = await importStarlingxApp(f.dir, out, { charts: f.charts, followExternalSymlinks: true });
    expect(report.externalLinks).toEqual([{ link, target: secret.file }]);
  });

  it('refuses a link out of a --charts folder', async () => {
    const secret = machineSecret();
    const f = await stxFixture();
    const archives = f.packaged;
    const link = join(archives, 'leak-1.0.0.tgz');
    symlinkSync(secret.file, link);
    try {
      const error = await refusal(importStarlingxApp(f.dir, targetDir(), { charts: f.charts }));
      expect(error.message).toBe(
        `${link} → ${secret.file}: symbolic link resolves outside the charts folder (${archives}); --follow-external-symlinks allows it`,
      );
    } finally {
      rmSync(link);
    }
  });
});
