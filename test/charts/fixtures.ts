/**
 * Small chart sources written into temp folders: an openstack-helm style
 * checkout (a `helm-toolkit` library next to service charts that depend on
 * it through `file://../helm-toolkit`) and helpers to write arbitrary trees.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export type Tree = Record<string, string | Buffer>;

export async function writeTree(root: string, tree: Tree): Promise<string> {
  for (const [path, data] of Object.entries(tree)) {
    const full = join(root, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, data);
  }
  return root;
}

/** A temp folder removed by the returned cleanup. */
export async function tempDir(prefix = 'flotilla-charts-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export const helmToolkit: Tree = {
  'Chart.yaml': 'apiVersion: v2\nname: helm-toolkit\nversion: 0.2.5\ntype: library\ndescription: shared templates\n',
  'values.yaml': '{}\n',
  'templates/_endpoints.tpl': [
    '{{- define "helm-toolkit.endpoints.host" -}}',
    '{{- printf "%s.%s.svc" .name .namespace -}}',
    '{{- end -}}',
    '',
  ].join('\n'),
  'templates/_labels.tpl': '{{- define "helm-toolkit.labels" -}}\napp.kubernetes.io/managed-by: flotilla\n{{- end -}}\n',
  '.helmignore': '# the toolkit keeps its own notes out of packages\nNOTES.md\n',
  'NOTES.md': 'not packaged\n',
};

/** A service chart using helm-toolkit the openstack-helm way. */
export function serviceChart(name: string, extra: Tree = {}): Tree {
  return {
    'Chart.yaml': [
      '# comments stay in packaged Chart.yaml',
      'apiVersion: v2',
      `name: ${name}`,
      'version: 0.3.1',
      'appVersion: "2025.1"',
      `description: OpenStack ${name}`,
      'dependencies:',
      '  - name: helm-toolkit',
      '    repository: file://../helm-toolkit',
      '    version: ">= 0.1.0"',
      '',
    ].join('\n'),
    'values.yaml': 'endpoint:\n  name: api\n  namespace: openstack\nreplicas: 1\n',
    'templates/configmap.yaml': [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      `  name: ${name}-etc`,
      '  labels:',
      '{{ include "helm-toolkit.labels" . | indent 4 }}',
      'data:',
      '  host: {{ include "helm-toolkit.endpoints.host" .Values.endpoint | quote }}',
      '  replicas: {{ .Values.replicas | quote }}',
      '',
    ].join('\n'),
    '.helmignore': '# editor leftovers\n*.swp\n*.bak\ndocs/\n/local-notes.txt\n',
    'docs/design.md': 'ignored folder\n',
    'templates/configmap.yaml.bak': 'ignored backup\n',
    'local-notes.txt': 'ignored at the root only\n',
    'files/local-notes.txt': 'kept: the rooted rule only matches at the root\n',
    'templates/.editorconfig': 'ignored by Helm default rule\n',
    ...extra,
  };
}

/** An openstack-helm style checkout: helm-toolkit plus the given service charts, side by side. */
export async function writeCheckout(root: string, services: readonly string[] = ['keystone']): Promise<string> {
  await writeTree(join(root, 'helm-toolkit'), helmToolkit);
  for (const name of services) await writeTree(join(root, name), serviceChart(name));
  return root;
}
