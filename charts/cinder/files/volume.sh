#!/bin/bash
# Run cinder-volume for one backend (BACKEND), with the shared cinder.conf
# and the backend's own file.
set -euo pipefail
mkdir -p /var/lib/cinder/tmp
exec cinder-volume \
  --config-file /etc/cinder/cinder.conf \
  --config-file "/etc/cinder/backend-${BACKEND}.conf"
