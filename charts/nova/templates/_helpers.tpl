{{/*
nova.etcMounts (dict "ctx" $ ["extra" (list "nova-api-uwsgi.ini")])
-> the configuration files a nova container mounts in /etc/nova: nova.conf
and policy.yaml, plus the API's paste and uWSGI files where they serve one.
*/}}
{{- define "nova.etcMounts" -}}
{{- dict "dir" "/etc/nova" "files" (concat (list "nova.conf" "policy.yaml") (.extra | default list)) | toYaml -}}
{{- end -}}

{{/* The databases nova uses: [database] = cell1, [api_database], and cell0 (mapped by db-sync). */}}
{{- define "nova.databases" -}}
{{- list "oslo_db" "oslo_db_api" "oslo_db_cell0" | toYaml -}}
{{- end -}}

{{/*
nova.libvirtConf MAP -> libvirt configuration syntax: strings quoted,
numbers and booleans (as 0/1) bare, lists as [ "a", "b" ].
*/}}
{{- define "nova.libvirtConf" -}}
{{- range $key, $value := . }}
{{- if kindIs "slice" $value }}
{{ $key }} = [ {{ range $i, $v := $value }}{{ if $i }}, {{ end }}{{ $v | toString | quote }}{{ end }} ]
{{- else if kindIs "bool" $value }}
{{ $key }} = {{ $value | ternary 1 0 }}
{{- else if or (kindIs "float64" $value) (kindIs "int" $value) (kindIs "int64" $value) }}
{{ $key }} = {{ include "toolkit.iniScalar" $value }}
{{- else if not (kindIs "invalid" $value) }}
{{ $key }} = {{ $value | toString | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Options derived from endpoints, merged under conf.nova. */}}
{{- define "nova.derivedConf" -}}
{{- if .Values.ceph_client.enabled }}
libvirt:
  rbd_user: {{ .Values.ceph_client.user | quote }}
  rbd_secret_uuid: {{ .Values.ceph_client.secret_uuid | quote }}
{{- end }}
neutron:
  metadata_proxy_shared_secret: {{ .Values.endpoints.compute_metadata.auth.shared_secret.password | toString | quote }}
vnc:
  novncproxy_base_url: {{ include "toolkit.endpoint.url" (dict "ctx" . "type" "compute_novnc_proxy" "scope" "public") | quote }}
{{- end -}}
