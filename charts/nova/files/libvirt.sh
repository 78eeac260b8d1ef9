#!/bin/bash
# Run libvirtd for the nova-compute container next to it. The socket lives
# in the host's /run/libvirt, domains and images under host paths, so
# instances survive a restart of this pod.
set -euo pipefail
mkdir -p /var/lib/libvirt/images /var/lib/libvirt/qemu /var/log/libvirt/qemu /run/libvirt
# cgroup v1 hosts: make sure the controllers libvirt uses are mounted.
if [ -d /sys/fs/cgroup/cpuset ] && [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
  for controller in cpu cpuacct cpuset memory devices freezer blkio pids; do
    [ -d "/sys/fs/cgroup/${controller}" ] || echo "cgroup controller ${controller} missing" >&2
  done
fi
exec libvirtd --config /etc/libvirt/libvirtd.conf
