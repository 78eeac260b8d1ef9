#!/bin/bash
# Register this node as an OVN chassis in the local Open vSwitch database:
# SB remote, Geneve endpoint (IPv4 of TUNNEL_INTERFACE, else NODE_IP),
# bridge mappings, CMS options, provider bridges.
set -euo pipefail

if [ -n "${TUNNEL_INTERFACE}" ]; then
  encap_ip=$(ip -4 -o addr show dev "${TUNNEL_INTERFACE}" | awk '{split($4, a, "/"); print a[1]; exit}')
  if [ -z "${encap_ip}" ]; then
    echo "no IPv4 address on tunnel interface ${TUNNEL_INTERFACE}" >&2
    exit 1
  fi
else
  encap_ip="${NODE_IP}"
fi

ovs-vsctl --no-wait set open_vswitch . \
  external-ids:system-id="${NODE_NAME}" \
  external-ids:hostname="${NODE_NAME}" \
  external-ids:ovn-remote="${OVN_SB_REMOTE}" \
  external-ids:ovn-encap-type="${ENCAP_TYPE}" \
  external-ids:ovn-encap-ip="${encap_ip}" \
  external-ids:ovn-bridge=br-int \
  external-ids:ovn-bridge-mappings="${BRIDGE_MAPPINGS}" \
  external-ids:ovn-cms-options="${CMS_OPTIONS}"
for pair in ${EXTRA_EXTERNAL_IDS}; do
  ovs-vsctl --no-wait set open_vswitch . "external-ids:${pair}"
done

for pair in ${AUTO_BRIDGE_ADD}; do
  bridge="${pair%%:*}"
  iface="${pair#*:}"
  ovs-vsctl --may-exist add-br "${bridge}" -- set bridge "${bridge}" protocols=OpenFlow13
  if [ -n "${iface}" ]; then
    ovs-vsctl --may-exist add-port "${bridge}" "${iface}"
  fi
done
echo "chassis ${NODE_NAME}: encap ${ENCAP_TYPE} ${encap_ip}"
