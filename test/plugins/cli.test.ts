import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { chartPlugin } from './fixtures.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Runs the CLI from sources, state kept in a temp folder. */
export async function flotilla(args: readonly string[], stateDir = tempDir('flotilla-state-')): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, FLOTILLA_STATE_DIR: stateDir },
  });
}

describe('flotilla overrides with plugins', () => {
  const app = () =>
    writeApp({
      'plugins/010_web.ts': chartPlugin(
        'web',
        `  override async getOverrides(ctx: ChartContext): Promise<Values> {
    return { conf: { mode: 'from-plugin', password: await this.password(ctx, 'web-admin') } };
  }`,
      ),
    });

  it('--explain attributes plugin values to the plugin file and line, and never prints a password', async () => {
    const { stdout } = await flotilla(['overrides', 'web', '--app', app(), '--explain']);
    expect(stdout).toMatch(/^conf\.mode\s+"from-plugin"\s+plugin web\s+plugins\/010_web\.ts:5:1$/m);
    expect(stdout).toMatch(/^conf\.password\s+"<secret>"\s+plugin web\s+plugins\/010_web\.ts:5:1$/m);
  });

  it('prints the plugin layer in the system overrides, password redacted', async () => {
    const { stdout } = await flotilla(['overrides', 'web', '--app', app(), '--output', 'json']);
    expect(JSON.parse(stdout).conf).toMatchObject({ mode: 'from-plugin', password: '<secret>' });
  });
});
