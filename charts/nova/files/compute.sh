#!/bin/bash
# Run nova-compute once libvirt answers on its socket.
set -euo pipefail
mkdir -p /var/lib/nova/instances /var/lib/nova/tmp
for _ in $(seq 1 60); do
  [ -S /run/libvirt/libvirt-sock ] && break
  echo "waiting for libvirt"
  sleep 2
done
exec nova-compute --config-file /etc/nova/nova.conf
