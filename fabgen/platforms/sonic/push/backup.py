"""How `fabgen diff` reads SONiC's device configs: config_db.json by table, key and field (only
the tables fabgen owns against a backup), golden_config_db.json, and the FRR config the switch
renders from config_db.json by section."""

from __future__ import annotations

from typing import Any

from fabgen.diff.backup import by_lines, by_sections
from fabgen.diff.kind import Kind, kind
from fabgen.diff.model import Change
from fabgen.diff.structured import diff_values, parse_json

__all__ = ["FRR_SECTIONS", "KINDS", "SONIC_TABLES", "owned_tables"]

# FRR sections of the frr.conf a SONiC switch renders from fabgen's config_db.json with
# frrcfgd's templates (frr.expected.conf, frr.py; the zebra and bgpd templates'
# own lines included: agentx, fpm, nht, passwords, interfaces); vtysh's `frr version`,
# `service integrated-vtysh-config` and `line vty` are the device's.
FRR_SECTIONS = ("frr defaults ", "hostname ", "log syslog", "log facility ", "router bgp ",
                "bfd", "route-map ", "ip prefix-list ", "ipv6 prefix-list ", "agentx",
                "enable password ", "password ", "fpm address ", "no fpm ", "ip nht ",
                "ipv6 nht ", "interface ", "ip route ", "ipv6 route ")
# SONiC config_db tables fabgen renders (target.py, bgp.py, buffers.py).
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

def owned_tables(backup: Any, render: Any) -> tuple[Any, Any]:
    """SONiC: the tables of SONIC_TABLES and any the render has, both sides."""
    if not (isinstance(backup, dict) and isinstance(render, dict)):
        return backup, render
    tables = SONIC_TABLES | render.keys()
    return ({k: v for k, v in backup.items() if k in tables},
            {k: v for k, v in render.items() if k in tables})



def _config_db(backup: str, render: str, where: tuple[str, str], owned: bool,
               backup_is_old: bool) -> list[Change]:
    bw, rw = where if backup_is_old else (where[1], where[0])
    bj, rj = parse_json(backup, bw), parse_json(render, rw)
    if owned:
        bj, rj = owned_tables(bj, rj)
    return diff_values(bj, rj, where=bw) if backup_is_old else diff_values(rj, bj, where=bw)


def _lines(backup: str, render: str, where: tuple[str, str], owned: bool,
           backup_is_old: bool) -> list[Change]:
    return by_lines(backup, render, backup_is_old)


def _frr(backup: str, render: str, where: tuple[str, str], owned: bool,
         backup_is_old: bool) -> list[Change]:
    return by_sections(_FRR, backup, render, FRR_SECTIONS if owned else None, backup_is_old)


_FRR: Kind = kind("frr", "sonic/*/frr.conf sonic/*/frr.expected.conf", "sections", "text",
                  "FRR config by section (`router bgp 65000 > bgp router-id`)",
                  at="sections", os="sonic", device=True, parser="frr", backup=_frr)
KINDS: tuple[Kind, ...] = (
    kind("sonic", "sonic/*/config_db.json", "keys", "json",
         "SONiC config_db.json by table, key and field "
         "(`WRED_PROFILE|ROCE_LOSSLESS.green_min_threshold`)", at="table-key", os="sonic",
         device=True, backup=_config_db),
    # Read only by db_migrator: `show runningconfiguration` does not print it, so a backup
    # that lacks it is no drift.
    kind("sonic-golden", "sonic/*/golden_config_db.json", "keys", "json",
         "SONiC golden_config_db.json (what db_migrator keeps) by table, key and field",
         at="table-key", os="sonic", device=True, backed_up=False, backup=_lines),
    _FRR,
)
