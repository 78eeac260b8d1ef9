#!/bin/bash
# Collect and compress the static files into STATIC_ROOT (an emptyDir),
# then serve the dashboard and its static files with uWSGI.
set -euo pipefail
mkdir -p /var/lib/horizon/static
django-admin collectstatic --noinput --verbosity 0
django-admin compress --force --verbosity 0
exec uwsgi --ini /etc/openstack-dashboard/horizon-uwsgi.ini
