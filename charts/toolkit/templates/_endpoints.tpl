{{/*
Endpoints.

  endpoints:
    cluster_domain_suffix: cluster.local
    identity:
      auth:
        admin: {username: admin, password: ..., project_name: admin, ...}
      internal: {host: keystone-api, port: 5000, scheme: http, path: /v3}
      public:   {host: keystone.cloud.example.com, port: 443, scheme: https, path: /v3}
    oslo_db:
      auth: {admin: {username: root, password: ...}, keystone: {...}}
      internal: {host: mariadb, port: 3306, scheme: mysql+pymysql, path: /keystone}

A host without a dot is a Service of the release namespace and is expanded to
`<host>.<namespace>.svc.<cluster_domain_suffix>`; a host with a dot is used
as given (another namespace, or an external name).
*/}}

{{/* toolkit.endpoint.scope (dict "ctx" $ "type" "identity" "scope" "public") -> the scope map as YAML (fails when absent) */}}
{{- define "toolkit.endpoint.scope" -}}
{{- $scope := .scope | default "internal" -}}
{{- $ep := index .ctx.Values.endpoints .type | default dict -}}
{{- $s := index $ep $scope -}}
{{- if not $s -}}
{{- fail (printf "endpoints.%s.%s is not defined" .type $scope) -}}
{{- end -}}
{{- toYaml $s -}}
{{- end -}}

{{/* toolkit.endpoint.host (dict "ctx" $ "type" "identity" "scope" "internal") -> FQDN */}}
{{- define "toolkit.endpoint.host" -}}
{{- $s := include "toolkit.endpoint.scope" . | fromYaml -}}
{{- $host := required (printf "endpoints.%s.%s.host is required" .type (.scope | default "internal")) $s.host -}}
{{- if contains "." $host -}}
{{- $host -}}
{{- else -}}
{{- printf "%s.%s.svc.%s" $host .ctx.Release.Namespace (.ctx.Values.endpoints.cluster_domain_suffix | default "cluster.local") -}}
{{- end -}}
{{- end -}}

{{/* toolkit.endpoint.port (dict "ctx" $ "type" "identity" "scope" "internal") -> port number */}}
{{- define "toolkit.endpoint.port" -}}
{{- $s := include "toolkit.endpoint.scope" . | fromYaml -}}
{{- required (printf "endpoints.%s.%s.port is required" .type (.scope | default "internal")) $s.port | int -}}
{{- end -}}

{{/* toolkit.endpoint.hostPort -> host:port */}}
{{- define "toolkit.endpoint.hostPort" -}}
{{- printf "%s:%s" (include "toolkit.endpoint.host" .) (include "toolkit.endpoint.port" .) -}}
{{- end -}}

{{/*
toolkit.endpoint.url (dict "ctx" $ "type" "identity" "scope" "public" ["path" "/v3"])
-> scheme://host[:port]path. The port is left out when it is the scheme's
default (http 80, https 443). `path` overrides the endpoint's own path.
*/}}
{{- define "toolkit.endpoint.url" -}}
{{- $s := include "toolkit.endpoint.scope" . | fromYaml -}}
{{- $scheme := $s.scheme | default "http" -}}
{{- $port := include "toolkit.endpoint.port" . | int -}}
{{- $path := "" -}}
{{- if hasKey . "path" -}}{{- $path = .path -}}{{- else -}}{{- $path = $s.path | default "" -}}{{- end -}}
{{- $host := include "toolkit.endpoint.host" . -}}
{{- if or (and (eq $scheme "http") (eq $port 80)) (and (eq $scheme "https") (eq $port 443)) -}}
{{- printf "%s://%s%s" $scheme $host $path -}}
{{- else -}}
{{- printf "%s://%s:%d%s" $scheme $host $port $path -}}
{{- end -}}
{{- end -}}

{{/* toolkit.endpoint.auth (dict "ctx" $ "type" "oslo_db" "user" "keystone") -> the credentials map as YAML */}}
{{- define "toolkit.endpoint.auth" -}}
{{- $ep := index .ctx.Values.endpoints .type | default dict -}}
{{- $auth := index ($ep.auth | default dict) .user -}}
{{- if not $auth -}}
{{- fail (printf "endpoints.%s.auth.%s is not defined" .type .user) -}}
{{- end -}}
{{- toYaml $auth -}}
{{- end -}}

{{/*
toolkit.endpoint.dbUrl (dict "ctx" $ "type" "oslo_db" "user" "keystone")
-> mysql+pymysql://user:password@host:port/database (user and password URL-escaped).
*/}}
{{- define "toolkit.endpoint.dbUrl" -}}
{{- $s := include "toolkit.endpoint.scope" (dict "ctx" .ctx "type" .type "scope" "internal") | fromYaml -}}
{{- $auth := include "toolkit.endpoint.auth" . | fromYaml -}}
{{- printf "%s://%s:%s@%s%s" ($s.scheme | default "mysql+pymysql") ($auth.username | urlquery) ($auth.password | urlquery) (include "toolkit.endpoint.hostPort" (dict "ctx" .ctx "type" .type "scope" "internal")) ($s.path | default "") -}}
{{- end -}}

{{/*
toolkit.endpoint.transportUrl (dict "ctx" $ "user" "keystone" ["type" "oslo_messaging"])
-> rabbit://user:password@host:port/vhost
*/}}
{{- define "toolkit.endpoint.transportUrl" -}}
{{- $type := .type | default "oslo_messaging" -}}
{{- $s := include "toolkit.endpoint.scope" (dict "ctx" .ctx "type" $type "scope" "internal") | fromYaml -}}
{{- $auth := include "toolkit.endpoint.auth" (dict "ctx" .ctx "type" $type "user" .user) | fromYaml -}}
{{- printf "%s://%s:%s@%s%s" ($s.scheme | default "rabbit") ($auth.username | urlquery) ($auth.password | urlquery) (include "toolkit.endpoint.hostPort" (dict "ctx" .ctx "type" $type "scope" "internal")) ($s.path | default "/") -}}
{{- end -}}

{{/* toolkit.endpoint.memcache CTX -> host:port of endpoints.oslo_cache */}}
{{- define "toolkit.endpoint.memcache" -}}
{{- include "toolkit.endpoint.hostPort" (dict "ctx" . "type" "oslo_cache" "scope" "internal") -}}
{{- end -}}

{{/*
toolkit.endpoint.serviceRef (dict "ctx" $ "type" "oslo_db")
-> namespace:service of the Kubernetes Service behind an internal endpoint,
the form kubernetes-entrypoint expects.
*/}}
{{- define "toolkit.endpoint.serviceRef" -}}
{{- $host := include "toolkit.endpoint.host" (dict "ctx" .ctx "type" .type "scope" "internal") -}}
{{- $parts := splitList "." $host -}}
{{- printf "%s:%s" (index $parts 1) (index $parts 0) -}}
{{- end -}}
