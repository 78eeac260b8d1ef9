#!/usr/bin/env python3
"""Keep a Keystone key repository (fernet or credential) in a Secret.

usage: key-manage.py setup|rotate fernet|credential

setup   creates the Secret from a fresh repository unless it exists already
        (keys are never replaced by a re-run);
rotate  loads the repository from the Secret, rotates it with
        keystone-manage and writes it back. Pods mount the Secret as a
        directory, so the kubelet refreshes their keys without a restart.

The Secret is named by KEYS_SECRET; the pod's service account token is
used against the Kubernetes API.
"""
import base64
import json
import os
import ssl
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

SA = "/var/run/secrets/kubernetes.io/serviceaccount"
API = "https://{}:{}".format(os.environ["KUBERNETES_SERVICE_HOST"],
                             os.environ["KUBERNETES_SERVICE_PORT"])
NAMESPACE = open(f"{SA}/namespace").read().strip()
TOKEN = open(f"{SA}/token").read().strip()
CONTEXT = ssl.create_default_context(cafile=f"{SA}/ca.crt")


def api(method, path, body=None):
    request = urllib.request.Request(
        API + path, method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, context=CONTEXT, timeout=30) as response:
            return json.load(response)
    except urllib.error.HTTPError as exc:
        if exc.code == 404 and method == "GET":
            return None
        sys.exit(f"{method} {path}: {exc.code} {exc.read().decode(errors='replace')}")


def manage(command, repository, kind, with_service_conf):
    override = os.path.join(repository, "..", "key-manage.conf")
    section = "fernet_tokens" if kind == "fernet" else "credential"
    with open(override, "w") as conf:
        conf.write(f"[{section}]\nkey_repository = {repository}\n")
    args = ["keystone-manage"]
    if with_service_conf:
        args += ["--config-file", "/etc/keystone/keystone.conf"]
    args += ["--config-file", override, command,
             "--keystone-user", str(os.getuid()), "--keystone-group", str(os.getgid())]
    subprocess.run(args, check=True)


def read(repository):
    return {name: base64.b64encode(open(os.path.join(repository, name), "rb").read()).decode()
            for name in sorted(os.listdir(repository))}


def main(action, kind):
    name = os.environ["KEYS_SECRET"]
    path = f"/api/v1/namespaces/{NAMESPACE}/secrets"
    current = api("GET", f"{path}/{name}")
    workdir = tempfile.mkdtemp(prefix="keys-", dir="/tmp")
    repository = os.path.join(workdir, "repository")
    os.mkdir(repository, 0o700)
    if action == "setup":
        if current and current.get("data"):
            print(f"secret {name} already holds {len(current['data'])} keys; nothing to do")
            return
        manage(f"{kind}_setup", repository, kind, with_service_conf=False)
        body = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": name, "namespace": NAMESPACE,
                             "labels": {"app.kubernetes.io/name": "keystone",
                                        "app.kubernetes.io/component": f"{kind}-keys"}},
                "data": read(repository)}
        if current:
            body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            api("PUT", f"{path}/{name}", body)
        else:
            api("POST", path, body)
        print(f"secret {name} created with {len(body['data'])} keys")
    elif action == "rotate":
        if not current or not current.get("data"):
            sys.exit(f"secret {name} holds no keys; run the {kind}-setup job first")
        for key, value in current["data"].items():
            with open(os.path.join(repository, key), "wb") as handle:
                handle.write(base64.b64decode(value))
            os.chmod(os.path.join(repository, key), 0o600)
        # credential_rotate refuses to run while credentials still use an old
        # key: migrate them first (this needs the database).
        if kind == "credential":
            manage("credential_migrate", repository, kind, with_service_conf=True)
        manage(f"{kind}_rotate", repository, kind, with_service_conf=kind == "credential")
        current["data"] = read(repository)
        api("PUT", f"{path}/{name}", current)
        print(f"secret {name} rotated; {len(current['data'])} keys")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ("fernet", "credential"):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
