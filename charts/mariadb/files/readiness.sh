#!/bin/bash
# Ready when the server answers queries and, in a Galera cluster, when this
# member is Synced (a donor or joiner must not receive clients).
set -euo pipefail
export MYSQL_PWD="${MARIADB_ROOT_PASSWORD}"
if [ "${REPLICAS:-1}" -le 1 ]; then
  exec mariadb --host=127.0.0.1 --user=root -N -B -e 'SELECT 1' >/dev/null
fi
state=$(mariadb --host=127.0.0.1 --user=root -N -B \
  -e "SHOW GLOBAL STATUS LIKE 'wsrep_local_state_comment'" | awk '{print $2}')
[ "${state}" = "Synced" ]
