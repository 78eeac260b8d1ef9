#!/bin/bash
# Create the public flavors of bootstrap.flavors (BOOTSTRAP_FLAVORS: one
# "name vcpus ram disk" per line) unless they exist. Runs as the cloud admin.
set -euo pipefail
while read -r name vcpus ram disk; do
  [ -n "${name}" ] || continue
  if ! openstack flavor show "${name}" >/dev/null 2>&1; then
    openstack flavor create --public --vcpus "${vcpus}" --ram "${ram}" --disk "${disk}" "${name}"
  fi
done <<< "${BOOTSTRAP_FLAVORS}"
openstack flavor list
