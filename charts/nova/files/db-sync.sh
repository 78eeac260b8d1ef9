#!/bin/bash
# Migrate the nova API database, map cell0, create (or refresh) cell1 from
# nova.conf's [database] and transport_url, migrate the cell databases and
# run the online data migrations. CELL0_CONNECTION is cell0's database URL.
set -euo pipefail
conf=(--config-file /etc/nova/nova.conf)

nova-manage "${conf[@]}" api_db sync
nova-manage "${conf[@]}" cell_v2 map_cell0 --database_connection "${CELL0_CONNECTION}"

cell1=$(nova-manage "${conf[@]}" cell_v2 list_cells --verbose \
  | awk -F'|' '$2 ~ /^ *cell1 *$/ {gsub(/ /, "", $3); print $3}')
if [ -z "${cell1}" ]; then
  nova-manage "${conf[@]}" cell_v2 create_cell --name cell1 --verbose
else
  # Passwords or hosts may have changed: point cell1 at the current config.
  nova-manage "${conf[@]}" cell_v2 update_cell --cell_uuid "${cell1}"
fi

nova-manage "${conf[@]}" db sync
nova-manage "${conf[@]}" db online_data_migrations
nova-manage "${conf[@]}" cell_v2 list_cells
