#!/bin/bash
# Create or migrate the dashboard's session tables.
set -euo pipefail
django-admin migrate --noinput
