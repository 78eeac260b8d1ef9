#!/bin/bash
# Run one member of the OVN Northbound or Southbound database (DB=nb|sb).
# With more than one replica the members form a RAFT cluster: pod 0 creates
# it, the others join pod 0; a member that already has a database file
# rejoins with it.
set -euo pipefail

db="${DB}"
args=(
  --no-monitor
  "--db-${db}-addr=0.0.0.0"
  "--db-${db}-port=${DB_PORT}"
  "--db-${db}-create-insecure-remote=yes"
  "--ovn-${db}-log=-vconsole:info -vfile:off"
)
if [ "${REPLICAS}" -gt 1 ]; then
  args+=(
    "--db-${db}-cluster-local-addr=${HOSTNAME}.${RAFT_SERVICE}"
    "--db-${db}-cluster-local-port=${RAFT_PORT}"
    "--db-${db}-cluster-local-proto=tcp"
  )
  if [ "${HOSTNAME##*-}" != "0" ]; then
    args+=(
      "--db-${db}-cluster-remote-addr=${STATEFULSET}-0.${RAFT_SERVICE}"
      "--db-${db}-cluster-remote-port=${RAFT_PORT}"
      "--db-${db}-cluster-remote-proto=tcp"
    )
  fi
fi
exec /usr/share/ovn/scripts/ovn-ctl "${args[@]}" "run_${db}_ovsdb"
