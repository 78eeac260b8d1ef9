{{/*
Scripts shared by the service charts, shipped in each chart's `<chart>-bin`
ConfigMap (toolkit.configmapBin) and run by the standard Jobs.
*/}}

{{- define "toolkit.scripts.dbInit" -}}
#!/usr/bin/env python3
"""Create service databases and users; safe to run again.

For every N, DB_ADMIN_CONNECTION_N is an SQLAlchemy URL with administrative
rights on a MariaDB server and DB_USER_CONNECTION_N the service's own URL.
The database named in the user URL is created, the user is created (or its
password reset to the one in the URL) and granted all rights on it.
"""
import os
import sys
import time
from urllib.parse import unquote, urlsplit

import pymysql


def parse(url):
    parts = urlsplit(url)
    return {
        "host": parts.hostname,
        "port": parts.port or 3306,
        "user": unquote(parts.username or ""),
        "password": unquote(parts.password or ""),
        "database": parts.path.lstrip("/"),
    }


def connect(server, attempts=60):
    for _ in range(attempts):
        try:
            return pymysql.connect(host=server["host"], port=server["port"],
                                   user=server["user"], password=server["password"],
                                   autocommit=True, connect_timeout=10)
        except pymysql.err.OperationalError as exc:
            print(f"waiting for {server['host']}:{server['port']}: {exc}", flush=True)
            time.sleep(5)
    sys.exit(f"giving up on {server['host']}:{server['port']}")


def ident(name):
    return "`" + name.replace("`", "``") + "`"


suffixes = sorted(k[len("DB_USER_CONNECTION_"):] for k in os.environ
                  if k.startswith("DB_USER_CONNECTION_"))
if not suffixes:
    sys.exit("no DB_USER_CONNECTION_* variable set")
for n in suffixes:
    admin = parse(os.environ[f"DB_ADMIN_CONNECTION_{n}"])
    user = parse(os.environ[f"DB_USER_CONNECTION_{n}"])
    if not user["database"]:
        sys.exit(f"DB_USER_CONNECTION_{n} names no database")
    conn = connect(admin)
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS {ident(user['database'])} "
                    "CHARACTER SET utf8 COLLATE utf8_general_ci")
        cur.execute("CREATE USER IF NOT EXISTS %s@'%%' IDENTIFIED BY %s",
                    (user["user"], user["password"]))
        cur.execute("ALTER USER %s@'%%' IDENTIFIED BY %s", (user["user"], user["password"]))
        cur.execute(f"GRANT ALL PRIVILEGES ON {ident(user['database'])}.* TO %s@'%%'",
                    (user["user"],))
    conn.close()
    print(f"database {user['database']} ready for {user['user']}", flush=True)
{{- end -}}

{{- define "toolkit.scripts.dbDrop" -}}
#!/usr/bin/env python3
"""Drop service databases and users (the pairs db-init creates)."""
import os
from urllib.parse import unquote, urlsplit

import pymysql


def parse(url):
    parts = urlsplit(url)
    return {
        "host": parts.hostname,
        "port": parts.port or 3306,
        "user": unquote(parts.username or ""),
        "password": unquote(parts.password or ""),
        "database": parts.path.lstrip("/"),
    }


for key in sorted(k for k in os.environ if k.startswith("DB_USER_CONNECTION_")):
    n = key[len("DB_USER_CONNECTION_"):]
    admin = parse(os.environ[f"DB_ADMIN_CONNECTION_{n}"])
    user = parse(os.environ[key])
    conn = pymysql.connect(host=admin["host"], port=admin["port"], user=admin["user"],
                           password=admin["password"], autocommit=True, connect_timeout=10)
    with conn.cursor() as cur:
        name = user["database"].replace("`", "``")
        cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        cur.execute("DROP USER IF EXISTS %s@'%%'", (user["user"],))
    conn.close()
    print(f"dropped {user['database']} and {user['user']}", flush=True)
{{- end -}}

{{- define "toolkit.scripts.rabbitInit" -}}
#!/usr/bin/env python3
"""Create a service's RabbitMQ vhost and user through the management API.

RABBITMQ_ADMIN_CONNECTION and RABBITMQ_USER_CONNECTION are transport URLs
(rabbit://user:password@host:port/vhost); RABBITMQ_MANAGEMENT_URL is the
HTTP API of the cluster. Safe to run again: PUTs are idempotent.
"""
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import quote, unquote, urlsplit

admin = urlsplit(os.environ["RABBITMQ_ADMIN_CONNECTION"])
user = urlsplit(os.environ["RABBITMQ_USER_CONNECTION"])
api = os.environ["RABBITMQ_MANAGEMENT_URL"].rstrip("/")
token = base64.b64encode(
    f"{unquote(admin.username)}:{unquote(admin.password)}".encode()).decode()


def put(path, body):
    request = urllib.request.Request(
        api + path, data=json.dumps(body).encode(), method="PUT",
        headers={"Authorization": "Basic " + token, "Content-Type": "application/json"})
    for _ in range(60):
        try:
            with urllib.request.urlopen(request, timeout=10):
                return
        except urllib.error.HTTPError as exc:
            sys.exit(f"PUT {path}: {exc.code} {exc.read().decode(errors='replace')}")
        except OSError as exc:
            print(f"waiting for {api}: {exc}", flush=True)
            time.sleep(5)
    sys.exit(f"giving up on {api}")


vhost = unquote(user.path[1:]) or "/"
name = unquote(user.username)
put(f"/api/vhosts/{quote(vhost, safe='')}", {})
put(f"/api/users/{quote(name, safe='')}", {"password": unquote(user.password), "tags": ""})
put(f"/api/permissions/{quote(vhost, safe='')}/{quote(name, safe='')}",
    {"configure": ".*", "write": ".*", "read": ".*"})
print(f"vhost {vhost} ready for {name}", flush=True)
{{- end -}}

{{- define "toolkit.scripts.ksUser" -}}
#!/bin/bash
# Create or update a service's Keystone user and grant its roles.
# Admin credentials arrive as OS_*, the service account as SERVICE_OS_*,
# the roles (comma separated) as SERVICE_OS_ROLES.
set -euo pipefail

user_domain=$(openstack domain create --or-show -f value -c id "${SERVICE_OS_USER_DOMAIN_NAME}")
project_domain=$(openstack domain create --or-show -f value -c id "${SERVICE_OS_PROJECT_DOMAIN_NAME}")
project=$(openstack project create --or-show --domain "${project_domain}" -f value -c id "${SERVICE_OS_PROJECT_NAME}")
user=$(openstack user create --or-show --domain "${user_domain}" \
  --password "${SERVICE_OS_PASSWORD}" -f value -c id "${SERVICE_OS_USERNAME}")
# --or-show keeps the password of an existing user: make it the current one.
openstack user set --password "${SERVICE_OS_PASSWORD}" "${user}"

IFS=',' read -r -a roles <<< "${SERVICE_OS_ROLES}"
for role in "${roles[@]}"; do
  openstack role create --or-show "${role}" >/dev/null
  openstack role add --project "${project}" --user "${user}" "${role}"
done
echo "user ${SERVICE_OS_USERNAME} has roles ${SERVICE_OS_ROLES} on ${SERVICE_OS_PROJECT_NAME}"
{{- end -}}

{{- define "toolkit.scripts.ksService" -}}
#!/bin/bash
# Register (or update) a service in the Keystone catalog, keyed by its type.
set -euo pipefail

id=$(openstack service list -f value -c ID -c Type | awk -v type="${OS_SERVICE_TYPE}" '$2 == type {print $1; exit}')
if [ -z "${id}" ]; then
  openstack service create --name "${OS_SERVICE_NAME}" --description "${OS_SERVICE_DESC}" "${OS_SERVICE_TYPE}"
else
  openstack service set --name "${OS_SERVICE_NAME}" --description "${OS_SERVICE_DESC}" "${id}"
fi
{{- end -}}

{{- define "toolkit.scripts.ksEndpoints" -}}
#!/bin/bash
# Create or update the catalog endpoints of one service type in one region.
# ENDPOINT_URL_INTERNAL / _ADMIN / _PUBLIC give the URL of each interface.
set -euo pipefail

for interface in internal admin public; do
  var="ENDPOINT_URL_${interface^^}"
  url="${!var:-}"
  [ -n "${url}" ] || continue
  id=$(openstack endpoint list --service "${OS_SERVICE_TYPE}" --interface "${interface}" \
    --region "${OS_REGION_NAME}" -f value -c ID | head -n 1)
  if [ -z "${id}" ]; then
    openstack endpoint create --region "${OS_REGION_NAME}" "${OS_SERVICE_TYPE}" "${interface}" "${url}"
  else
    openstack endpoint set --url "${url}" "${id}"
  fi
done
openstack endpoint list --service "${OS_SERVICE_TYPE}" --region "${OS_REGION_NAME}"
{{- end -}}

{{/*
toolkit.configmapBin (dict "ctx" $ "scripts" (dict "db-sync.sh" "...") ["common" false])
-> the `<chart>-bin` ConfigMap: the chart's scripts plus (unless common is
false) the shared ones: db-init.py, db-drop.py, rabbit-init.py, ks-user.sh,
ks-service.sh, ks-endpoints.sh.
*/}}
{{- define "toolkit.configmapBin" -}}
{{- $scripts := dict -}}
{{- if ne (toString .common) "false" -}}
{{- $scripts = dict
      "db-init.py" (include "toolkit.scripts.dbInit" .ctx)
      "db-drop.py" (include "toolkit.scripts.dbDrop" .ctx)
      "rabbit-init.py" (include "toolkit.scripts.rabbitInit" .ctx)
      "ks-user.sh" (include "toolkit.scripts.ksUser" .ctx)
      "ks-service.sh" (include "toolkit.scripts.ksService" .ctx)
      "ks-endpoints.sh" (include "toolkit.scripts.ksEndpoints" .ctx)
-}}
{{- end -}}
{{- range $name, $text := .scripts -}}
{{- $_ := set $scripts $name $text -}}
{{- end -}}
apiVersion: v1
kind: ConfigMap
metadata:
  {{- include "toolkit.metadata" (dict "ctx" .ctx "component" "bin") | nindent 2 }}
data:
  {{- range $name, $text := $scripts }}
  {{ $name }}: |
    {{- $text | nindent 4 }}
  {{- end }}
{{- end -}}

{{/*
toolkit.secretEtc (dict "ctx" $ "files" (dict "keystone.conf" "..." "policy.yaml" "..."))
-> the `<chart>-etc` Secret holding configuration files (they carry
passwords, hence a Secret).
*/}}
{{- define "toolkit.secretEtc" -}}
apiVersion: v1
kind: Secret
metadata:
  {{- include "toolkit.metadata" (dict "ctx" .ctx "component" "etc") | nindent 2 }}
type: Opaque
data:
  {{- range $name, $text := .files }}
  {{ $name }}: {{ $text | b64enc }}
  {{- end }}
{{- end -}}
