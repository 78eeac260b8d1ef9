{{/* Configuration files of glance and where pods mount them. */}}
{{- define "glance.etcMounts" -}}
{{- $files := list "glance-api.conf" "glance-api-paste.ini" "policy.yaml" -}}
{{- if eq (include "glance.apiMode" .) "wsgi" -}}
{{- $files = append $files "glance-api-uwsgi.ini" -}}
{{- end -}}
{{- dict "dir" "/etc/glance" "files" $files | toYaml -}}
{{- end -}}

{{/* Fails unless api.mode is one the chart knows. */}}
{{- define "glance.apiMode" -}}
{{- $mode := .Values.api.mode -}}
{{- if not (has $mode (list "wsgi" "proxy")) -}}
{{- fail (printf "api.mode must be wsgi or proxy, not %v" $mode) -}}
{{- end -}}
{{- $mode -}}
{{- end -}}

{{/*
Options derived from `storage` and `api.mode`, merged under conf.glance:
the multi-store backend, and in proxy mode the loopback listener.
*/}}
{{- define "glance.derivedConf" -}}
{{- $conf := dict -}}
{{- if eq .Values.storage "rbd" -}}
{{- $_ := set $conf "DEFAULT" (dict "enabled_backends" "rbd:rbd") -}}
{{- $_ := set $conf "glance_store" (dict "default_backend" "rbd") -}}
{{- $_ := set $conf "rbd" (dict "rbd_store_pool" .Values.ceph_client.pool "rbd_store_user" .Values.ceph_client.user "rbd_store_ceph_conf" "/etc/ceph/ceph.conf" "rbd_store_chunk_size" 8) -}}
{{- else if eq .Values.storage "file" -}}
{{- $_ := set $conf "DEFAULT" (dict "enabled_backends" "file:file") -}}
{{- $_ := set $conf "glance_store" (dict "default_backend" "file") -}}
{{- $_ := set $conf "file" (dict "filesystem_store_datadir" "/var/lib/glance/images") -}}
{{- else -}}
{{- fail (printf "storage must be file or rbd, not %v" .Values.storage) -}}
{{- end -}}
{{- if eq (include "glance.apiMode" .) "proxy" -}}
{{- $_ := set $conf.DEFAULT "bind_host" "127.0.0.1" -}}
{{- $_ := set $conf.DEFAULT "bind_port" .Values.api.backend_port -}}
{{- end -}}
{{- toYaml $conf -}}
{{- end -}}
