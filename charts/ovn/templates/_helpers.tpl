{{/* Headless Service of a database's RAFT members: ovn-ovsdb-nb-raft */}}
{{- define "ovn.raftService" -}}
{{- printf "%s-raft" (include "toolkit.fullname" (dict "ctx" .ctx "component" (printf "ovsdb-%s" .db))) -}}
{{- end -}}

{{/*
ovn.remote (dict "ctx" $ "db" "nb")
-> the OVSDB remote of a database for OVN's own daemons: every RAFT member
when clustered, the Service otherwise.
*/}}
{{- define "ovn.remote" -}}
{{- $ctx := .ctx -}}
{{- $type := printf "ovn_%s" .db -}}
{{- $port := include "toolkit.endpoint.port" (dict "ctx" $ctx "type" $type "scope" "internal") -}}
{{- $replicas := include "toolkit.replicas" (dict "ctx" $ctx "component" (printf "ovsdb_%s" .db)) | int -}}
{{- if gt $replicas 1 -}}
{{- $sts := include "toolkit.fullname" (dict "ctx" $ctx "component" (printf "ovsdb-%s" .db)) -}}
{{- $domain := printf "%s.%s.svc.%s" (include "ovn.raftService" .) $ctx.Release.Namespace $ctx.Values.endpoints.cluster_domain_suffix -}}
{{- $members := list -}}
{{- range $i := until $replicas -}}
{{- $members = append $members (printf "tcp:%s-%d.%s:%s" $sts $i $domain $port) -}}
{{- end -}}
{{- join "," $members -}}
{{- else -}}
{{- printf "tcp:%s" (include "toolkit.endpoint.hostPort" (dict "ctx" $ctx "type" $type "scope" "internal")) -}}
{{- end -}}
{{- end -}}
