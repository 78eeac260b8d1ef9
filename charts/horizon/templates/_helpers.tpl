{{/*
horizon.py VALUE -> a Python literal: maps become dicts (sorted keys),
lists lists, booleans True/False, null None, strings quoted.
*/}}
{{- define "horizon.py" -}}
{{- if kindIs "map" . -}}
{ {{- range $i, $k := keys . | sortAlpha }}{{ if $i }}, {{ end }}{{ toJson $k }}: {{ include "horizon.py" (index $ $k) }}{{ end -}} }
{{- else if kindIs "slice" . -}}
[{{ range $i, $v := . }}{{ if $i }}, {{ end }}{{ include "horizon.py" $v }}{{ end }}]
{{- else if kindIs "bool" . -}}
{{ ternary "True" "False" . }}
{{- else if kindIs "invalid" . -}}
None
{{- else if kindIs "string" . -}}
{{ toJson . }}
{{- else -}}
{{ include "toolkit.iniScalar" . }}
{{- end -}}
{{- end -}}

{{/*
Settings derived from endpoints and conf.horizon.policy, under conf.horizon.local_settings.
POLICY_FILES: conf.horizon.policy is keyed by chart (keystone, nova, ...); Horizon
keys its policy files by its own service names (identity, compute, ...).
*/}}
{{- define "horizon.derivedSettings" -}}
{{- $db := include "toolkit.endpoint.scope" (dict "ctx" . "type" "oslo_db" "scope" "internal") | fromYaml -}}
{{- $dbAuth := .Values.endpoints.oslo_db.auth.horizon -}}
{{- $public := include "toolkit.endpoint.scope" (dict "ctx" . "type" "dashboard" "scope" "public") | fromYaml -}}
{{- $policyFiles := dict -}}
{{- $horizonName := dict "keystone" "identity" "nova" "compute" "cinder" "volume" "glance" "image" "neutron" "network" -}}
{{- range $chart, $rules := .Values.conf.horizon.policy -}}
{{- $_ := set $policyFiles (get $horizonName $chart | default $chart) (printf "%s_policy.yaml" $chart) -}}
{{- end -}}
SECRET_KEY: {{ .Values.endpoints.dashboard.auth.secret_key.value | toString | quote }}
OPENSTACK_KEYSTONE_URL: {{ include "toolkit.endpoint.url" (dict "ctx" . "type" "identity" "scope" "internal") | quote }}
CSRF_TRUSTED_ORIGINS:
  - {{ printf "%s://%s" ($public.scheme | default "http") (include "toolkit.endpoint.host" (dict "ctx" . "type" "dashboard" "scope" "public")) | quote }}
CACHES:
  default:
    BACKEND: django.core.cache.backends.memcached.PyMemcacheCache
    LOCATION: {{ include "toolkit.endpoint.memcache" . | quote }}
DATABASES:
  default:
    ENGINE: django.db.backends.mysql
    NAME: {{ trimPrefix "/" $db.path | quote }}
    USER: {{ $dbAuth.username | quote }}
    PASSWORD: {{ $dbAuth.password | toString | quote }}
    HOST: {{ include "toolkit.endpoint.host" (dict "ctx" . "type" "oslo_db" "scope" "internal") | quote }}
    PORT: {{ include "toolkit.endpoint.port" (dict "ctx" . "type" "oslo_db" "scope" "internal") | quote }}
POLICY_FILES:
  {{- toYaml $policyFiles | nindent 2 }}
{{- end -}}

{{/* local_settings.py text. */}}
{{- define "horizon.localSettings" -}}
{{- $settings := mergeOverwrite (include "horizon.derivedSettings" . | fromYaml) (deepCopy .Values.conf.horizon.local_settings) -}}
# Rendered by the horizon chart from conf.horizon.local_settings.
{{- range $key, $value := $settings }}
{{ $key }} = {{ include "horizon.py" $value }}
{{- end }}
{{ end -}}

{{/* Files mounted into /etc/openstack-dashboard, and the policy files. */}}
{{- define "horizon.etcMounts" -}}
{{- dict "dir" "/etc/openstack-dashboard" "files" (list "local_settings.py" "flotilla_settings.py" "horizon-uwsgi.ini") | toYaml -}}
{{- end -}}

{{- define "horizon.policyMounts" -}}
{{- range $chart, $rules := .Values.conf.horizon.policy }}
- name: etc
  mountPath: {{ printf "/etc/openstack-dashboard/policy/%s_policy.yaml" $chart }}
  subPath: {{ printf "%s_policy.yaml" $chart }}
  readOnly: true
{{- end }}
{{- end -}}

{{- define "horizon.env" -}}
- {name: DJANGO_SETTINGS_MODULE, value: flotilla_settings}
- {name: PYTHONPATH, value: /etc/openstack-dashboard}
- {name: PYTHONDONTWRITEBYTECODE, value: "1"}
{{- end -}}
