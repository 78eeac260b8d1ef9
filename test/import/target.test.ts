/**
 * Safety: the import writes only inside APP_DIR, never into a non-empty one
 * without --force, never over its own input, and reads hostile chart
 * archives with the safe tar reader (refused before anything is written).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { register } from '../../src/cli/commands/import.js';
import { formatDiagnostic } from '../../src/diagnostics/index.js';
import { importStarlingxApp, ImportRejectedError, ImportTargetError, ImportVerificationError } from '../../src/import/index.js';
import { tempDir } from '../support/app-fixture.js';
import { listFiles, stxFixture, targetDir } from './stx-fixture.js';

/** A tar.gz written by hand, so entries a well-behaved writer refuses can be made. */
function rawTarGz(entries: { path: string; data?: string; type?: 'File' | 'SymbolicLink'; linkpath?: string }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const data = Buffer.from(e.data ?? '');
    const header = new Header({
      path: e.path,
      mode: 0o644,
      uid: 0,
      gid: 0,
      size: e.type === 'SymbolicLink' ? 0 : data.length,
      mtime: new Date(0),
      type: e.type ?? 'File',
      linkpath: e.linkpath ?? '',
    });
    header.encode();
    blocks.push(header.block as Buffer);
    if (e.type !== 'SymbolicLink') blocks.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

const chartYaml = 'apiVersion: v2\nname: glance\nversion: 0.4.2\n';

describe('APP_DIR', () => {
  it('refuses a non-empty APP_DIR without --force, and leaves it alone', async () => {
    const f = await stxFixture();
    const out = targetDir();
    mkdirSync(out);
    writeFileSync(join(out, 'notes.txt'), 'mine\n');
    await expect(importStarlingxApp(f.dir, out, { charts: f.charts })).rejects.toThrow(ImportTargetError);
    await expect(importStarlingxApp(f.dir, out, { charts: f.charts })).rejects.toThrow(
      /is not empty \(notes\.txt\); use --force to replace its fluxcd\/, charts\/, overrides\/ folders/,
    );
    expect(readdirSync(out)).toEqual(['notes.txt']);
  });

  it('with --force replaces fluxcd/, charts/ and overrides/ only; a planted symlink is replaced, not followed', async () => {
    const f = await stxFixture();
    const out = targetDir();
    const outside = tempDir('flotilla-outside-');
    writeFileSync(join(outside, 'precious.txt'), 'keep\n');
    mkdirSync(join(out, 'overrides', 'presets'), { recursive: true });
    writeFileSync(join(out, 'overrides', 'presets', 'old.yaml'), 'features: {}\n');
    mkdirSync(join(out, 'plugins'));
    writeFileSync(join(out, 'plugins', 'index.ts'), 'export {};\n');
    symlinkSync(outside, join(out, 'charts'));
    const report = await importStarlingxApp(f.dir, out, { charts: f.charts, force: true });
    expect(report.replaced).toEqual(['charts', 'overrides']);
    expect(readdirSync(outside)).toEqual(['precious.txt']);
    expect(readFileSync(join(out, 'plugins', 'index.ts'), 'utf8')).toBe('export {};\n');
    expect(existsSync(join(out, 'overrides', 'presets'))).toBe(false);
    expect(readdirSync(out).sort()).toEqual(['charts', 'fluxcd', 'overrides', 'plugins']);
    expect(listFiles(join(out, 'charts'))).toContain('keystone/Chart.yaml');
  });

  it('refuses an APP_DIR that overlaps the source or a chart folder', async () => {
    const f = await stxFixture();
    await expect(importStarlingxApp(f.dir, join(f.dir, 'imported'), { charts: f.charts })).rejects.toThrow(/overlaps .*stx-demo, which the import reads/);
    await expect(importStarlingxApp(f.dir, join(f.dir, '..'), { charts: f.charts, force: true })).rejects.toThrow(ImportTargetError);
    await expect(importStarlingxApp(f.dir, join(f.packaged, 'x'), { charts: f.charts })).rejects.toThrow(/overlaps .*packaged/);
    expect(existsSync(join(f.dir, 'imported'))).toBe(false);
  });

  it('writes nothing, not even APP_DIR, when the source is refused', async () => {
    const f = await stxFixture();
    const out = targetDir();
    writeFileSync(join(f.dir, 'metadata.yaml'), 'app_name: Not Valid\n');
    const error = await importStarlingxApp(f.dir, out, { charts: f.charts }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImportRejectedError);
    expect((error as ImportRejectedError).diagnostics.map(formatDiagnostic)).toContainEqual(expect.stringMatching(/^metadata\.yaml:1:1: error: .*app_version/));
    expect(existsSync(out)).toBe(false);
  });
});

describe('hostile or odd chart archives', () => {
  it.each([
    [
      'a ".." entry',
      [
        { path: 'glance/Chart.yaml', data: chartYaml },
        { path: '../../evil.txt', data: 'pwned' },
      ],
      /path has a "\.\." segment/,
    ],
    [
      'an absolute entry',
      [
        { path: 'glance/Chart.yaml', data: chartYaml },
        { path: '/tmp/evil.txt', data: 'pwned' },
      ],
      /absolute path/,
    ],
    [
      'a symbolic link',
      [
        { path: 'glance/Chart.yaml', data: chartYaml },
        { path: 'glance/templates', type: 'SymbolicLink' as const, linkpath: '/etc' },
      ],
      /symbolic link/,
    ],
  ])('refuses an archive with %s before writing anything', async (_what, entries, reason) => {
    const f = await stxFixture();
    writeFileSync(join(f.packaged, 'glance-0.4.2.tgz'), rawTarGz(entries));
    const out = targetDir();
    const error = await importStarlingxApp(f.dir, out, { charts: f.charts }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImportRejectedError);
    const lines = (error as ImportRejectedError).diagnostics.map(formatDiagnostic);
    expect(
      lines.some((l) => l.includes('chart archive') && l.includes('glance-0.4.2.tgz') && reason.test(l)),
      lines.join('\n'),
    ).toBe(true);
    expect(existsSync(out)).toBe(false);
    expect(existsSync(join(f.packaged, '..', 'evil.txt'))).toBe(false);
  });

  it('refuses an archive holding a file Helm would drop from a chart folder (the self-check compares what Helm packages)', async () => {
    const f = await stxFixture();
    writeFileSync(
      join(f.packaged, 'glance-0.4.2.tgz'),
      rawTarGz([
        { path: 'glance/Chart.yaml', data: chartYaml },
        { path: 'glance/templates/cm.yaml', data: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n' },
        { path: 'glance/templates/.hidden.yaml', data: 'kind: Secret\n' },
      ]),
    );
    const out = targetDir();
    const error = await importStarlingxApp(f.dir, out, { charts: f.charts }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImportVerificationError);
    expect((error as Error).message).toContain('chart glance');
    expect((error as Error).message).toContain('missing templates/.hidden.yaml');
    expect(existsSync(out)).toBe(false);
  });
});

describe('flotilla import (CLI)', () => {
  it('imports with repeated --charts and prints the release table', async () => {
    const f = await stxFixture();
    const out = targetDir();
    const program = new Command('flotilla').exitOverride();
    const lines: string[] = [];
    register(program, { io: { out: (line) => void lines.push(line), err: () => undefined } });
    await program.parseAsync(['import', f.dir, '-d', out, '--charts', f.charts[0]!, '--charts', f.charts[1]!, '--release', '2025.1'], { from: 'user' });
    const printed = lines.join('\n');
    expect(printed).toMatch(/^RELEASE +CHART +VERSION +FROM +ENABLED$/m);
    expect(printed).toMatch(/^mariadb +mariadb-galera +0\.1\.0 +.*mariadb-galera-0\.1\.0\.tgz +yes$/m);
    expect(printed).toContain('stx-demo 1.0-3: 4 releases, 4 charts (+ helm-toolkit as a shared library)');
    expect(printed).toContain('mariadb-galera images.tags.mariadb: uses the floating tag "latest"');
    expect(readFileSync(join(out, 'overrides', 'versions', '2025.1.yaml'), 'utf8')).toContain("release: '2025.1'");
    expect(readFileSync(join(out, 'overrides', 'deployment.yaml'), 'utf8')).toContain("release: '2025.1'");
  });
});
