/**
 * Small apps written into temp folders, so tests exercise the documented
 * layout on apps other than the default one. `baseApp()` is a complete,
 * valid two-release app (a library chart plus two charts); tests override
 * or delete files to make the case they need.
 */
import { mkdtempSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll } from 'vitest';

export type Files = Record<string, string | null>;

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(prefix = 'flotilla-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function writeFiles(root: string, files: Files): string {
  for (const [path, content] of Object.entries(files)) {
    if (content === null) continue;
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

/** Sets every file's and folder's time below `dir` (a fresh checkout made at another time). */
export function touchAll(dir: string, when: Date): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) touchAll(path, when);
    utimesSync(path, when, when);
  }
}

/** Writes `baseApp()` with `changes` applied (null deletes a file) into a new temp folder. */
export function writeApp(changes: Files = {}): string {
  const files: Files = { ...baseApp(), ...changes };
  for (const [k, v] of Object.entries(files)) if (v === null) delete files[k];
  return writeFiles(tempDir('flotilla-app-'), files);
}

export function baseApp(): Files {
  return {
    'fluxcd/metadata.yaml': `app_name: demo\napp_version: 1.0-1\nsupported_k8s_version:\n  minimum: v1.29.0\nmaintain_user_overrides: yes\n`,
    'fluxcd/releases.yaml': `defaults:
  namespace: demo
  releaseNamePrefix: demo-
  timeout: 10m
releases:
  - name: db
    chart: db
    service: database
    group: infra
  - name: web
    chart: web
    service: frontend
    group: apps
    dependsOn: [db]
`,
    'overrides/deployment.yaml': `main:
  release: "2.0"
  preset: standard
  size: small
  domain: example.org
features:
  services: [frontend]
common:
  charts:
    values:
      labels:
        team: platform
  groups:
    apps:
      values:
        pod:
          replicas: 2
services:
  frontend:
    web:
      values:
        conf:
          banner: from-service
`,
    'overrides/presets/standard.yaml': `features:\n  services: [frontend]\ncommon:\n  charts:\n    values:\n      labels:\n        tier: standard\n`,
    'overrides/sizes/small.yaml': `services:\n  frontend:\n    web:\n      values:\n        resources:\n          cpu: 100m\n`,
    'overrides/versions/1.0.yaml': `release: "1.0"\nimages:\n  web: docker.io/library/nginx:1.24\n  db: docker.io/library/mariadb:10.6\nserviceDefaults:\n  modern: false\n`,
    'overrides/versions/2.0.yaml': `release: "2.0"\nimages:\n  web: docker.io/library/nginx:1.27\n  db: docker.io/library/mariadb:11.4\nserviceDefaults:\n  modern: true\n`,
    'overrides/versions/images.yaml': `web:\n  web: images.tags.web\ndb:\n  db: images.tags.db\n`,
    'overrides/static/web.yaml': `# Static overrides: shipped as they are.\nconf:\n  banner: from-static   # replaced by the service layer\n  greeting: hello\nlist:\n  - a\n  - b\n`,
    'overrides/templates/web.yaml.hbs': `conf:
  host: web.{{main.domain}}
{{#if version.serviceDefaults.modern}}
  mode: modern
{{else}}
  mode: classic
{{/if}}
  release: "{{version.release}}"
`,
    'charts/lib/Chart.yaml': `apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n`,
    'charts/lib/templates/_helpers.tpl': `{{- define "lib.labels" -}}\napp.kubernetes.io/name: {{ .Chart.Name }}\napp.kubernetes.io/instance: {{ .Release.Name }}\n{{- end -}}\n`,
    ...simpleChart('db'),
    ...simpleChart('web'),
  };
}

/** A chart with a ConfigMap and a Deployment, depending on ../lib, with a schema for replicas. */
export function simpleChart(name: string, prefix = 'charts'): Files {
  return {
    [`${prefix}/${name}/Chart.yaml`]: `apiVersion: v2\nname: ${name}\nversion: 0.1.0\ndependencies:\n  - name: lib\n    version: 0.1.0\n    repository: file://../lib\n`,
    [`${prefix}/${name}/values.yaml`]: `images:\n  tags:\n    ${name}: example/${name}:0\npod:\n  replicas: 1\nconf:\n  banner: default\nlabels: {}\nlist: []\n`,
    [`${prefix}/${name}/values.schema.json`]: JSON.stringify({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { pod: { type: 'object', properties: { replicas: { type: 'integer', minimum: 0 } } } },
    }),
    [`${prefix}/${name}/templates/configmap.yaml`]: `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-conf
  labels:
{{ include "lib.labels" . | indent 4 }}
data:
{{- range $k, $v := .Values.conf }}
  {{ $k }}: {{ $v | quote }}
{{- end }}
`,
    [`${prefix}/${name}/templates/deployment.yaml`]: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.pod.replicas }}
  selector:
    matchLabels:
      app: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}
    spec:
      containers:
        - name: main
          image: {{ .Values.images.tags.${name} }}
`,
  };
}
