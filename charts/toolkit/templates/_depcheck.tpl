{{/*
Dependency checks.

A workload's pods start with an init container running kubernetes-entrypoint
(image field `dep_check`) that blocks until what `dependencies.<component>`
names is ready:

  dependencies:
    api:
      services: [oslo_db, oslo_cache]   # endpoint types; their internal Service must have ready endpoints
      jobs: [db-sync, bootstrap]        # job components of this release; must have succeeded
      daemonsets: [ovn-controller]      # a pod of this DaemonSet must be ready on the same node

Jobs are matched by label, not by name (job names carry a content hash, see
toolkit.job), and a job whose manifests.job_<name> is false is not waited
for. A map entry under jobs is passed through as a raw kubernetes-entrypoint
job selector, e.g. {labels: {application: keystone, component: bootstrap}}.
*/}}

{{/* toolkit.depCheck.jobs (dict "ctx" $ "jobs" (list "db-sync")) -> JSON list of job selectors */}}
{{- define "toolkit.depCheck.jobs" -}}
{{- $ctx := .ctx -}}
{{- $out := list -}}
{{- range .jobs -}}
{{- if kindIs "string" . -}}
{{- $toggle := printf "job_%s" (include "toolkit.underscore" .) -}}
{{- if or (not (hasKey $ctx.Values.manifests $toggle)) (index $ctx.Values.manifests $toggle) -}}
{{- $out = append $out (dict "labels" (dict "app.kubernetes.io/instance" $ctx.Release.Name "app.kubernetes.io/component" .)) -}}
{{- end -}}
{{- else -}}
{{- $out = append $out . -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
toolkit.depCheck (dict "ctx" $ "component" "api")
-> one init container (a list item), or nothing when the component has no
dependencies.
*/}}
{{- define "toolkit.depCheck" -}}
{{- $ctx := .ctx -}}
{{- $deps := index ($ctx.Values.dependencies | default dict) .component | default dict -}}
{{- if or $deps.services $deps.jobs $deps.daemonsets -}}
{{- $services := list -}}
{{- range ($deps.services | default list) -}}
{{- $services = append $services (include "toolkit.endpoint.serviceRef" (dict "ctx" $ctx "type" .)) -}}
{{- end -}}
- name: dep-check
  {{- include "toolkit.image" (dict "ctx" $ctx "key" "dep_check") | nindent 2 }}
  command: [kubernetes-entrypoint]
  env:
    - name: PATH
      value: /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: NAMESPACE
      valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
    - name: INTERFACE_NAME
      value: eth0
    - name: DEPENDENCY_SERVICE
      value: {{ join "," $services | quote }}
    - name: DEPENDENCY_JOBS_JSON
      value: {{ include "toolkit.depCheck.jobs" (dict "ctx" $ctx "jobs" ($deps.jobs | default list)) | quote }}
    - name: DEPENDENCY_DAEMONSET
      value: {{ join "," ($deps.daemonsets | default list) | quote }}
    - name: DEPENDENCY_CONTAINER
      value: ""
    - name: DEPENDENCY_POD_JSON
      value: ""
    - name: COMMAND
      value: "echo done"
  securityContext:
    runAsUser: 65534
    runAsNonRoot: true
    allowPrivilegeEscalation: false
    readOnlyRootFilesystem: true
    capabilities: {drop: [ALL]}
  {{- include "toolkit.resources" (dict "ctx" $ctx "component" "dep_check") | nindent 2 }}
{{- end -}}
{{- end -}}

{{/*
toolkit.rbac CTX -> the chart's ServiceAccount, and a Role + RoleBinding that
let kubernetes-entrypoint read what it waits for. `rbac.extraRules` (a list
of PolicyRules) adds chart-specific permissions.
*/}}
{{- define "toolkit.rbac" -}}
{{- $name := include "toolkit.name" . -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  {{- include "toolkit.metadata" (dict "ctx" . "name" $name) | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  {{- include "toolkit.metadata" (dict "ctx" . "component" "dep-check") | nindent 2 }}
rules:
  - apiGroups: [""]
    resources: [services, endpoints, pods]
    verbs: [get, list]
  - apiGroups: [batch]
    resources: [jobs]
    verbs: [get, list]
  - apiGroups: [apps]
    resources: [daemonsets, statefulsets]
    verbs: [get, list]
  {{- with (.Values.rbac | default dict).extraRules }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  {{- include "toolkit.metadata" (dict "ctx" . "component" "dep-check") | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "toolkit.fullname" (dict "ctx" . "component" "dep-check") }}
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ .Release.Namespace }}
{{- end -}}
