#!/bin/bash
# Upload the images listed in bootstrap.images (BOOTSTRAP_IMAGES, JSON)
# unless an image of that name exists. Runs as the cloud admin.
set -euo pipefail
python3 - <<'PY'
import json, os, subprocess, tempfile, urllib.request

def openstack(*args):
    return subprocess.run(["openstack", *args], check=True, capture_output=True, text=True).stdout

for image in json.loads(os.environ.get("BOOTSTRAP_IMAGES", "[]")):
    name = image["name"]
    if openstack("image", "list", "--name", name, "-f", "value", "-c", "ID").strip():
        print(f"image {name} exists")
        continue
    with tempfile.NamedTemporaryFile(dir="/tmp") as data:
        print(f"downloading {image['url']}", flush=True)
        with urllib.request.urlopen(image["url"], timeout=600) as response:
            while chunk := response.read(1 << 20):
                data.write(chunk)
        data.flush()
        args = ["image", "create", name, "--file", data.name,
                "--disk-format", image.get("disk_format", "qcow2"),
                "--container-format", image.get("container_format", "bare"),
                f"--{image.get('visibility', 'public')}"]
        for key, value in (image.get("properties") or {}).items():
            args += ["--property", f"{key}={value}"]
        openstack(*args)
        print(f"image {name} uploaded", flush=True)
PY
