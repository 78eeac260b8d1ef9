#!/bin/bash
# Create the project of the service users and the roles of BOOTSTRAP_ROLES
# (space separated), then run the operator's commands (bootstrap.script).
# Runs as the cloud admin; everything is create-or-show.
set -euo pipefail
openstack project create --or-show --domain default \
  --description "Project of the OpenStack service users" service
for role in ${BOOTSTRAP_ROLES}; do
  openstack role create --or-show "${role}"
done
if [ -s /tmp/bin/bootstrap-extra.sh ]; then
  bash -euo pipefail /tmp/bin/bootstrap-extra.sh
fi
