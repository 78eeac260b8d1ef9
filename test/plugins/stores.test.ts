import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalPasswordStore, LocalRecordStore } from '../../src/plugins/index.js';
import { tempDir } from '../support/app-fixture.js';
import { chartPlugin, pluginFixture } from './fixtures.js';

const passwordPlugin = chartPlugin(
  'web',
  `  override async getOverrides(ctx: ChartContext): Promise<Values> {
    const password = await this.password(ctx, 'web-admin');
    ctx.log.warn(\`generated \${password} for \${ctx.mode}\`);
    return { admin: { password } };
  }`,
);

describe('offline password and record stores', () => {
  it('keeps a generated password across runs, in a 0600 file outside the app', async () => {
    const stateDir = tempDir('flotilla-state-');
    const first = await pluginFixture({ 'plugins/010_web.ts': passwordPlugin }, { stateDir });
    const second = await pluginFixture({ 'plugins/010_web.ts': passwordPlugin }, { stateDir });
    const web = (f: typeof first) => f.host.overrides(f.app.graph.byName.get('web')!);
    const [a, b] = [await web(first), await web(second)];
    expect(a).toEqual(b);
    expect(statSync(join(stateDir, 'passwords.json')).mode & 0o777).toBe(0o600);
    expect(first.root).not.toContain(stateDir);
  });

  it('never lets a password into the log', async () => {
    const { host, app, log } = await pluginFixture({ 'plugins/010_web.ts': passwordPlugin });
    await host.overrides(app.graph.byName.get('web')!);
    expect(log).toEqual([{ level: 'warn', plugin: 'web', message: 'generated <secret> for offline' }]);
  });

  it('serialises concurrent updates and survives a new store on the same file', async () => {
    const file = join(tempDir(), 'state', 'passwords.json');
    const store = new LocalPasswordStore(file);
    const values = await Promise.all(['a', 'b', 'a', 'c'].map((n) => store.getOrGenerate(`pw-${n}`)));
    expect(values[0]).toBe(values[2]);
    expect(new Set(values).size).toBe(3);
    expect(await new LocalPasswordStore(file).getOrGenerate('pw-b')).toBe(values[1]);
    await expect(store.getOrGenerate('Bad_Name')).rejects.toThrow('password name "Bad_Name" must be at most 180 lower-case letters, digits and dashes');
    const records = new LocalRecordStore(join(tempDir(), 'records.json'));
    await records.set('nova.instances', ['vm-1']);
    expect(await records.get('nova.instances')).toEqual(['vm-1']);
    await records.delete('nova.instances');
    expect(await records.get('nova.instances')).toBeUndefined();
  });
});
