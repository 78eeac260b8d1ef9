/**
 * The dev cluster TEST FIXTURE holds custom resources to their CRD's
 * structural schema as the API server does: Flux's HelmRelease v2 refuses
 * what Flux's CRD refuses (with apiextensions-apiserver's 422 messages),
 * unknown fields are pruned unless preserved, defaults are applied, and
 * `x-kubernetes-int-or-string` takes either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevCluster, type DevCluster } from '../support/dev-cluster/index.js';

let cluster: DevCluster;
const NS = 'schema';

beforeAll(async () => {
  cluster = await startDevCluster({ registry: false });
  await request('POST', '/api/v1/namespaces', { metadata: { name: NS } });
  await request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    port: { 'x-kubernetes-int-or-string': true },
                    size: { type: 'integer', minimum: 1, maximum: 10, default: 3 },
                    tags: { type: 'array', maxItems: 2, items: { type: 'string' } },
                    labels: { type: 'object', additionalProperties: { type: 'string' } },
                    free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  },
                },
              },
            },
          },
        },
      ],
    },
  });
});

afterAll(async () => {
  await cluster?.stop();
});

async function request(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown>; warning: string | null }> {
  const response = await fetch(`${cluster.server}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, warning: response.headers.get('warning') };
}

const release = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'helm.toolkit.fluxcd.io/v2',
  kind: 'HelmRelease',
  metadata: { name, namespace: NS },
  spec: { interval: '10m', chart: { spec: { chart: 'app', sourceRef: { kind: 'HelmRepository', name: 'charts' } } }, ...spec },
});

const HELM_RELEASES = `/apis/helm.toolkit.fluxcd.io/v2/namespaces/${NS}/helmreleases`;

describe('dev cluster (test fixture): Flux CRD schemas', () => {
  it.each([
    ['suspend: "yes"', { suspend: 'yes' }, 'spec.suspend: Invalid value: "string": spec.suspend in body must be of type boolean: "string"'],
    ['maxHistory: "five"', { maxHistory: 'five' }, 'spec.maxHistory: Invalid value: "string": spec.maxHistory in body must be of type integer: "string"'],
    [
      'dependsOn as a map',
      { dependsOn: { db: 'flux-system' } },
      'spec.dependsOn: Invalid value: "object": spec.dependsOn in body must be of type array: "object"',
    ],
    ['a 64-character releaseName', { releaseName: 'r'.repeat(64) }, 'spec.releaseName: Too long: may not be longer than 53'],
    [
      'strategy: bogus',
      { upgrade: { remediation: { retries: 3, strategy: 'bogus' } } },
      'spec.upgrade.remediation.strategy: Unsupported value: "bogus": supported values: "rollback", "uninstall"',
    ],
    [
      'a valuesFrom of kind Deployment',
      { valuesFrom: [{ kind: 'Deployment', name: 'web' }] },
      'spec.valuesFrom[0].kind: Unsupported value: "Deployment": supported values: "Secret", "ConfigMap"',
    ],
  ])('refuses a HelmRelease with %s (422 Invalid, the API server message), storing nothing', async (_what, spec, cause) => {
    const name = `bad-${Math.random().toString(36).slice(2, 8)}`;
    const { status, body } = await request('POST', HELM_RELEASES, release(name, spec));
    expect(status).toBe(422);
    expect(body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422, message: `HelmRelease.helm.toolkit.fluxcd.io "${name}" is invalid: ${cause}` });
    expect(cluster.get('helm.toolkit.fluxcd.io/v2', 'HelmRelease', NS, name)).toBeUndefined();
  });

  it('lists every cause, refuses a bad duration and a missing required field, and a patch that makes a stored release invalid', async () => {
    const { status, body } = await request(
      'POST',
      HELM_RELEASES,
      release('many', { interval: '5 minutes', dependsOn: [{ namespace: 'x' }], install: { crds: 'Always' } }),
    );
    expect(status).toBe(422);
    const causes = (body.details as { causes: Array<{ field: string; reason: string }> }).causes;
    expect(causes.map((c) => `${c.field} ${c.reason}`).sort()).toEqual([
      'spec.dependsOn[0].name FieldValueRequired',
      'spec.install.crds FieldValueNotSupported',
      'spec.interval FieldValueInvalid',
    ]);
    expect(body.message).toMatch(
      /^HelmRelease\.helm\.toolkit\.fluxcd\.io "many" is invalid: \[.*spec\.interval: Invalid value: "5 minutes": spec\.interval in body should match '\^\(\[0-9\]\+/,
    );
    expect((await request('POST', HELM_RELEASES, release('good', { dependsOn: [{ name: 'db' }] }))).status).toBe(201);
    const patched = await fetch(`${cluster.server}${HELM_RELEASES}/good`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { maxHistory: 1.5 } }),
    });
    expect(patched.status).toBe(422);
    expect(((await patched.json()) as { message: string }).message).toContain('spec.maxHistory in body must be of type integer: "number"');
  });

  it('prunes undeclared fields at every level (with a warning), keeps spec.values whole, and applies the schema defaults', async () => {
    const { status, body, warning } = await request(
      'POST',
      HELM_RELEASES,
      release('pruned', { values: { any: { deep: [1, { x: null }] } }, install: { remediation: { retries: 2, retry: 5 } }, uninstall: {}, extra: true }),
    );
    expect(status).toBe(201);
    expect(warning).toContain('unknown field \\"spec.install.remediation.retry\\"');
    expect(warning).toContain('unknown field \\"spec.extra\\"');
    const spec = body.spec as Record<string, Record<string, unknown>>;
    expect(spec.extra).toBeUndefined();
    expect(spec.install).toEqual({ remediation: { retries: 2 } });
    expect(spec.values).toEqual({ any: { deep: [1, { x: null }] } });
    expect(spec.uninstall).toEqual({ deletionPropagation: 'background' });
    expect((spec.chart as { spec: Record<string, unknown> }).spec).toMatchObject({ version: '*', reconcileStrategy: 'ChartVersion' });
    const strict = await request('POST', `${HELM_RELEASES}?fieldValidation=Strict`, release('strict', { install: { remediaton: {} } }));
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      'HelmRelease in version "v2" cannot be handled as a HelmRelease: strict decoding error: unknown field "spec.install.remediaton"',
    );
  });

  it('holds any CRD to its schema: int-or-string, minimum/maximum, maxItems, additionalProperties, preserved fields', async () => {
    const gadgets = `/apis/example.com/v1/namespaces/${NS}/gadgets`;
    const gadget = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name }, spec });
    const ok = await request('POST', gadgets, gadget('ok', { port: 'http', labels: { a: 'b' }, free: { any: { thing: 1 } } }));
    expect(ok.status).toBe(201);
    expect(ok.body.spec).toEqual({ port: 'http', size: 3, labels: { a: 'b' }, free: { any: { thing: 1 } } });
    expect((await request('POST', gadgets, gadget('num', { port: 8080 }))).status).toBe(201);
    const bad = await request('POST', gadgets, gadget('bad', { port: true, size: 11, tags: ['a', 'b', 'c'], labels: { a: 1 } }));
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe(
      'Gadget.example.com "bad" is invalid: [spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean", spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10, spec.tags: Too many: 3: must have at most 2 items, spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"]',
    );
  });
});
