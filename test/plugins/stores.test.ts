import { statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalPasswordStore, LocalRecordStore, PluginModeError } from '../../src/plugins/index.js';
import { tempDir } from '../support/app-fixture.js';
import { chartPlugin, pluginFixture } from './fixtures.js';

const passwordPlugin = chartPlugin(
  'web',
  `  override async getOverrides(ctx: ChartContext): Promise<Values> {
    const password = await this.password(ctx, 'web-admin');
    ctx.log.warn(\`generated \${password} for \${ctx.mode}\${ctx.kube ? ' in ' + ctx.kube.namespace : ''}\`);
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
    await expect(store.getOrGenerate('Bad_Name')).rejects.toThrow('password name "Bad_Name" must be lower-case letters, digits and dashes');
    const records = new LocalRecordStore(join(tempDir(), 'records.json'));
    await records.set('nova.instances', ['vm-1']);
    expect(await records.get('nova.instances')).toEqual(['vm-1']);
    await records.delete('nova.instances');
    expect(await records.get('nova.instances')).toBeUndefined();
  });
});

/** Just enough of the Kubernetes API for Secrets: GET one, POST one (409 when it exists). */
function fakeSecretsApi(): { server: Server; secrets: Map<string, { data: Record<string, string> }>; requests: string[] } {
  const secrets = new Map<string, { data: Record<string, string> }>();
  const requests: string[] = [];
  const body = (req: IncomingMessage) => new Promise<string>((resolve) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => resolve(text));
  });
  const server = createServer(async (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const send = (code: number, payload: object) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    const status = (code: number, reason: string) => send(code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code });
    const one = /^\/api\/v1\/namespaces\/([^/]+)\/secrets\/([^/?]+)/.exec(req.url ?? '');
    const all = /^\/api\/v1\/namespaces\/([^/]+)\/secrets\/?(\?.*)?$/.exec(req.url ?? '');
    if (req.method === 'GET' && one) {
      // Slow reads let two writers both miss the Secret, then race to create it.
      await new Promise((r) => setTimeout(r, 20));
      const secret = secrets.get(`${one[1]}/${one[2]}`);
      return secret ? send(200, { apiVersion: 'v1', kind: 'Secret', metadata: { name: one[2], namespace: one[1] }, data: secret.data }) : status(404, 'NotFound');
    }
    if (req.method === 'POST' && all) {
      const secret = JSON.parse(await body(req)) as { metadata: { name: string }; data: Record<string, string> };
      const key = `${all[1]}/${secret.metadata.name}`;
      if (secrets.has(key)) return status(409, 'AlreadyExists');
      secrets.set(key, { data: secret.data });
      return send(201, secret);
    }
    return status(404, 'NotFound');
  });
  return { server, secrets, requests };
}

describe('cluster mode', () => {
  const api = fakeSecretsApi();
  const kubeConfig = new KubeConfig();
  beforeAll(async () => {
    await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', resolve));
    const { port } = api.server.address() as AddressInfo;
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'test', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'test', token: 'test' }],
      contexts: [{ name: 'test', cluster: 'test', user: 'test' }],
      currentContext: 'test',
    });
  });
  afterAll(() => new Promise<void>((resolve) => api.server.close(() => resolve())));

  it('keeps passwords in one Secret each, in the app namespace; racing writers get the same value', async () => {
    const [a, b] = await Promise.all([
      pluginFixture({ 'plugins/010_web.ts': passwordPlugin }, { mode: 'cluster', kubeConfig }),
      pluginFixture({ 'plugins/010_web.ts': passwordPlugin }, { mode: 'cluster', kubeConfig }),
    ]);
    const web = (f: typeof a) => f.host.overrides(f.app.graph.byName.get('web')!);
    const [va, vb] = await Promise.all([web(a), web(b)]);
    expect(va).toEqual(vb);
    expect([...api.secrets.keys()]).toEqual(['demo/demo-password-web-admin']);
    const stored = Buffer.from(api.secrets.get('demo/demo-password-web-admin')!.data.password!, 'base64').toString();
    expect(a.host.redact({ stored })).toEqual({ stored: '<secret>' });
    expect(api.requests.filter((r) => r.startsWith('POST')).length).toBe(2);
    expect(a.log.map((l) => l.message)).toEqual(['generated <secret> for cluster in demo']);
  });

  it('needs a KubeConfig in cluster mode, and has none offline', async () => {
    await expect(pluginFixture({}, { mode: 'cluster' })).rejects.toBeInstanceOf(PluginModeError);
    await expect(pluginFixture({}, { mode: 'offline', kubeConfig })).rejects.toThrow('offline mode has no Kubernetes client');
  });
});
