#!/bin/bash
# Run ovn-northd against the databases (OVN_NB_REMOTE, OVN_SB_REMOTE). Extra
# instances wait on the SB lock as hot standby.
set -euo pipefail
exec ovn-northd \
  --ovnnb-db="${OVN_NB_REMOTE}" \
  --ovnsb-db="${OVN_SB_REMOTE}" \
  --pidfile=/run/ovn/ovn-northd.pid \
  -vconsole:info -vfile:off
