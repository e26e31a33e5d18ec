"""What fabgen owns in a device's running config, so a render is compared with a backup on
that part only, cut the same way on both sides.

A switch's running config holds much that fabgen never renders: management interfaces,
users, AAA, NTP, the platform's own SONiC tables (FEATURE, CRM, MGMT_*), NVUE's `system aaa`,
FRR's `line vty`. Against a backup, `fabgen diff` keeps of each side only the sections,
tables or paths fabgen owns: those listed here for each platform (so a section fabgen stops
rendering still shows as a removal) and any the render holds. The same cut applies to both
sides, so a backup identical to the render shows no drift (tests/test_diff_backups.py holds
every platform to it, and every section a golden render holds to these lists).
"""

from __future__ import annotations

import fnmatch
from typing import Any

from fabgen.diff.sections import Node

# EOS top-level sections fabgen renders (templates/eos/*.j2).
EOS_SECTIONS = ("service routing protocols model ", "hostname ", "ip routing",
                "management api gnmi", "ip hardware fib ", "interface Ethernet",
                "interface Loopback",
                "port-channel load-balance ", "qos map ", "priority-flow-control ",
                "router bfd", "router bgp ")
# FRR sections of the frr.conf a SONiC switch renders from fabgen's config_db.json with
# frrcfgd's templates (frr.expected.conf, targets/sonic_frr.py; the zebra and bgpd templates'
# own lines included: agentx, fpm, nht, passwords, interfaces); vtysh's `frr version`,
# `service integrated-vtysh-config` and `line vty` are the device's.
FRR_SECTIONS = ("frr defaults ", "hostname ", "log syslog", "log facility ", "router bgp ",
                "bfd", "route-map ", "ip prefix-list ", "ipv6 prefix-list ", "agentx",
                "enable password ", "password ", "fpm address ", "no fpm ", "ip nht ",
                "ipv6 nht ", "interface ", "link-detect")
SECTIONS = {"eos": EOS_SECTIONS, "frr": FRR_SECTIONS}
# SONiC config_db tables fabgen renders (targets/sonic.py, sonic_bgp.py, sonic_buffers.py).
SONIC_TABLES = frozenset({
    "BGP_GLOBALS", "BGP_GLOBALS_AF", "BGP_GLOBALS_AF_NETWORK", "BGP_PEER_GROUP",
    "BGP_PEER_GROUP_AF", "PREFIX", "PREFIX_SET", "ROUTE_MAP", "ROUTE_MAP_SET",
    "BGP_NEIGHBOR", "BUFFER_PG", "BUFFER_POOL", "BUFFER_PORT_EGRESS_PROFILE_LIST",
    "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PROFILE", "BUFFER_QUEUE", "CABLE_LENGTH",
    "COPP_GROUP", "COPP_TRAP",
    "DEFAULT_LOSSLESS_BUFFER_PARAMETER", "DEVICE_METADATA", "DSCP_TO_TC_MAP",
    "FLEX_COUNTER_TABLE", "INTERFACE", "LOOPBACK_INTERFACE", "LOSSLESS_TRAFFIC_PATTERN",
    "MAP_PFC_PRIORITY_TO_QUEUE", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "PFC_WD", "PORT",
    "PORT_QOS_MAP", "QUEUE", "SCHEDULER", "SWITCH_HASH", "TC_TO_PRIORITY_GROUP_MAP",
    "TC_TO_QUEUE_MAP", "WRED_PROFILE",
})
# NVUE paths (two levels under `set`) fabgen renders (targets/nvue.py); a glob per level.
# `interface eth0` (management), `system aaa`, `service`... are the device's.
NVUE_PATHS = (("interface", "swp*"), ("interface", "lo"), ("qos", "*"), ("router", "bgp"),
              ("vrf", "default"), ("system", "hostname"), ("system", "telemetry"),
              ("system", "forwarding"))


def owned_sections(backup: list[Node], render: list[Node], platform: str
                   ) -> tuple[list[Node], list[Node]]:
    """Top-level sections: those of SECTIONS[platform] and any the render has, both sides."""
    static = SECTIONS[platform]
    rendered = {n.line for n in render}

    def keep(node: Node) -> bool:
        return node.line.startswith(static) or node.line.rstrip() in static \
            or node.line in rendered

    return [n for n in backup if keep(n)], [n for n in render if keep(n)]


def owned_tables(backup: Any, render: Any) -> tuple[Any, Any]:
    """SONiC: the tables of SONIC_TABLES and any the render has, both sides."""
    if not (isinstance(backup, dict) and isinstance(render, dict)):
        return backup, render
    tables = SONIC_TABLES | render.keys()
    return ({k: v for k, v in backup.items() if k in tables},
            {k: v for k, v in render.items() if k in tables})


def nvue_set(docs: list[Any]) -> dict[str, Any]:
    """What an NVUE config sets: startup.yaml's and `nv config show -o yaml`'s list of
    `- set: {...}` (and `- header: {...}`, the revision's metadata, left out), or a bare
    mapping of what is set."""
    merged: dict[str, Any] = {}
    for doc in docs:
        items = doc if isinstance(doc, list) else [doc]
        for item in items:
            if not isinstance(item, dict):
                continue
            # A revision's items (`set`, `header`, `unset`), or a bare mapping of what is set.
            revision = "set" in item or "header" in item or "unset" in item
            part = item.get("set") if revision else item
            if isinstance(part, dict):
                _merge(merged, part)
    return merged


def _merge(into: dict[str, Any], part: dict[str, Any]) -> None:
    for k, v in part.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


def owned_nvue(backup: dict[str, Any], render: dict[str, Any]
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    """NVUE: the paths of NVUE_PATHS and any the render sets (two levels deep), both sides."""
    rendered = {(a, b) for a, sub in render.items() if isinstance(sub, dict) for b in sub}

    def owned(a: str, b: str) -> bool:
        return (a, b) in rendered or any(
            fnmatch.fnmatchcase(a, x) and fnmatch.fnmatchcase(b, y) for x, y in NVUE_PATHS)

    def cut(tree: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for a, sub in tree.items():
            if not isinstance(sub, dict):
                if any(a == x for x, _ in NVUE_PATHS) or a in render:
                    out[a] = sub
                continue
            kept = {b: v for b, v in sub.items() if owned(str(a), str(b))}
            if kept:
                out[a] = kept
        return out

    return cut(backup), cut(render)
