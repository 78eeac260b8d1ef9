{{/* Configuration files of keystone and where pods mount them. */}}
{{- define "keystone.etcMounts" -}}
{{- dict "dir" "/etc/keystone" "files" (list "keystone.conf" "policy.yaml" "keystone-api-uwsgi.ini") | toYaml -}}
{{- end -}}

{{/* The Secrets holding the key repositories (created by the setup Jobs, not by Helm). */}}
{{- define "keystone.keysSecret" -}}
{{- printf "keystone-%s-keys" . -}}
{{- end -}}

{{/* Environment of the jobs that manage a key repository. */}}
{{- define "keystone.keyJobEnv" -}}
- name: KEYS_SECRET
  value: {{ include "keystone.keysSecret" . }}
{{- end -}}
