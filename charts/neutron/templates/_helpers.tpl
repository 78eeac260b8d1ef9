{{/* Configuration files in /etc/neutron (ml2_conf.ini is mounted separately, see neutron.ml2Mount). */}}
{{- define "neutron.etcMounts" -}}
{{- dict "dir" "/etc/neutron" "files" (list "neutron.conf" "api-paste.ini" "policy.yaml") | toYaml -}}
{{- end -}}

{{- define "neutron.ml2Mount" -}}
- name: etc
  mountPath: /etc/neutron/plugins/ml2/ml2_conf.ini
  subPath: ml2_conf.ini
  readOnly: true
{{- end -}}

{{/* OVSDB remotes of the OVN databases, from endpoints.ovn_nb / ovn_sb. */}}
{{- define "neutron.ovnRemote" -}}
{{- $s := include "toolkit.endpoint.scope" (dict "ctx" .ctx "type" .type "scope" "internal") | fromYaml -}}
{{- printf "%s:%s" ($s.scheme | default "tcp") (include "toolkit.endpoint.hostPort" (dict "ctx" .ctx "type" .type "scope" "internal")) -}}
{{- end -}}

{{/* ml2_conf.ini: conf.plugins.ml2_conf with the OVN connections merged under it. */}}
{{- define "neutron.ml2Conf" -}}
{{- $derived := dict "ovn" (dict
      "ovn_nb_connection" (include "neutron.ovnRemote" (dict "ctx" . "type" "ovn_nb"))
      "ovn_sb_connection" (include "neutron.ovnRemote" (dict "ctx" . "type" "ovn_sb"))) -}}
{{- include "toolkit.ini" (mergeOverwrite $derived (deepCopy .Values.conf.plugins.ml2_conf)) -}}
{{- end -}}

{{/* neutron_ovn_metadata_agent.ini: conf.ovn_metadata_agent over the derived nova metadata and SB settings. */}}
{{- define "neutron.metadataAgentConf" -}}
{{- $derived := dict
      "DEFAULT" (dict
        "nova_metadata_host" (include "toolkit.endpoint.host" (dict "ctx" . "type" "compute_metadata" "scope" "internal"))
        "nova_metadata_port" (include "toolkit.endpoint.port" (dict "ctx" . "type" "compute_metadata" "scope" "internal"))
        "nova_metadata_protocol" (.Values.endpoints.compute_metadata.internal.scheme | default "http")
        "metadata_proxy_shared_secret" (.Values.endpoints.compute_metadata.auth.shared_secret.password | toString))
      "ovn" (dict "ovn_sb_connection" (include "neutron.ovnRemote" (dict "ctx" . "type" "ovn_sb")))
-}}
{{- include "toolkit.ini" (mergeOverwrite $derived (deepCopy .Values.conf.ovn_metadata_agent)) -}}
{{- end -}}
