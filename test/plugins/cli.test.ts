import { describe, expect, it } from 'vitest';
import { writeApp } from '../support/app-fixture.js';
import { chartPlugin, flotilla } from './fixtures.js';

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
    const { stdout } = await flotilla(['overrides', app(), 'web', '--explain']);
    expect(stdout).toMatch(/^conf\.mode\s+"from-plugin"\s+plugin web\s+plugins\/010_web\.ts:5:1$/m);
    expect(stdout).toMatch(/^conf\.password\s+"<secret>"\s+plugin web\s+plugins\/010_web\.ts:5:1$/m);
  });

  it('prints the plugin layer in the system overrides, password redacted', async () => {
    const { stdout } = await flotilla(['overrides', app(), 'web', '--output', 'json']);
    expect(JSON.parse(stdout).values.conf).toMatchObject({ mode: 'from-plugin', password: '<secret>' });
  });
});
