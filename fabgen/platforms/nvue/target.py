"""Cumulus Linux NVUE target: `nvue/<switch>/startup.yaml` per NVUE switch (RoCE fabrics),
the switch's whole configuration: interfaces, QoS, BGP with BFD, ECMP hashing and the
OpenTelemetry export of the telemetry pack (`system telemetry`).

Two layers. `device_config(ctx, switch)` returns the NVUE object tree of one switch as plain
values (`{"set": {...}}`, one builder per top-level key: `_interface`, `_qos`, `_router`,
`_system`, `_vrf`); `startup_yaml()` serialises it as NVUE's startup.yaml, a list holding one
`set` document, with fabgen.serialize.yaml_text (sorted keys). Nothing is templated.

Every QoS number comes from the QosPlan. `nv set qos roce mode lossless` turns on NVIDIA's RoCE
profile; the plan's values are then written over it wherever NVUE lets them be set (RoCE page:
"You can adjust RoCE settings using NVUE after you enable RoCE"), so the switch does not depend
on a release's defaults and agrees with EOS, SONiC and the NICs.

Buffers, checked against the same guide: RoCE mode owns the buffer layout (its roce-lossless
traffic pool is the switch's one lossless pool, [CL-QOS] Traffic Pools: "You can only have a
single lossless pool"), and PFC headroom is derived by Cumulus from `cable-length` ([CL-QOS]
PFC: "NVIDIA recommends that you do not change [xoff/xon/port-buffer] ... let Cumulus Linux
configure the settings dynamically"). So fabgen writes no traffic-pool, advance-buffer-config,
xoff-threshold, xon-threshold or port-buffer key: only `cable-length`, from the intent (the
global profile's, and a profile per measured length for the ports whose cable was measured
at another length, [CL-PG]).

Key names follow Cumulus Linux 5.12 (`enable: on` spellings; later releases renamed some to
`state: enabled`). Sources each key was checked against (cited as [tag] below):
  [CL-QOS]  Cumulus Linux 5.12 user guide, "Quality of Service" (CumulusNetworks/docs
            content/cumulus-linux-512/Layer-1-and-Switch-Ports/Quality-of-Service/_index.md):
            `qos mapping default-global trust l3 | dscp <n> switch-priority <p>`,
            `qos egress-queue-mapping default-global switch-priority <p> traffic-class <tc>`,
            `qos egress-scheduler default-global traffic-class <tc> mode dwrr|strict, bw-percent`
            (DWRR percentages sum to at most 100), `qos pfc default-global switch-priority, tx,
            rx, cable-length`, `qos pfc-watchdog polling-interval, robustness`,
            `interface <swp> qos pfc-watchdog`, `qos congestion-control default-global
            traffic-class <tc> min-threshold, max-threshold, probability, ecn, red`.
  [CL-ROCE] Same guide, "RDMA over Converged Ethernet - RoCE": `nv set qos roce mode lossless`,
            and changing the RoCE switch priority with pfc / egress-queue-mapping / mapping.
  [CL-BGP]  Same guide, "Basic BGP Configuration": the startup.yaml of BGP numbered
            (router.bgp autonomous-system / enable / router-id; vrf.default.router.bgp
            address-family.ipv4-unicast enable / network; neighbor <ip> remote-as, type numbered)
            and "Configuration Example" (interface lo type loopback, swp type swp).
  [CL-CMD]  NVUE command reference: `vrf <vrf> router bgp address-family ipv4-unicast
            multipaths ebgp 1-128`, `interface <id> link breakout 1x|2x|4x|8x lanes-per-port`
            (5.4 and later), `interface <id> qos pfc-watchdog state enable|disable`.
  [CL-ECMP] Same guide, "Equal Cost Multipath Load Sharing": `system forwarding ecmp-hash
            ip-protocol|source-ip|destination-ip|source-port|destination-port on|off` (all on
            by default) and adaptive routing: `interface <swp> router adaptive-routing enable
            on` on every port of the ECMP route, `router adaptive-routing enable`
            (Spectrum-4, 400G and 200G ports).
  [CL-BFD]  NVUE command reference: `vrf <vrf> router bgp neighbor <id> bfd enable on,
            detect-multiplier 2-255, min-rx-interval 50-60000, min-tx-interval 50-60000` and
            `... neighbor <id> timers keepalive, hold` (Cumulus Linux 5.0 and later; 5.15 moves
            BFD timers into `router bfd profile`).
  [CL-IF]   Same guide, "Interface Configuration and Management": `nv set interface <swp>
            link state down` brings a port down administratively.
  [CL-PG]   Same guide, "Quality of Service", "Port Groups", PFC: a named PFC profile with
            its own `cable-length` (`nv set qos pfc <profile> switch-priority, tx, rx,
            cable-length`) bound to ports with `nv set interface <swp> qos pfc profile
            <profile>` (command reference: Cumulus Linux 5.3.0 and later).
  [CL-OTEL] Same guide, "Open Telemetry Export": the `system telemetry` tree (OTLP export to
            the collector, interface, buffer and BGP statistics, the device label), built by
            fabgen.platforms.nvue.telemetry.nvue_telemetry so the telemetry pack owns what is
            streamed.
  [CL-API]  An applied configuration dumped through the NVUE API on Cumulus Linux 5.5.1 (NVIDIA
            Air automation workshop): exact spellings of congestion-control, egress-scheduler,
            egress-queue-mapping, mapping and roce keys and of `link: {mtu: ...}`.
"""

from __future__ import annotations

import math
from typing import Any

from fabgen import qos, underlay
from fabgen.catalog.ports import native_lanes, port_name, switch_port_name
from fabgen.platforms.common.render import (
    QueueSpec,
    ecmp_width,
    loopback_description,
    queue_specs,
    sanitize_description,
)
from fabgen.platforms.common.switch_target import SwitchTarget
from fabgen.platforms.nvue import telemetry
from fabgen.qos import QosPlan
from fabgen.serialize import yaml_text
from fabgen.targets.base import Artifacts, RenderContext, UnsupportedPlan
from fabgen.targets.cable_lengths import cable_lengths
from fabgen.topology.index import FabricPort
from fabgen.topology.model import Switch

__all__ = ["TARGET", "NvueTarget", "device_config", "startup_yaml"]

PLATFORM = "nvue"
PROFILE = "default-global"  # NVUE's global QoS profile; applies to every port [CL-QOS]
PRIORITIES = range(8)  # switch priorities and traffic classes 0..7
MAX_ECMP = underlay.MAX_ECMP[PLATFORM].paths  # `multipaths ebgp 1-128` [CL-CMD]
# ECMP hash fields by intent name -> `system forwarding ecmp-hash` key [CL-ECMP, ECMP Hashing].
HASH_FIELD: dict[str, str] = {
    "src-ip": "source-ip",
    "dst-ip": "destination-ip",
    "ip-protocol": "ip-protocol",
    "src-port": "source-port",
    "dst-port": "destination-port",
}
# PFC watchdog ranges (qos-defaults.md from the Cumulus guide): polling 100-5000 ms,
# robustness 1-1000 polling intervals.
POLL_RANGE_MS = (100, 5000)
ROBUSTNESS_RANGE = (1, 1000)


class NvueTarget(SwitchTarget):
    name = "nvue"
    description = "Cumulus Linux NVUE startup.yaml per NVUE switch (RoCE fabrics)"
    platform = PLATFORM

    def render_unit(self, ctx: RenderContext, unit: str) -> Artifacts:
        switch = ctx.index.switches[unit]
        return {f"nvue/{unit}/startup.yaml": startup_yaml(device_config(ctx, switch))}


TARGET = NvueTarget()


def startup_yaml(config: dict[str, Any]) -> str:
    """startup.yaml text: a list with the one `set` document, keys sorted (what
    `nv config replace <file>` reads); a value shared by several keys is written out in full
    each time (no anchors), and no line is folded."""
    return yaml_text([config], width=4096)


def device_config(ctx: RenderContext, switch: Switch) -> dict[str, Any]:
    """The NVUE object tree of one switch, `{"set": {...}}`, plain values only."""
    if switch.platform != PLATFORM:
        raise ValueError(f"{switch.name} runs {switch.platform}, not {PLATFORM}")
    plan = _plan(ctx)
    if switch.asn is None or switch.loopback is None:
        raise ValueError(f"{switch.name} has no ASN or loopback for BGP")
    ports = ctx.index.ports(switch)
    under = underlay.plan(ctx.intent)
    adaptive = under.load_balancing.mode == "adaptive"
    return {"set": {
        "interface": _interface(ctx, switch, ports, plan, adaptive,
                                _measured_profiles(ctx, switch, ports, plan)),
        "qos": _qos(plan, {p.kind for p in ports} or {"leaf-spine"},
                    _measured_profiles(ctx, switch, ports, plan)),
        "router": _router(switch, adaptive),
        "system": _system(ctx, switch, under, plan),
        "vrf": _vrf(switch, ports, under),
    }}


def _plan(ctx: RenderContext) -> QosPlan:
    if ctx.qos is None:
        raise ValueError("the nvue target renders RoCE fabrics only (no QoS plan)")
    plan = ctx.qos
    caps = qos.CAPABILITIES[PLATFORM]
    if plan.mtu > caps.max_mtu:
        raise UnsupportedPlan(f"{PLATFORM}: MTU {plan.mtu} is above {caps.max_mtu} "
                              f"({caps.source})")
    if plan.watchdog.enabled and plan.watchdog.action not in caps.pfc_watchdog_actions:
        raise UnsupportedPlan(f"{PLATFORM}: PFC watchdog action {plan.watchdog.action!r} is not "
                              f"supported ({caps.source})")
    return plan


# --- builders, one per top-level key ----------------------------------------------------------

def _interface(ctx: RenderContext, switch: Switch, ports: tuple[FabricPort, ...],
               plan: QosPlan, adaptive: bool, measured: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if switch.breakout > 1:
        # A split port is configured on its parent: `link breakout 2x lanes-per-port 4`
        # [CL-CMD]; the parent keeps type swp and carries no address. Every cage is split,
        # spare ones too, so their ports exist at the planned speed.
        breakout = {f"{switch.breakout}x": {
            "lanes-per-port": native_lanes(switch.model) // switch.breakout}}
        for native in range(1, switch.radix // switch.breakout + 1):
            out[port_name(PLATFORM, native)] = {"link": {"breakout": breakout}, "type": "swp"}
    watchdog = plan.watchdog.enabled and bool(plan.pfc_priorities)
    cabled = {p.port for p in ports}
    for number in range(1, switch.radix + 1):
        if number in cabled:
            continue
        # A spare port: down (`link state down` [CL-IF]) with the MTU, speed and watchdog of a
        # cabled one; the global QoS profile already covers it [CL-QOS], so a cable plugged in
        # later comes up lossless once the port is brought up, as on SONiC and EOS.
        spare: dict[str, Any] = {"link": {"mtu": plan.mtu, "state": "down"}, "type": "swp"}
        if switch.breakout > 1:
            spare["link"]["speed"] = f"{switch.speed_gbps}G"
        if watchdog:
            spare["qos"] = {"pfc-watchdog": {"state": "enable"}}
        out[switch_port_name(switch, number)] = spare
    for p in ports:
        link: dict[str, Any] = {"mtu": plan.mtu}
        if switch.breakout > 1:
            link["speed"] = f"{switch.speed_gbps}G"
        entry: dict[str, Any] = {
            "description": sanitize_description(f"{p.peer}:{p.peer_port}"),
            "ip": {"address": {p.interface_address: {}}},
            "link": link,
            "type": "swp",
        }
        if watchdog:
            # The watchdog is enabled per port, on ports with PFC [CL-QOS, PFC Watchdog].
            entry["qos"] = {"pfc-watchdog": {"state": "enable"}}
        if p.name in measured and plan.pfc_priorities:
            entry.setdefault("qos", {})["pfc"] = {
                "profile": measured_profile(measured[p.name])}
        if adaptive and p.peer_switch is not None:
            # Every port of the switch's ECMP routes: the fabric links [CL-ECMP].
            entry["router"] = {"adaptive-routing": {"enable": "on"}}
        out[p.name] = entry
    out["lo"] = {
        "description": loopback_description(ctx),
        "ip": {"address": {f"{switch.loopback}/32": {}}},
        "type": "loopback",
    }
    return out


def _measured_profiles(ctx: RenderContext, switch: Switch, ports: tuple[FabricPort, ...],
                       plan: QosPlan) -> dict[str, int]:
    """Port name -> its measured cable's length, for the ports whose length differs from the
    switch's global PFC profile (they get a PFC profile of their own [CL-PG])."""
    lengths = ctx.derived(cable_lengths)
    if not lengths.device_key(switch.name):
        return {}
    default = _global_length(plan, {p.kind for p in ports} or {"leaf-spine"})
    return {p.name: m for p in ports if (m := lengths.link_m(p.link)) != default}


def pfc_cable_lengths(ctx: RenderContext, switch: Switch) -> tuple[int, dict[str, int]]:
    """The cable-length of the switch's global PFC profile, and the ports with a profile of
    their own (port name -> metres): what the report's headroom table states."""
    plan = _plan(ctx)
    ports = ctx.index.ports(switch)
    return (_global_length(plan, {p.kind for p in ports} or {"leaf-spine"}),
            _measured_profiles(ctx, switch, ports, plan))


def _global_length(plan: QosPlan, kinds: set[str]) -> int:
    # One global profile: the longest cable class this switch's ports use (too much headroom
    # only costs buffer; too little drops lossless traffic).
    return max(plan.cable_m(kind) for kind in kinds)


def measured_profile(metres: int) -> str:
    """The PFC profile of the ports whose measured cable is `metres` long."""
    return f"cable-{metres}m"


def _qos(plan: QosPlan, kinds: set[str], measured: dict[str, int]) -> dict[str, Any]:
    specs = queue_specs(plan, PLATFORM)
    by_queue = {s.queue: s for s in specs}
    queue_of = {c.priority: c.queue for c in plan.classes}
    default_queue = plan.cls("default").queue
    out: dict[str, Any] = {
        "roce": {"enable": "on", "mode": "lossless"},
        # Every DSCP is written: the default map sends DSCP 8n..8n+7 to switch priority n
        # [CL-QOS, Trust DSCP], so 24-31 would land on the lossless priority 3; the plan puts
        # every unnamed DSCP on priority 0. Trust DSCP only, as the NICs and EOS do.
        "mapping": {PROFILE: {
            "trust": "l3",
            "dscp": {str(d): {"switch-priority": p} for d, p in enumerate(plan.dscp_to_priority)},
        }},
        # RoCE mode maps every switch priority but 3 and 6 to traffic class 0 [CL-ROCE]; the
        # plan's extra classes need their own queue, so every priority is written.
        "egress-queue-mapping": {PROFILE: {"switch-priority": {
            str(sp): {"traffic-class": queue_of.get(sp, default_queue)} for sp in PRIORITIES}}},
        "egress-scheduler": {PROFILE: {"traffic-class": {
            str(tc): _scheduler(by_queue.get(tc)) for tc in PRIORITIES}}},
        "congestion-control": {PROFILE: {"traffic-class": {
            str(s.queue): _congestion(s) for s in specs}}},
    }
    if plan.pfc_priorities:
        def pfc(metres: int) -> dict[str, Any]:
            return {
                "switch-priority": {str(p): {} for p in plan.pfc_priorities},
                "tx": "enable",
                "rx": "enable",
                # metres [CL-QOS, PFC]: Cumulus derives xoff, xon and the port buffer from it
                # (NVIDIA's own model; [CL-QOS] asks not to set those by hand, so fabgen
                # does not).
                "cable-length": metres,
            }

        out["pfc"] = {PROFILE: pfc(_global_length(plan, kinds))}
        # A measured cable of another length: a profile per length, bound to its ports in
        # _interface [CL-PG], so each port's headroom is sized for its own cable.
        for metres in sorted(set(measured.values())):
            out["pfc"][measured_profile(metres)] = pfc(metres)
        if plan.watchdog.enabled:
            out["pfc-watchdog"] = _watchdog(plan)
    return out


def _scheduler(spec: QueueSpec | None) -> dict[str, Any]:
    """One traffic class of the egress scheduler.

    The default profile gives every traffic class DWRR 12-13% [CL-API], and bw-percent must sum
    to at most 100 [CL-QOS, Egress Scheduler]: the plan's DWRR queues already sum to 100, so the
    classes no switch priority maps to are made strict. They carry no traffic, so they take no
    bandwidth from anyone.
    """
    if spec is None or spec.strict:
        return {"mode": "strict"}
    return {"mode": "dwrr", "bw-percent": spec.percent}


def _congestion(spec: QueueSpec) -> dict[str, Any]:
    """ECN marking of one queue, thresholds in bytes as NVUE takes them [CL-QOS, ECN]."""
    if spec.ecn is None:
        # The default profile marks ECN on queue 0 [CL-QOS]; the plan marks only its ECN classes.
        return {"ecn": "disable"}
    return {
        "ecn": "enable",
        "min-threshold": spec.ecn.min_bytes,
        "max-threshold": spec.ecn.max_bytes,
        "probability": spec.ecn.probability,
        "red": "disable",  # mark, never drop: RDMA is lossless
    }


def _watchdog(plan: QosPlan) -> dict[str, int]:
    """`qos pfc-watchdog`: NVUE detects a storm after `robustness` polling intervals with the
    queue paused [CL-QOS, PFC Watchdog], so robustness = ceil(detection / poll); it restores
    the queue after a polling interval with no pause frame, which NVUE does not let be set, so
    the plan's restoration time has no NVUE counterpart."""
    wd = plan.watchdog
    robustness = math.ceil(wd.detection_ms / wd.poll_ms)
    if not POLL_RANGE_MS[0] <= wd.poll_ms <= POLL_RANGE_MS[1]:
        raise UnsupportedPlan(f"{PLATFORM}: PFC watchdog polling interval {wd.poll_ms} ms is "
                              f"outside {POLL_RANGE_MS[0]}-{POLL_RANGE_MS[1]} ms")
    if not ROBUSTNESS_RANGE[0] <= robustness <= ROBUSTNESS_RANGE[1]:
        raise UnsupportedPlan(f"{PLATFORM}: PFC watchdog robustness {robustness} is outside "
                              f"{ROBUSTNESS_RANGE[0]}-{ROBUSTNESS_RANGE[1]}")
    return {"polling-interval": wd.poll_ms, "robustness": robustness}


def _router(switch: Switch, adaptive: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"bgp": {"autonomous-system": switch.asn, "enable": "on",
                                   "router-id": str(switch.loopback)}}
    if adaptive:
        out["adaptive-routing"] = {"enable": "on"}  # [CL-ECMP]; restarts switchd when changed
    return out


def _system(ctx: RenderContext, switch: Switch, under: underlay.UnderlayPlan,
            plan: QosPlan) -> dict[str, Any]:
    fields = under.load_balancing.hash_fields
    # Every 5-tuple field written on or off, so the hash does not depend on a release default.
    ecmp_hash = {key: "on" if name in fields else "off" for name, key in HASH_FIELD.items()}
    mon = ctx.intent.monitoring
    # The telemetry pack's OTLP export [CL-OTEL]: PFC pauses of the lossless priority, ECN and
    # discards of every queue the plan uses, the lossless PG, buffers, BGP.
    streamed = telemetry.nvue_telemetry(switch, plan.rdma.priority, plan.rdma.pg,
                                        sorted({c.queue for c in plan.classes}),
                                        mon.otlp_destination, mon.otlp_port)
    return {"hostname": switch.name, "forwarding": {"ecmp-hash": ecmp_hash},
            "telemetry": streamed}


def _neighbor(peer: Switch, under: underlay.UnderlayPlan) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "remote-as": peer.asn,
        "timers": {"keepalive": under.keepalive_s, "hold": under.hold_s},
        "type": "numbered",
    }
    if under.bfd is not None:
        entry["bfd"] = {"enable": "on", "detect-multiplier": under.bfd.multiplier,
                        "min-rx-interval": under.bfd.interval_ms,
                        "min-tx-interval": under.bfd.interval_ms}  # [CL-BFD]
    return entry


def _vrf(switch: Switch, ports: tuple[FabricPort, ...],
         under: underlay.UnderlayPlan) -> dict[str, Any]:
    neighbors: dict[str, Any] = {}
    networks: dict[str, Any] = {f"{switch.loopback}/32": {}}
    for p in ports:
        if p.peer_switch is not None:
            if p.peer_switch.asn is None:
                raise ValueError(f"{p.peer} has no ASN")
            neighbors[p.peer_ip] = _neighbor(p.peer_switch, under)
        else:
            networks[p.subnet] = {}  # host subnets, on a leaf
    try:
        width = underlay.ecmp_paths(PLATFORM, switch.name, ecmp_width(ports))
    except ValueError as exc:
        raise UnsupportedPlan(str(exc)) from None
    return {"default": {"router": {"bgp": {
        "address-family": {"ipv4-unicast": {
            "enable": "on",
            "multipaths": {"ebgp": width},
            "network": networks,
        }},
        "enable": "on",
        "neighbor": neighbors,
    }}}}
