/**
 * What a kustomization in a tarball may name before `kubectl kustomize` is
 * let near it: files and folders that the tarball itself holds under
 * fluxcd-manifests/. kustomize fetches anything else it cannot find locally
 * (a URL, a git repository, `github.com/org/repo//path`), and an absolute
 * path or `..` would read the verifying machine; helm chart inflation would
 * run helm and pull charts. All of these are refused before kustomize runs.
 */
import { posix } from 'node:path';
import { MANIFESTS_DIR, type OpenedBundle } from '../tarball/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import { yamlOf } from './bundle.js';

const KUSTOMIZATION_FILE = /(^|\/)(kustomization\.ya?ml|Kustomization)$/;
/** Fields whose items are file or folder references. */
const LIST_FIELDS = ['resources', 'bases', 'components', 'crds', 'configurations', 'generators', 'transformers', 'validators', 'patchesStrategicMerge'];
/** Fields whose items reference a file by `path`. */
const PATH_ITEM_FIELDS = ['patches', 'patchesJson6902', 'replacements'];
/** Generators whose items name files in `files` (`key=path` allowed), `envs` and `env`. */
const GENERATOR_FIELDS = ['configMapGenerator', 'secretGenerator'];
/** kustomize runs helm for these and may download charts. */
const HELM_FIELDS = ['helmCharts', 'helmChartInflationGenerator', 'helmGlobals'];

/** The fields kustomize resolves remotely when no local file or folder matches. */
const FETCHED = /^(resources|bases|components)\[/;

const REMOTE = /^[A-Za-z][A-Za-z0-9+.-]*:|^git@|^(github\.com|gitlab\.com|bitbucket\.org)\/|\/\/.*\?ref=/;

interface Reference {
  readonly field: string;
  readonly value: string;
  /** Whether kustomize reads the text inline (a patch body) rather than as a path. */
  readonly inline?: boolean;
}

function referencesOf(doc: Record<string, unknown>): Reference[] {
  const refs: Reference[] = [];
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
  for (const field of LIST_FIELDS) {
    list(doc[field]).forEach((item, i) => {
      // patchesStrategicMerge items may be inline patches rather than paths.
      if (typeof item === 'string') refs.push({ field: `${field}[${i}]`, value: item, inline: field === 'patchesStrategicMerge' && item.includes('\n') });
    });
  }
  for (const field of PATH_ITEM_FIELDS) {
    list(doc[field]).forEach((item, i) => {
      const path = (item as { path?: unknown } | null)?.path;
      if (typeof path === 'string') refs.push({ field: `${field}[${i}].path`, value: path });
    });
  }
  for (const field of GENERATOR_FIELDS) {
    list(doc[field]).forEach((item, i) => {
      const generator = (item ?? {}) as { files?: unknown; envs?: unknown; env?: unknown };
      list(generator.files).forEach((file, j) => {
        if (typeof file === 'string') refs.push({ field: `${field}[${i}].files[${j}]`, value: file.includes('=') ? file.slice(file.indexOf('=') + 1) : file });
      });
      list(generator.envs).forEach((env, j) => {
        if (typeof env === 'string') refs.push({ field: `${field}[${i}].envs[${j}]`, value: env });
      });
      if (typeof generator.env === 'string') refs.push({ field: `${field}[${i}].env`, value: generator.env });
    });
  }
  const openapi = (doc.openapi as { path?: unknown } | undefined)?.path;
  if (typeof openapi === 'string') refs.push({ field: 'openapi.path', value: openapi });
  return refs;
}

/**
 * Every reference of every kustomization under fluxcd-manifests/ that is not
 * a file or folder of the tarball, one problem line each (empty: kustomize
 * may run).
 */
export function kustomizationReferenceProblems(bundle: OpenedBundle): string[] {
  const problems: string[] = [];
  const root = `${MANIFESTS_DIR}/`;
  const exists = (path: string): boolean => bundle.files.has(path) || [...bundle.files.keys()].some((f) => f.startsWith(`${path}/`));
  for (const file of bundle.files.keys()) {
    if (!file.startsWith(root) || !KUSTOMIZATION_FILE.test(file)) continue;
    let doc: unknown;
    try {
      doc = yamlOf(bundle, file);
    } catch (error) {
      if (!(error instanceof FlotillaError)) throw error;
      problems.push(error.message);
      continue;
    }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
      problems.push(`${file}: not a kustomization (expected a mapping)`);
      continue;
    }
    const kustomization = doc as Record<string, unknown>;
    for (const field of HELM_FIELDS) {
      if (kustomization[field] !== undefined) problems.push(`${file}: ${field} is not allowed (kustomize would run helm and may download charts)`);
    }
    for (const ref of referencesOf(kustomization)) {
      if (ref.inline) continue;
      const where = `${file}: ${ref.field} ${JSON.stringify(ref.value)}`;
      if (REMOTE.test(ref.value)) {
        problems.push(`${where} is a remote resource; a tarball must be self-contained (kustomize is never let fetch)`);
        continue;
      }
      if (ref.value.startsWith('/')) {
        problems.push(`${where} is an absolute path; a tarball may only name its own files`);
        continue;
      }
      const resolved = posix.normalize(posix.join(posix.dirname(file), ref.value)).replace(/\/$/, '');
      if (!resolved.startsWith(root)) problems.push(`${where} leaves ${MANIFESTS_DIR}/`);
      else if (!exists(resolved))
        problems.push(`${where} is not in the tarball${FETCHED.test(ref.field) ? ' (kustomize would try to fetch it as a remote resource)' : ''}`);
    }
  }
  return problems;
}
