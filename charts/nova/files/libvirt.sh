#!/bin/bash
# Run libvirtd for the nova-compute container next to it. The socket lives
# in the host's /run/libvirt, domains and images under host paths, so
# instances survive a restart of this pod. With a Ceph client (CEPH_USER,
# CEPH_SECRET_UUID), define the libvirt secret guests use to reach RBD volumes.
set -euo pipefail
mkdir -p /var/lib/libvirt/images /var/lib/libvirt/qemu /var/log/libvirt/qemu /run/libvirt

libvirtd --config /etc/libvirt/libvirtd.conf &
pid=$!
trap 'kill -TERM "${pid}"; wait "${pid}"' TERM INT

if [ -n "${CEPH_SECRET_UUID:-}" ]; then
  keyring="/etc/ceph/ceph.client.${CEPH_USER}.keyring"
  for _ in $(seq 1 30); do
    virsh --connect qemu:///system version >/dev/null 2>&1 && break
    sleep 1
  done
  key=$(awk '$1 == "key" {print $3; exit}' "${keyring}")
  cat > /tmp/secret.xml <<XML
<secret ephemeral='no' private='no'>
  <uuid>${CEPH_SECRET_UUID}</uuid>
  <usage type='ceph'><name>client.${CEPH_USER} secret</name></usage>
</secret>
XML
  virsh --connect qemu:///system secret-define --file /tmp/secret.xml
  virsh --connect qemu:///system secret-set-value --secret "${CEPH_SECRET_UUID}" --base64 "${key}"
  rm -f /tmp/secret.xml
fi

wait "${pid}"
