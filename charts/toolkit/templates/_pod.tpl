{{/*
Pod plumbing shared by every workload.
*/}}

{{/*
toolkit.resources (dict "ctx" $ "component" "api")
-> `resources:` from pod.resources.<component>; `keys` (a list) tries
several components in order, e.g. (list "volume_ceph" "volume").
*/}}
{{- define "toolkit.resources" -}}
{{- $all := .ctx.Values.pod.resources | default dict -}}
{{- $res := dict -}}
{{- range (.keys | default (list .component)) -}}
{{- if and (not $res) (index $all .) -}}
{{- $res = index $all . -}}
{{- end -}}
{{- end -}}
resources:
{{- if $res }}
  {{- toYaml $res | nindent 2 }}
{{- else }} {}
{{- end }}
{{- end -}}

{{/*
toolkit.replicas (dict "ctx" $ "keys" (list "volume_ceph" "volume"))
-> pod.replicas of the first key that is set (0 counts as set).
*/}}
{{- define "toolkit.replicas" -}}
{{- $all := .ctx.Values.pod.replicas | default dict -}}
{{- $n := "" -}}
{{- range (.keys | default (list .component)) -}}
{{- if and (eq (toString $n) "") (hasKey $all .) -}}
{{- $n = index $all . -}}
{{- end -}}
{{- end -}}
{{- if eq (toString $n) "" -}}1{{- else -}}{{ $n | int }}{{- end -}}
{{- end -}}

{{/*
toolkit.antiAffinity (dict "ctx" $ "component" "api")
-> `affinity:` spreading the component's pods over nodes.
pod.affinity.anti.type: preferred (default) | required.
*/}}
{{- define "toolkit.antiAffinity" -}}
{{- $anti := ((.ctx.Values.pod.affinity | default dict).anti | default dict) -}}
{{- $term := dict "topologyKey" ($anti.topology_key | default "kubernetes.io/hostname") "labelSelector" (dict "matchLabels" (include "toolkit.selectorLabels" . | fromYaml)) -}}
affinity:
  podAntiAffinity:
{{- if eq ($anti.type | default "preferred") "required" }}
    requiredDuringSchedulingIgnoredDuringExecution:
      - {{- toYaml $term | nindent 8 }}
{{- else }}
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: {{ $anti.weight | default 10 | int }}
        podAffinityTerm:
          {{- toYaml $term | nindent 10 }}
{{- end }}
{{- end -}}

{{/* toolkit.nodeSelector (dict "ctx" $ "labels" "api") -> `nodeSelector:` from labels.<labels>, or nothing */}}
{{- define "toolkit.nodeSelector" -}}
{{- $l := index (.ctx.Values.labels | default dict) .labels -}}
{{- if and $l $l.node_selector_key -}}
nodeSelector:
  {{ $l.node_selector_key }}: {{ $l.node_selector_value | quote }}
{{- end -}}
{{- end -}}

{{/* toolkit.tolerations (dict "ctx" $ "component" "compute") -> `tolerations:` from pod.tolerations.<component>, or nothing */}}
{{- define "toolkit.tolerations" -}}
{{- with index (.ctx.Values.pod.tolerations | default dict) .component -}}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{/* toolkit.podSecurityContext (dict "ctx" $ "component" "api") -> pod `securityContext:`, or nothing */}}
{{- define "toolkit.podSecurityContext" -}}
{{- $sc := index (.ctx.Values.pod.security_context | default dict) .component | default dict -}}
{{- with $sc.pod -}}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{/*
toolkit.containerSecurityContext (dict "ctx" $ "component" "api" ["container" "libvirt"])
-> container `securityContext:` from pod.security_context.<component>.container,
or .<container> when a container name is given and set ({} when unset).
*/}}
{{- define "toolkit.containerSecurityContext" -}}
{{- $sc := index (.ctx.Values.pod.security_context | default dict) .component | default dict -}}
{{- $c := $sc.container -}}
{{- if and .container (index $sc .container) -}}
{{- $c = index $sc .container -}}
{{- end -}}
securityContext:
{{- if $c }}
  {{- toYaml $c | nindent 2 }}
{{- else }} {}
{{- end }}
{{- end -}}

{{/*
toolkit.podSpecCommon (dict "ctx" $ "component" "api" ["labels" "api"] ["antiAffinity" true])
-> the pod spec lines every workload shares: service account, node
selector (labels.<labels>, default the component), tolerations, pull
secrets, pod security context, anti-affinity.
*/}}
{{- define "toolkit.podSpecCommon" -}}
{{- $parts := list (printf "serviceAccountName: %s" (include "toolkit.name" .ctx)) -}}
{{- $parts = append $parts (include "toolkit.nodeSelector" (dict "ctx" .ctx "labels" (.labels | default .component))) -}}
{{- $parts = append $parts (include "toolkit.tolerations" .) -}}
{{- $parts = append $parts (include "toolkit.imagePullSecrets" .ctx) -}}
{{- $parts = append $parts (include "toolkit.podSecurityContext" .) -}}
{{- if .antiAffinity -}}
{{- $parts = append $parts (include "toolkit.antiAffinity" .) -}}
{{- end -}}
{{- without $parts "" | join "\n" -}}
{{- end -}}

{{/*
toolkit.checksums (dict "ctx" $ "files" (list "secret-etc.yaml" "configmap-bin.yaml"))
-> pod annotations with the sha256 of the named templates, so pods roll
when their configuration or scripts change.
*/}}
{{- define "toolkit.checksums" -}}
{{- $ctx := .ctx -}}
{{- $lines := list -}}
{{- range .files -}}
{{- $lines = append $lines (printf "checksum/%s: %s" (trimSuffix ".yaml" .) (include (print $ctx.Template.BasePath "/" .) $ctx | sha256sum)) -}}
{{- end -}}
{{- join "\n" $lines -}}
{{- end -}}

{{/* toolkit.volumes.standard CTX -> the `bin` (scripts), `etc` (configuration) and `pod-tmp` volumes */}}
{{- define "toolkit.volumes.standard" -}}
- name: pod-tmp
  emptyDir: {}
- name: bin
  configMap:
    name: {{ include "toolkit.fullname" (dict "ctx" . "component" "bin") }}
    defaultMode: 0555
- name: etc
  secret:
    secretName: {{ include "toolkit.fullname" (dict "ctx" . "component" "etc") }}
    defaultMode: 0444
{{- end -}}

{{/*
toolkit.mounts.standard (dict "dir" "/etc/keystone" "files" (list "keystone.conf" "policy.yaml"))
-> mounts of /tmp (pod-tmp), /tmp/bin (scripts) and each configuration file
into `dir` with subPath, so files shipped in the image next to them stay.
*/}}
{{- define "toolkit.mounts.standard" -}}
- name: pod-tmp
  mountPath: /tmp
- name: bin
  mountPath: /tmp/bin
  readOnly: true
{{- $dir := .dir -}}
{{- range .files }}
- name: etc
  mountPath: {{ printf "%s/%s" $dir . }}
  subPath: {{ . }}
  readOnly: true
{{- end }}
{{- end -}}
