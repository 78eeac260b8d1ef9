{{/* Configuration files of placement and where pods mount them. */}}
{{- define "placement.etcMounts" -}}
{{- dict "dir" "/etc/placement" "files" (list "placement.conf" "policy.yaml" "placement-api-uwsgi.ini") | toYaml -}}
{{- end -}}
