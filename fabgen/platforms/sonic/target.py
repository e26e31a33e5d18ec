"""SONiC target: config_db.json per SONiC switch, from Fabric + QosPlan, and the frr.conf the
switch builds from it.

Two layers (DESIGN §7): `device_config` builds the config_db dict exactly as SONiC stores it
(table -> key -> field -> str), then `config_db_text` serialises it with sorted keys. Only tables
that have a SONiC YANG model are written, so every file can be checked with libyang (the tests
do). BGP is in config_db too (sonic_bgp: frrcfgd's schema, one source of routing config); the
`frr.expected.conf` beside it is what the switch's bgp container renders from it and runs
(sonic_frr), for review and for the FRR lab, never uploaded.

Every QoS number comes from the QosPlan; every address, ASN and port from the Fabric. The few
constants below are platform facts or conventions, each with the document it comes from.
"""

from __future__ import annotations

import hashlib
import re

from fabgen import underlay
from fabgen.catalog.ports import host_port_name, native_lanes, switch_port_name
from fabgen.platforms.common.switch_target import SwitchTarget
from fabgen.platforms.sonic import bgp as sonic_bgp
from fabgen.platforms.sonic import buffers as sonic_buffers
from fabgen.platforms.sonic import frr as sonic_frr
from fabgen.platforms.sonic.data import skus as sonic_skus
from fabgen.qos import CAPABILITIES, QosPlan, TrafficClass
from fabgen.serialize import json_text
from fabgen.targets.base import Artifacts, RenderContext, UnsupportedPlan
from fabgen.targets.cable_lengths import cable_lengths
from fabgen.topology.index import FabricPort
from fabgen.topology.model import Switch

__all__ = [
    "FLEX_COUNTER_ADDED",
    "FLEX_COUNTER_DEFAULTS",
    "MAP_NAME",
    "PFC_QUEUE_MAP_NAME",
    "TARGET",
    "SonicTarget",
    "config_db_text",
    "device_config",
    "flex_counters",
    "frr_text",
    "port_aliases",
    "report_notes",
    "switch_buffers",
    "switch_hash",
]

Table = dict[str, dict[str, str]]
ConfigDb = dict[str, Table]
# A table whose fields are leaf-lists: config_db.json writes them as JSON arrays (SWITCH_HASH,
# as in sonic-buildimage src/sonic-yang-models/tests/files/sample_config_db.json).
ListTable = dict[str, dict[str, list[str]]]
FullConfigDb = dict[str, Table | ListTable]

# One name for every QoS map and the cable-length list. The YANG models only constrain the
# pattern ([a-zA-Z0-9][-a-zA-Z0-9_]{0,31}); PORT_QOS_MAP refers to the maps by this name.
MAP_NAME = "ROCE"
WRED_NAME = "ROCE_LOSSLESS"
# The PFC priority -> queue map alone is named AZURE: sonic-gnmi reads
# MAP_PFC_PRIORITY_TO_QUEUE|AZURE by that fixed name to find the queues the PFC watchdog watches
# (sonic-gnmi sonic_data_client/virtual_db.go GetPfcwdMap, commit 5ec1c20b); under any other
# name its COUNTERS/Ethernet*/Pfcwd path answers nothing. Nothing else reads map names: the
# buffer and QoS templates (sonic-buildimage qos_config.j2) name their own maps, and the YANG
# (sonic-port-qos-map.yang pfc_to_queue_map) only requires the referenced map to exist.
PFC_QUEUE_MAP_NAME = "AZURE"
# FLEX_COUNTER_TABLE: the groups SONiC enables on a new switch (sonic-buildimage
# files/build_templates/init_cfg.json.j2, commit 086b03bd: FLEX_COUNTER_STATUS enable, ACL
# polled every 10000 ms, the others at sonic-swss's own default intervals), written out in full
# so a `config reload` or reboot from this file keeps every one: a group missing from
# CONFIG_DB is never polled (sonic-swss orchagent/flexcounterorch.cpp: counters are disabled
# until their group is enabled). PG_DROP, QUEUE_WATERMARK, BUFFER_POOL_WATERMARK and
# PORT_BUFFER_DROP are the lossless-debug counters (`show pfc counters`, `show priority-group
# drop counters`, `show queue watermark`, `show buffer_pool watermark`).
FLEX_COUNTER_DEFAULTS: dict[str, dict[str, str]] = {
    "ACL": {"FLEX_COUNTER_STATUS": "enable", "POLL_INTERVAL": "10000"},
    "BUFFER_POOL_WATERMARK": {"FLEX_COUNTER_STATUS": "enable"},
    "PFCWD": {"FLEX_COUNTER_STATUS": "enable"},
    "PG_DROP": {"FLEX_COUNTER_STATUS": "enable"},
    "PG_WATERMARK": {"FLEX_COUNTER_STATUS": "enable"},
    "PORT": {"FLEX_COUNTER_STATUS": "enable"},
    "PORT_BUFFER_DROP": {"FLEX_COUNTER_STATUS": "enable"},
    "PORT_PHY_ATTR": {"FLEX_COUNTER_STATUS": "enable"},
    "QUEUE": {"FLEX_COUNTER_STATUS": "enable"},
    "QUEUE_WATERMARK": {"FLEX_COUNTER_STATUS": "enable"},
    "RIF": {"FLEX_COUNTER_STATUS": "enable"},
}
# Added to the defaults: per-queue WRED/ECN counters (SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS),
# which the EcnMarksOnNonRoceQueue alert reads; off in SONiC by default (`counterpoll
# wredqueue enable`; sonic-utilities counterpoll/main.py polls it every 10000 ms by default).
FLEX_COUNTER_ADDED: dict[str, dict[str, str]] = {
    "WRED_ECN_QUEUE": {"FLEX_COUNTER_STATUS": "enable"},
}
# DEVICE_METADATA type per role (SONiC's back-end roles, whose buffer templates the SKU must
# ship: catalog.sonic_skus). BGP timers, BFD and the ECMP width come from the underlay plan
# (fabgen/underlay.py), the same values as the EOS and NVUE switches of the fabric get.
# ECMP hash fields by intent name -> SONiC's native hash field (sonic-hash.yang hash-field).
HASH_FIELD: dict[str, str] = {
    "src-ip": "SRC_IP",
    "dst-ip": "DST_IP",
    "ip-protocol": "IP_PROTOCOL",
    "src-port": "L4_SRC_PORT",
    "dst-port": "L4_DST_PORT",
}

# ASIC vendors whose SAI takes a PFC priority -> PG map: sonic-buildimage
# files/build_templates/qos_config.j2 pfc_to_pg_map_supported_asics.
PFC_TO_PG_VENDORS = ("mellanox", "barefoot")

_QUEUES = range(8)  # 802.1p priorities 0..7 = traffic classes = egress queues
# What may appear in PORT.description: the peer name and port, nothing a CLI would parse.
_UNSAFE_DESCRIPTION = re.compile(r"[^A-Za-z0-9._:/@+-]")


class SonicTarget(SwitchTarget):
    name = "sonic"
    description = "SONiC config_db.json and FRR bgpd config per SONiC switch (RoCE fabrics)"
    platform = "sonic"

    def render_unit(self, ctx: RenderContext, unit: str) -> Artifacts:
        switch = ctx.index.switches[unit]
        ports = ctx.index.ports(switch)
        config = _device_config(ctx, switch, ports)
        metadata = config["DEVICE_METADATA"]["localhost"]
        assert all(isinstance(v, str) for v in metadata.values())
        return {
            f"sonic/{unit}/config_db.json": config_db_text(config),
            f"sonic/{unit}/frr.expected.conf": frr_text(config),
            f"sonic/{unit}/golden_config_db.json": config_db_text(
                sonic_bgp.golden(metadata)),  # type: ignore[arg-type]
        }


TARGET = SonicTarget()


# --- facts per port -------------------------------------------------------------------------

def _peer_port(p: FabricPort) -> str:
    """The peer's port as SONiC descriptions and FRR name it: a switch's interface, or a
    host port's RDMA device (as the cabling plan names it)."""
    return host_port_name(p.peer_host_port) if p.peer_host_port is not None else p.peer_port


def _peer_asn(p: FabricPort) -> int | None:
    """The peer switch's ASN; None for a host (hosts do not speak BGP)."""
    return p.peer_switch.asn if p.peer_switch is not None else None


# --- config_db ------------------------------------------------------------------------------

def device_config(ctx: RenderContext, switch: Switch) -> FullConfigDb:
    """The config_db.json of one SONiC switch as a dict of tables (every value a str)."""
    return _device_config(ctx, switch, ctx.index.ports(switch))


def config_db_text(config: FullConfigDb) -> str:
    """Serialise a config_db dict the way it is committed: sorted keys, 2-space indent."""
    return json_text(config)


def _plan(ctx: RenderContext) -> QosPlan:
    """The plan, checked against what SONiC can express (qos.CAPABILITIES["sonic"])."""
    plan = ctx.qos
    if plan is None:
        raise ValueError("the sonic target needs a QosPlan (RoCE fabrics only)")
    caps = CAPABILITIES["sonic"]
    if plan.mtu > caps.max_mtu:
        raise ValueError(f"sonic: MTU {plan.mtu} is above {caps.max_mtu} ({caps.source})")
    if plan.watchdog.enabled and plan.watchdog.action not in caps.pfc_watchdog_actions:
        raise ValueError(f"sonic: no PFC watchdog action {plan.watchdog.action!r} "
                         f"({caps.source})")
    return plan


def _device_config(ctx: RenderContext, switch: Switch,
                   ports: tuple[FabricPort, ...]) -> FullConfigDb:
    plan = _plan(ctx)
    underlay_plan = underlay.plan(ctx.intent)
    if switch.asn is None or switch.loopback is None:
        raise ValueError(f"{switch.name}: a routed SONiC switch needs an ASN and a loopback")
    port_table = _port_table(switch, ports, plan)
    # QoS, buffers and the watchdog go on every port, spare ones too: a cable plugged in later
    # must come up lossless, not with SONiC's defaults.
    names = tuple(port_table)
    shapes = ctx.derived(_Shapes)
    buffers = shapes.buffers(ctx, switch, port_table)
    pfc_to_pg = buffers.model is not None and buffers.model.vendor in PFC_TO_PG_VENDORS
    config: ConfigDb = {
        "DEVICE_METADATA": {"localhost": _metadata(switch, plan, buffers.mode)},
        "PORT": port_table,
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{switch.loopback}/32": {}},
        "INTERFACE": _interfaces(ports),
        "FLEX_COUNTER_TABLE": flex_counters(),
    }
    config.update(shapes.qos_tables(names, pfc_to_pg))
    if pfc_to_pg:
        # Which PG a PFC frame's priority pauses, written out instead of left to the SAI
        # default; only lossless priorities generate PFC (qos_config.j2 maps "3"/"4" alike).
        config["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] = {MAP_NAME: {
            str(p): str(plan.priority_to_pg[p]) for p in sorted(set(plan.pfc_priorities))}}
    config.update(buffers.tables)
    if plan.watchdog.enabled:
        config["PFC_WD"] = shapes.pfc_wd(names)
    full: FullConfigDb = {table: rows for table, rows in config.items() if rows}
    full["SWITCH_HASH"] = switch_hash(underlay_plan)
    # BGP_NEIGHBOR name: the peer's hostname, as minigraph writes it, so `sudo config bgp
    # shutdown neighbor <peer>` (sonic-utilities config/main.py
    # _get_neighbor_ipaddress_list_by_hostname: exact match on `name`) finds every session to
    # that switch; the port is in PORT.description.
    describe = {p.peer_address.ip: _UNSAFE_DESCRIPTION.sub("_", p.peer)
                for p in ports if p.peer_address is not None}
    addressing = ctx.intent.addressing
    full.update(sonic_bgp.bgp_tables(switch, ports, underlay_plan, addressing.loopbacks,
                                     addressing.hosts, describe))
    full.update(sonic_bgp.copp_tables(underlay_plan.bfd is not None))
    return full


def flex_counters() -> Table:
    """FLEX_COUNTER_TABLE: SONiC's default groups and the ones the alerts need, sorted."""
    rows = {**FLEX_COUNTER_DEFAULTS, **FLEX_COUNTER_ADDED}
    return {group: dict(rows[group]) for group in sorted(rows)}


def switch_hash(underlay_plan: underlay.UnderlayPlan) -> ListTable:
    """SWITCH_HASH|GLOBAL: the fields the ECMP hash reads (sonic-hash.yang). SONiC applies it
    where the ASIC's SAI takes a native hash field list (`show switch-hash capabilities`);
    LAG hashing is left alone, the fabric has no port channels."""
    fields = [HASH_FIELD[f] for f in underlay_plan.load_balancing.hash_fields]
    return {"GLOBAL": {"ecmp_hash": fields}}


class _Shapes:
    """What the SONiC switches of one render share, built once per distinct shape and reused
    (ctx.derived keeps one per render): the QoS, watchdog and buffer tables of a port list,
    which are the same on every switch with that port layout and port classes. At 131k GPUs
    these were rebuilt per switch, and the buffer calculation per port, 650,000 times for a
    handful of distinct answers.

    The tables are shared between the switches' configs, so nothing may change them after
    they are returned; configs are only serialised.
    """

    def __init__(self, ctx: RenderContext) -> None:
        self.plan = _plan(ctx)
        self._qos: dict[tuple[tuple[str, ...], bool], ConfigDb] = {}
        self._pfc_wd: dict[tuple[str, ...], Table] = {}
        self._buffers: dict[tuple[object, ...], sonic_buffers.SwitchBuffers] = {}

    def qos_tables(self, names: tuple[str, ...], pfc_to_pg: bool) -> ConfigDb:
        key = (names, pfc_to_pg)
        if key not in self._qos:
            self._qos[key] = _qos_tables(self.plan, names, pfc_to_pg)
        return self._qos[key]

    def pfc_wd(self, names: tuple[str, ...]) -> Table:
        if names not in self._pfc_wd:
            self._pfc_wd[names] = _pfc_wd(self.plan, names)
        return self._pfc_wd[names]

    def buffers(self, ctx: RenderContext, switch: Switch,
                port_table: Table) -> sonic_buffers.SwitchBuffers:
        # Everything the tables depend on, cheaper to compare than the PortCables built from it.
        key = (switch.model, switch.breakout, tuple(port_table),
               tuple(entry["admin_status"] for entry in port_table.values()),
               tuple(entry["speed"] for entry in port_table.values()),
               ctx.index.port_classes(switch),
               ctx.derived(cable_lengths).device_key(switch.name))
        if key not in self._buffers:
            cables = _cables(ctx, switch, port_table, self.plan)
            self._buffers[key] = _switch_buffers(switch, cables, self.plan)
        return self._buffers[key]


def _mac(name: str) -> str:
    """A stable, locally administered unicast MAC derived from the switch name.

    The real base MAC comes from the switch's EEPROM at first boot; a config that names one
    must not collide with another switch's, and must not change between renders.
    """
    octets = bytearray(hashlib.sha256(name.encode()).digest()[:6])
    octets[0] = (octets[0] & 0xFC) | 0x02  # U/L bit set (local), I/G bit clear (unicast)
    return ":".join(f"{b:02x}" for b in octets)


def _sku(switch: Switch) -> tuple[str, sonic_skus.SonicSku]:
    """(platform, SKU) of a switch; intent.semantic refuses a model and split without one."""
    known = sonic_skus.models().get(switch.model)
    sku = known.for_split(switch.breakout) if known is not None else None
    if known is None or sku is None:
        raise UnsupportedPlan(f"sonic: {switch.name}: no published SONiC HwSKU for "
                              f"{switch.model} split {switch.breakout} way(s)")
    return known.platform, sku


def hwsku(switch: Switch) -> str:
    """The DEVICE_METADATA hwsku the render writes for a switch (its published SKU)."""
    return _sku(switch)[1].hwsku


def _metadata(switch: Switch, plan: QosPlan, buffer_model: str) -> dict[str, str]:
    platform, sku = _sku(switch)
    return {
        "hostname": switch.name,
        "hwsku": sku.hwsku,
        "platform": platform,
        "mac": _mac(switch.name),
        "bgp_asn": str(switch.asn),
        "type": sonic_skus.device_type(switch.role, sku),
        "buffer_model": buffer_model,
        "default_pfcwd_status": "enable" if plan.watchdog.enabled else "disable",
        **sonic_bgp.metadata(),
    }


def port_aliases(switch: Switch) -> dict[str, str]:
    """{PORT alias: SONiC name} of every front-panel port, as PORT writes them. sonic-gnmi
    keys its COUNTERS_DB answers by this alias (virtual_db.go name2aliasMap, read from
    CONFIG_DB PORT|*.alias), so the telemetry processor maps them back with it."""
    _sku(switch)
    layout = sonic_skus.port_layout(switch.model, switch.breakout)
    return {alias: switch_port_name(switch, number)
            for number, (_, _, alias) in enumerate(layout, start=1)}


def _lanes(switch: Switch, number: int) -> tuple[int, str, str]:
    """(front-panel index, lanes "a,b,...", alias) of a logical port, from the port table of the
    switch's published SKU (catalog.sonic_skus)."""
    _sku(switch)
    return sonic_skus.port_layout(switch.model, switch.breakout)[number - 1]


def _port_entry(switch: Switch, port: FabricPort, plan: QosPlan) -> dict[str, str]:
    index, lanes, alias = _lanes(switch, port.port)
    description = _UNSAFE_DESCRIPTION.sub("_", f"{port.peer}:{_peer_port(port)}")
    return {
        "admin_status": "up",
        "alias": alias,
        "description": description,
        "fec": "rs",  # RS-FEC (Clause 91/134) is mandatory on 100G-per-lane PAM4 links
        "index": str(index),
        "lanes": lanes,
        "mtu": str(plan.mtu),
        "speed": str(port.link.speed_gbps * 1000),  # SONiC counts port speed in Mb/s
    }


def _port_table(switch: Switch, ports: tuple[FabricPort, ...], plan: QosPlan) -> Table:
    """Every front-panel port, cabled or not: `config reload` takes PORT as the whole port
    list, so a port missing here would vanish from the switch. Spare ports stay admin down,
    ready for the cable a growing unit adds."""
    table: Table = {p.name: _port_entry(switch, p, plan) for p in ports}
    for number in range(1, switch.radix + 1):
        name = switch_port_name(switch, number)
        if name in table:
            continue
        index, lanes, alias = _lanes(switch, number)
        table[name] = {"admin_status": "down", "alias": alias, "fec": "rs", "index": str(index),
                       "lanes": lanes, "mtu": str(plan.mtu),
                       "speed": str(switch.speed_gbps * 1000)}
    return table


def _interfaces(ports: tuple[FabricPort, ...]) -> Table:
    table: Table = {}
    for p in ports:
        if p.address is None:
            continue
        # SONiC needs the bare interface entry beside each address entry (sonic-interface.yang
        # INTERFACE_IPPREFIX_LIST `must` on ../../INTERFACE_LIST).
        table[p.name] = {}
        table[f"{p.name}|{p.address.with_prefixlen}"] = {}
    return table


def _by_queue(plan: QosPlan) -> dict[int, TrafficClass]:
    """The class that owns each queue; on a shared queue the first in plan order wins (RDMA)."""
    owners: dict[int, TrafficClass] = {}
    for cls in plan.classes:
        owners.setdefault(cls.queue, cls)
    return owners


def _by_priority(plan: QosPlan) -> dict[int, TrafficClass]:
    owners: dict[int, TrafficClass] = {}
    for cls in plan.classes:
        owners.setdefault(cls.priority, cls)
    return owners


def _scheduler_name(cls: TrafficClass) -> str:
    return f"scheduler.{cls.name}"


def _qos_tables(plan: QosPlan, names: tuple[str, ...], pfc_to_pg: bool) -> ConfigDb:
    by_priority = _by_priority(plan)
    # A TC no class owns keeps its own queue, the identity SONiC uses by default; the switch
    # trusts DSCP only and every DSCP maps to a class, so no traffic reaches those TCs.
    tc_queue = {tc: by_priority[tc].queue if tc in by_priority else tc for tc in _QUEUES}
    pfc = ",".join(str(p) for p in plan.pfc_priorities)
    qos_map: dict[str, str] = {
        "dscp_to_tc_map": MAP_NAME,
        "pfc_enable": pfc,
        "pfc_to_queue_map": PFC_QUEUE_MAP_NAME,
        "tc_to_pg_map": MAP_NAME,
        "tc_to_queue_map": MAP_NAME,
    }
    if plan.watchdog.enabled:
        qos_map["pfcwd_sw_enable"] = pfc
    if pfc_to_pg:
        qos_map["pfc_to_pg_map"] = MAP_NAME
    tables: ConfigDb = {
        "DSCP_TO_TC_MAP": {MAP_NAME: {str(dscp): str(prio)
                                      for dscp, prio in enumerate(plan.dscp_to_priority)}},
        "TC_TO_QUEUE_MAP": {MAP_NAME: {str(tc): str(q) for tc, q in tc_queue.items()}},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP_NAME: {str(tc): str(pg)
                                                for tc, pg in enumerate(plan.priority_to_pg)}},
        # PFC frames name priorities; the queue they pause is the one that priority's TC uses.
        "MAP_PFC_PRIORITY_TO_QUEUE": {PFC_QUEUE_MAP_NAME: {str(tc): str(q)
                                                           for tc, q in tc_queue.items()}},
        "PORT_QOS_MAP": {name: qos_map for name in names},
        "SCHEDULER": {},
        "QUEUE": {},
    }
    owners = _by_queue(plan)
    for cls in owners.values():
        entry = {"type": "STRICT"} if cls.scheduling == "strict" else {
            "type": "DWRR", "weight": str(cls.weight)}
        tables["SCHEDULER"][_scheduler_name(cls)] = entry
    if plan.ecn is not None:
        e = plan.ecn
        tables["WRED_PROFILE"] = {WRED_NAME: {
            "ecn": "ecn_all",
            **{f"wred_{colour}_enable": "true" for colour in ("green", "yellow", "red")},
            **{f"{colour}_min_threshold": str(e.min_bytes)
               for colour in ("green", "yellow", "red")},
            **{f"{colour}_max_threshold": str(e.max_bytes)
               for colour in ("green", "yellow", "red")},
            **{f"{colour}_drop_probability": str(e.probability)
               for colour in ("green", "yellow", "red")},
        }}
    queue_entries = []
    for queue, cls in sorted(owners.items()):
        entry = {"scheduler": _scheduler_name(cls)}
        if cls.ecn and plan.ecn is not None:
            entry["wred_profile"] = WRED_NAME
        queue_entries.append((queue, entry))
    for name in names:
        for queue, entry in queue_entries:
            tables["QUEUE"][f"{name}|{queue}"] = entry
    return tables


def switch_buffers(ctx: RenderContext, switch: Switch) -> sonic_buffers.SwitchBuffers:
    """The buffer tables of one SONiC switch and, per port, its headroom and where it is from."""
    plan = _plan(ctx)
    ports = ctx.index.ports(switch)
    return ctx.derived(_Shapes).buffers(ctx, switch, _port_table(switch, ports, plan))


def _cables(ctx: RenderContext, switch: Switch, port_table: Table,
            plan: QosPlan) -> tuple[sonic_buffers.PortCable, ...]:
    """Every port of PORT as the buffer manager sees it, in PORT's order."""
    # Per port its class (host-facing, leaf-spine, spine-core), spare ports by the port plan,
    # so headroom is right when a spare port is cabled later.
    classes = ctx.index.port_classes(switch)
    kinds = dict(zip(ctx.index.port_names(switch), classes, strict=True))
    lanes = native_lanes(switch.model) // switch.breakout
    # A cabled port takes its cable's measured length where the intent gives one.
    lengths = ctx.derived(cable_lengths)
    measured = ({p.name: lengths.link_m(p.link) for p in ctx.index.ports(switch)}
                if lengths.device_key(switch.name) else {})
    return tuple(sonic_buffers.PortCable(
        name=name, admin_up=entry["admin_status"] == "up",
        speed_gbps=int(entry["speed"]) // 1000, lanes=lanes,
        cable_m=measured.get(name) or plan.cable_m(kinds[name]), kind=kinds[name])
        for name, entry in port_table.items())


def _switch_buffers(switch: Switch, cables: tuple[sonic_buffers.PortCable, ...],
                    plan: QosPlan) -> sonic_buffers.SwitchBuffers:
    lossless_pgs = sorted(set(plan.pfc_priorities))
    lossless_queues = sorted({_by_priority(plan)[p].queue for p in plan.pfc_priorities})
    requested = plan.buffer_model if plan.buffer_model in ("traditional", "dynamic") else "auto"
    try:
        return sonic_buffers.switch_buffers(
            switch.model, switch.breakout, requested,  # type: ignore[arg-type]
            list(cables), lossless_pgs=lossless_pgs,
            lossy_pgs=sorted(set(plan.priority_to_pg) - set(lossless_pgs)),
            lossless_queues=lossless_queues,
            lossy_queues=[q for q in _QUEUES if q not in lossless_queues],
            port_mtu=plan.mtu, map_name=MAP_NAME)
    except ValueError as exc:
        # The render stage reports UnsupportedPlan as a plain error (no traceback).
        raise UnsupportedPlan(f"sonic: {switch.name}: {exc}") from None


def _pfc_wd(plan: QosPlan, names: tuple[str, ...]) -> Table:
    wd = plan.watchdog
    table: Table = {"GLOBAL": {"POLL_INTERVAL": str(wd.poll_ms)}}
    for name in names:
        table[name] = {
            "action": wd.action,
            "detection_time": str(wd.detection_ms),
            "restoration_time": str(wd.restoration_ms),
        }
    return table


def report_notes(ctx: RenderContext) -> list[str]:
    """What the report's warnings must add about the SONiC configs (render facts, not intent
    mistakes, so `--strict` does not refuse them): ports of a SKU's port table outside the
    front-panel cages (NVIDIA's 25G etp65, Arista's two 10G SFPs), which config_db.json leaves
    out, and cores typed as the tier below because the SKU ships no t2 buffer template."""
    out = []
    seen: dict[tuple[str, int], list[Switch]] = {}
    for s in ctx.fabric.switches:
        if s.platform == "sonic":
            seen.setdefault((s.model, s.breakout), []).append(s)
    for switches in seen.values():
        _, sku = _sku(switches[0])
        if sku.extra_ports:
            out.append(f"SONiC {sku.hwsku} ({len(switches)} switch(es)): its port_config.ini "
                       f"also lists {', '.join(sku.extra_ports)}, outside the front-panel "
                       "cages; config_db.json leaves it out (no cable, no buffers sized), so it "
                       "is not created after `config reload`")
        cores = [s for s in switches if s.role == "core"]
        typed = sonic_skus.device_type("core", sku)
        if cores and typed != sonic_skus.ROLE_TYPE["core"]:
            out.append(f"SONiC cores on {sku.hwsku} ({len(cores)}) are DEVICE_METADATA type "
                       f"{typed}: the SKU ships no buffers_defaults_t2.j2 for "
                       f"{sonic_skus.ROLE_TYPE['core']}; fabgen writes their buffers itself, "
                       "and `config qos reload` would rebuild them from the t1 template")
    return out


# --- FRR ------------------------------------------------------------------------------------

def frr_text(config: FullConfigDb) -> str:
    """The frr.conf the switch's bgp container renders from `config` (sonic_frr), with a first
    line saying it is not a file to upload."""
    return ("! fabgen: what the switch's bgp container renders from config_db.json and runs "
            "(frrcfgd templates, unified mode). For review and `fabgen frr-lab`; never upload "
            "it: CONFIG_DB is the switch's only BGP source.\n" + sonic_frr.frr_conf(config))
