"""The pyavd side of benchmarks/vs_avd.py: eos_designs + eos_cli_config_gen + docs for a fabric.

Runs under pyavd's own interpreter (vs_avd.py makes a venv for it); fabgen never imports it.
The fabric mirrors the fabgen intent vs_avd.py renders: an eBGP leaf/spine underlay with no
overlay, every leaf with HOSTS routed /31 host ports and UPLINKS uplinks spread evenly over the
spines, one RoCE QoS profile (DSCP trust, DWRR 50/50, ECN on queue 3, strict queue 6, PFC
no-drop on priority 3 with the watchdog) on every host port and uplink, MTU 9214.

Usage: python avd_side.py LEAVES SPINES HOSTS UPLINKS [OUTDIR]
Prints one JSON line: seconds (inputs -> every config and doc text), devices, bytes.
"""

from __future__ import annotations

import ipaddress
import json
import sys
import time
from pathlib import Path
from typing import Any

QOS_PROFILE = {
    "name": "ROCE",
    "trust": "dscp",
    "tx_queues": [
        {"id": 0, "bandwidth_percent": 50},
        {"id": 3, "bandwidth_percent": 50,
         "random_detect": {"ecn": {"threshold": {"units": "bytes", "min": 150000,
                                                  "max": 1500000, "max_probability": 100}}}},
        {"id": 6, "priority": "priority strict"},
    ],
    "priority_flow_control": {"enabled": True, "watchdog": {"enabled": True, "action": "drop"},
                              "priorities": [{"priority": 3, "no_drop": True}]},
}


def inputs(leaves: int, spines: int, hosts: int, uplinks: int) -> dict[str, dict[str, Any]]:
    """AVD inputs per device (group vars merged with the device's `type`)."""
    per_spine = uplinks // spines
    host_base = int(ipaddress.ip_address("10.64.0.0"))
    groups = []
    for leaf in range(1, leaves + 1):
        first = host_base + 2 * (leaf - 1) * hosts
        l3 = [{"name": f"Ethernet{h}/1",
               "ip_address": f"{ipaddress.ip_address(first + 2 * (h - 1))}/31",
               "structured_config": {"mtu": 9214}, "qos_profile": "ROCE",
               "description": f"host{leaf}-{h}"} for h in range(1, hosts + 1)]
        spine_ports = [f"Ethernet{(leaf - 1) * per_spine + p + 1}/1"
                       for _ in range(spines) for p in range(per_spine)]
        groups.append({"group": f"leaf{leaf}", "bgp_as": str(4200000000 + leaf),
                       "nodes": [{"name": f"leaf{leaf}", "id": leaf,
                                  "uplink_switch_interfaces": spine_ports,
                                  "l3_interfaces": l3}]})
    common: dict[str, Any] = {
        "fabric_name": "BENCH",
        "underlay_routing_protocol": "ebgp",
        "overlay_routing_protocol": "none",
        "p2p_uplinks_mtu": 9214,
        "p2p_uplinks_qos_profile": "ROCE",
        "qos_profiles": [QOS_PROFILE],
        "bgp_maximum_paths": 64,
        "spine": {"defaults": {"platform": "7060X6", "loopback_ipv4_pool": "10.255.0.0/24",
                               "bgp_as": "65000"},
                  "nodes": [{"name": f"spine{s}", "id": s} for s in range(1, spines + 1)]},
        "l3leaf": {
            "defaults": {"platform": "7060X6", "loopback_ipv4_pool": "10.255.16.0/20",
                         "uplink_switches": [f"spine{s}" for s in range(1, spines + 1)
                                             for _ in range(per_spine)],
                         "uplink_interfaces": [f"Ethernet{hosts + u}/1"
                                               for u in range(1, uplinks + 1)],
                         "uplink_ipv4_pool": "10.0.0.0/12", "max_uplink_switches": spines,
                         "max_parallel_uplinks": per_spine, "vtep": False},
            "node_groups": groups,
        },
    }
    devices = {f"spine{s}": {**common, "type": "spine"} for s in range(1, spines + 1)}
    devices |= {f"leaf{n}": {**common, "type": "l3leaf"} for n in range(1, leaves + 1)}
    return devices


def main() -> None:
    leaves, spines, hosts, uplinks = (int(a) for a in sys.argv[1:5])
    outdir = Path(sys.argv[5]) if len(sys.argv) > 5 else None
    import pyavd

    start = time.perf_counter()
    all_inputs = inputs(leaves, spines, hosts, uplinks)
    for name, inp in all_inputs.items():
        res = pyavd.validate_inputs(inp)
        if res.validated_data is None or res.validation_result.violations:
            bad = [(v.path, v.message) for v in res.validation_result.violations][:3]
            raise SystemExit(f"{name}: {bad}")
        all_inputs[name] = res.validated_data
    facts = pyavd.get_avd_facts(all_inputs)
    size = 0
    for name, inp in all_inputs.items():
        structured = pyavd.get_device_structured_config(name, inp, facts)
        config = pyavd.get_device_config(structured)
        doc = pyavd.get_device_doc(structured)
        size += len(config) + len(doc)
        if outdir:
            (outdir / f"{name}.cfg").write_text(config)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "devices": len(all_inputs), "bytes": size}))


if __name__ == "__main__":
    main()
