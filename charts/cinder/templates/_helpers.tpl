{{/*
cinder.etcMounts (dict "ctx" $ ["extra" (list "api-paste.ini")])
-> the files a cinder container mounts in /etc/cinder: cinder.conf and
policy.yaml, plus what only the API needs.
*/}}
{{- define "cinder.etcMounts" -}}
{{- dict "dir" "/etc/cinder" "files" (concat (list "cinder.conf" "policy.yaml") (.extra | default list)) | toYaml -}}
{{- end -}}

{{/* Names of the enabled backends, sorted, as a YAML list. Fails on names that are not DNS labels. */}}
{{- define "cinder.enabledBackends" -}}
{{- $names := list -}}
{{- range $name, $b := .Values.conf.backends -}}
{{- if and $b $b.enabled -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $name) -}}
{{- fail (printf "conf.backends.%s: a backend name must be a DNS label (lower case letters, digits, -)" $name) -}}
{{- end -}}
{{- $names = append $names $name -}}
{{- end -}}
{{- end -}}
{{- toYaml $names -}}
{{- end -}}

{{/*
cinder.pick (dict "map" .Values.pod.replicas "keys" (list "volume_ceph" "volume"))
-> the first of `keys` present in `map` (the key, not the value); "" when none.
*/}}
{{- define "cinder.pick" -}}
{{- $found := "" -}}
{{- range .keys -}}
{{- if and (not $found) (hasKey $.map .) -}}{{- $found = . -}}{{- end -}}
{{- end -}}
{{- $found -}}
{{- end -}}

{{/* The volume_backend_name of a backend (its options', default: its name). */}}
{{- define "cinder.backendName" -}}
{{- $b := index .ctx.Values.conf.backends .name -}}
{{- ($b.options | default dict).volume_backend_name | default .name -}}
{{- end -}}

{{/*
cinder.backendFile (dict "ctx" $ "name" "ceph")
-> backend-<name>.conf: enabled_backends limited to this backend, and its
section. backend_host is stable (`cinder-volume`), so volumes keep their
host when pods are replaced: volumes show as cinder-volume@<name>#<pool>.
*/}}
{{- define "cinder.backendFile" -}}
{{- $b := index .ctx.Values.conf.backends .name -}}
{{- $section := dict "volume_backend_name" (include "cinder.backendName" .) "backend_host" "cinder-volume" -}}
{{- $section = mergeOverwrite $section (deepCopy ($b.options | default dict)) -}}
{{- include "toolkit.ini" (dict "DEFAULT" (dict "enabled_backends" .name) .name $section) -}}
{{- end -}}

{{/* Options derived from endpoints and backends, merged under conf.cinder. */}}
{{- define "cinder.derivedConf" -}}
{{- $backends := include "cinder.enabledBackends" . | fromYamlArray -}}
{{- $default := dict "glance_api_servers" (include "toolkit.endpoint.url" (dict "ctx" . "type" "image" "scope" "internal" "path" "")) -}}
{{- with $backends -}}
{{- $_ := set $default "default_volume_type" (first .) -}}
{{- end -}}
{{- dict "DEFAULT" $default | toYaml -}}
{{- end -}}
