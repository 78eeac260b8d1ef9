{{/*
Services, Ingresses, PodDisruptionBudgets.
*/}}

{{/*
toolkit.service (dict "ctx" $ "component" "api" "ports" (list (dict "name" "ks-api" "port" 5000))
                 ["name" "keystone-api"] ["headless" true] ["publishNotReady" true] ["type" "ClusterIP"])
-> a Service selecting the component's pods. Port entries: name, port,
targetPort (defaults to port), protocol (defaults to TCP).
*/}}
{{- define "toolkit.service" -}}
apiVersion: v1
kind: Service
metadata:
  {{- include "toolkit.metadata" . | nindent 2 }}
spec:
  {{- if .headless }}
  clusterIP: None
  {{- else }}
  type: {{ .type | default "ClusterIP" }}
  {{- end }}
  {{- if .publishNotReady }}
  publishNotReadyAddresses: true
  {{- end }}
  selector:
    {{- include "toolkit.selectorLabels" . | nindent 4 }}
  ports:
    {{- range .ports }}
    - name: {{ .name }}
      port: {{ .port | int }}
      targetPort: {{ .targetPort | default .port }}
      protocol: {{ .protocol | default "TCP" }}
    {{- end }}
{{- end -}}

{{/*
toolkit.ingress (dict "ctx" $ "type" "identity" "service" "keystone-api" "port" 5000)
-> an Ingress publishing endpoints.<type>.public.host to a Service.
network.api.ingress: {class_name, annotations}; "annotations" adds
ingress-specific ones (they win); TLS when
endpoints.<type>.public.tls.secret_name is set.
*/}}
{{- define "toolkit.ingress" -}}
{{- $ctx := .ctx -}}
{{- $ing := $ctx.Values.network.api.ingress | default dict -}}
{{- $annotations := merge (deepCopy (.annotations | default dict)) ($ing.annotations | default dict) -}}
{{- $public := include "toolkit.endpoint.scope" (dict "ctx" $ctx "type" .type "scope" "public") | fromYaml -}}
{{- $host := include "toolkit.endpoint.host" (dict "ctx" $ctx "type" .type "scope" "public") -}}
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  {{- include "toolkit.metadata" (dict "ctx" $ctx "component" "ingress" "name" .service) | nindent 2 }}
  {{- with $annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- with $ing.class_name }}
  ingressClassName: {{ . }}
  {{- end }}
  {{- with ($public.tls | default dict).secret_name }}
  tls:
    - hosts: [{{ $host | quote }}]
      secretName: {{ . }}
  {{- end }}
  rules:
    - host: {{ $host | quote }}
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: {{ .service }}
                port:
                  number: {{ .port | int }}
{{- end -}}

{{/*
toolkit.pdb (dict "ctx" $ "component" "api")
-> a PodDisruptionBudget from pod.lifecycle.disruption_budget.<component>
({min_available} or {max_unavailable}; default max_unavailable 1).
*/}}
{{- define "toolkit.pdb" -}}
{{- $budgets := ((.ctx.Values.pod.lifecycle | default dict).disruption_budget | default dict) -}}
{{- $b := index $budgets (include "toolkit.underscore" .component) | default dict -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  {{- include "toolkit.metadata" . | nindent 2 }}
spec:
  {{- if hasKey $b "min_available" }}
  minAvailable: {{ $b.min_available }}
  {{- else }}
  maxUnavailable: {{ $b.max_unavailable | default 1 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "toolkit.selectorLabels" . | nindent 6 }}
{{- end -}}

{{/*
toolkit.rollingUpdate CTX -> Deployment `strategy:` from
pod.lifecycle.upgrades.deployments {max_unavailable, max_surge, revision_history}.
*/}}
{{- define "toolkit.rollingUpdate" -}}
{{- $u := ((.Values.pod.lifecycle | default dict).upgrades | default dict).deployments | default dict -}}
revisionHistoryLimit: {{ $u.revision_history | default 3 }}
strategy:
  type: RollingUpdate
  rollingUpdate:
    maxUnavailable: {{ $u.max_unavailable | default 1 }}
    maxSurge: {{ $u.max_surge | default 1 }}
{{- end -}}
