#!/usr/bin/env python3
"""Create the networks of bootstrap.networks (BOOTSTRAP_NETWORKS, JSON)
with their subnets, unless a network of that name exists. Runs as the
cloud admin (OS_* environment) with the openstack client."""
import json
import os
import subprocess


def openstack(*args):
    result = subprocess.run(["openstack", *args], check=True, capture_output=True, text=True)
    return result.stdout.strip()


for name, net in json.loads(os.environ.get("BOOTSTRAP_NETWORKS", "{}")).items():
    if not net:
        continue
    if openstack("network", "list", "--name", name, "-f", "value", "-c", "ID"):
        print(f"network {name} exists")
        continue
    args = ["network", "create", name]
    args.append("--external" if net.get("external") else "--internal")
    if net.get("shared"):
        args.append("--share")
    provider = net.get("provider") or {}
    if provider.get("network_type"):
        args += ["--provider-network-type", provider["network_type"]]
    if provider.get("physical_network"):
        args += ["--provider-physical-network", provider["physical_network"]]
    if provider.get("segmentation_id") is not None:
        args += ["--provider-segment", str(provider["segmentation_id"])]
    openstack(*args)
    for subnet_name, subnet in (net.get("subnets") or {}).items():
        sargs = ["subnet", "create", subnet_name, "--network", name, "--subnet-range", subnet["cidr"]]
        if subnet.get("gateway"):
            sargs += ["--gateway", subnet["gateway"]]
        pool = subnet.get("allocation_pool") or {}
        if pool.get("start") and pool.get("end"):
            sargs += ["--allocation-pool", f"start={pool['start']},end={pool['end']}"]
        for server in subnet.get("dns_nameservers") or []:
            sargs += ["--dns-nameserver", server]
        sargs.append("--dhcp" if subnet.get("enable_dhcp", True) else "--no-dhcp")
        openstack(*sargs)
    print(f"network {name} created")
