#!/bin/bash
# Migrate the Placement database.
set -euo pipefail
placement-manage --config-file /etc/placement/placement.conf db sync
