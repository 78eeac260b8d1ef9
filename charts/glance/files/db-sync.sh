#!/bin/bash
# Migrate the Glance database (expand, migrate, contract in one go) and
# load the metadata definitions catalog.
set -euo pipefail
glance-manage --config-file /etc/glance/glance-api.conf db_sync
glance-manage --config-file /etc/glance/glance-api.conf db_load_metadefs
