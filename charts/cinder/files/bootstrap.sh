#!/bin/bash
# Create one public volume type per enabled backend (CINDER_BACKENDS:
# "type:volume_backend_name ..."), runs as the cloud admin.
set -euo pipefail
for pair in ${CINDER_BACKENDS}; do
  type="${pair%%:*}"
  backend_name="${pair#*:}"
  if ! openstack volume type show "${type}" >/dev/null 2>&1; then
    openstack volume type create --public \
      --description "Volumes of the ${type} backend" \
      --property volume_backend_name="${backend_name}" "${type}"
  fi
done
openstack volume type list --long
