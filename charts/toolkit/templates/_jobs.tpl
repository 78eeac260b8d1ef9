{{/*
Jobs.

Every Job is rendered by toolkit.job. Its name is
`<chart>-<component>-<hash of the pod template>`: a Job's pod template is
immutable, so when the image, scripts or configuration of a Job change the
Job gets a new name (Helm creates it and prunes the old one) instead of
failing the upgrade. Workloads wait for Jobs by label (see toolkit.depCheck).

Values used: jobs.backoff_limit, jobs.active_deadline_seconds,
pod.resources.jobs, pod.security_context.jobs, labels.job,
dependencies.<job component with underscores>, manifests.job_<same>.
*/}}

{{/*
toolkit.job (dict
  "ctx" $                       the chart context
  "component" "db-sync"         job component (name part and label)
  "image" "keystone_db_sync"    image field
  "command" (list "/tmp/bin/db-sync.sh")
  ["etc" (dict "dir" "/etc/keystone" "files" (list "keystone.conf"))]   configuration files to mount
  ["env" (list (dict "name" "X" "value" "y"))]
  ["envFrom" (list (dict "secretRef" (dict "name" "keystone-keystone-admin")))]
  ["volumes" (list ...)] ["volumeMounts" (list ...)]
  ["annotations" (dict ...)]    Job annotations (e.g. Helm hooks)
  ["depCheck" false]            skip the dependency init container
)
*/}}
{{- define "toolkit.job" -}}
{{- $ctx := .ctx -}}
{{- $pod := include "toolkit.job.podTemplate" . -}}
{{- $base := include "toolkit.fullname" (dict "ctx" $ctx "component" .component) | trunc 54 | trimSuffix "-" -}}
{{- $jobs := $ctx.Values.jobs | default dict -}}
apiVersion: batch/v1
kind: Job
metadata:
  {{- include "toolkit.metadata" (dict "ctx" $ctx "component" .component "name" (printf "%s-%s" $base ($pod | sha256sum | trunc 8))) | nindent 2 }}
  {{- with .annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  backoffLimit: {{ $jobs.backoff_limit | default 6 }}
  {{- with $jobs.active_deadline_seconds }}
  activeDeadlineSeconds: {{ . }}
  {{- end }}
  template:
    {{- $pod | nindent 4 }}
{{- end -}}

{{- define "toolkit.job.podTemplate" -}}
{{- $ctx := .ctx -}}
{{- $key := include "toolkit.underscore" .component -}}
metadata:
  labels:
    {{- include "toolkit.labels" (dict "ctx" $ctx "component" .component) | nindent 4 }}
  annotations:
    {{- include "toolkit.checksums" (dict "ctx" $ctx "files" ($ctx.Values.checksumFiles | default (list "configmap-bin.yaml" "secret-etc.yaml"))) | nindent 4 }}
spec:
  restartPolicy: OnFailure
  {{- include "toolkit.podSpecCommon" (dict "ctx" $ctx "component" "jobs" "labels" "job") | nindent 2 }}
  {{- if ne (toString .depCheck) "false" }}
  {{- with include "toolkit.depCheck" (dict "ctx" $ctx "component" $key) }}
  initContainers:
    {{- . | nindent 4 }}
  {{- end }}
  {{- end }}
  containers:
    - name: {{ .component }}
      {{- include "toolkit.image" (dict "ctx" $ctx "key" .image) | nindent 6 }}
      command:
        {{- toYaml .command | nindent 8 }}
      {{- with .env }}
      env:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .envFrom }}
      envFrom:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- include "toolkit.containerSecurityContext" (dict "ctx" $ctx "component" "jobs") | nindent 6 }}
      {{- include "toolkit.resources" (dict "ctx" $ctx "keys" (list $key "jobs")) | nindent 6 }}
      volumeMounts:
        {{- include "toolkit.mounts.standard" (.etc | default (dict "dir" "/etc" "files" list)) | nindent 8 }}
        {{- with .volumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  volumes:
    {{- include "toolkit.volumes.standard" $ctx | nindent 4 }}
    {{- with .volumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/* secretKeyRef env entry: toolkit.envFromSecret (dict "name" "DB" "secret" "x" "key" "y") */}}
{{- define "toolkit.envFromSecret" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key }}
{{- end -}}

{{/*
toolkit.job.dbInit (dict "ctx" $ ["types" (list "oslo_db" "oslo_db_api")])
Creates each database and the service user with all rights on it.
*/}}
{{- define "toolkit.job.dbInit" -}}
{{- $ctx := .ctx -}}
{{- $env := list -}}
{{- range $i, $type := (.types | default (list "oslo_db")) -}}
{{- $env = concat $env (include "toolkit.envFromSecret" (dict "name" (printf "DB_ADMIN_CONNECTION_%d" $i) "secret" (include "toolkit.fullname" (dict "ctx" $ctx "component" "db-admin")) "key" $type) | fromYamlArray) -}}
{{- $env = concat $env (include "toolkit.envFromSecret" (dict "name" (printf "DB_USER_CONNECTION_%d" $i) "secret" (include "toolkit.fullname" (dict "ctx" $ctx "component" "db-user")) "key" $type) | fromYamlArray) -}}
{{- end -}}
{{- include "toolkit.job" (dict "ctx" $ctx "component" "db-init" "image" "db_init" "command" (list "python3" "/tmp/bin/db-init.py") "env" $env) -}}
{{- end -}}

{{/*
toolkit.job.dbDrop (dict "ctx" $ ["types" ...])
Drops the databases and users; a Helm pre-delete hook, off by default
(manifests.job_db_drop).
*/}}
{{- define "toolkit.job.dbDrop" -}}
{{- $ctx := .ctx -}}
{{- $env := list -}}
{{- range $i, $type := (.types | default (list "oslo_db")) -}}
{{- $env = concat $env (include "toolkit.envFromSecret" (dict "name" (printf "DB_ADMIN_CONNECTION_%d" $i) "secret" (include "toolkit.fullname" (dict "ctx" $ctx "component" "db-admin")) "key" $type) | fromYamlArray) -}}
{{- $env = concat $env (include "toolkit.envFromSecret" (dict "name" (printf "DB_USER_CONNECTION_%d" $i) "secret" (include "toolkit.fullname" (dict "ctx" $ctx "component" "db-user")) "key" $type) | fromYamlArray) -}}
{{- end -}}
{{- $hook := dict "helm.sh/hook" "pre-delete" "helm.sh/hook-delete-policy" "before-hook-creation,hook-succeeded" -}}
{{- include "toolkit.job" (dict "ctx" $ctx "component" "db-drop" "image" "db_drop" "command" (list "python3" "/tmp/bin/db-drop.py") "env" $env "annotations" $hook "depCheck" false) -}}
{{- end -}}

{{/*
toolkit.job.dbSync (dict "ctx" $ "image" "keystone_db_sync" "etc" (dict "dir" "/etc/keystone" "files" (list ...)) [...toolkit.job args])
Runs the chart's /tmp/bin/db-sync.sh with the service image.
*/}}
{{- define "toolkit.job.dbSync" -}}
{{- $args := dict "component" "db-sync" "command" (list "/tmp/bin/db-sync.sh") -}}
{{- range $k, $v := . }}{{ $_ := set $args $k $v }}{{ end -}}
{{- include "toolkit.job" $args -}}
{{- end -}}

{{/*
toolkit.job.bootstrap (dict "ctx" $ [...toolkit.job args])
Runs the chart's /tmp/bin/bootstrap.sh as the cloud admin (OS_* from
<chart>-keystone-admin), image field `bootstrap`. The script text comes from
the chart (often from bootstrap.script in values).
*/}}
{{- define "toolkit.job.bootstrap" -}}
{{- $admin := dict "secretRef" (dict "name" (include "toolkit.fullname" (dict "ctx" .ctx "component" "keystone-admin"))) -}}
{{- $args := dict "component" "bootstrap" "image" "bootstrap" "command" (list "/tmp/bin/bootstrap.sh") "envFrom" (list $admin) -}}
{{- range $k, $v := . }}{{ $_ := set $args $k $v }}{{ end -}}
{{- include "toolkit.job" $args -}}
{{- end -}}

{{/*
toolkit.job.ksUser (dict "ctx" $)
Creates the service's Keystone user (endpoints.identity.auth.<chart>) with
its roles (`role`, comma separated) in its project.
*/}}
{{- define "toolkit.job.ksUser" -}}
{{- $ctx := .ctx -}}
{{- $auth := include "toolkit.endpoint.auth" (dict "ctx" $ctx "type" "identity" "user" (include "toolkit.name" $ctx)) | fromYaml -}}
{{- $envFrom := list
      (dict "secretRef" (dict "name" (include "toolkit.fullname" (dict "ctx" $ctx "component" "keystone-admin"))))
      (dict "prefix" "SERVICE_" "secretRef" (dict "name" (include "toolkit.fullname" (dict "ctx" $ctx "component" "keystone-user"))))
-}}
{{- $env := list (dict "name" "SERVICE_OS_ROLES" "value" ($auth.role | default "admin,service")) -}}
{{- include "toolkit.job" (dict "ctx" $ctx "component" "ks-user" "image" "ks_user" "command" (list "/tmp/bin/ks-user.sh") "envFrom" $envFrom "env" $env) -}}
{{- end -}}

{{/*
toolkit.job.ksService (dict "ctx" $ "type" "image" "name" "glance" "description" "OpenStack Image")
Registers the service in the Keystone catalog.
*/}}
{{- define "toolkit.job.ksService" -}}
{{- $ctx := .ctx -}}
{{- $envFrom := list (dict "secretRef" (dict "name" (include "toolkit.fullname" (dict "ctx" $ctx "component" "keystone-admin")))) -}}
{{- $env := list (dict "name" "OS_SERVICE_TYPE" "value" .type) (dict "name" "OS_SERVICE_NAME" "value" .name) (dict "name" "OS_SERVICE_DESC" "value" (.description | default .name)) -}}
{{- include "toolkit.job" (dict "ctx" $ctx "component" "ks-service" "image" "ks_service" "command" (list "/tmp/bin/ks-service.sh") "envFrom" $envFrom "env" $env) -}}
{{- end -}}

{{/*
toolkit.job.ksEndpoints (dict "ctx" $ "type" "image" "endpoint" "image")
Creates/updates the internal, admin (= internal) and public catalog URLs of
endpoints.<endpoint> for service type <type>.
*/}}
{{- define "toolkit.job.ksEndpoints" -}}
{{- $ctx := .ctx -}}
{{- $envFrom := list (dict "secretRef" (dict "name" (include "toolkit.fullname" (dict "ctx" $ctx "component" "keystone-admin")))) -}}
{{- $internal := include "toolkit.endpoint.url" (dict "ctx" $ctx "type" .endpoint "scope" "internal") -}}
{{- $env := list
      (dict "name" "OS_SERVICE_TYPE" "value" .type)
      (dict "name" "ENDPOINT_URL_INTERNAL" "value" $internal)
      (dict "name" "ENDPOINT_URL_ADMIN" "value" $internal)
      (dict "name" "ENDPOINT_URL_PUBLIC" "value" (include "toolkit.endpoint.url" (dict "ctx" $ctx "type" .endpoint "scope" "public")))
-}}
{{- include "toolkit.job" (dict "ctx" $ctx "component" "ks-endpoints" "image" "ks_endpoints" "command" (list "/tmp/bin/ks-endpoints.sh") "envFrom" $envFrom "env" $env) -}}
{{- end -}}

{{/*
toolkit.job.rabbitInit (dict "ctx" $)
Creates the service's RabbitMQ vhost and user through the management API.
*/}}
{{- define "toolkit.job.rabbitInit" -}}
{{- $ctx := .ctx -}}
{{- $admin := include "toolkit.fullname" (dict "ctx" $ctx "component" "rabbitmq-admin") -}}
{{- $user := include "toolkit.fullname" (dict "ctx" $ctx "component" "rabbitmq-user") -}}
{{- $env := concat
      (include "toolkit.envFromSecret" (dict "name" "RABBITMQ_ADMIN_CONNECTION" "secret" $admin "key" "RABBITMQ_CONNECTION") | fromYamlArray)
      (include "toolkit.envFromSecret" (dict "name" "RABBITMQ_MANAGEMENT_URL" "secret" $admin "key" "RABBITMQ_MANAGEMENT_URL") | fromYamlArray)
      (include "toolkit.envFromSecret" (dict "name" "RABBITMQ_USER_CONNECTION" "secret" $user "key" "RABBITMQ_CONNECTION") | fromYamlArray)
-}}
{{- include "toolkit.job" (dict "ctx" $ctx "component" "rabbit-init" "image" "rabbit_init" "command" (list "python3" "/tmp/bin/rabbit-init.py") "env" $env) -}}
{{- end -}}

{{/*
toolkit.credentials (dict "ctx" $ "keystone" true "db" (list "oslo_db") "rabbitmq" true)
-> the credential Secrets a service chart's Jobs and pods use:
<chart>-keystone-admin, <chart>-keystone-user, <chart>-db-admin,
<chart>-db-user, <chart>-rabbitmq-admin, <chart>-rabbitmq-user.
*/}}
{{- define "toolkit.credentials" -}}
{{- $ctx := .ctx -}}
{{- if .keystone }}
---
{{ include "toolkit.secret.keystone" (dict "ctx" $ctx "user" "admin") }}
{{- if ne (toString .keystone) "admin" }}
---
{{ include "toolkit.secret.keystone" (dict "ctx" $ctx "user" (include "toolkit.name" $ctx) "suffix" "user") }}
{{- end }}
{{- end }}
{{- with .db }}
---
{{ include "toolkit.secret.db" (dict "ctx" $ctx "user" "admin" "types" .) }}
---
{{ include "toolkit.secret.db" (dict "ctx" $ctx "user" "user" "types" .) }}
{{- end }}
{{- if .rabbitmq }}
---
{{ include "toolkit.secret.rabbitmq" (dict "ctx" $ctx "user" "admin") }}
---
{{ include "toolkit.secret.rabbitmq" (dict "ctx" $ctx "user" "user") }}
{{- end }}
{{- end -}}
