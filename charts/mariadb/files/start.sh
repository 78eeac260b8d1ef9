#!/bin/bash
# Start one MariaDB server of the StatefulSet.
#
# One replica: the image's entrypoint initialises an empty datadir (root
# password from MARIADB_ROOT_PASSWORD) and runs mariadbd.
#
# Several replicas form a Galera cluster (pods start in parallel):
#  - empty datadir on pod 0 and no peer answering: a new cluster is created;
#  - empty datadir elsewhere: join, the data arrives by state transfer (SST);
#  - after a full stop, the member whose grastate.dat has
#    safe_to_bootstrap: 1 restarts the cluster when no peer answers, the
#    others join it. After a crash of every member no node is safe to
#    bootstrap: recover by hand (pick the most advanced node, set
#    safe_to_bootstrap: 1 in its grastate.dat, delete the pod).
set -euo pipefail

datadir=/var/lib/mysql
replicas="${REPLICAS:-1}"
ordinal="${HOSTNAME##*-}"

if [ "${replicas}" -le 1 ]; then
  exec docker-entrypoint.sh mariadbd
fi

self="${HOSTNAME}.${DISCOVERY_SERVICE}"
peers=()
for i in $(seq 0 $((replicas - 1))); do
  peers+=("${STATEFULSET}-${i}.${DISCOVERY_SERVICE}")
done
cluster_address="gcomm://$(IFS=,; echo "${peers[*]}")"

peer_alive() {
  local peer
  for peer in "${peers[@]}"; do
    [ "${peer}" = "${self}" ] && continue
    if timeout 2 bash -c "</dev/tcp/${peer}/4567" 2>/dev/null; then
      return 0
    fi
  done
  return 1
}

args=(
  --wsrep-cluster-address="${cluster_address}"
  --wsrep-node-name="${HOSTNAME}"
  --wsrep-node-address="${self}"
  --wsrep-sst-auth="root:${MARIADB_ROOT_PASSWORD}"
)

if [ ! -d "${datadir}/mysql" ]; then
  if [ "${ordinal}" = "0" ] && ! peer_alive; then
    echo "empty datadir and no peer: creating a new Galera cluster"
    exec docker-entrypoint.sh mariadbd "${args[@]}" --wsrep-new-cluster
  fi
  echo "empty datadir: joining the cluster through state transfer"
  exec mariadbd "${args[@]}"
fi

if ! peer_alive && grep -q '^safe_to_bootstrap: *1' "${datadir}/grastate.dat" 2>/dev/null; then
  echo "no peer answers and this member is safe to bootstrap: restarting the cluster"
  exec mariadbd "${args[@]}" --wsrep-new-cluster
fi
exec mariadbd "${args[@]}"
