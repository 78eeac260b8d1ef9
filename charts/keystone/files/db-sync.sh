#!/bin/bash
# Migrate the Keystone database, then (idempotently) bootstrap the cloud
# administrator, the admin project/role and the identity catalog entries.
# The admin account arrives as OS_* (keystone-keystone-admin Secret), the
# catalog URLs as KEYSTONE_*_URL.
set -euo pipefail

keystone-manage --config-file /etc/keystone/keystone.conf db_sync
keystone-manage --config-file /etc/keystone/keystone.conf bootstrap \
  --bootstrap-username "${OS_USERNAME}" \
  --bootstrap-password "${OS_PASSWORD}" \
  --bootstrap-project-name "${OS_PROJECT_NAME}" \
  --bootstrap-role-name admin \
  --bootstrap-service-name keystone \
  --bootstrap-region-id "${OS_REGION_NAME}" \
  --bootstrap-admin-url "${KEYSTONE_INTERNAL_URL}" \
  --bootstrap-internal-url "${KEYSTONE_INTERNAL_URL}" \
  --bootstrap-public-url "${KEYSTONE_PUBLIC_URL}"
