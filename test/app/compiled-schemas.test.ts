/**
 * `npm run build` precompiles flotilla's own schemas (scripts/compile-schemas.mjs).
 * The shipped validators must be made from the current schemas, and judge
 * documents exactly as validators compiled at run time do.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createSchemaAjv, deploymentSchema, metadataSchema, releasesSchemaFor, schemaHash, specLayerSchema, type JsonSchema } from '../../src/app/index.js';
import { buildConfigSchema } from '../../src/build/index.js';
import { FLUX_TARGETS, helmReleaseSchemas, helmRepositorySchema } from '../../src/flux/index.js';
import type { CompiledValidator } from '../../src/app/schemas.compiled.js';

const compiled = async () =>
  (
    (await import(pathToFileURL(resolve(import.meta.dirname, '../../dist/app/schemas.compiled.js')).href)) as {
      compiledValidators: Record<string, CompiledValidator>;
    }
  ).compiledValidators;

const samples: [JsonSchema, unknown[]][] = [
  [
    metadataSchema,
    [
      {},
      { app_name: 'Bad_Name', app_version: '', supported_k8s_version: { minimum: '1.x' }, maintain_user_overrides: 'perhaps', class: 'x' },
      { app_name: 'a', app_version: '1', supported_k8s_version: { minimum: 'v1.29' }, upgrades: { auto_update: 'Y' } },
    ],
  ],
  // The release table and HelmRelease schemas, once per Flux version an app can declare.
  ...FLUX_TARGETS.map((target): [JsonSchema, unknown[]] => [
    releasesSchemaFor(target),
    [
      { releases: [] },
      { releases: [{ name: 'x', chart: 'y', timeout: '10 minutes', install: { crds: 'Sometimes', oops: 1 } }] },
      {
        fluxVersion: target,
        releases: [{ name: 'x', chart: 'y', upgrade: { chartNameChangeStrategy: 'InPlaceUpdate' }, helmReleaseSpec: { postRenderStrategy: 'nohooks' } }],
      },
      { fluxVersion: 'v2', releases: [{ name: 'x', chart: 'y' }] },
    ],
  ]),
  [deploymentSchema, [{ main: { release: 2025.1 } }, { main: { release: '1' }, common: { chart: {} } }]],
  [specLayerSchema, [{ main: {} }, { services: { a: { b: { values: 1 } } } }]],
  [buildConfigSchema, [{ tokens: { lower: 'x' } }, { helmRepository: { url: 'ftp://x' } }]],
  ...FLUX_TARGETS.map((target): [JsonSchema, unknown[]] => [
    helmReleaseSchemas(target).object,
    [
      {
        apiVersion: 'helm.toolkit.fluxcd.io/v2',
        kind: 'HelmRelease',
        metadata: { name: 'a' },
        spec: { interval: '1m', chartRef: { kind: 'HelmChart', name: 'a' }, upgrade: { createNamespace: true } },
      },
      {
        apiVersion: 'helm.toolkit.fluxcd.io/v2',
        kind: 'HelmRelease',
        metadata: { name: 'a' },
        spec: { interval: '1m', chartRef: { kind: 'HelmChart', name: 'a' }, valuesFrom: [{ kind: 'Secret', name: 's', literal: true }] },
      },
      { spec: {} },
    ],
  ]),
  [
    helmRepositorySchema,
    [{ apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'HelmRepository', metadata: { name: 'a' }, spec: { url: 'http://x/starlingx', type: 'git' } }],
  ],
];

describe('precompiled schemas', () => {
  it('exist for every built-in schema, made from the current schema', async () => {
    const validators = await compiled();
    for (const [schema] of samples) {
      expect(validators[schema.$id as string]?.hash, String(schema.$id)).toBe(schemaHash(schema));
    }
  });

  it('report the same errors as validators compiled at run time', async () => {
    const validators = await compiled();
    const ajv = createSchemaAjv();
    for (const [schema, documents] of samples) {
      const runtime = ajv.compile(schema);
      const ahead = validators[schema.$id as string]!.validate;
      for (const document of documents) {
        const summary = (v: typeof runtime) => [v(document), (v.errors ?? []).map((e) => `${e.instancePath} ${e.keyword} ${JSON.stringify(e.params)}`)];
        expect(summary(ahead), JSON.stringify(document)).toEqual(summary(runtime));
      }
    }
  });
});
