import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterStores, connect, KubeConfigError, NotFound, type KubeClient } from '../../src/kube/index.js';
import { PluginModeError } from '../../src/plugins/index.js';
import { tempDir } from '../support/app-fixture.js';
import { chartPlugin, pluginFixture } from '../plugins/fixtures.js';

const passwordPlugin = chartPlugin(
  'web',
  `  override async getOverrides(ctx: ChartContext): Promise<Values> {
    const password = await this.password(ctx, 'web-admin');
    ctx.log.warn(\`generated \${password} for \${ctx.mode}\${ctx.kube ? ' in ' + ctx.kube.namespace : ''}\`);
    return { admin: { password } };
  }`,
);

/** Just enough of the Kubernetes API for Secrets: GET one, POST one (409 when it exists). */
function fakeSecretsApi(): { server: Server; secrets: Map<string, { data: Record<string, string> }>; requests: string[] } {
  const secrets = new Map<string, { data: Record<string, string> }>();
  const requests: string[] = [];
  const body = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => resolve(text));
    });
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
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
      return secret
        ? send(200, { apiVersion: 'v1', kind: 'Secret', metadata: { name: one[2], namespace: one[1] }, data: secret.data })
        : status(404, 'NotFound');
    }
    if (req.method === 'POST' && all) {
      const secret = JSON.parse(await body(req)) as { metadata: { name: string }; data: Record<string, string> };
      const key = `${all[1]}/${secret.metadata.name}`;
      if (secrets.has(key)) return status(409, 'AlreadyExists');
      secrets.set(key, { data: secret.data });
      return send(201, secret);
    }
    return status(404, 'NotFound');
  };
  // A failing handler fails the test run (an unhandled rejection), not silently.
  const server = createServer((req, res) => void handle(req, res));
  return { server, secrets, requests };
}

/** A kubeconfig file for a server on loopback, context `test`. */
export function writeKubeconfig(server: string): string {
  const file = join(tempDir('flotilla-kubeconfig-'), 'config');
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]
users: [{name: test, user: {token: test}}]
contexts: [{name: test, context: {cluster: test, user: test}}]
current-context: test
`,
  );
  return file;
}

describe('cluster-mode stores', () => {
  const api = fakeSecretsApi();
  let client: KubeClient;
  beforeAll(async () => {
    await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', resolve));
    const { port } = api.server.address() as AddressInfo;
    client = await connect({ kubeconfig: writeKubeconfig(`http://127.0.0.1:${port}`) });
  });
  afterAll(() => new Promise<void>((resolve) => api.server.close(() => resolve())));

  it('keeps passwords in one Secret each, in the app namespace; racing writers get the same value', async () => {
    const cluster = clusterStores(client, 'demo', 'demo');
    const [a, b] = await Promise.all([
      pluginFixture({ 'plugins/010_web.ts': passwordPlugin }, { mode: 'cluster', cluster }),
      pluginFixture({ 'plugins/010_web.ts': passwordPlugin }, { mode: 'cluster', cluster }),
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

  it('turns API failures into typed errors naming the verb and the object', async () => {
    const error = await client.core.readNamespacedSecret({ name: 'missing', namespace: 'demo' }).catch((e: unknown) => e);
    const { kubeError } = await import('../../src/kube/index.js');
    const typed = kubeError({ verb: 'read', kind: 'Secret', namespace: 'demo', name: 'missing' }, error);
    expect(typed).toBeInstanceOf(NotFound);
    expect(typed).toMatchObject({ status: 404, reason: 'NotFound', verb: 'read', kind: 'Secret', namespace: 'demo', objectName: 'missing' });
    expect(typed.message).toBe('cannot read Secret demo/missing: HTTP 404 NotFound');
  });

  it('needs the cluster stores in cluster mode, and has none offline', async () => {
    await expect(pluginFixture({}, { mode: 'cluster' })).rejects.toBeInstanceOf(PluginModeError);
    await expect(pluginFixture({}, { mode: 'offline', cluster: clusterStores(client, 'demo', 'demo') })).rejects.toThrow('offline mode has no cluster');
  });
});

describe('connect', () => {
  it('names a missing kubeconfig or context and lists the contexts there are', async () => {
    await expect(connect({ kubeconfig: join(tempDir(), 'nope') })).rejects.toThrow(/^kubeconfig .*nope: no such file$/);
    const file = writeKubeconfig('http://127.0.0.1:1');
    await expect(connect({ kubeconfig: file, context: 'prod' })).rejects.toThrow(`no context "prod" in ${file}; it has: test`);
    await expect(connect({ kubeconfig: file, context: 'prod' })).rejects.toBeInstanceOf(KubeConfigError);
    const previous = process.env.KUBECONFIG;
    process.env.KUBECONFIG = file;
    try {
      expect((await connect()).context).toBe('test');
    } finally {
      if (previous === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = previous;
    }
  });
});
