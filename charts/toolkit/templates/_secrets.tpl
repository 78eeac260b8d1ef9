{{/*
Credential Secrets consumed by Jobs and workloads as environment.
Passwords come from `endpoints.<type>.auth.<user>`; the chart defaults are
placeholders that the application's plugins replace with generated ones.
*/}}

{{/*
toolkit.secret.keystone (dict "ctx" $ "user" "admin" ["name" "glance-keystone-admin"])
-> Secret `<chart>-keystone-<user>` holding the OS_* variables of an
endpoints.identity.auth.<user> account (internal interface).
*/}}
{{- define "toolkit.secret.keystone" -}}
{{- $ctx := .ctx -}}
{{- $auth := include "toolkit.endpoint.auth" (dict "ctx" $ctx "type" "identity" "user" .user) | fromYaml -}}
apiVersion: v1
kind: Secret
metadata:
  {{- include "toolkit.metadata" (dict "ctx" $ctx "component" (printf "keystone-%s" (.suffix | default .user))) | nindent 2 }}
type: Opaque
data:
  OS_AUTH_URL: {{ include "toolkit.endpoint.url" (dict "ctx" $ctx "type" "identity" "scope" "internal") | b64enc }}
  OS_IDENTITY_API_VERSION: {{ "3" | b64enc }}
  OS_INTERFACE: {{ "internal" | b64enc }}
  OS_REGION_NAME: {{ $auth.region_name | default "RegionOne" | b64enc }}
  OS_USERNAME: {{ $auth.username | b64enc }}
  OS_PASSWORD: {{ $auth.password | toString | b64enc }}
  OS_PROJECT_NAME: {{ $auth.project_name | b64enc }}
  OS_USER_DOMAIN_NAME: {{ $auth.user_domain_name | default "Default" | b64enc }}
  OS_PROJECT_DOMAIN_NAME: {{ $auth.project_domain_name | default "Default" | b64enc }}
  OS_DEFAULT_DOMAIN: {{ $auth.user_domain_name | default "Default" | b64enc }}
{{- end -}}

{{/*
toolkit.secret.db (dict "ctx" $ "user" "admin" ["types" (list "oslo_db")])
-> Secret `<chart>-db-<user>`: one key per database endpoint type holding the
SQLAlchemy URL of that user (key name = endpoint type, e.g. oslo_db,
oslo_db_api). The admin Secret points at the server without a database.
*/}}
{{- define "toolkit.secret.db" -}}
{{- $ctx := .ctx -}}
{{- $user := .user -}}
apiVersion: v1
kind: Secret
metadata:
  {{- include "toolkit.metadata" (dict "ctx" $ctx "component" (printf "db-%s" $user)) | nindent 2 }}
type: Opaque
data:
  {{- range (.types | default (list "oslo_db")) }}
  {{- $authUser := $user }}
  {{- if eq $user "user" }}{{ $authUser = include "toolkit.name" $ctx }}{{ end }}
  {{- $url := include "toolkit.endpoint.dbUrl" (dict "ctx" $ctx "type" . "user" $authUser) }}
  {{- if eq $user "admin" }}
  {{- $s := include "toolkit.endpoint.scope" (dict "ctx" $ctx "type" . "scope" "internal") | fromYaml }}
  {{- $url = trimSuffix ($s.path | default "") $url }}
  {{- end }}
  {{ . }}: {{ $url | b64enc }}
  {{- end }}
{{- end -}}

{{/*
toolkit.secret.rabbitmq (dict "ctx" $ "user" "admin")
-> Secret `<chart>-rabbitmq-<user>` with RABBITMQ_CONNECTION (transport URL of
that user on the service's vhost) and RABBITMQ_MANAGEMENT_URL (the
management API, used by rabbit-init).
*/}}
{{- define "toolkit.secret.rabbitmq" -}}
{{- $ctx := .ctx -}}
{{- $authUser := .user -}}
{{- if eq .user "user" }}{{ $authUser = include "toolkit.name" $ctx }}{{ end -}}
{{- $ep := $ctx.Values.endpoints.oslo_messaging -}}
apiVersion: v1
kind: Secret
metadata:
  {{- include "toolkit.metadata" (dict "ctx" $ctx "component" (printf "rabbitmq-%s" .user)) | nindent 2 }}
type: Opaque
data:
  RABBITMQ_CONNECTION: {{ include "toolkit.endpoint.transportUrl" (dict "ctx" $ctx "user" $authUser) | b64enc }}
  RABBITMQ_MANAGEMENT_URL: {{ printf "http://%s:%d" (include "toolkit.endpoint.host" (dict "ctx" $ctx "type" "oslo_messaging" "scope" "internal")) (($ep.internal.management_port | default 15672) | int) | b64enc }}
{{- end -}}
