{{/*
toolkit.workload: a Deployment or DaemonSet with the chart conventions.

  (dict
    "ctx" $
    "component" "volume-ceph"          name suffix and component label
    ["kind" "Deployment"]              or DaemonSet
    ["key" "volume_ceph"]              values key of the component (default: component with _)
    ["replicas" 2]                     default: pod.replicas.<key> (Deployments)
    ["podKey" "volume"]                pod.security_context / tolerations / termination_grace_period key (default: key)
    ["labels" "volume"]                labels.<labels> node selector (default: key)
    ["depCheck" "volume"]              dependencies.<depCheck> (default: key)
    ["antiAffinity" true]
    "containers" $yaml                 the containers (YAML list text)
    ["initContainers" $yaml]           extra init containers after dep-check
    ["volumes" $yaml]                  extra volumes
    ["standardVolumes" false]          leave out pod-tmp/bin/etc
    ["pod" $yaml]                      extra pod spec fields (hostNetwork, dnsPolicy, ...)
    ["annotations" (dict ...)]         on the workload and its pods
    ["checksumFiles" (list ...)]       default configmap-bin.yaml, secret-etc.yaml
    ["checksums" false]                no checksum annotations (nothing to roll on)
    ["strategy" $yaml]                 strategy / updateStrategy text
  )
*/}}
{{- define "toolkit.workload" -}}
{{- $ctx := .ctx -}}
{{- $kind := .kind | default "Deployment" -}}
{{- $key := .key | default (include "toolkit.underscore" .component) -}}
{{- $podKey := .podKey | default $key -}}
{{- $grace := (($ctx.Values.pod.lifecycle | default dict).termination_grace_period | default dict) -}}
{{- $files := .checksumFiles | default (list "configmap-bin.yaml" "secret-etc.yaml") -}}
apiVersion: apps/v1
kind: {{ $kind }}
metadata:
  {{- include "toolkit.metadata" (dict "ctx" $ctx "component" .component "name" .name) | nindent 2 }}
  {{- with .annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- if eq $kind "Deployment" }}
  replicas: {{ hasKey . "replicas" | ternary .replicas (include "toolkit.replicas" (dict "ctx" $ctx "component" $key)) }}
  {{- end }}
  {{- if .strategy }}
  {{- .strategy | nindent 2 }}
  {{- else if eq $kind "Deployment" }}
  {{- include "toolkit.rollingUpdate" $ctx | nindent 2 }}
  {{- else }}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
  {{- end }}
  selector:
    matchLabels:
      {{- include "toolkit.selectorLabels" (dict "ctx" $ctx "component" .component) | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "toolkit.labels" (dict "ctx" $ctx "component" .component) | nindent 8 }}
      {{- $checksums := "" }}
      {{- if ne (toString .checksums) "false" }}
      {{- $checksums = include "toolkit.checksums" (dict "ctx" $ctx "files" $files) }}
      {{- end }}
      {{- if or .annotations $checksums }}
      annotations:
        {{- with .annotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- with $checksums }}
        {{- . | nindent 8 }}
        {{- end }}
      {{- end }}
    spec:
      {{- include "toolkit.podSpecCommon" (dict "ctx" $ctx "component" $podKey "labels" (.labels | default $key)) | nindent 6 }}
      {{- if .antiAffinity }}
      {{- /* spreads this component's own pods (selected by its component label) */}}
      {{- include "toolkit.antiAffinity" (dict "ctx" $ctx "component" .component) | nindent 6 }}
      {{- end }}
      terminationGracePeriodSeconds: {{ index $grace $podKey | default 30 }}
      {{- with .pod }}
      {{- . | nindent 6 }}
      {{- end }}
      {{- $init := include "toolkit.depCheck" (dict "ctx" $ctx "component" (.depCheck | default $key)) }}
      {{- if or $init .initContainers }}
      initContainers:
        {{- with $init }}
        {{- . | nindent 8 }}
        {{- end }}
        {{- with .initContainers }}
        {{- . | nindent 8 }}
        {{- end }}
      {{- end }}
      containers:
        {{- .containers | nindent 8 }}
      {{- if or (ne (toString .standardVolumes) "false") .volumes }}
      volumes:
        {{- if ne (toString .standardVolumes) "false" }}
        {{- include "toolkit.volumes.standard" $ctx | nindent 8 }}
        {{- end }}
        {{- with .volumes }}
        {{- . | nindent 8 }}
        {{- end }}
      {{- end }}
{{- end -}}
