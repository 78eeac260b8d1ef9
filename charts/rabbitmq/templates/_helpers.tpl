{{/* Name of the headless Service giving each member a stable DNS name. */}}
{{- define "rabbitmq.discovery" -}}
{{- include "toolkit.fullname" (dict "ctx" . "component" "discovery") -}}
{{- end -}}

{{/* DNS domain of the members: <discovery>.<namespace>.svc.<suffix> */}}
{{- define "rabbitmq.memberDomain" -}}
{{- printf "%s.%s.svc.%s" (include "rabbitmq.discovery" .) .Release.Namespace .Values.endpoints.cluster_domain_suffix -}}
{{- end -}}

{{/* rabbitmq.conf: derived settings, then conf.rabbitmq over them. */}}
{{- define "rabbitmq.conf" -}}
{{- $admin := .Values.endpoints.oslo_messaging.auth.admin -}}
{{- $conf := dict
      "listeners.tcp.default" (include "toolkit.endpoint.port" (dict "ctx" . "type" "oslo_messaging" "scope" "internal"))
      "management.tcp.port" (.Values.endpoints.oslo_messaging.internal.management_port | default 15672)
      "default_user" $admin.username
      "default_pass" $admin.password
      "default_user_tags.administrator" true
      "default_permissions.configure" ".*"
      "default_permissions.read" ".*"
      "default_permissions.write" ".*"
      "cluster_formation.peer_discovery_backend" "classic_config"
-}}
{{- $sts := include "toolkit.fullname" (dict "ctx" . "component" "server") -}}
{{- $domain := include "rabbitmq.memberDomain" . -}}
{{- range $i := until (include "toolkit.replicas" (dict "ctx" . "component" "server") | int) -}}
{{- $_ := set $conf (printf "cluster_formation.classic_config.nodes.%d" (add1 $i)) (printf "rabbit@%s-%d.%s" $sts $i $domain) -}}
{{- end -}}
{{- $conf = mergeOverwrite $conf (deepCopy .Values.conf.rabbitmq) -}}
{{- range $key, $value := $conf }}
{{- if not (kindIs "invalid" $value) }}
{{ $key }} = {{ include "toolkit.iniValue" $value }}
{{- end }}
{{- end }}
{{- end -}}
