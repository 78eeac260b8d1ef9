{{/*
Names and labels.

Objects are named after the chart (`keystone-api`, `glance-db-sync`): one
release of a chart per namespace, as openstack-helm does, so the names other
charts use to reach a service (`keystone-api`, `mariadb`) do not depend on the
Helm release name.
*/}}

{{/* toolkit.name CTX -> the application name (chart name unless nameOverride). */}}
{{- define "toolkit.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* toolkit.fullname (dict "ctx" $ "component" "api") -> keystone-api */}}
{{- define "toolkit.fullname" -}}
{{- $name := include "toolkit.name" .ctx -}}
{{- if .component -}}
{{- printf "%s-%s" $name .component | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name -}}
{{- end -}}
{{- end -}}

{{/*
toolkit.selectorLabels (dict "ctx" $ "component" "api")
Stable labels: used in selectors, never change for the life of a release.
*/}}
{{- define "toolkit.selectorLabels" -}}
app.kubernetes.io/name: {{ include "toolkit.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end -}}

{{/*
toolkit.labels (dict "ctx" $ "component" "api")
Full label set. `application` / `component` / `release_group` are the labels
openstack-helm based tooling (and StarlingX lifecycle code) selects on.
*/}}
{{- define "toolkit.labels" -}}
{{ include "toolkit.selectorLabels" . }}
app.kubernetes.io/part-of: openstack
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- with .ctx.Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" }}
application: {{ include "toolkit.name" .ctx }}
{{- if .component }}
component: {{ .component }}
{{- end }}
release_group: {{ .ctx.Release.Name }}
{{- end -}}

{{/* toolkit.metadata (dict "ctx" $ "component" "api" "name" "override") -> metadata block body */}}
{{- define "toolkit.metadata" -}}
name: {{ .name | default (include "toolkit.fullname" .) }}
labels:
  {{- include "toolkit.labels" . | nindent 2 }}
{{- end -}}

{{/* toolkit.underscore "db-sync" -> db_sync (component name to values key) */}}
{{- define "toolkit.underscore" -}}
{{- . | replace "-" "_" -}}
{{- end -}}
