{{/*
Images.

Every image is `images.tags.<field>`, a full reference (registry/repo:tag).
Fields are openstack-helm names (keystone_api, db_init, dep_check, ...);
overrides/versions/images.yaml maps them from the release catalog.
*/}}

{{/*
toolkit.imageRef (dict "ctx" $ "key" "keystone_api")
toolkit.imageRef (dict "ctx" $ "keys" (list "cinder_volume_ceph" "cinder_volume"))
-> the reference of the first field that is set. Fails naming every field
tried when none is.
*/}}
{{- define "toolkit.imageRef" -}}
{{- $tags := .ctx.Values.images.tags | default dict -}}
{{- $keys := .keys | default (list .key) -}}
{{- $ref := "" -}}
{{- range $keys -}}
{{- if and (not $ref) (index $tags .) -}}
{{- $ref = index $tags . -}}
{{- end -}}
{{- end -}}
{{- if not $ref -}}
{{- fail (printf "no image: set images.tags.%s" (join " or images.tags." $keys)) -}}
{{- end -}}
{{- $ref -}}
{{- end -}}

{{/* toolkit.image (same arguments) -> `image:` and `imagePullPolicy:` lines of a container */}}
{{- define "toolkit.image" -}}
image: {{ include "toolkit.imageRef" . | quote }}
imagePullPolicy: {{ .ctx.Values.images.pull_policy | default "IfNotPresent" }}
{{- end -}}

{{/* toolkit.imagePullSecrets CTX -> `imagePullSecrets:` of a pod spec, or nothing */}}
{{- define "toolkit.imagePullSecrets" -}}
{{- with .Values.images.pull_secrets -}}
imagePullSecrets:
{{- range . }}
  - name: {{ . }}
{{- end }}
{{- end -}}
{{- end -}}
