/** fluxcd/build.yaml: build-time tokens and the HelmRepository the releases point at. */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { DiagnosticsError } from '../diagnostics/index.js';
import { checkSchema, type JsonSchema } from '../app/index.js';
import { parseYaml, toPlain } from '../document/index.js';
import { DNS1123_LABEL_PATTERN, FLUX_DURATION_PATTERN } from '../names/index.js';

export const BUILD_CONFIG_FILE = 'fluxcd/build.yaml';

export interface BuildConfig {
  readonly tokens: ReadonlyMap<string, string>;
  readonly helmRepository: { readonly name?: string; readonly url?: string; readonly interval?: string };
}

export const buildConfigSchema: JsonSchema = {
  $id: 'flotilla:build-config',
  type: 'object',
  additionalProperties: false,
  properties: {
    tokens: {
      type: 'object',
      propertyNames: { pattern: '^[A-Z][A-Z0-9_]*$', expected: 'an upper-case token name, as in @NAME@' },
      additionalProperties: { type: ['string', 'number', 'boolean'] },
    },
    helmRepository: {
      type: 'object',
      additionalProperties: false,
      properties: {
        name: { type: 'string', pattern: DNS1123_LABEL_PATTERN, expected: 'a Kubernetes object name' },
        url: { type: 'string', pattern: '^(https?|oci)://', expected: 'an http(s):// or oci:// URL' },
        interval: { type: 'string', pattern: FLUX_DURATION_PATTERN, expected: 'a Flux duration such as 1m' },
      },
    },
  },
};

export async function readBuildConfig(path: string, display: string): Promise<BuildConfig> {
  if (!existsSync(path)) return { tokens: new Map(), helmRepository: {} };
  const root = parseYaml(await readFile(path, 'utf8'), display, { layer: 'build' }).root;
  const problems = checkSchema(buildConfigSchema, root, display);
  if (problems.length > 0) throw new DiagnosticsError(`${display} is invalid:`, problems);
  const plain = (root ? toPlain(root) : {}) as { tokens?: Record<string, unknown>; helmRepository?: BuildConfig['helmRepository'] };
  return {
    tokens: new Map(Object.entries(plain.tokens ?? {}).map(([k, v]) => [k, String(v)])),
    helmRepository: plain.helmRepository ?? {},
  };
}
