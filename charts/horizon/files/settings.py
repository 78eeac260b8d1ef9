# Django settings module of the dashboard (DJANGO_SETTINGS_MODULE=flotilla_settings).
#
# Horizon reads `openstack_dashboard.local.local_settings` from inside its
# installed package. Rather than writing into the image, this directory is
# put first on that package's search path, so the chart's local_settings.py
# (next to this file) is the one Horizon imports, before it derives the
# rest of its settings.
import openstack_dashboard.local as _local

_local.__path__.insert(0, "/etc/openstack-dashboard")

try:  # the image ships PyMySQL, not mysqlclient
    import pymysql

    pymysql.install_as_MySQLdb()
except ImportError:
    pass

from openstack_dashboard.settings import *  # noqa: E402,F401,F403
