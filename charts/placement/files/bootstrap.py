#!/usr/bin/env python3
"""Create the custom resource classes and traits of bootstrap.* in Placement.

Runs as the cloud admin (OS_* environment); BOOTSTRAP_RESOURCE_CLASSES and
BOOTSTRAP_TRAITS are JSON lists of CUSTOM_* names. PUT is idempotent.
"""
import json
import os

from keystoneauth1 import loading, session

auth = loading.get_plugin_loader("password").load_from_options(
    auth_url=os.environ["OS_AUTH_URL"], username=os.environ["OS_USERNAME"],
    password=os.environ["OS_PASSWORD"], project_name=os.environ["OS_PROJECT_NAME"],
    user_domain_name=os.environ["OS_USER_DOMAIN_NAME"],
    project_domain_name=os.environ["OS_PROJECT_DOMAIN_NAME"])
sess = session.Session(auth=auth)
endpoint = {"service_type": "placement", "interface": "internal",
            "region_name": os.environ["OS_REGION_NAME"]}

print("placement root:", sess.get("/", endpoint_filter=endpoint).json())
for name in json.loads(os.environ.get("BOOTSTRAP_RESOURCE_CLASSES", "[]")):
    sess.put(f"/resource_classes/{name}", endpoint_filter=endpoint,
             headers={"OpenStack-API-Version": "placement 1.7"})
    print("resource class", name)
for name in json.loads(os.environ.get("BOOTSTRAP_TRAITS", "[]")):
    sess.put(f"/traits/{name}", endpoint_filter=endpoint,
             headers={"OpenStack-API-Version": "placement 1.6"})
    print("trait", name)
