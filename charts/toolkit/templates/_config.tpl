{{/*
Configuration files.

`conf.<file>` maps are rendered by these templates so that every option of a
service can be set from values without touching a template:

  conf:
    keystone:                 # -> keystone.conf
      DEFAULT: {debug: false}
      token: {provider: fernet, expiration: 3600}
      cache: {backend: dogpile.cache.pymemcache}
*/}}

{{/*
toolkit.ini MAP -> INI text.
Top-level keys are sections, their keys options. Per option value:
  null           option left out (lets an override delete a chart default)
  scalar         key = value (whole numbers printed without exponent)
  list           key = a,b,c (oslo.config ListOpt)
  {multi: [..]}  one `key = item` line per item (oslo.config MultiStrOpt)
Sections and options come out sorted, so the file is stable across renders.
*/}}
{{- define "toolkit.ini" -}}
{{- include "toolkit.ini.sections" . | trim }}
{{ end -}}

{{- define "toolkit.ini.sections" -}}
{{- range $section, $options := . }}
{{- if kindIs "map" $options }}
[{{ $section }}]
{{- range $key, $value := $options }}
{{- if kindIs "map" $value }}
{{- range $item := ($value.multi | default list) }}
{{ $key }} = {{ include "toolkit.iniValue" $item }}
{{- end }}
{{- else if not (kindIs "invalid" $value) }}
{{ $key }} = {{ include "toolkit.iniValue" $value }}
{{- end }}
{{- end }}
{{ end }}
{{- end }}
{{- end -}}

{{- define "toolkit.iniValue" -}}
{{- if kindIs "slice" . -}}
{{- $items := list -}}
{{- range . -}}
{{- $items = append $items (include "toolkit.iniScalar" .) -}}
{{- end -}}
{{- join "," $items -}}
{{- else -}}
{{- include "toolkit.iniScalar" . -}}
{{- end -}}
{{- end -}}

{{- define "toolkit.iniScalar" -}}
{{- if and (kindIs "float64" .) (eq . (floor .)) -}}
{{- int64 . -}}
{{- else -}}
{{- . -}}
{{- end -}}
{{- end -}}

{{/*
toolkit.policy MAP -> policy.yaml text (oslo.policy YAML: rule name -> check string).
Rules set to null are left out, so an override can drop a default rule.
*/}}
{{- define "toolkit.policy" -}}
{{- $lines := list -}}
{{- range $name, $rule := . -}}
{{- if not (kindIs "invalid" $rule) -}}
{{- $lines = append $lines (printf "%s: %s" ($name | quote) ($rule | toString | quote)) -}}
{{- end -}}
{{- end -}}
{{- if $lines -}}
{{ join "\n" $lines }}
{{ else -}}
{}
{{ end -}}
{{- end -}}

{{/*
toolkit.oslo.defaults (dict "ctx" $ "db" "oslo_db" "messaging" true "cache" true "authUser" "glance")
-> YAML of the options every oslo service derives from `endpoints`: database
connection, transport URL, keystone_authtoken, cache servers; with
"serviceUser" (an identity auth user) a [service_user] section sending service
tokens, with "authSections" (section -> identity auth user) keystoneauth
sections such as [nova] or [placement]. `db` is the
endpoint type of [database], or a map section -> endpoint type
(e.g. database: oslo_db, api_database: oslo_db_api). Used by
toolkit.oslo.conf; values in conf.<service> always win over these.
*/}}
{{- define "toolkit.oslo.defaults" -}}
{{- $ctx := .ctx -}}
{{- $conf := dict -}}
{{- if .db -}}
{{- $sections := .db -}}
{{- if kindIs "string" .db -}}{{- $sections = dict "database" .db -}}{{- end -}}
{{- range $section, $type := $sections -}}
{{- $_ := set $conf $section (dict "connection" (include "toolkit.endpoint.dbUrl" (dict "ctx" $ctx "type" $type "user" (include "toolkit.name" $ctx)))) -}}
{{- end -}}
{{- end -}}
{{- if .messaging -}}
{{- $url := include "toolkit.endpoint.transportUrl" (dict "ctx" $ctx "user" (include "toolkit.name" $ctx)) -}}
{{- $_ := set $conf "DEFAULT" (dict "transport_url" $url) -}}
{{- $_ := set $conf "oslo_messaging_notifications" (dict "transport_url" $url) -}}
{{- end -}}
{{- if .cache -}}
{{- $_ := set $conf "cache" (dict "memcache_servers" (include "toolkit.endpoint.memcache" $ctx)) -}}
{{- end -}}
{{- if .authUser -}}
{{- $auth := index $ctx.Values.endpoints.identity.auth .authUser -}}
{{- $authtoken := dict
      "auth_type" "password"
      "auth_url" (include "toolkit.endpoint.url" (dict "ctx" $ctx "type" "identity" "scope" "internal"))
      "www_authenticate_uri" (include "toolkit.endpoint.url" (dict "ctx" $ctx "type" "identity" "scope" "public"))
      "username" $auth.username
      "password" $auth.password
      "project_name" $auth.project_name
      "user_domain_name" $auth.user_domain_name
      "project_domain_name" $auth.project_domain_name
      "region_name" $auth.region_name
      "interface" "internal"
      "service_token_roles_required" true
-}}
{{- if .cache -}}
{{- $_ := set $authtoken "memcached_servers" (include "toolkit.endpoint.memcache" $ctx) -}}
{{- end -}}
{{- $_ := set $conf "keystone_authtoken" $authtoken -}}
{{- end -}}
{{- with .serviceUser -}}
{{- $_ := set $conf "service_user" (include "toolkit.oslo.keystoneAuth" (dict "ctx" $ctx "user" .) | fromYaml | merge (dict "send_service_user_token" true)) -}}
{{- end -}}
{{- range $section, $user := (.authSections | default dict) -}}
{{- $_ := set $conf $section (include "toolkit.oslo.keystoneAuth" (dict "ctx" $ctx "user" $user) | fromYaml) -}}
{{- end -}}
{{ toYaml $conf }}
{{- end -}}

{{/*
toolkit.oslo.keystoneAuth (dict "ctx" $ "user" "nova")
-> YAML of the keystoneauth password options of endpoints.identity.auth.<user>,
for sections where a service calls another one ([placement], [neutron], ...).
*/}}
{{- define "toolkit.oslo.keystoneAuth" -}}
{{- $auth := include "toolkit.endpoint.auth" (dict "ctx" .ctx "type" "identity" "user" .user) | fromYaml -}}
auth_type: password
auth_url: {{ include "toolkit.endpoint.url" (dict "ctx" .ctx "type" "identity" "scope" "internal") | quote }}
username: {{ $auth.username | quote }}
password: {{ $auth.password | toString | quote }}
project_name: {{ $auth.project_name | quote }}
user_domain_name: {{ $auth.user_domain_name | default "Default" | quote }}
project_domain_name: {{ $auth.project_domain_name | default "Default" | quote }}
region_name: {{ $auth.region_name | default "RegionOne" | quote }}
valid_interfaces: internal
{{- end -}}

{{/*
toolkit.oslo.conf (dict "ctx" $ "conf" .Values.conf.glance "db" "oslo_db" "messaging" true "cache" true "authUser" "glance")
-> INI text of a service's main configuration file: the derived defaults of
toolkit.oslo.defaults with conf.<service> merged over them.
*/}}
{{- define "toolkit.oslo.conf" -}}
{{- $defaults := include "toolkit.oslo.defaults" . | fromYaml -}}
{{- $merged := mergeOverwrite $defaults (deepCopy (.conf | default dict)) -}}
{{- include "toolkit.ini" $merged -}}
{{- end -}}
