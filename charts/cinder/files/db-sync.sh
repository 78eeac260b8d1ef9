#!/bin/bash
# Migrate the Cinder database and run the online data migrations.
set -euo pipefail
cinder-manage --config-file /etc/cinder/cinder.conf db sync
cinder-manage --config-file /etc/cinder/cinder.conf db online_data_migrations
