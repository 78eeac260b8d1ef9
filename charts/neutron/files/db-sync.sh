#!/bin/bash
# Migrate the Neutron database to the code's head revision.
set -euo pipefail
neutron-db-manage \
  --config-file /etc/neutron/neutron.conf \
  --config-file /etc/neutron/plugins/ml2/ml2_conf.ini \
  upgrade head
