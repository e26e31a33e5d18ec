"""SONiC telemetry: `telemetry/gnmic-sonic.yaml`, gnmic (openconfig/gnmic) subscribing to SONiC's
gNMI server (sonic-gnmi): COUNTERS_DB port counters (PFC frames per priority), queue counters
(ECN marks, drops, watermarks, the PFC watchdog of the watched queues) and priority-group
watermarks; APPL_DB PORT_TABLE (oper status) and STATE_DB PORT_TABLE (operational speed).
Paths and answers: sonic-gnmi sonic_data_client/virtual_db.go and its testdata (commit
5ec1c20b); COUNTERS_DB answers are keyed by port alias, which the processor
(templates/sonic-split.star.j2) maps back to SONiC names. BGP state is not there: STATE_DB
NEIGH_STATE_TABLE is bgpmon's, which the bgp container does not run under fabgen's routing
design (frrcfgd); snmp.py's snmp_exporter files read it from FRR's BGP4-MIB instead.
Counters are sampled every 10 s (common.gnmic.SAMPLE_INTERVAL): SONiC polls queue,
PG-drop and WRED/ECN counters every 10 s by default (port counters every 1 s;
sonic-utilities counterpoll/main.py `show` defaults), so a faster sample repeats queue values.
"""

from __future__ import annotations

from typing import Any

from fabgen import templating
from fabgen.platforms.common.gnmic import SAMPLE_INTERVAL, gnmic_target, starlark
from fabgen.platforms.sonic.target import port_aliases
from fabgen.topology.model import Fabric, Switch

__all__ = ["GNMIC_SONIC", "PROMETHEUS_PORT", "SNMP_ENV", "SONIC_ENV", "SONIC_SUBSCRIPTIONS",
           "sonic_gnmic", "sonic_layouts", "sonic_split_program", "sonic_split_source", "sonic_tls"]

GNMIC_SONIC = "telemetry/gnmic-sonic.yaml"
# gnmic's prometheus output defaults to :9804.
PROMETHEUS_PORT = 9804

SONIC_ENV = ("Environment (gnmic's global flags, which every target inherits): GNMIC_TLS_CA "
             "(CA of the switches' gNMI certificates), GNMIC_TLS_CERT and GNMIC_TLS_KEY (this "
             "collector's client certificate, its common name in each switch's "
             "GNMI_CLIENT_CERT table).")
SNMP_ENV = ("Environment: FABGEN_SNMP_USERNAME, FABGEN_SNMP_AUTH_PASSWORD and "
            "FABGEN_SNMP_PRIV_PASSWORD, the SNMPv3 user each SONiC switch has (`sudo config "
            "snmp user add <user> priv ro sha <auth password> aes <priv password>`).")


def sonic_tls() -> dict[str, Any]:
    """sonic-gnmi without certificates runs with --noTLS bound to 127.0.0.1 (sonic-buildimage
    dockers/docker-sonic-gnmi/gnmi-native.sh), so a remote collector always dials TLS. The
    client authenticates with its certificate (GNMI|gnmi user_auth cert, the default; its
    common name listed in GNMI_CLIENT_CERT with role gnmi_readonly): GNMIC_TLS_CERT and
    GNMIC_TLS_KEY, inherited from the global flags."""
    return {"insecure": False, "skip-verify": False}


# Every subscription samples, states too: gnmic's Prometheus output deletes a series that has
# not been updated for 60 s (its `expiration` default), so an on-change state that stays put
# (a BGP session down for an hour) would vanish and its alert resolve on its own.
# SONiC subscriptions: name -> (gNMI target database, path, stream mode, event name, index tag).
# The event name is the middle of the metric name (sonic_<event>_<field>); the index tag names
# what follows the ':' of a key (Ethernet0:3 is queue 3).
SONIC_SUBSCRIPTIONS: dict[str, tuple[str, str, str, str, str]] = {
    # SAI_PORT_STAT_PFC_<p>_RX_PKTS / _TX_PKTS per priority, errors, octets (flex group PORT).
    "sonic-port-counters": ("COUNTERS_DB", "COUNTERS/Ethernet*", "sample", "port", ""),
    # Per queue: SAI_QUEUE_STAT_PACKETS, _DROPPED_PACKETS (QUEUE), _WRED_ECN_MARKED_PACKETS
    # (WRED_ECN_QUEUE), and on the queues the PFC watchdog watches its own fields
    # PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED / _RESTORED and PFC_WD_STATUS, which pfcwdorch
    # writes into the same COUNTERS:<queue oid> hash (sonic-gnmi testdata
    # COUNTERS:Ethernet_wildcard_Queues_alias_expected.txt). Read here rather than from the
    # COUNTERS/Ethernet*/Pfcwd path, which finds those queues through
    # MAP_PFC_PRIORITY_TO_QUEUE|AZURE only.
    "sonic-queue-counters": ("COUNTERS_DB", "COUNTERS/Ethernet*/Queues", "sample", "queue",
                             "queue"),
    # SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES, _XOFF_ROOM_WATERMARK_BYTES.
    "sonic-pg-watermarks": ("COUNTERS_DB", "PERIODIC_WATERMARKS/Ethernet*/PriorityGroups",
                            "sample", "pg", "pg"),
    # oper_status as the ASIC reports it and flap_count (portsorch writes both to APPL_DB
    # PORT_TABLE; flap_count since sonic-swss #3052, 2024-03), so no flap is lost between two
    # samples where the release counts them.
    "sonic-port-state": ("APPL_DB", "PORT_TABLE", "sample", "port_state", ""),
    # speed as the link came up (portsorch updateDbPortOperSpeed writes STATE_DB PORT_TABLE
    # speed in Mb/s, N/A when unknown); APPL_DB's speed is only the configured one.
    "sonic-port-oper": ("STATE_DB", "PORT_TABLE", "sample", "port_oper", ""),
}


def sonic_layouts(switches: list[Switch]) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """({layout: {alias or name: SONiC name}}, {switch: layout}): the port names the processor
    maps sonic-gnmi's keys with. Switches of one model and split share one layout."""
    layouts: dict[str, dict[str, str]] = {}
    by_switch: dict[str, str] = {}
    for sw in switches:
        key = f"{sw.model}-{sw.breakout}x{sw.radix}"
        if key not in layouts:
            aliases = port_aliases(sw)
            layouts[key] = {**{name: name for name in aliases.values()}, **aliases}
        by_switch[sw.name] = key
    return layouts, by_switch


def sonic_split_source(switches: list[Switch] | None = None) -> str:
    """The starlark program that splits SONiC's keyed JSON answers into tagged events."""
    return sonic_split_program(*sonic_layouts(switches or []))


def sonic_split_program(layouts: dict[str, dict[str, str]], by_switch: dict[str, str]) -> str:
    """sonic_split_source with the port tables given: ({layout: {alias or name: SONiC name}},
    {switch: layout})."""
    subs = SONIC_SUBSCRIPTIONS.values()
    sources = {f"{db}|/{path}": event for db, path, _, event, _ in subs}
    index_tags = {f"{db}|/{path}": index for db, path, _, _, index in subs if index}
    return templating.render("sonic/sonic-split.star.j2", sources=starlark(sources),
                             index_tags=starlark(index_tags), layouts=starlark(layouts),
                             switches=starlark(by_switch))


def sonic_gnmic(fabric: Fabric, switches: list[Switch], port: int) -> dict[str, Any]:
    """gnmic config for the SONiC switches.

    Resulting metrics (gnmic prometheus output: prefix, event name, value name joined by `_`):
    sonic_port_<SAI_PORT_STAT_...>{source, interface}, sonic_queue_<SAI_QUEUE_STAT_... |
    PFC_WD_...>{source, interface, queue}, sonic_pg_<SAI_INGRESS_PRIORITY_GROUP_STAT_...>{source,
    interface, pg}, sonic_port_state_oper_up{source, interface}, sonic_port_oper_speed (Mb/s)
    {source, interface}. `interface` is the SONiC name (Ethernet0) whatever alias sonic-gnmi
    keyed the answer by. (BGP: snmp.py, sonic_bgp_peer_state{source, neighbor}.)
    """
    def subscription(db: str, path: str, mode: str) -> dict[str, Any]:
        sub: dict[str, Any] = {"target": db, "paths": [path], "mode": "stream",
                               "stream-mode": mode, "encoding": "json_ietf"}
        if mode == "sample":
            sub["sample-interval"] = SAMPLE_INTERVAL
        return sub

    tls = sonic_tls()
    return {
        "targets": {sw.name: gnmic_target(fabric, sw, port, tls) for sw in switches},
        "subscriptions": {name: subscription(db, path, mode)
                          for name, (db, path, mode, _, _) in SONIC_SUBSCRIPTIONS.items()},
        "processors": {"fabgen-sonic-split": {"event-starlark": {
            "source": sonic_split_source(switches)}}},
        "outputs": {"prometheus": {
            "type": "prometheus", "listen": f":{PROMETHEUS_PORT}",
            "metric-prefix": "sonic", "append-subscription-name": True,
            "event-processors": ["fabgen-sonic-split"]}},
    }
