/**
 * fluxcd/metadata.yaml — StarlingX application metadata. Every field StarlingX
 * reads is accepted and checked; unknown keys (which StarlingX silently
 * ignores) are warnings that suggest the nearest known key.
 */
import type { Diagnostic, DocPath } from '../diagnostics/index.js';
import { getNode, toPlain, type ValueNode } from '../yaml/index.js';
import { checkSchema, type JsonSchema, type SchemaChecker } from './schema-check.js';
import { DNS1123_LABEL_MAX, DNS1123_LABEL_SCHEMA, nearest } from '../names/index.js';

/** StarlingX reads these strings (any case) and 0/1 as booleans. */
const STX_TRUE = ['true', 'yes', 'y', '1'];
const STX_FALSE = ['false', 'no', 'n', '0'];

export function readStxBool(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  const text = String(value).toLowerCase();
  if (STX_TRUE.includes(text)) return true;
  if (STX_FALSE.includes(text)) return false;
  return undefined;
}

// Shared definitions are referenced, not repeated, so ajv compiles each once.
const stxBoolDefinition: JsonSchema = {
  expected: 'a boolean (true/false, yes/no, y/n, 1/0)',
  anyOf: [
    { type: 'boolean' },
    { type: 'integer', enum: [0, 1] },
    { type: 'string', pattern: '^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[Yy]([Ee][Ss])?|[Nn][Oo]?|[01])$' },
  ],
};
const stxBool: JsonSchema = { $ref: '#/$defs/stxBool' };
const k8sVersion: JsonSchema = {
  type: 'string',
  pattern: '^v?[0-9]+\\.[0-9]+(\\.[0-9]+)?$',
  expected: 'a Kubernetes version major.minor[.patch], e.g. v1.29.2',
};
// Whether each string compiles as a regular expression is checked in code (regexProblems).
const regexList: JsonSchema = { type: 'array', items: { type: 'string' } };
const nonEmptyString: JsonSchema = { type: ['string', 'number'], minLength: 1, expected: 'a non-empty string' };

/**
 * Where an app is deployed (metadata `flotilla.target`): by plain Flux
 * (`flotilla apply`), by StarlingX's application framework, or both (the
 * default). Checks that only matter to StarlingX run for the last two.
 */
export const APP_TARGETS = ['flux', 'starlingx', 'both'] as const;
export type AppTarget = (typeof APP_TARGETS)[number];

export const metadataSchema: JsonSchema = {
  $id: 'flotilla:metadata',
  $defs: { stxBool: stxBoolDefinition },
  type: 'object',
  required: ['app_name', 'app_version', 'supported_k8s_version'],
  properties: {
    app_name: {
      ...DNS1123_LABEL_SCHEMA,
      expected: `a lower-case name of letters, digits and dashes, at most ${DNS1123_LABEL_MAX} long (it labels every object of the app)`,
    },
    app_version: nonEmptyString,
    supported_k8s_version: {
      type: 'object',
      required: ['minimum'],
      properties: { minimum: k8sVersion, maximum: k8sVersion },
    },
    helm_repo: { type: 'string', minLength: 1 },
    disabled_charts: { type: 'array', items: { type: 'string' } },
    maintain_user_overrides: stxBool,
    maintain_attributes: stxBool,
    upgrades: {
      type: 'object',
      properties: { auto_update: stxBool, update_failure_no_rollback: stxBool, from_versions: regexList },
    },
    downgrades: { type: 'object', properties: { auto_downgrade: stxBool } },
    k8s_upgrades: {
      type: 'object',
      properties: { auto_update: stxBool, timing: { enum: ['pre', 'post'] } },
    },
    supported_releases: { type: 'object' },
    behavior: {
      type: 'object',
      properties: {
        platform_managed_app: stxBool,
        desired_state: { type: 'string' },
        forbidden_manual_operations: { type: 'array', items: { type: 'string' } },
        evaluate_reapply: {
          type: 'object',
          properties: {
            triggers: {
              type: 'array',
              items: { type: 'object', required: ['type'], properties: { type: { type: 'string' }, filters: { type: 'array' } } },
            },
          },
        },
      },
    },
    class: { enum: ['critical', 'storage', 'discovery', 'optional', 'reporting'] },
    dependent_apps: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 1 },
          version: { type: 'string' },
          action: { enum: ['ignore', 'warn', 'error', 'apply'] },
        },
      },
    },
    apply_progress_adjust: { type: 'integer' },
    // flotilla's own settings (StarlingX ignores keys it does not know).
    flotilla: {
      type: 'object',
      additionalProperties: false,
      properties: {
        target: { enum: [...APP_TARGETS], expected: `where the app is deployed: ${APP_TARGETS.join(', ')}` },
        // Target changes beyond one release at a time (docs/versions.md): named skip-level jumps.
        releaseUpgrades: {
          type: 'object',
          additionalProperties: false,
          properties: {
            skipLevel: {
              type: 'array',
              items: {
                type: 'object',
                required: ['from', 'to'],
                additionalProperties: false,
                properties: { from: { type: 'string', minLength: 1 }, to: { type: 'string', minLength: 1 } },
              },
              expected: 'a list of {from: RELEASE, to: RELEASE} jumps allowed in one target change',
            },
          },
        },
        namespace: {
          ...DNS1123_LABEL_SCHEMA,
          expected: `the namespace of the app's own objects: a DNS-1123 label (lower-case letters, digits and dashes, at most ${DNS1123_LABEL_MAX})`,
        },
      },
    },
  },
};

/** Known keys per object path, for unknown-key warnings (StarlingX ignores unknown keys; we say so). */
function knownKeys(schema: JsonSchema, path: DocPath): string[] | undefined {
  let current: JsonSchema | undefined = schema;
  for (const part of path) {
    if (!current) return undefined;
    if (typeof part === 'number') current = current.items as JsonSchema | undefined;
    else current = (current.properties as Record<string, JsonSchema> | undefined)?.[part];
  }
  const props = current?.properties as Record<string, JsonSchema> | undefined;
  return props ? Object.keys(props) : undefined;
}

/** Warnings for keys the schema does not know, with the nearest known key. */
export function unknownKeyWarnings(schema: JsonSchema, root: ValueNode | undefined, what: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const walk = (node: ValueNode, path: (string | number)[]) => {
    if (node.kind === 'seq') node.items.forEach((item, i) => walk(item, [...path, i]));
    if (node.kind !== 'map') return;
    const known = knownKeys(schema, path);
    const isFreeForm = known === undefined;
    for (const [key, child] of node.entries) {
      if (!isFreeForm && !known.includes(key)) {
        const suggestion = nearest(key, known);
        out.push({
          severity: 'warning',
          message: `unknown ${what} key "${key}" is ignored${suggestion ? `; did you mean "${suggestion}"?` : ''}`,
          path: [...path, key],
          location: child.origin.location,
        });
        continue;
      }
      if (!isFreeForm) walk(child, [...path, key]);
    }
  };
  if (root) walk(root, []);
  return out;
}

/** The fields StarlingX reads as regular expressions must compile. */
function regexProblems(root: ValueNode | undefined): Diagnostic[] {
  const out: Diagnostic[] = [];
  const check = (node: ValueNode | undefined, path: (string | number)[], what: string) => {
    if (node?.kind !== 'scalar' || typeof node.value !== 'string') return;
    try {
      new RegExp(node.value);
    } catch {
      out.push({ severity: 'error', message: `expected ${what}, got ${JSON.stringify(node.value)}`, path, location: node.origin.location });
    }
  };
  const versions = getNode(root, ['upgrades', 'from_versions']);
  if (versions?.kind === 'seq') versions.items.forEach((item, i) => check(item, ['upgrades', 'from_versions', i], 'a valid regular expression'));
  const apps = getNode(root, ['dependent_apps']);
  if (apps?.kind === 'seq')
    apps.items.forEach((app, i) =>
      check(getNode(app, ['version']), ['dependent_apps', i, 'version'], 'a regular expression matched against the whole version'),
    );
  return out;
}

/**
 * The chart repositories a StarlingX platform serves: sysinv refuses a
 * HelmRepository URL whose last path segment is another, and uploads an app's
 * charts to metadata `helm_repo`, `starlingx` when unset.
 */
export const STARLINGX_HELM_REPOS: readonly string[] = ['starlingx', 'stx-platform'];
export const DEFAULT_HELM_REPO = 'starlingx';

/** The repository a HelmRepository URL names for sysinv (its last path segment), and whether StarlingX serves it. */
export function starlingxRepositoryOfUrl(url: string): { readonly segment: string; readonly supported: boolean } {
  const segment = url.replace(/\/+$/, '').split('/').pop() ?? '';
  return { segment, supported: STARLINGX_HELM_REPOS.includes(segment) };
}

export interface AppMetadata {
  readonly appName: string;
  readonly appVersion: string;
  readonly helmRepo?: string;
  readonly disabledCharts: readonly string[];
  /** The Kubernetes versions the app supports (`supported_k8s_version`). */
  readonly supportedK8sVersion: { readonly minimum: string; readonly maximum?: string };
  readonly maintainUserOverrides: boolean;
  readonly upgrades: { readonly autoUpdate: boolean; readonly updateFailureNoRollback: boolean; readonly fromVersions: readonly RegExp[] };
  readonly applyProgressAdjust: number;
  /** Where the app is deployed (`flotilla.target`, default `both`). */
  readonly target: AppTarget;
  /** Target changes allowed beyond one release at a time (`flotilla.releaseUpgrades`). */
  readonly releaseUpgrades: { readonly skipLevel: readonly { readonly from: string; readonly to: string }[] };
  /** `flotilla.namespace`: the namespace of the app's own objects, when the metadata names it (the App's `namespace` has the default). */
  readonly namespace?: string;
  /** Where the metadata does not fit what current StarlingX runs (its Kubernetes versions): said by `build`, not by every command; none for a plain-Flux app. */
  readonly platformWarnings: readonly Diagnostic[];
  /** The file as written, for shipping unchanged in the tarball. */
  readonly raw: Record<string, unknown>;
}

function parseK8sVersion(text: string): number[] {
  return text.replace(/^v/, '').split('.').map(Number);
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The Kubernetes versions current StarlingX releases run, from sysinv's table
 * of supported versions: its apply refuses an app whose
 * `supported_k8s_version` leaves out the cluster's version (compared as loose
 * versions, so `v1.35` refuses 1.35.1: give full patch versions).
 */
export const STARLINGX_K8S_VERSIONS = { oldest: 'v1.32.2', newest: 'v1.35.2' } as const;

/** Warnings for a supported range that leaves out a Kubernetes version StarlingX runs. */
function platformK8sWarnings(k8s: { minimum: string; maximum?: string }, root: ValueNode): Diagnostic[] {
  const warnings: Diagnostic[] = [];
  const at = (key: string) => ({ path: ['supported_k8s_version', key], location: getNode(root, ['supported_k8s_version', key])?.origin.location });
  if (k8s.maximum !== undefined && compareVersions(parseK8sVersion(k8s.maximum), parseK8sVersion(STARLINGX_K8S_VERSIONS.newest)) < 0) {
    warnings.push({
      severity: 'warning',
      message: `supported_k8s_version.maximum ${k8s.maximum} is below ${STARLINGX_K8S_VERSIONS.newest}, the newest Kubernetes StarlingX runs: the platform refuses to apply the app on a newer cluster (raise it, with the patch version)`,
      ...at('maximum'),
    });
  }
  if (compareVersions(parseK8sVersion(k8s.minimum), parseK8sVersion(STARLINGX_K8S_VERSIONS.oldest)) > 0) {
    warnings.push({
      severity: 'warning',
      message: `supported_k8s_version.minimum ${k8s.minimum} is above ${STARLINGX_K8S_VERSIONS.oldest}, the oldest Kubernetes StarlingX runs: the platform refuses to apply the app on an older cluster`,
      ...at('minimum'),
    });
  }
  return warnings;
}

export interface MetadataResult {
  readonly metadata?: AppMetadata;
  readonly diagnostics: Diagnostic[];
}

/** Checks a parsed metadata.yaml; returns the typed metadata when there are no errors. */
export function readMetadata(root: ValueNode | undefined, file: string, check: SchemaChecker = checkSchema): MetadataResult {
  const diagnostics = [...check(metadataSchema, root, file), ...regexProblems(root), ...unknownKeyWarnings(metadataSchema, root, 'metadata')];
  if (!root || diagnostics.some((d) => d.severity === 'error')) return { diagnostics };
  const raw = toPlain(root) as Record<string, unknown>;
  const k8s = raw.supported_k8s_version as { minimum: string; maximum?: string };
  if (k8s.maximum !== undefined && compareVersions(parseK8sVersion(k8s.minimum), parseK8sVersion(k8s.maximum)) > 0) {
    diagnostics.push({
      severity: 'error',
      message: `supported_k8s_version.minimum ${k8s.minimum} is above maximum ${k8s.maximum}`,
      path: ['supported_k8s_version'],
      location: getNode(root, ['supported_k8s_version', 'maximum'])?.origin.location,
    });
    return { diagnostics };
  }
  const upgrades = (raw.upgrades ?? {}) as Record<string, unknown>;
  const own = raw.flotilla as { target?: AppTarget; releaseUpgrades?: { skipLevel?: { from: string; to: string }[] } } | undefined;
  const target = (own?.target ?? 'both') satisfies AppTarget;
  const metadata: AppMetadata = {
    appName: String(raw.app_name),
    appVersion: String(raw.app_version),
    helmRepo: raw.helm_repo as string | undefined,
    disabledCharts: (raw.disabled_charts as string[] | undefined) ?? [],
    supportedK8sVersion: k8s,
    maintainUserOverrides: readStxBool(raw.maintain_user_overrides ?? false) ?? false,
    upgrades: {
      autoUpdate: readStxBool(upgrades.auto_update ?? false) ?? false,
      updateFailureNoRollback: readStxBool(upgrades.update_failure_no_rollback ?? false) ?? false,
      fromVersions: ((upgrades.from_versions as string[] | undefined) ?? []).map((r) => new RegExp(`^(?:${r})$`)),
    },
    applyProgressAdjust: (raw.apply_progress_adjust as number | undefined) ?? 0,
    target,
    releaseUpgrades: { skipLevel: (own?.releaseUpgrades?.skipLevel ?? []).map((jump) => ({ from: String(jump.from), to: String(jump.to) })) },
    ...((raw.flotilla as { namespace?: string } | undefined)?.namespace !== undefined ? { namespace: (raw.flotilla as { namespace: string }).namespace } : {}),
    platformWarnings: target === 'flux' ? [] : platformK8sWarnings(k8s, root),
    raw,
  };
  return { metadata, diagnostics };
}
