#!/bin/bash
# Run ovs-vswitchd once the local database answers.
set -euo pipefail
for _ in $(seq 1 60); do
  [ -S /run/openvswitch/db.sock ] && break
  sleep 1
done
modprobe openvswitch || echo "openvswitch module not loaded here; assuming the host has it"
ovs-vsctl --no-wait init
exec ovs-vswitchd unix:/run/openvswitch/db.sock \
  --pidfile=/run/openvswitch/ovs-vswitchd.pid \
  --mlockall \
  -vconsole:info -vfile:off
