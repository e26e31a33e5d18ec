"""One QFX5240's configuration as a dict shaped like Juniper's YANG for Junos OS Evolved 23.4R2.

`device_config(ctx, switch)` returns `{"junos-conf-root:configuration": {...}}` in RFC 7951
JSON form (module-qualified top-level sections, lists as arrays of entries with their keys,
`empty` leaves as [null]); `text` renders the same dict as Juniper JSON, curly-brace text and
`set` commands. Values come from the QosPlan, the underlay plan and the fabric index; what
this module decides is how Junos spells them. Sources are cited as in facts.py ([JVD] the
QFX5240-64OD AI JVD configurations, [APSTRA] Juniper's Apstra AI-cluster DLB configlet, [YANG]
the 23.4R2-EVO schema, [MTU] Juniper "Configuring the Media MTU").

Any switch of the fabric can be rendered: its ports are named the Junos way from its breakout
(facts.port_name), whatever platform the intent gave it, so a test can render an existing
RoCE fabric's leaves as Junos before the intent's platform list knows `junos`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fabgen import underlay
from fabgen.platforms.junos import cos, facts
from fabgen.qos import QosPlan
from fabgen.targets.base import RenderContext
from fabgen.targets.cable_lengths import cable_lengths
from fabgen.topology.index import FabricPort
from fabgen.topology.model import Switch

__all__ = [
    "BGP_GROUP",
    "ECMP_POLICY",
    "EXPORT_POLICY",
    "ORIGINATE",
    "SECTIONS",
    "device_config",
    "ecmp_width",
    "maximum_ecmp",
    "sanitize_description",
]

ROOT = "junos-conf-root:configuration"
# Top-level sections in the order Junos prints a configuration [JVD file order], each with
# the YANG module that augments `configuration` with it [YANG].
SECTIONS: tuple[tuple[str, str], ...] = (
    ("system", "junos-conf-system"),
    ("services", "junos-conf-services"),
    ("interfaces", "junos-conf-interfaces"),
    ("forwarding-options", "junos-conf-forwarding-options"),
    ("policy-options", "junos-conf-policy-options"),
    ("class-of-service", "junos-conf-class-of-service"),
    ("routing-options", "junos-conf-routing-options"),
    ("protocols", "junos-conf-protocols"),
)
EMPTY = [None]
# Packet Forwarding Engine sensors suppress zero counters after a subscription's first sync
# [GNMI-SUB in facts.py], so a drop counter that is 0 sends nothing
# and its first drops read as a new series with no increase: LosslessQueueDrops could not
# fire. `services analytics zero-suppression no-zero-suppression` [YANG junos-conf-services:
# "Configure suppression of zeros for GRPC sensors" / "Disable zero suppression"] streams the
# zeros too (tests/platforms/junos/test_telemetry.py shows the alert missed without it).
TELEMETRY_SERVICES = {"analytics": {"zero-suppression": {"no-zero-suppression": EMPTY}}}
BGP_GROUP = "fabgen-underlay"
EXPORT_POLICY = "fabgen-export"
ECMP_POLICY = "fabgen-ecmp"
ORIGINATE = "fabgen-originate"
# DLB flowlet inactivity interval, microseconds: Juniper's QFX5240 AI JVD value [JVD
# forwarding-options enhanced-hash-key ecmp-dlb flowlet inactivity-interval 128]; a gap this
# long lets a flowlet move to a less loaded member without reordering the flow.
DLB_INACTIVITY_US = 128

_DESCRIPTION_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._:/,+()@=-")
_DESCRIPTION_MAX = 200


def sanitize_description(text: str) -> str:
    """A description that cannot close its quotes or start a statement: safe characters only
    (no `"`, `;`, braces, `#`), spaces collapsed, bounded."""
    cleaned = "".join(c if c in _DESCRIPTION_CHARS else "_" for c in text)
    return " ".join(cleaned.split())[:_DESCRIPTION_MAX]


def ecmp_width(ports: tuple[FabricPort, ...]) -> int:
    """Equal-cost paths a switch has to one prefix: its uplinks, or the parallel links down
    to one lower switch, whichever is more (as underlay.ecmp_widths counts per role)."""
    uplinks = sum(1 for p in ports if p.uplink)
    parallel = Counter(p.peer for p in ports if p.peer_switch is not None and not p.uplink)
    return max(1, uplinks, max(parallel.values(), default=0))


def maximum_ecmp(width: int, switch: str) -> int:
    """The smallest `routing-options maximum-ecmp` value [YANG enum] that holds `width`."""
    for step in facts.ECMP_STEPS:
        if step >= width:
            return step
    raise ValueError(f"junos: {switch} needs {width} equal-cost paths; `maximum-ecmp` takes at "
                     f"most {facts.MAX_ECMP} (Juniper 23.4R2-EVO YANG)")


def _plan(ctx: RenderContext) -> QosPlan:
    if ctx.qos is None:
        raise ValueError("junos renders RoCE fabrics only (no QoS plan)")
    if ctx.qos.mtu > facts.MAX_IP_MTU:
        raise cos.UnsupportedPlan(
            f"junos: MTU {ctx.qos.mtu} needs a media MTU of {ctx.qos.mtu + facts.ETHERNET_OVERHEAD}"
            f", above {facts.MAX_MEDIA_MTU}, the largest Juniper configures on the QFX5240")
    return ctx.qos


def device_config(ctx: RenderContext, switch: Switch) -> dict[str, Any]:
    """The whole configuration fabgen writes for `switch`, as Juniper YANG JSON."""
    if switch.model not in facts.HARDWARE:
        raise ValueError(f"{switch.name} is a {switch.model}; junos renders "
                         f"{', '.join(sorted(facts.HARDWARE))}")
    plan = _plan(ctx)
    under = underlay.plan(ctx.intent)
    ports = ctx.index.ports(switch)
    lengths = _port_lengths(ctx, switch, ports, plan)
    cos_tree = cos.class_of_service(plan, list(lengths.values()))
    cos_tree["interfaces"] = {"interface": [cos.interface_cos(_name(switch, n), lengths[n])
                                            for n in range(1, switch.radix + 1)]}
    built = {
        "system": {"host-name": switch.name},
        "services": TELEMETRY_SERVICES,
        "interfaces": _interfaces(ctx, switch, ports, plan),
        "forwarding-options": _forwarding_options(under),
        "policy-options": _policy_options(switch, ports),
        "class-of-service": cos_tree,
        "routing-options": _routing_options(switch, ports),
        "protocols": _protocols(switch, ports, under),
    }
    return {ROOT: {f"{module}:{name}": built[name] for name, module in SECTIONS}}


def _name(switch: Switch, port: int) -> str:
    return facts.port_name(port, switch.breakout)


def _port_lengths(ctx: RenderContext, switch: Switch, ports: tuple[FabricPort, ...],
                  plan: QosPlan) -> dict[int, int]:
    """The cable length each logical port's PFC headroom is sized for: the cable's (measured
    or its class's), a spare port its class's."""
    measured = ctx.derived(cable_lengths)
    cabled = {p.port: measured.link_m(p.link) for p in ports}
    classes = ctx.index.port_classes(switch)
    return {n: cabled.get(n, plan.cable_m(classes[n - 1])) for n in range(1, switch.radix + 1)}


def _interfaces(ctx: RenderContext, switch: Switch, ports: tuple[FabricPort, ...],
                plan: QosPlan) -> dict[str, Any]:
    """Every front-panel port in port order, then lo0. A split cage's parent carries the
    split [JVD: `number-of-sub-ports 2; speed 400g`]. A spare port is `disable`d with the same
    MTU and CoS as a cabled one, so a cable plugged in later comes up lossless once enabled.
    MTU: the media MTU counts the 14-byte Ethernet header, the inet MTU is the plan's [MTU]."""
    speed = facts.SPEEDS.get(switch.speed_gbps)
    if switch.breakout > 1 and speed is None:
        raise ValueError(f"junos: no speed keyword for {switch.speed_gbps}G sub-ports")
    cabled = {p.port: p for p in ports}
    out: list[dict[str, Any]] = []
    for n in range(1, switch.radix + 1):
        if switch.breakout > 1 and (n - 1) % switch.breakout == 0:
            out.append({"name": facts.parent_port(n, switch.breakout),
                        "number-of-sub-ports": switch.breakout, "speed": speed})
        p = cabled.get(n)
        entry: dict[str, Any] = {"name": _name(switch, n)}
        if p is not None:
            entry["description"] = sanitize_description(f"{p.peer}:{p.peer_port}")
        else:
            entry["disable"] = EMPTY
        entry["mtu"] = plan.mtu + facts.ETHERNET_OVERHEAD
        inet: dict[str, Any] = {"mtu": plan.mtu}
        if p is not None:
            inet["address"] = [{"name": p.interface_address}]
        entry["unit"] = [{"name": "0", "family": {"inet": inet}}]
        out.append(entry)
    if switch.loopback is None:
        raise ValueError(f"{switch.name} has no loopback address")
    description = ctx.intent.name
    if ctx.intent.description:
        description = f"{description}: {ctx.intent.description}"
    out.append({"name": "lo0", "description": sanitize_description(description),
                "unit": [{"name": "0", "family": {"inet": {
                    "address": [{"name": f"{switch.loopback}/32"}]}}}]})
    return {"interface": out}


def _forwarding_options(under: underlay.UnderlayPlan) -> dict[str, Any]:
    """The ECMP hash and, for `load_balancing.mode: adaptive`, flowlet DLB [JVD, APSTRA]."""
    out: dict[str, Any] = {
        # Hash on the IP addresses and protocol (layer-3) and the UDP ports (layer-4): the
        # RoCEv2 source port carries the per-QP entropy [JVD hash-key family inet].
        "hash-key": {"family": {"inet": {"layer-3": {}, "layer-4": {}}}},
    }
    if under.load_balancing.mode == "adaptive":
        out["enhanced-hash-key"] = {"ecmp-dlb": {
            "flowlet": {"inactivity-interval": DLB_INACTIVITY_US},
            "ether-type": {"ipv4": EMPTY}}}
    return out


def _originated(switch: Switch, ports: tuple[FabricPort, ...]) -> list[str]:
    """What the switch announces: its loopback and, on a leaf, each host port's /31."""
    prefixes = [f"{switch.loopback}/32"]
    prefixes += [p.subnet for p in ports if p.peer_switch is None]
    return prefixes


def _policy_options(switch: Switch, ports: tuple[FabricPort, ...]) -> dict[str, Any]:
    return {
        "prefix-list": [{"name": ORIGINATE, "prefix-list-item": [
            {"name": prefix} for prefix in _originated(switch, ports)]}],
        "policy-statement": [
            # Every ECMP next hop into the forwarding table: without it Junos installs one
            # next hop per prefix [JVD PFE-LB / APSTRA PPLB `then load-balance per-packet`,
            # exported by routing-options forwarding-table; "per-packet" means per flow on
            # these switches (the YANG: deprecated, use per-flow)].
            {"name": ECMP_POLICY, "then": {"load-balance": {"per-packet": EMPTY}}},
            # Announce the loopback and host subnets, pass on what BGP learned (spines carry
            # leaves' routes to the other leaves), nothing else (the fabric /31s stay local).
            {"name": EXPORT_POLICY, "term": [
                {"name": "local", "from": {"protocol": ["direct"], "prefix-list": [
                    {"name": ORIGINATE}]}, "then": {"accept": EMPTY}},
                {"name": "learned", "from": {"protocol": ["bgp"]},
                 "then": {"accept": EMPTY}},
                {"name": "rest", "then": {"reject": EMPTY}},
            ]},
        ],
    }


def _routing_options(switch: Switch, ports: tuple[FabricPort, ...]) -> dict[str, Any]:
    if switch.asn is None or switch.loopback is None:
        raise ValueError(f"{switch.name} has no ASN or loopback for BGP")
    width = ecmp_width(ports)
    return {
        "router-id": str(switch.loopback),
        "autonomous-system": {"as-number": str(switch.asn)},
        "forwarding-table": {"export": [ECMP_POLICY]},
        # Junos installs at most `maximum-ecmp` next hops (16 unless set) [YANG].
        "maximum-ecmp": str(maximum_ecmp(width, switch.name)),
    }


def _protocols(switch: Switch, ports: tuple[FabricPort, ...],
               under: underlay.UnderlayPlan) -> dict[str, Any]:
    neighbors = []
    for p in ports:
        if p.peer_switch is None:
            continue
        if p.peer_switch.asn is None:
            raise ValueError(f"{p.peer} has no ASN")
        neighbors.append({"name": p.peer_ip,
                          "description": sanitize_description(f"{p.peer}:{p.peer_port}"),
                          "peer-as": str(p.peer_switch.asn)})
    group: dict[str, Any] = {
        "name": BGP_GROUP,
        "type": "external",
        # Junos has one timer: the hold time; it sends keepalives every third of it.
        "hold-time": under.hold_s,
        "export": [EXPORT_POLICY],
        # eBGP paths from different neighbour ASes are equal [JVD `multipath multiple-as`].
        "multipath": {"multiple-as": EMPTY},
    }
    if under.bfd is not None:
        # [JVD: bfd-liveness-detection minimum-interval 1000; multiplier 3 on the underlay
        # group]; the plan's timers.
        group["bfd-liveness-detection"] = {"minimum-interval": under.bfd.interval_ms,
                                           "multiplier": under.bfd.multiplier}
    group["neighbor"] = neighbors
    return {
        "bgp": {"group": [group]},
        # LLDP names ports by interface name so the cabling check reads et-0/0/N:M [JVD
        # lldp port-id-subtype interface-name].
        "lldp": {"port-id-subtype": "interface-name", "interface": [{"name": "all"}]},
    }
