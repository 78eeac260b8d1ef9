/** fluxcd/build.yaml: build-time tokens, the HelmRepository the releases point at, and pass-through kustomization fields. */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { DiagnosticsError, FlotillaError } from '../diagnostics/index.js';
import {
  checkSchema,
  DEFAULT_HELM_REPO,
  GENERATED_KUSTOMIZATION_FIELDS,
  STARLINGX_HELM_REPOS,
  starlingxRepositoryOfUrl,
  type AppMetadata,
  type JsonSchema,
} from '../app/index.js';
import { parseYaml, toPlain } from '../yaml/index.js';
import { helmRepositorySpecSchema, type HelmRepositorySpec } from '../flux/index.js';
import { ANNOTATIONS_SCHEMA, FLUX_DURATION_PATTERN, KUBE_OBJECT_NAME_SCHEMA, LABELS_SCHEMA } from '../names/index.js';

export const BUILD_CONFIG_FILE = 'fluxcd/build.yaml';

export interface BuildConfig {
  readonly tokens: ReadonlyMap<string, string>;
  readonly helmRepository: {
    readonly name?: string;
    readonly url?: string;
    readonly interval?: string;
    readonly spec?: Record<string, unknown>;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  /** Top kustomization fields beyond namespace and resources (commonLabels, patches …). */
  readonly kustomization: Readonly<Record<string, unknown>>;
  /** base/kustomization.yaml fields beyond resources. */
  readonly baseKustomization: Readonly<Record<string, unknown>>;
}

export class UnsupportedHelmRepoError extends FlotillaError {}

/** The HelmRepository every release points at: build.yaml, else metadata helm_repo, else `starlingx`; refused unless StarlingX serves it. */
export function resolveHelmRepository(config: BuildConfig, metadata: AppMetadata, namespace: string): HelmRepositorySpec {
  const supported = STARLINGX_HELM_REPOS.join(', ');
  const repo = metadata.helmRepo ?? DEFAULT_HELM_REPO;
  if (!STARLINGX_HELM_REPOS.includes(repo)) {
    throw new UnsupportedHelmRepoError(
      `metadata helm_repo "${repo}" is not a chart repository StarlingX serves (${supported}): sysinv uploads the charts to helm_repo and would refuse the bundle`,
    );
  }
  const name = config.helmRepository.name ?? repo;
  const url = config.helmRepository.url ?? `http://controller:8080/helm_charts/${repo}`;
  const named = starlingxRepositoryOfUrl(url);
  if (!named.supported) {
    throw new UnsupportedHelmRepoError(
      `${BUILD_CONFIG_FILE} helmRepository.url ${url} ends in "${named.segment}": sysinv accepts only a repository URL ending in one of ${supported}`,
    );
  }
  return {
    name,
    url,
    interval: config.helmRepository.interval ?? '1m',
    namespace,
    ...(config.helmRepository.spec ? { spec: config.helmRepository.spec } : {}),
    ...(config.helmRepository.labels ? { labels: config.helmRepository.labels } : {}),
    ...(config.helmRepository.annotations ? { annotations: config.helmRepository.annotations } : {}),
  };
}

const extraRepositorySpec = (): JsonSchema => {
  const properties = { ...(helmRepositorySpecSchema.properties as Record<string, JsonSchema>) };
  delete properties.url;
  delete properties.interval;
  return { type: 'object', additionalProperties: false, properties };
};
const passThroughKustomization = (generated: readonly string[]): JsonSchema => ({
  type: 'object',
  propertyNames: { not: { enum: [...generated] } },
  expected: `a map of kustomization fields flotilla does not generate (not ${generated.join(', ')})`,
});

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
        name: KUBE_OBJECT_NAME_SCHEMA,
        url: { type: 'string', pattern: '^(https?|oci)://', expected: 'an http(s):// or oci:// URL' },
        interval: { type: 'string', pattern: FLUX_DURATION_PATTERN, expected: 'a Flux duration such as 1m' },
        spec: extraRepositorySpec(),
        labels: LABELS_SCHEMA,
        annotations: ANNOTATIONS_SCHEMA,
      },
    },
    kustomization: passThroughKustomization(GENERATED_KUSTOMIZATION_FIELDS),
    baseKustomization: passThroughKustomization(GENERATED_KUSTOMIZATION_FIELDS),
  },
};

export async function readBuildConfig(path: string, display: string): Promise<BuildConfig> {
  if (!existsSync(path)) return { tokens: new Map(), helmRepository: {}, kustomization: {}, baseKustomization: {} };
  const root = parseYaml(await readFile(path, 'utf8'), display, { layer: 'build' }).root;
  const problems = checkSchema(buildConfigSchema, root, display);
  if (problems.length > 0) throw new DiagnosticsError(`${display} is invalid:`, problems);
  const plain = (root ? toPlain(root) : {}) as {
    tokens?: Record<string, unknown>;
    helmRepository?: BuildConfig['helmRepository'];
    kustomization?: Record<string, unknown>;
    baseKustomization?: Record<string, unknown>;
  };
  return {
    tokens: new Map(Object.entries(plain.tokens ?? {}).map(([k, v]) => [k, String(v)])),
    helmRepository: plain.helmRepository ?? {},
    kustomization: plain.kustomization ?? {},
    baseKustomization: plain.baseKustomization ?? {},
  };
}
