"""Arista EOS target: one full running-config per EOS switch, `eos/<switch>.cfg`.

Two layers. `device_config(ctx, switch)` returns a dict of plain values with one key per config
section, each built by the function of the same name (`_system`, `_ethernet_interfaces`, ...).
`templates/eos/device.j2` includes one template per section, `templates/eos/<key>.j2`, in the
order of SECTIONS; the templates only lay values out (no arithmetic, sorting or joining).

Every QoS number comes from the QosPlan. What this module decides is how EOS spells it: units
(milliseconds to seconds, bytes), per-queue bandwidth percentages from DWRR weights, and line
order (AVD's eos_cli_config_gen order, which is the order EOS prints its running-config in).

Sources each construct was checked against (cited as [tag] below):
  [EOS-QOS] Arista EOS User Manual, "Quality of Service"
            (https://www.arista.com/en/um-eos/eos-quality-of-service): trust modes, DSCP to
            traffic-class maps, transmit-queue scheduling, ECN on unicast queues.
  [EOS-L1]  Arista EOS User Manual, "Layer 1 Profiles": an OSFP cage exposes interfaces
            Ethernet<cage>/1 .. Ethernet<cage>/8, one per electrical lane.
  [AVD]     aristanetworks/avd, python-avd/pyavd/_eos_cli_config_gen: j2templates/eos/
            ethernet-interfaces.j2, ethernet-interface-uc-tx-queues.j2, qos.j2,
            priority-flow-control.j2, qos-profiles.j2, router-bgp.j2, eos-intended-config.j2,
            and schema_fragments/priority_flow_control.schema.yml, ethernet_interfaces.schema.yml
            (Arista's own renderer: command spelling, units, value ranges, line order).
  [EOS-HR]  No public Arista document gives EOS PFC headroom per speed and cable length for
            the 7060X6 (Tomahawk 5); the public numbers are Arista's SONiC buffer tables
            (fabgen.catalog.buffers.tomahawk), quoted in a comment, never configured.
  [AMD]     AMD ROCm cluster-networking guide, DCQCN example for Arista
            (`uc-tx-queue 3 random-detect ecn ...`, `priority-flow-control priority 3 no-drop`),
            as summarised in shared/reference/qos-defaults.md.
"""

from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal
from functools import lru_cache
from typing import Any

from fabgen import qos, templating, underlay
from fabgen.catalog import buffers
from fabgen.catalog.ports import native_lanes, switch_port_name
from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.common.render import ecmp_width as ecmp_width
from fabgen.platforms.common.render import (
    loopback_description,
    queue_specs,
    sanitize_description,
)
from fabgen.platforms.common.switch_target import SwitchTarget
from fabgen.qos import QosPlan
from fabgen.serialize import json_text
from fabgen.targets.base import Artifacts, RenderContext, UnsupportedPlan
from fabgen.targets.cable_lengths import cable_lengths
from fabgen.topology.index import FabricPort
from fabgen.topology.model import Switch

__all__ = [
    "SECTIONS",
    "TARGET",
    "EosTarget",
    "config_text",
    "device_config",
    "headroom_notes",
]

PLATFORM = "eos"

# Config sections in the order device.j2 includes them: section = dict key = template file =
# builder function `_<section>`. The order is AVD's eos-intended-config.j2 order [AVD].
SECTIONS: tuple[str, ...] = (
    "system",
    "port_channel",
    "management_api_gnmi",
    "ethernet_interfaces",
    "loopback_interfaces",
    "ip_routing",
    "ip_hardware",
    "qos",
    "router_bfd",
    "router_bgp",
)

# Strata (Trident/Tomahawk) switches such as the 7060X6 (Tomahawk 5) keep separate unicast and
# multicast transmit queues; RoCE is unicast, so ECN and scheduling go on `uc-tx-queue` [AVD
# ethernet-interface-uc-tx-queues.j2, AMD]. Jericho (7280R/7800R) platforms would use `tx-queue`.
QUEUE_COMMAND = "uc-tx-queue"

# ECN thresholds go to EOS in bytes, the unit the plan holds, so nothing is rounded here: EOS
# accepts `segments | bytes | kbytes | mbytes | milliseconds` [AVD ethernet_interfaces.schema.yml,
# uc_tx_queues.random_detect.ecn.threshold.units] and the ASIC rounds to its own cell size.
# (Segments would need the platform's cell size, which no public document pins for every chip.)
ECN_UNITS = "bytes"

# RoCEv2 BTH destination QP as hash input on Strata (Trident/Tomahawk) switches: three UDF bytes
# counted from the outer L4 (UDP) header: 8 bytes of UDP header, then the BTH (opcode, flags,
# P_Key 2, reserved 1) puts the 24-bit destination QP at bytes 5-7, i.e. L4 offsets 13, 14, 15
# (InfiniBand Architecture Specification vol. 1, 9.2 Base Transport Header; the exact commands
# Arista gives for RoCEv2 hashing on Tomahawk platforms, aristanetworks/avd#5386, and AVD's
# port_channel.load_balance_trident_udf with header outer_l4, offset 0-64, mask 0x01-0xFF).
ROCE_DEST_QP_OFFSETS = (13, 14, 15)

# The plan's watchdog action -> EOS `priority-flow-control pause watchdog action` keyword
# (drop | no-drop, [AVD priority_flow_control.schema.yml]); qos.CAPABILITIES["eos"] admits drop.
_WATCHDOG_ACTION = {"drop": "drop"}

# --- the target -------------------------------------------------------------------------------

class EosTarget(SwitchTarget):
    name = "eos"
    description = "Arista EOS running-config per EOS switch (RoCE fabrics)"
    platform = PLATFORM

    def render_unit(self, ctx: RenderContext, unit: str) -> Artifacts:
        return {f"eos/{unit}.cfg": config_text(device_config(ctx, ctx.index.switches[unit]))}


TARGET = EosTarget()


def config_text(config: dict[str, Any]) -> str:
    """The running-config text of a device_config() dict."""
    # Every port of a QoS profile prints the same block (today one profile for every fabric
    # port): it is rendered once per distinct profile and printed under each interface,
    # rather than re-rendered by the template for each of thousands of ports.
    by_object: dict[int, str] = {}
    blocks = []
    for intf in config["ethernet_interfaces"]:
        profile = intf["qos"]
        text = by_object.get(id(profile))
        if text is None:
            text = by_object[id(profile)] = _interface_qos_text(json_text(profile))
        blocks.append(text)
    return templating.render("eos/device.j2", **config, interface_qos_text=blocks)


@lru_cache(maxsize=64)
def _interface_qos_text(profile: str) -> str:
    """templates/eos/interface_qos.j2 of one port QoS profile (given as its JSON text)."""
    return templating.render("eos/interface_qos.j2", intf={"qos": json.loads(profile)})


def device_config(ctx: RenderContext, switch: Switch) -> dict[str, Any]:
    """The EOS-shaped data of one switch: {section: plain values}, keys in SECTIONS order."""
    if switch.platform != PLATFORM:
        raise ValueError(f"{switch.name} runs {switch.platform}, not {PLATFORM}")
    plan = _plan(ctx)
    ports = ctx.index.ports(switch)
    interface_qos = _interface_qos(plan)
    under = underlay.plan(ctx.intent)
    built: dict[str, Any] = {
        "system": _system(switch),
        "port_channel": _port_channel(under),
        "management_api_gnmi": _management_api_gnmi(ctx.intent.monitoring),
        "ethernet_interfaces": _ethernet_interfaces(switch, ports, plan, interface_qos),
        "loopback_interfaces": _loopback_interfaces(ctx, switch),
        "ip_routing": _ip_routing(),
        "ip_hardware": _ip_hardware(under),
        "qos": _qos(plan, switch, ctx.derived(cable_lengths).on_ports(switch.name, ports)),
        "router_bfd": _router_bfd(under),
        "router_bgp": _router_bgp(switch, ports, under),
    }
    return {section: built[section] for section in SECTIONS}


def _plan(ctx: RenderContext) -> QosPlan:
    if ctx.qos is None:
        raise ValueError("the eos target renders RoCE fabrics only (no QoS plan)")
    plan = ctx.qos
    caps = qos.CAPABILITIES[PLATFORM]
    if plan.mtu > caps.max_mtu:
        raise UnsupportedPlan(f"{PLATFORM}: MTU {plan.mtu} is above {caps.max_mtu} "
                              f"({caps.source})")
    return plan


# --- section builders (one per SECTIONS entry) ------------------------------------------------

def _system(switch: Switch) -> dict[str, Any]:
    # `service routing protocols model multi-agent` [AVD service-routing-protocols-model.j2]:
    # the routing model AVD fabrics run; set explicitly so the config does not depend on the
    # release's default model.
    return {"routing_model": "multi-agent", "hostname": switch.name}


# EOS's default gNMI port (`management api gnmi` / `transport grpc`); EOS prints `port` only
# when it differs, and so does the template [AVD management-api-gnmi.j2 prints what is set].
EOS_GNMI_DEFAULT_PORT = 6030


def _management_api_gnmi(mon: MonitoringSpec) -> dict[str, Any]:
    """`management api gnmi` / `transport grpc <name>` [AVD management-api-gnmi.j2]: the gNMI
    server telemetry/gnmic-eos.yaml dials, on monitoring.eos_gnmi_port, in
    monitoring.eos_gnmi_vrf, with TLS from the SSL profile monitoring.eos_gnmi_ssl_profile
    (the profile itself, certificate and key, is the switch's `management security` section,
    which a push keeps). The transport is named after its VRF, as AVD's examples do."""
    return {
        "transport": mon.eos_gnmi_vrf or "default",
        "ssl_profile": mon.eos_gnmi_ssl_profile,
        "port": None if mon.eos_gnmi_port == EOS_GNMI_DEFAULT_PORT else mon.eos_gnmi_port,
        "vrf": mon.eos_gnmi_vrf,
    }


def _ethernet_interfaces(switch: Switch, ports: tuple[FabricPort, ...], plan: QosPlan,
                         interface_qos: dict[str, Any]) -> list[dict[str, Any]]:
    """Every front-panel port in port order. A spare (uncabled) port is shut down with the
    same MTU, speed and lossless QoS as a cabled one, as SONiC's PORT table does, so a cable
    plugged in later comes up lossless once the port is enabled."""
    speed = _speed(switch)
    cabled = {p.port: p for p in ports}
    out = []
    for number in range(1, switch.radix + 1):
        p = cabled.get(number)
        out.append({
            "name": p.name if p else switch_port_name(switch, number),
            "description": sanitize_description(f"{p.peer}:{p.peer_port}") if p else None,
            "shutdown": p is None,
            "mtu": plan.mtu,
            "speed": speed,
            "ip_address": p.interface_address if p else None,
            "qos": interface_qos,
        })
    return out


def _speed(switch: Switch) -> str | None:
    """EOS speed keyword of a split port, `<speed>g-<lanes>`, or None for an unsplit port.

    A split OSFP is configured per lane group: 2x400G on an 800G cage is `speed 400g-4` on
    Ethernet<cage>/1 and Ethernet<cage>/5 [EOS-L1; AVD ethernet_interfaces.schema.yml `speed`].
    An unsplit port keeps its default speed, so no line is written for it.
    """
    if switch.breakout == 1:
        return None
    lanes = native_lanes(switch.model) // switch.breakout
    return f"{switch.speed_gbps}g-{lanes}"


def _interface_qos(plan: QosPlan) -> dict[str, Any]:
    """Per-port QoS, identical on every fabric port of every EOS switch."""
    queues = []
    specs = queue_specs(plan, PLATFORM)
    strict = [s.queue for s in specs if s.strict]
    dwrr = [s.queue for s in specs if not s.strict]
    if strict and dwrr and min(strict) < max(dwrr):
        # EOS quirk [EOS-QOS, transmit queues]: queues are strict priority by default, and
        # `no priority` on a queue makes it and every lower-numbered queue round-robin, so a
        # strict queue cannot sit below a round-robin one.
        raise UnsupportedPlan(
            f"{PLATFORM}: strict-priority queue {min(strict)} is below round-robin queue "
            f"{max(dwrr)}; EOS only puts strict queues above the round-robin ones (give CNP "
            "a higher priority than every DWRR class)")
    for spec in specs:
        ecn = None
        if spec.ecn is not None:
            # `random-detect ecn count` [AVD ethernet-interface-uc-tx-queues.j2,
            # uc_tx_queues.random_detect.ecn.count]: without it EOS allocates no counter for
            # the queue's ECN marks, and `show qos interfaces ecn counters queue` (ANTA's
            # VerifyInterfacesECNCounters) and the ecn-marked-pkts leaf stay at zero.
            ecn = {"units": ECN_UNITS, "minimum": spec.ecn.min_bytes,
                   "maximum": spec.ecn.max_bytes, "max_mark_probability": spec.ecn.probability,
                   "count": True}
        queues.append({
            "id": spec.queue,
            # `priority strict` / `no priority` are the two EOS scheduling keywords
            # [AVD qos_profiles.schema.yml uc_tx_queues.priority].
            "priority": "priority strict" if spec.strict else "no priority",
            "bandwidth_percent": spec.percent,
            "ecn": ecn,
        })
    lossless = {q.queue for q in plan.classes if q.priority in plan.pfc_priorities}
    if plan.watchdog.enabled and any(s.strict for s in specs if s.queue in lossless):
        # The PFC watchdog watches the no-drop priorities' queues; some EOS releases let it
        # watch only a queue with a guaranteed share of the port (a round-robin `bandwidth
        # percent`), so a strict-priority lossless queue could go unwatched. Refused rather
        # than rendered with a watchdog that may not hold (no public Arista document lists
        # the releases).
        raise UnsupportedPlan(
            f"{PLATFORM}: the lossless queue is strict priority; the PFC watchdog needs it "
            "round-robin with a bandwidth share (give the RDMA class a DWRR weight)")
    pfc = None
    if plan.pfc_priorities:
        pfc = {"no_drop": list(plan.pfc_priorities), "watchdog": plan.watchdog.enabled}
    return {
        # Routed ports trust DSCP: the plan classifies on DSCP only [EOS-QOS, trust modes].
        "trust": "dscp",
        "pfc": pfc,
        "queue_command": QUEUE_COMMAND,
        "queues": queues,
    }


def _loopback_interfaces(ctx: RenderContext, switch: Switch) -> list[dict[str, Any]]:
    if switch.loopback is None:
        raise ValueError(f"{switch.name} has no loopback address")
    return [{
        "name": "Loopback0",
        "description": loopback_description(ctx),
        "ip_address": f"{switch.loopback}/32",
    }]


def _ip_routing() -> bool:
    return True


def headroom_notes(plan: QosPlan, switch: Switch,
                   lengths: dict[str, tuple[int, ...]]) -> list[str]:
    """Why this config carries no PFC headroom lines, as `!` comments [EOS-HR].

    EOS reserves no-drop headroom itself; Arista publishes no EOS headroom per speed and cable
    length for Strata switches, so fabgen writes none and does not claim the default suffices.
    What Arista does publish for the same SKU (its SONiC buffer tables) is quoted for
    comparison, with the cable lengths this switch's ports are planned for.
    """
    if not plan.pfc_priorities:
        return []
    priorities = ", ".join(str(p) for p in plan.pfc_priorities)
    planned = ", ".join(f"{kind} {' / '.join(str(m) for m in metres)} m"
                        for kind, metres in sorted(lengths.items()))
    notes = [f"PFC headroom of no-drop priority {priorities}: EOS default, NOT sized by fabgen",
             f"cables planned: {planned}",
             "Arista publishes no EOS headroom per speed and cable length for this platform"]
    model = buffers.model_for(switch.model, switch.breakout)
    if model is not None and model.table is not None:
        speed = switch.speed_gbps * 1000
        cables = model.table.cables(speed)
        if cables:
            row = model.table.rows[speed, cables[-1]]
            notes.append(f"for comparison, Arista SONiC table {model.sku} at {switch.speed_gbps}G"
                         f" (cables up to {cables[-1]} m): xoff {row.xoff} B per lossless PG "
                         "from a shared headroom pool")
    elif model is not None and model.note:
        notes.append(model.note)
    notes.append("verify the no-drop headroom on the switch before production traffic")
    return notes


def _qos(plan: QosPlan, switch: Switch,
         lengths: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    """Global QoS: the DSCP to traffic-class map, the PFC watchdog timers and the headroom note."""
    # Every DSCP is mapped explicitly, grouped per traffic class in traffic-class order (how EOS
    # prints `qos map dscp`). EOS's default DSCP map follows the DSCP's class-selector bits
    # (24-31 land on traffic class 3) [EOS-QOS, DSCP to traffic-class map], which would make
    # stray DSCPs lossless; the plan puts every unnamed DSCP on priority 0.
    by_tc: dict[int, list[int]] = defaultdict(list)
    for dscp, priority in enumerate(plan.dscp_to_priority):
        by_tc[priority].append(dscp)
    dscp_maps = [{"dscp": " ".join(str(d) for d in by_tc[tc]), "traffic_class": tc}
                 for tc in sorted(by_tc)]
    return {"dscp_maps": dscp_maps, "pfc_watchdog": _watchdog(plan),
            "headroom_notes": headroom_notes(plan, switch, lengths)}


def _watchdog(plan: QosPlan) -> dict[str, str] | None:
    """`priority-flow-control pause watchdog default ...` values, in seconds.

    EOS takes the timers in seconds with at most two decimals for timeout and recovery-time and
    three for polling-interval [AVD priority_flow_control.schema.yml]; the plan holds
    milliseconds, so 200 ms is written 0.2 and a value that is not a whole number of 10 ms is
    refused rather than rounded.
    """
    wd = plan.watchdog
    if not wd.enabled:
        return None
    action = _WATCHDOG_ACTION.get(wd.action)
    if action is None:
        raise UnsupportedPlan(f"{PLATFORM}: PFC watchdog action {wd.action!r} is not "
                              f"supported (only {', '.join(_WATCHDOG_ACTION)})")
    for what, ms in (("detection", wd.detection_ms), ("restoration", wd.restoration_ms)):
        if ms % 10:
            raise UnsupportedPlan(f"{PLATFORM}: PFC watchdog {what} {ms} ms is not a multiple "
                                  "of 10 ms; EOS takes it in seconds with two decimals")
    return {
        "timeout": _seconds(wd.detection_ms),
        "recovery_time": _seconds(wd.restoration_ms),
        "polling_interval": _seconds(wd.poll_ms),
        "action": action,
    }


def _seconds(ms: int) -> str:
    """Milliseconds as the shortest exact decimal of seconds: 200 -> '0.2', 1000 -> '1'."""
    text = format(Decimal(ms) / 1000, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _port_channel(under: underlay.UnderlayPlan) -> dict[str, Any]:
    """`port-channel load-balance trident udf ...`: on Strata the port-channel hash settings
    also feed the ECMP hash (aristanetworks/avd#5386 uses them for RoCEv2 ECMP on Tomahawk);
    written only when the plan hashes on the BTH destination QP."""
    qp = "roce-dest-qp" in under.load_balancing.hash_fields
    return {"udf": [{"eth_type": "ipv4", "header": "outer l4", "offset": offset, "mask": "0xff"}
                    for offset in (ROCE_DEST_QP_OFFSETS if qp else ())]}


def _ip_hardware(under: underlay.UnderlayPlan) -> dict[str, Any]:
    """`ip hardware fib load-balance distribution dynamic`: flowlet dynamic load balancing on
    ECMP groups (EOS TOI 4.24.2F, "Support for dynamic load balancing on ECMP groups"; AVD
    ip_hardware.fib.load_balance_distribution.dynamic). Flowlets keep a flow's packets in order,
    so the NICs need no reordering. The flow-set size stays EOS's default."""
    return {"dynamic_load_balancing": under.load_balancing.mode == "adaptive"}


def _router_bfd(under: underlay.UnderlayPlan) -> dict[str, Any] | None:
    """`router bfd` / `interval I min-rx R multiplier M default` [AVD router-bfd.j2]: the timers
    every BFD session of the switch uses; the BGP peers turn BFD on one by one."""
    if under.bfd is None:
        return None
    return {"interval": under.bfd.interval_ms, "min_rx": under.bfd.interval_ms,
            "multiplier": under.bfd.multiplier}


def _router_bgp(switch: Switch, ports: tuple[FabricPort, ...],
                under: underlay.UnderlayPlan) -> dict[str, Any]:
    if switch.asn is None or switch.loopback is None:
        raise ValueError(f"{switch.name} has no ASN or loopback for BGP")
    neighbors = []
    networks = [f"{switch.loopback}/32"]
    for p in ports:
        if p.peer_switch is not None:
            if p.peer_switch.asn is None:
                raise ValueError(f"{p.peer} has no ASN")
            neighbors.append({"ip": p.peer_ip, "remote_as": p.peer_switch.asn,
                              "bfd": under.bfd is not None})
        else:
            # Host subnets: the leaf originates each NIC's /31.
            networks.append(p.subnet)
    width = underlay.ecmp_paths(PLATFORM, switch.name, ecmp_width(ports))
    return {
        "asn": switch.asn,
        "router_id": str(switch.loopback),
        # `timers bgp <keepalive> <hold>` [AVD router_bgp.timers: keepalive_time 0-3600,
        # hold_time 3-7200]: without it EOS keeps 60/180 s while FRR and Cumulus run 3/9.
        "timers": {"keepalive": under.keepalive_s, "hold": under.hold_s},
        # `maximum-paths N ecmp M` [AVD router-bgp.j2]: N paths installed, M the ECMP group.
        "maximum_paths": width,
        "ecmp": width,
        "neighbors": neighbors,
        "networks": networks,
    }
