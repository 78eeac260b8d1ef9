#!/bin/bash
# Run the node's Open vSwitch database; create it on first start and convert
# it when the image brings a newer schema.
set -euo pipefail
db=/var/lib/openvswitch/conf.db
schema=/usr/share/openvswitch/vswitch.ovsschema
mkdir -p /run/openvswitch
if [ ! -s "${db}" ]; then
  ovsdb-tool create "${db}" "${schema}"
elif ovsdb-tool needs-conversion "${db}" "${schema}" | grep -q yes; then
  ovsdb-tool convert "${db}" "${schema}"
fi
exec ovsdb-server "${db}" \
  --remote=punix:/run/openvswitch/db.sock \
  --remote=db:Open_vSwitch,Open_vSwitch,manager_options \
  --pidfile=/run/openvswitch/ovsdb-server.pid \
  -vconsole:info -vfile:off
